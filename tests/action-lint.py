#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The lint of the GitHub Actions files: every action.yml under action/ and every workflow under
examples/. It fails (status 1), naming each problem, on:

  actions (runs.using: composite)
    - a step with `run` and no `shell`, or a shell other than bash;
    - any `${{` inside a `run` script (inputs reach a script only through `env:`);
    - an expression other than `inputs.NAME`, `github.action_path` or `steps.ID.outputs.NAME` (what
      tests/e2e/action.sh evaluates), an input that is not declared, a step id that is not an earlier
      step's, or a step output its script does not write to $GITHUB_OUTPUT;
    - an output whose `value` is not one `${{ steps.ID.outputs.NAME }}` of an existing step id;
    - a declared input no step uses, an `env:` variable its script never reads, a default that is not a
      string, an unknown key;
  workflows
    - a `run` step with no shell (its own or a `defaults.run.shell`), a `${{` inside a `run` script;
    - a custom shell without `{0}`, or with other braces or quotes (the runner's string.Format and its
      argument split), or one that runs agentic-job before the step that installs it;
    - a remote action not pinned to a full commit, a `with:` key this repository's action does not
      declare or a required input left out, no `permissions:`, a pull_request_target workflow that checks
      out the pull request's head.

usage: action-lint.py [ROOT]         lint ROOT's action/ and examples/ (default: this script's project)
       action-lint.py --self-test    lint inline files, each bad one of which must fail for its reason
Status 77 (skipped) where python3-yaml is not installed."""

import os
import re
import sys

try:
    import yaml
except ImportError:
    print("action-lint: python3-yaml is not installed: skipped")
    sys.exit(77)

EXPR = re.compile(r"\$\{\{(.*?)\}\}", re.S)
NAME = r"[A-Za-z_][A-Za-z0-9_-]*"
ACTION_EXPRS = [
    (re.compile(r"^inputs\.(%s)$" % NAME), "input"),
    (re.compile(r"^github\.action_path$"), "action_path"),
    (re.compile(r"^steps\.(%s)\.outputs\.(%s)$" % (NAME, NAME)), "step"),
]
SHA = re.compile(r"^[0-9a-f]{40}$")
CUSTOM_SHELL = "agentic-job sandbox exec --script {0} -- bash -eo pipefail"

ACTION_KEYS = {"name", "description", "author", "inputs", "outputs", "runs", "branding"}
INPUT_KEYS = {"description", "required", "default", "deprecationMessage"}
OUTPUT_KEYS = {"description", "value"}
COMPOSITE_STEP_KEYS = {"name", "id", "if", "run", "shell", "env", "working-directory", "uses", "with",
                       "continue-on-error"}
WORKFLOW_STEP_KEYS = COMPOSITE_STEP_KEYS | {"timeout-minutes"}


class Lint:
    def __init__(self, label):
        self.label = label
        self.problems = []

    def problem(self, where, what):
        self.problems.append("%s: %s: %s" % (self.label, where, what))


def expressions(value):
    """Every `${{ ... }}` in a value (strings anywhere in lists and mappings), stripped."""
    if isinstance(value, str):
        return [m.strip() for m in EXPR.findall(value)]
    if isinstance(value, dict):
        return [e for v in value.values() for e in expressions(v)]
    if isinstance(value, list):
        return [e for v in value for e in expressions(v)]
    return []


def script_reads(script, var):
    return re.search(r"\$\{?%s\b" % re.escape(var), script) is not None


def script_writes_output(script, name):
    """Whether a script writes NAME to $GITHUB_OUTPUT: a NAME= at the start of a word, in a script that
    names GITHUB_OUTPUT (a heuristic: enough to catch an output wired to the wrong step or misspelt)."""
    return "GITHUB_OUTPUT" in script and \
        re.search(r"""(^|[\s"'])%s=""" % re.escape(name), script) is not None


def lint_action(doc, lint, action_dir=None):
    if not isinstance(doc, dict):
        lint.problem("top", "not a mapping")
        return
    for key in doc:
        if key not in ACTION_KEYS:
            lint.problem("top", "unknown key %r" % key)
    for key in ("name", "description", "runs"):
        if key not in doc:
            lint.problem("top", "missing %r" % key)
    inputs = doc.get("inputs") or {}
    outputs = doc.get("outputs") or {}
    runs = doc.get("runs") or {}
    if not isinstance(inputs, dict) or not isinstance(outputs, dict) or not isinstance(runs, dict):
        lint.problem("top", "inputs, outputs and runs must be mappings")
        return
    for name, spec in inputs.items():
        where = "inputs.%s" % name
        if not isinstance(spec, dict):
            lint.problem(where, "not a mapping")
            continue
        for key in spec:
            if key not in INPUT_KEYS:
                lint.problem(where, "unknown key %r" % key)
        if "description" not in spec:
            lint.problem(where, "no description")
        if "default" in spec and not isinstance(spec["default"], str):
            lint.problem(where, "default %r is not a string (quote it: YAML reads yes, no, true, 1 "
                         "as other types)" % (spec["default"],))
    if runs.get("using") != "composite":
        lint.problem("runs.using", "%r, not composite" % runs.get("using"))
        return
    steps = runs.get("steps")
    if not isinstance(steps, list) or not steps:
        lint.problem("runs.steps", "no steps")
        return
    ids = {}
    used_inputs = set()

    def check_expr(where, expr, earlier):
        for pattern, kind in ACTION_EXPRS:
            m = pattern.match(expr)
            if not m:
                continue
            if kind == "input":
                used_inputs.add(m.group(1))
                if m.group(1) not in inputs:
                    lint.problem(where, "${{ %s }}: no input %r is declared" % (expr, m.group(1)))
            elif kind == "step":
                sid, out = m.group(1), m.group(2)
                if sid not in earlier:
                    lint.problem(where, "${{ %s }}: no earlier step has the id %r" % (expr, sid))
                elif not script_writes_output(earlier[sid], out):
                    lint.problem(where, "${{ %s }}: step %r writes no output %r to $GITHUB_OUTPUT"
                                 % (expr, sid, out))
            return
        lint.problem(where, "${{ %s }}: only inputs.NAME, github.action_path and "
                     "steps.ID.outputs.NAME are allowed in an action" % expr)

    for i, step in enumerate(steps):
        where = "runs.steps[%d]" % i
        if not isinstance(step, dict):
            lint.problem(where, "not a mapping")
            continue
        for key in step:
            if key not in COMPOSITE_STEP_KEYS:
                lint.problem(where, "unknown key %r" % key)
        sid = step.get("id")
        if sid is not None:
            if not isinstance(sid, str) or not re.match("^%s$" % NAME, sid):
                lint.problem(where, "id %r is not a valid id" % (sid,))
            elif sid in ids:
                lint.problem(where, "id %r is used twice" % sid)
        if "run" in step and "uses" in step:
            lint.problem(where, "both run and uses")
        if "run" not in step and "uses" not in step:
            lint.problem(where, "neither run nor uses")
        script = step.get("run")
        if script is not None:
            if not isinstance(script, str):
                lint.problem(where + ".run", "not a string")
                script = str(script)
            if "shell" not in step:
                lint.problem(where, "a run step without a shell (a composite action's steps need one)")
            elif step["shell"] != "bash":
                lint.problem(where + ".shell", "%r, not bash" % (step["shell"],))
            if "${{" in script:
                lint.problem(where + ".run", "an expression inside the script (pass it through env:): %s"
                             % script[script.index("${{"):][:60].split("\n")[0])
        env = step.get("env") or {}
        if not isinstance(env, dict):
            lint.problem(where + ".env", "not a mapping")
            env = {}
        for var, value in env.items():
            if not isinstance(value, str):
                lint.problem(where + ".env." + str(var), "not a string")
            if script is not None and not script_reads(script, var):
                lint.problem(where + ".env." + str(var), "the script never reads $%s" % var)
        for key in ("env", "with", "if", "working-directory", "name"):
            for expr in expressions(step.get(key)):
                check_expr("%s.%s" % (where, key), expr, ids)
        if isinstance(sid, str) and sid not in ids:
            ids[sid] = script or ""
    for name, spec in outputs.items():
        where = "outputs.%s" % name
        if not isinstance(spec, dict):
            lint.problem(where, "not a mapping")
            continue
        for key in spec:
            if key not in OUTPUT_KEYS:
                lint.problem(where, "unknown key %r" % key)
        value = spec.get("value")
        m = re.match(r"^\$\{\{\s*steps\.(%s)\.outputs\.(%s)\s*\}\}$" % (NAME, NAME), value or "") \
            if isinstance(value, str) else None
        if not m:
            lint.problem(where, "value %r is not one ${{ steps.ID.outputs.NAME }}" % (value,))
            continue
        check_expr(where + ".value", value.strip()[3:-2].strip(), ids)
    for name in inputs:
        if name not in used_inputs:
            lint.problem("inputs.%s" % name, "declared, but no step uses it")


def local_action(uses, root):
    """The directory of this repository's action that `uses` names, or None: ./action..., or
    OWNER/agentic-job/action...@REF."""
    if uses.startswith("./"):
        path = uses[2:].rstrip("/")
    else:
        m = re.match(r"^[^/@]+/agentic-job(?:-[a-z]+)?/(action[^@]*)@", uses)
        if not m:
            return None
        path = m.group(1).rstrip("/")
    if not (path == "action" or path.startswith("action/")):
        return None
    return os.path.join(root, path) if root else path


def lint_workflow(doc, lint, root=None, actions=None):
    """actions: a dict of directory -> parsed action.yml, to check with: keys against (None: load from
    root)."""
    if not isinstance(doc, dict):
        lint.problem("top", "not a mapping")
        return
    on = doc.get("on", doc.get(True))  # YAML 1.1 reads the key `on` as true
    if on is None:
        lint.problem("top", "no 'on'")
    events = set()
    if isinstance(on, str):
        events = {on}
    elif isinstance(on, list):
        events = set(on)
    elif isinstance(on, dict):
        events = set(on)
    jobs = doc.get("jobs")
    if not isinstance(jobs, dict) or not jobs:
        lint.problem("jobs", "no jobs")
        return
    top_shell = ((doc.get("defaults") or {}).get("run") or {}).get("shell")
    for jname, job in jobs.items():
        jwhere = "jobs.%s" % jname
        if not isinstance(job, dict):
            lint.problem(jwhere, "not a mapping")
            continue
        if "permissions" not in job and "permissions" not in doc:
            lint.problem(jwhere, "no permissions: (the token's default rights are too wide)")
        if "uses" in job:
            continue  # a reusable workflow's call
        job_shell = ((job.get("defaults") or {}).get("run") or {}).get("shell") or top_shell
        installed = False
        for i, step in enumerate(job.get("steps") or []):
            where = "%s.steps[%d]" % (jwhere, i)
            if not isinstance(step, dict):
                lint.problem(where, "not a mapping")
                continue
            for key in step:
                if key not in WORKFLOW_STEP_KEYS:
                    lint.problem(where, "unknown key %r" % key)
            uses = step.get("uses")
            if isinstance(uses, str):
                lint_uses(uses, step, where, lint, root, actions, events)
                if local_action(uses, None) == "action":
                    installed = True
            script = step.get("run")
            if script is None:
                continue
            if not isinstance(script, str):
                lint.problem(where + ".run", "not a string")
                continue
            shell = step.get("shell") or job_shell
            if not shell:
                lint.problem(where, "a run step without a shell (its own or defaults.run.shell)")
            elif not isinstance(shell, str):
                lint.problem(where + ".shell", "not a string")
            elif shell.split(" ")[0] == "agentic-job":
                if "{0}" not in shell or re.search(r"[{}]", shell.replace("{0}", "")) or \
                        re.search(r"['\"]", shell):
                    lint.problem(where + ".shell", "a custom shell needs {0} and no other brace or quote")
                if shell != CUSTOM_SHELL:
                    lint.problem(where + ".shell", "not the documented template %r" % CUSTOM_SHELL)
                if not installed:
                    lint.problem(where + ".shell", "agentic-job as the shell before the step that "
                                 "installs it (uses: .../action)")
            if "${{" in script:
                lint.problem(where + ".run", "an expression inside the script (pass it through env:): %s"
                             % script[script.index("${{"):][:60].split("\n")[0])


def lint_uses(uses, step, where, lint, root, actions, events):
    if uses.startswith("docker://"):
        lint.problem(where + ".uses", "a container action")
        return
    target = local_action(uses, root)
    if not uses.startswith("./"):
        ref = uses.rpartition("@")[2] if "@" in uses else ""
        if not SHA.match(ref):
            lint.problem(where + ".uses", "%s is not pinned to a full commit" % uses)
    if "pull_request_target" in events and uses.split("@")[0] == "actions/checkout":
        ref = str((step.get("with") or {}).get("ref", ""))
        if "head" in ref or "merge" in ref:
            lint.problem(where, "pull_request_target checks out the pull request (%s): its code would "
                         "run with the secrets" % ref)
    if target is None:
        return
    spec = None
    if actions is not None:
        spec = actions.get(local_action(uses, None))
    elif root:
        for name in ("action.yml", "action.yaml"):
            path = os.path.join(target, name)
            if os.path.exists(path):
                with open(path) as f:
                    spec = yaml.safe_load(f)
    if spec is None:
        lint.problem(where + ".uses", "%s names an action this repository does not have" % uses)
        return
    inputs = spec.get("inputs") or {}
    given = step.get("with") or {}
    for key in given:
        if key not in inputs:
            lint.problem(where + ".with", "%r is not an input of %s" % (key, uses))
    for key, ispec in inputs.items():
        if isinstance(ispec, dict) and ispec.get("required") is True and "default" not in ispec \
                and key not in given:
            lint.problem(where + ".with", "the required input %r of %s is not given" % (key, uses))


def lint_file(path, root):
    lint = Lint(os.path.relpath(path, root))
    try:
        with open(path) as f:
            doc = yaml.safe_load(f)
    except (OSError, yaml.YAMLError) as e:
        lint.problem("parse", str(e).replace("\n", " "))
        return lint.problems
    if isinstance(doc, dict) and "runs" in doc:
        lint_action(doc, lint)
    elif isinstance(doc, dict) and "jobs" in doc:
        lint_workflow(doc, lint, root=root)
    else:
        lint.problem("top", "neither an action (runs:) nor a workflow (jobs:)")
    return lint.problems


def lint_tree(root):
    files = []
    for top in ("action", "examples"):
        for d, _, names in os.walk(os.path.join(root, top)):
            for n in sorted(names):
                if (top == "action" and n in ("action.yml", "action.yaml")) or \
                        (top == "examples" and n.endswith((".yml", ".yaml"))):
                    files.append(os.path.join(d, n))
    problems = []
    actions = [f for f in files if os.path.basename(f).startswith("action.")]
    workflows = [f for f in files if f not in actions]
    for must in ("action/action.yml", "action/run/action.yml"):
        if os.path.join(root, must) not in files:
            problems.append("%s: missing" % must)
    if not workflows:
        problems.append("examples/: no workflow")
    for f in sorted(files):
        p = lint_file(f, root)
        problems += p
        if not p:
            print("ok %s" % os.path.relpath(f, root))
    for p in problems:
        print("FAIL %s" % p)
    print("%d files, %d problems" % (len(files), len(problems)))
    return 1 if problems else 0


# ---- the self-test: each bad file must fail for its reason, the good ones must pass -----------------------

GOOD_ACTION = """
name: a
description: d
inputs:
  who:
    description: w
    default: ""
outputs:
  greeting:
    description: g
    value: ${{ steps.hello.outputs.greeting }}
runs:
  using: composite
  steps:
    - id: hello
      shell: bash
      env:
        WHO: ${{ inputs.who }}
        HERE: ${{ github.action_path }}
      run: echo "greeting=hello $WHO from $HERE" >>"$GITHUB_OUTPUT"
    - shell: bash
      env:
        GREETING: ${{ steps.hello.outputs.greeting }}
      run: echo "$GREETING"
"""

GOOD_WORKFLOW = """
on: pull_request
permissions:
  contents: read
jobs:
  build:
    runs-on: ubuntu-24.04
    steps:
      - uses: actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683
      - uses: ./action
        with:
          check: "true"
          needed: x
      - shell: agentic-job sandbox exec --script {0} -- bash -eo pipefail
        run: make
      - shell: bash
        env:
          SHA: ${{ github.sha }}
        run: echo "$SHA"
"""


def mutate(text, old, new):
    assert old in text, old
    return text.replace(old, new, 1)


BAD_ACTIONS = [
    ("a run step without a shell", "a run step without a shell",
     lambda t: mutate(t, "    - id: hello\n      shell: bash\n", "    - id: hello\n")),
    ("a shell other than bash", "'sh', not bash",
     lambda t: mutate(t, "    - id: hello\n      shell: bash\n", "    - id: hello\n      shell: sh\n")),
    ("an input pasted into a script", "an expression inside the script",
     lambda t: mutate(t, 'echo "$GREETING"', 'echo "${{ inputs.who }}"')),
    ("any expression inside a script", "an expression inside the script",
     lambda t: mutate(t, 'echo "$GREETING"', 'echo "${{ github.sha }}"')),
    ("an output mapped to a step that does not exist", "no earlier step has the id 'hullo'",
     lambda t: mutate(t, "value: ${{ steps.hello.outputs.greeting }}",
                      "value: ${{ steps.hullo.outputs.greeting }}")),
    ("an output its step does not write", "writes no output 'greting'",
     lambda t: mutate(t, "value: ${{ steps.hello.outputs.greeting }}",
                      "value: ${{ steps.hello.outputs.greting }}")),
    ("an output that is not a step's", "is not one ${{ steps.ID.outputs.NAME }}",
     lambda t: mutate(t, "value: ${{ steps.hello.outputs.greeting }}", "value: ${{ inputs.who }}")),
    ("an output with no value", "value None is not one",
     lambda t: mutate(t, "    value: ${{ steps.hello.outputs.greeting }}\n", "")),
    ("an input that is not declared", "no input 'whom' is declared",
     lambda t: mutate(t, "WHO: ${{ inputs.who }}", "WHO: ${{ inputs.whom }}")),
    ("a declared input nothing uses", "declared, but no step uses it",
     lambda t: mutate(t, 'inputs:\n', 'inputs:\n  spare:\n    description: s\n    default: ""\n')),
    ("a step output used before its step", "no earlier step has the id 'later'",
     lambda t: mutate(mutate(t, "HERE: ${{ github.action_path }}", "HERE: ${{ steps.later.outputs.x }}"),
                      "    - shell: bash\n      env:\n        GREETING",
                      "    - id: later\n      shell: bash\n      env:\n        GREETING")),
    ("an expression the action may not use", "only inputs.NAME, github.action_path",
     lambda t: mutate(t, "HERE: ${{ github.action_path }}", "HERE: ${{ github.token }}")),
    ("an env variable the script never reads", "the script never reads $UNUSED",
     lambda t: mutate(t, "        HERE: ${{ github.action_path }}\n",
                      "        HERE: ${{ github.action_path }}\n        UNUSED: x\n")),
    ("a default that YAML reads as a boolean", "is not a string",
     lambda t: mutate(t, 'default: ""', "default: true")),
    ("a step id used twice", "id 'hello' is used twice",
     lambda t: mutate(t, "    - shell: bash\n      env:\n        GREETING",
                      "    - id: hello\n      shell: bash\n      env:\n        GREETING")),
    ("not a composite action", "not composite",
     lambda t: mutate(t, "using: composite", "using: node20")),
    ("an unknown step key", "unknown key 'runs'",
     lambda t: mutate(t, "      run: echo \"$GREETING\"", "      runs: echo \"$GREETING\"")),
]

BAD_WORKFLOWS = [
    ("a run step without a shell", "a run step without a shell",
     lambda t: mutate(t, "      - shell: bash\n        env:", "      - env:")),
    ("an expression inside a workflow's script", "an expression inside the script",
     lambda t: mutate(t, 'run: echo "$SHA"', 'run: echo "${{ github.sha }}"')),
    ("a custom shell without {0}", "needs {0}",
     lambda t: mutate(t, "--script {0} --", "--script script --")),
    ("a custom shell with a brace", "no other brace or quote",
     lambda t: mutate(t, "-- bash -eo pipefail\n", "-- bash -eo pipefail {1}\n")),
    ("the custom shell before the action installs it", "before the step that installs it",
     lambda t: mutate(t, "      - uses: ./action\n        with:\n          check: \"true\"\n          needed: x\n", "")),
    ("an action not pinned", "is not pinned to a full commit",
     lambda t: mutate(t, "checkout@11bd71901bbe5b1630ceea73d27597364c9af683", "checkout@v4")),
    ("an input the action does not declare", "'chek' is not an input of ./action",
     lambda t: mutate(t, "check: \"true\"", "chek: \"true\"")),
    ("a required input left out", "the required input 'needed' of ./action is not given",
     lambda t: mutate(t, "          needed: x\n", "")),
    ("no permissions", "no permissions",
     lambda t: mutate(t, "permissions:\n  contents: read\n", "")),
    ("pull_request_target checking out the pull request", "checks out the pull request",
     lambda t: mutate(mutate(t, "on: pull_request", "on: pull_request_target"),
                      "checkout@11bd71901bbe5b1630ceea73d27597364c9af683",
                      "checkout@11bd71901bbe5b1630ceea73d27597364c9af683\n        with:\n"
                      "          ref: ${{ github.event.pull_request.head.sha }}")),
]

SELF_ACTIONS = {
    "action": yaml.safe_load("""
name: x
description: x
inputs:
  check:
    description: c
    default: "true"
  needed:
    description: r
    required: true
runs:
  using: composite
  steps: []
"""),
}


def self_test():
    failures = 0

    def run_action(text):
        lint = Lint("inline")
        lint_action(yaml.safe_load(text), lint)
        return lint.problems

    def run_workflow(text):
        lint = Lint("inline")
        lint_workflow(yaml.safe_load(text), lint, actions=SELF_ACTIONS)
        return lint.problems

    for kind, good, bad, run in (("action", GOOD_ACTION, BAD_ACTIONS, run_action),
                                 ("workflow", GOOD_WORKFLOW, BAD_WORKFLOWS, run_workflow)):
        problems = run(good)
        if problems:
            failures += 1
            print("not ok - the good %s passes: %s" % (kind, problems))
        else:
            print("ok - the good %s passes" % kind)
        for what, reason, change in bad:
            problems = run(change(good))
            if any(reason in p for p in problems):
                print("ok - %s: %s fails" % (kind, what))
            else:
                failures += 1
                print("not ok - %s: %s: expected a problem with %r, got %s" % (kind, what, reason, problems))
    # Not parsed as YAML at all, and a file that is neither.
    for what, text in (("a file that is not YAML", "a: [b"), ("a file that is neither", "x: 1\n")):
        d = os.environ.get("TMPDIR", "/tmp")
        path = os.path.join(d, "action-lint-self-test-%d.yml" % os.getpid())
        try:
            with open(path, "w") as f:
                f.write(text)
            problems = lint_file(path, d)
        finally:
            os.unlink(path)
        if problems:
            print("ok - %s fails" % what)
        else:
            failures += 1
            print("not ok - %s passes" % what)
    print("# self-test: %d failed" % failures)
    return 1 if failures else 0


def main(argv):
    if len(argv) == 2 and argv[1] == "--self-test":
        return self_test()
    if len(argv) > 2 or (len(argv) == 2 and argv[1].startswith("-")):
        print(__doc__.strip().split("\n\n")[-2], file=sys.stderr)
        return 2
    root = argv[1] if len(argv) == 2 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    return lint_tree(os.path.abspath(root))


if __name__ == "__main__":
    sys.exit(main(sys.argv))
