#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A stand-in for the GitHub Actions runner, for tests/e2e/action.sh: it runs a composite action's steps,
or one script step with a custom shell, the way the runner does, as the user it runs as (the runner user).

composite ACTION_DIR: the steps of ACTION_DIR/action.yml in order. Each `run` step gets a script file in
RUNNER_TEMP and its own GITHUB_OUTPUT, GITHUB_ENV, GITHUB_PATH and GITHUB_STEP_SUMMARY files under
RUNNER_TEMP/_runner_file_commands, is run as `bash --noprofile --norc -e -o pipefail SCRIPT` in
GITHUB_WORKSPACE with the job's environment, what earlier steps put in GITHUB_ENV and GITHUB_PATH,
GITHUB_ACTION_PATH and the step's `env:`; after a step that fails or is cancelled, only the steps with
`if: always()` run. The expressions `${{ inputs.NAME }}`, `${{ github.action_path }}` and
`${{ steps.ID.outputs.NAME }}` are evaluated; anything else (another expression, another `if:`, `uses:`, a
shell other than bash, an unknown input) is refused with status 2, so that nothing the action relies on
goes untested. A step summary over the runner's limit (1 MiB) fails the step, as the runner fails its
upload. The step summaries are appended to --summary (the job's), and the result is written to --state as
JSON: per step its status, outputs and summary size, the action's outputs, evaluated from its `outputs:`,
and its result (success, failure, cancelled).

Cancellation, in both modes: with --cancel-when FILE, once a step has printed a line --marker and FILE
exists, the runner's cancellation of that step (actions/runner, ProcessInvoker): SIGINT to the step's
process alone, 7.5 s, SIGTERM to it, 2.5 s, SIGKILL to it, never to its group or its children. Every
process gets RUNNER_TRACKING_ID (the job's, or a new one), and the runner's clean-up of orphans at the end
of the job, SIGKILL to every process of the runner user whose environment holds it, follows the shell step,
and the composite action with --orphans kill.

shell TEMPLATE SCRIPT_TEXT_FILE: one step with a custom shell: the template is split at its first space,
the first word looked up on PATH, `{0}` in the rest replaced by the path of the script file (written into
RUNNER_TEMP under a fresh name, no extension) and the rest split at spaces; standard input is a pipe
closed at once; it runs in GITHUB_WORKSPACE, or in the step's --working-directory (relative to
GITHUB_WORKSPACE, as the runner takes it). Its output goes to standard output; the status is the step's.

usage: composite.py composite ACTION_DIR --inputs JSON|@FILE --state FILE --summary FILE
                    [--until ID | --only ID | --from ID --prior STATE]
                    [--cancel-when FILE --marker TEXT] [--orphans kill]
       composite.py shell TEMPLATE SCRIPT_TEXT_FILE [--env JSON] [--working-directory DIR]
                    [--cancel-when FILE --marker TEXT] [--report FILE]
The job's variables (GITHUB_*, RUNNER_TEMP, the stand-in tokens) come from this program's environment."""

import json
import os
import re
import select
import signal
import subprocess
import sys
import time
import uuid

import yaml

SUMMARY_LIMIT = 1024 * 1024
NAME = r"[A-Za-z_][A-Za-z0-9_-]*"
EXPR = re.compile(r"\$\{\{(.*?)\}\}", re.S)
STEP_KEYS = {"name", "id", "shell", "run", "env", "if"}


class Refused(Exception):
    pass


def evaluate(text, inputs, action_path, steps):
    """The value of a string with ${{ }} expressions of the three forms this stand-in knows."""

    def one(m):
        expr = m.group(1).strip()
        if re.fullmatch(r"inputs\.(%s)" % NAME, expr):
            name = expr.split(".", 1)[1]
            if name not in inputs:
                raise Refused("${{ %s }}: no such input" % expr)
            return inputs[name]
        if expr == "github.action_path":
            return action_path
        m2 = re.fullmatch(r"steps\.(%s)\.outputs\.(%s)" % (NAME, NAME), expr)
        if m2:
            if m2.group(1) not in steps:
                raise Refused("${{ %s }}: no earlier step %r" % (expr, m2.group(1)))
            return steps[m2.group(1)]["outputs"].get(m2.group(2), "")
        raise Refused("${{ %s }}: not an expression this stand-in evaluates" % expr)

    if not isinstance(text, str):
        raise Refused("%r: not a string" % (text,))
    return EXPR.sub(one, text)


def read_file_commands(path):
    """NAME=VALUE and NAME<<DELIMITER ... DELIMITER lines, as the runner reads GITHUB_OUTPUT and
    GITHUB_ENV; a malformed line fails the step."""
    out = {}
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if line == "":
            continue
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delim = line.split("<<", 1)
            value = []
            while i < len(lines) and lines[i] != delim:
                value.append(lines[i])
                i += 1
            if i == len(lines):
                raise ValueError("%s: no end %r for %s" % (path, delim, name))
            i += 1
            out[name] = "\n".join(value)
        elif "=" in line:
            name, value = line.split("=", 1)
            out[name] = value
        else:
            raise ValueError("%s: invalid line %r" % (path, line))
        if not re.fullmatch(NAME, name):
            raise ValueError("%s: invalid name %r" % (path, name))
    return out


def file_commands(temp):
    d = os.path.join(temp, "_runner_file_commands")
    os.makedirs(d, exist_ok=True)
    files = {}
    for var, prefix in (("GITHUB_OUTPUT", "set_output"), ("GITHUB_ENV", "set_env"),
                        ("GITHUB_PATH", "add_path"), ("GITHUB_STEP_SUMMARY", "step_summary")):
        files[var] = os.path.join(d, "%s_%s" % (prefix, uuid.uuid4()))
        open(files[var], "w").close()
    return files


def composite(args):
    action_dir = os.path.abspath(args["dir"])
    with open(os.path.join(action_dir, "action.yml")) as f:
        action = yaml.safe_load(f)
    if (action.get("runs") or {}).get("using") != "composite":
        raise Refused("not a composite action")
    declared = action.get("inputs") or {}
    text = args["inputs"]
    if text.startswith("@"):  # a file: what a command line would show of a token
        with open(text[1:]) as f:
            text = f.read()
    given = json.loads(text)
    for name in given:
        if name not in declared:
            raise Refused("input %r is not declared by the action" % name)
    inputs = {}
    for name, spec in declared.items():
        inputs[name] = str(given.get(name, spec.get("default", "")))
    temp = os.environ["RUNNER_TEMP"]
    workspace = os.environ["GITHUB_WORKSPACE"]
    state = {"steps": {}, "order": [], "outputs": {}, "result": "success"}
    job_env = dict(os.environ)
    paths = []
    if args.get("prior"):
        with open(args["prior"]) as f:
            prior = json.load(f)
        state["steps"].update(prior["steps"])
        state["order"] += prior["order"]
        job_env.update(prior.get("env", {}))
        paths = prior.get("paths", [])
    steps = action["runs"]["steps"]
    ids = [s.get("id") for s in steps]
    for key in ("until", "only", "from"):
        if args.get(key) and args[key] not in ids:
            raise Refused("no step has the id %r" % args[key])
    started = not (args.get("only") or args.get("from"))
    added_env = {}
    tracking = tracking_id(job_env)
    report = {"signals": []}
    for i, step in enumerate(steps):
        sid = step.get("id") or "__step%d" % i
        if args.get("only"):
            started = sid == args["only"]
        elif args.get("from") and sid == args["from"]:
            started = True
        if not started:
            continue
        for key in step:
            if key not in STEP_KEYS:
                raise Refused("step %s: %r is a key this stand-in does not run" % (sid, key))
        if "if" in step and str(step["if"]).strip() not in ("always()", "${{ always() }}"):
            raise Refused("step %s: if: %r (this stand-in knows always() alone)" % (sid, step["if"]))
        if state["result"] != "success" and "if" not in step:
            continue  # after a failure or a cancel, only the steps that run always()
        if step.get("shell") != "bash" or not isinstance(step.get("run"), str):
            raise Refused("step %s: not a run step with shell bash" % sid)
        if "${{" in step["run"]:
            raise Refused("step %s: an expression inside the script" % sid)
        env = dict(job_env)
        env.update(added_env)
        if paths:
            env["PATH"] = ":".join(reversed(paths)) + ":" + env.get("PATH", "")
        env["GITHUB_ACTION_PATH"] = action_dir
        for var, value in (step.get("env") or {}).items():
            env[str(var)] = evaluate(value, inputs, action_dir, state["steps"])
        files = file_commands(temp)
        env.update(files)
        script = os.path.join(temp, "%s.sh" % uuid.uuid4())
        with open(script, "w", encoding="utf-8") as f:
            f.write(step["run"])
        print("::step %s: %s" % (sid, step.get("name", sid)), flush=True)
        t0 = time.monotonic()
        was_cancelled = report.get("cancelled")
        status = run_watched(["bash", "--noprofile", "--norc", "-e", "-o", "pipefail", script], workspace, env,
                             subprocess.DEVNULL, None if was_cancelled else args.get("cancel_when"),
                             args.get("marker"), report)
        record = {"status": status, "seconds": round(time.monotonic() - t0, 3), "outputs": {},
                  "summary_bytes": os.path.getsize(files["GITHUB_STEP_SUMMARY"]), "script": script}
        try:
            record["outputs"] = read_file_commands(files["GITHUB_OUTPUT"])
            new_env = read_file_commands(files["GITHUB_ENV"])
            added_env.update(new_env)
            state.setdefault("env", {}).update(new_env)
            with open(files["GITHUB_PATH"]) as f:
                new_paths = [p for p in f.read().split("\n") if p]
            paths += new_paths
            state["paths"] = paths
        except ValueError as e:
            print("::step %s: %s" % (sid, e), flush=True)
            record["status"] = status = status or 1
        if record["summary_bytes"] > SUMMARY_LIMIT:
            print("::step %s: the step summary is %d bytes, over the runner's limit" %
                  (sid, record["summary_bytes"]), flush=True)
            record["status"] = status = status or 1
        else:
            with open(files["GITHUB_STEP_SUMMARY"], "rb") as f, open(args["summary"], "ab") as j:
                j.write(f.read())
        state["steps"][sid] = record
        state["order"].append(sid)
        print("::step %s: status %d in %.1f s" % (sid, status, record["seconds"]), flush=True)
        if report.get("cancelled") and not was_cancelled:
            state["result"] = "cancelled"
            record["cancel"] = {k: report[k] for k in ("signals", "exited_after")}
        elif status != 0 and state["result"] == "success":
            state["result"] = "failure"
        if args.get("until") == sid:
            break
    if args.get("orphans") == "kill":
        kill_orphans(tracking, report)
        state["orphans_killed"] = report.get("orphans_killed", [])
    for name, spec in (action.get("outputs") or {}).items():
        try:
            state["outputs"][name] = evaluate(spec.get("value", ""), inputs, action_dir, state["steps"])
        except Refused:
            state["outputs"][name] = ""  # a step that did not run
    with open(args["state"], "w") as f:
        json.dump(state, f, indent=2)
    return 0 if state["result"] == "success" else 1


def tracking_id(env):
    """The runner marks every process of a job with RUNNER_TRACKING_ID in its environment."""
    env.setdefault("RUNNER_TRACKING_ID", "github_%s" % uuid.uuid4())
    return env["RUNNER_TRACKING_ID"]


def kill_orphans(tracking, report):
    """The runner's clean-up of orphans at the end of a job: SIGKILL to every process whose environment
    holds the job's RUNNER_TRACKING_ID (those it may read: its own user's)."""
    mark = ("RUNNER_TRACKING_ID=%s" % tracking).encode()
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open("/proc/%s/environ" % name, "rb") as f:
                if mark not in f.read().split(b"\0"):
                    continue
            os.kill(int(name), signal.SIGKILL)
            report.setdefault("orphans_killed", []).append(int(name))
        except OSError:
            pass


def run_watched(argv, cwd, env, stdin, cancel, marker, report):
    """Runs argv with its output (both streams) copied to ours, as the runner does. With cancel: once the
    output held a line marker and the file cancel exists, the runner's cancellation of a step: SIGINT to
    the step's process alone, 7.5 s, SIGTERM to it, 2.5 s, SIGKILL to it (never its group or its children:
    actions/runner's ProcessInvoker). Returns the status (128+N for signal N)."""
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=stdin, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)
    if stdin == subprocess.PIPE:
        proc.stdin.close()
    marker = (marker or "").encode()
    seen_marker = False
    fd = proc.stdout.fileno()
    t_cancel = None
    stage = 0  # 0 running, 1 SIGINT sent, 2 SIGTERM sent, 3 SIGKILL sent
    pending = b""
    eof = False
    t_done = None
    while not (eof and proc.poll() is not None):
        if proc.poll() is not None:
            # What the step left behind may hold its output open: the runner stops reading, too.
            t_done = t_done or time.monotonic()
            if time.monotonic() - t_done > 3:
                report["output_held_open"] = True
                break
        chunk = b""
        if not eof and select.select([fd], [], [], 0.02)[0]:
            chunk = os.read(fd, 65536)
            eof = chunk == b""
        elif eof:
            time.sleep(0.02)
        if chunk:
            sys.stdout.buffer.write(chunk)
            sys.stdout.flush()
            pending = (pending + chunk)[-4096:]
            if marker and marker + b"\n" in pending:
                seen_marker = True
        done = proc.poll() is not None
        now = time.monotonic()
        if cancel and seen_marker and stage == 0 and not done and os.path.exists(cancel):
            proc.send_signal(signal.SIGINT)
            t_cancel = now
            report["signals"].append(["SIGINT", 0.0])
            stage = 1
        elif stage == 1 and not done and now - t_cancel >= 7.5:
            proc.send_signal(signal.SIGTERM)
            report["signals"].append(["SIGTERM", round(now - t_cancel, 2)])
            stage = 2
        elif stage == 2 and not done and now - t_cancel >= 10.0:
            proc.kill()
            report["signals"].append(["SIGKILL", round(now - t_cancel, 2)])
            stage = 3
    status = proc.wait()
    status = status if status >= 0 else 128 - status
    if t_cancel is not None:
        report["cancelled"] = True
        report["exited_after"] = round(time.monotonic() - t_cancel, 2)
    return status


def shell(args):
    template = args["template"]
    if " " not in template:
        raise Refused("a custom shell is a program and its arguments")
    program, rest = template.split(" ", 1)
    if "{0}" not in rest:
        raise Refused("the shell's arguments hold no {0}")
    if re.search(r"[{}]", rest.replace("{0}", "")) or re.search(r"['\"]", rest):
        raise Refused("a brace or quote in the template: the runner's string.Format and split differ")
    env = dict(os.environ)
    env.update(json.loads(args.get("env") or "{}"))
    temp = env["RUNNER_TEMP"]
    env.update(file_commands(temp))
    found = None
    for d in env.get("PATH", "").split(":"):
        if d and os.access(os.path.join(d, program), os.X_OK):
            found = os.path.join(d, program)
            break
    if not found:
        print("::error::%s: not found on PATH" % program, flush=True)
        return 127
    script = os.path.join(temp, str(uuid.uuid4()))
    with open(args["script"], encoding="utf-8") as f, open(script, "w", encoding="utf-8") as out:
        out.write(f.read())
    argv = [found] + rest.replace("{0}", script).split(" ")
    tracking = tracking_id(env)
    report = {"argv": argv, "signals": []}
    cwd = os.path.join(env["GITHUB_WORKSPACE"], args.get("working_directory", ""))
    report["status"] = run_watched(argv, cwd, env, subprocess.PIPE,
                                   args.get("cancel_when"), args.get("marker"), report)
    # The job ends with this step: the runner's clean-up of orphans.
    kill_orphans(tracking, report)
    if args.get("report"):
        with open(args["report"], "w") as f:
            json.dump(report, f, indent=2)
    return report["status"]


def parse(argv):
    if len(argv) < 2 or argv[1] not in ("composite", "shell"):
        raise Refused(__doc__.strip().split("\n\n")[-2])
    args = {"mode": argv[1]}
    rest = argv[2:]
    positional = ["dir"] if args["mode"] == "composite" else ["template", "script"]
    while rest:
        a = rest.pop(0)
        if a.startswith("--"):
            if not rest:
                raise Refused("%s needs a value" % a)
            args[a[2:].replace("-", "_")] = rest.pop(0)
        elif positional:
            args[positional.pop(0)] = a
        else:
            raise Refused("an argument too many: %r" % a)
    if positional:
        raise Refused("missing: %s" % " ".join(positional))
    if args["mode"] == "composite":
        for need in ("inputs", "state", "summary"):
            if need not in args:
                raise Refused("composite needs --%s" % need)
        if sum(1 for k in ("until", "only", "from") if k in args) > 1:
            raise Refused("--until, --only and --from exclude each other")
        if ("from" in args) != ("prior" in args):
            raise Refused("--from needs --prior, and --prior --from")
    return args


def main(argv):
    try:
        args = parse(argv)
        return composite(args) if args["mode"] == "composite" else shell(args)
    except Refused as e:
        print("composite.py: refused: %s" % e, file=sys.stderr, flush=True)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
