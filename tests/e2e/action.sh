#!/usr/bin/env bash
# The GitHub Actions side end to end, inside a booted test host (tests/host/run), with GitHub simulated:
# the runner user `runner` with a hosted runner's sudo rule, a workspace and RUNNER_TEMP under its home,
# the job's variables (GITHUB_RUN_ID, GITHUB_RUN_ATTEMPT, GITHUB_JOB, ...) and stand-ins for its tokens
# (ACTIONS_RUNTIME_TOKEN, ACTIONS_ID_TOKEN_REQUEST_TOKEN, GITHUB_TOKEN), and tests/e2e/composite.py in the
# runner's place, run as the runner user: per step a script file, its own GITHUB_OUTPUT, GITHUB_ENV,
# GITHUB_PATH and GITHUB_STEP_SUMMARY, and the `env:` expressions evaluated (inputs, the action's path,
# earlier steps' outputs; anything else refused).
#
#   - action/action.yml, every step in order: built with meson from the action's own source (/src) and
#     installed through the runner's sudo, the configuration (the caller's file; then the one it writes
#     from its inputs, each checked with `sandbox setup --dry-run`, and its refusals), `sudo agentic-job
#     sandbox setup` run by the runner user as the action runs it (the sudo rule is the hosted runner's,
#     which the lock then takes), the sandbox user's name and home, `sandbox check --record`; then the
#     outputs, the record in RUNNER_TEMP, the summary, the lost sudo, the egress policy with the rules of
#     its egress-policy input. append-summary.sh keeps a step summary under 1 MiB with a note.
#   - action/run/action.yml: check --unless-passed takes that record (no probe); the run of a stand-in
#     claude (profile claude) with its token given as the input `token`: the key reaches the agent through
#     its file, is in no command line and no environment of the run, nowhere in RUNNER_TEMP or a summary;
#     the outputs, the summary. A failing agent's status comes through, with a whole check before it.
#   - The custom shell `agentic-job sandbox exec --script {0} -- bash -eo pipefail` as the runner
#     starts it: statuses 0, 7 and 124 pass through, the script is a file and standard input /dev/null
#     (a read takes nothing of the script), its output issues no workflow command, a working-directory
#     that is not the sandbox's is refused, no GITHUB_*, RUNNER_* or ACTIONS_* variable or token value of
#     the step reaches the sandbox (the runner's own shell, the control, sees them all), and the runner's
#     cancellation (SIGINT, 7.5 s, SIGTERM, 2.5 s, SIGKILL of
#     what it may kill) leaves no process of the sandbox user.
#
# With the argument `package` (tests/e2e/action-package.sh), the action installs a .deb instead, built
# in the host with dpkg-buildpackage from a copy of the source (debian/), given as its input `package`; the
# client is then /usr/bin/agentic-job and the helper /usr/libexec/agentic-job.
#
# The host is thrown away after the run: this suite installs the project and changes the host for good.
#
# usage: bash tests/host/run --release trixie|bookworm tests/e2e/action.sh [build|package]
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/integration/lib.sh
. "$here/../integration/lib.sh"

require_test_host tests/e2e/action.sh
MODE=${1:-build}
SRC=$(cd "$here/../.." && pwd)
ACTION=$SRC/action
COMPOSITE=$here/composite.py
case $MODE in
build) PREFIX=/usr/local ;;
package) PREFIX=/usr ;;
*)
        echo "Bail out! usage: action.sh [build|package]"
        exit 1
        ;;
esac
CLIENT=$PREFIX/bin/agentic-job
HELPER=$PREFIX/libexec/agentic-job
RUNNER=runner
SANDBOX=runner-sandbox
REPO=/srv/ajt-repo
SHELL_TEMPLATE="agentic-job sandbox exec --script {0} -- bash -eo pipefail"
work=$(mktemp -d /tmp/ajt-action.XXXXXX)
chmod 0755 "$work"
on_exit "rm -rf $work"
rand() { od -An -N12 -tx1 /dev/urandom | tr -d ' \n'; }

echo "# ${AJH_RELEASE:-unknown release}: $(systemctl --version | head -n1); $(python3 -c 'import yaml; print("PyYAML", yaml.__version__)' 2>&1)"
useradd --create-home --shell /bin/bash "$RUNNER"
# A hosted runner's rule: the runner user may do anything through sudo, until the lock takes it.
printf '%s ALL=(ALL) NOPASSWD: ALL\n' "$RUNNER" >/etc/sudoers.d/runner
chmod 0440 /etc/sudoers.d/runner
RUNNER_HOME=$(getent passwd "$RUNNER" | cut -d: -f6)
RUNNER_TEMP=$RUNNER_HOME/work/_temp
WORKSPACE=$RUNNER_HOME/work/fixture/fixture
install -d -m 0755 -o "$RUNNER" -g "$RUNNER" "$RUNNER_HOME/work" "$RUNNER_HOME/work/fixture" "$WORKSPACE" "$RUNNER_TEMP"
rm -f /etc/resolv.conf
printf 'nameserver 203.0.113.53\noptions timeout:1 attempts:1\n' >/etc/resolv.conf

# The job's tokens: stand-ins whose values must never reach the sandbox user.
SECRET_RUNTIME=ajt-runtime-$(rand)
SECRET_OIDC=ajt-oidc-$(rand)
SECRET_GH=ajt-gh-$(rand)
SECRET_STEP=ajt-step-$(rand)
TOKEN=sk-ajt-$(rand)
# as_job CMD...: CMD as the runner user, with a job's environment and nothing of root's.
as_job() {
        runuser -u "$RUNNER" -- env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
                HOME="$RUNNER_HOME" USER="$RUNNER" LANG=C.UTF-8 CI=true GITHUB_ACTIONS=true \
                GITHUB_RUN_ID=4242 GITHUB_RUN_ATTEMPT=1 GITHUB_JOB=secure GITHUB_REPOSITORY=ajt/fixture \
                GITHUB_WORKSPACE="$WORKSPACE" RUNNER_TEMP="$RUNNER_TEMP" RUNNER_OS=Linux \
                ACTIONS_RUNTIME_TOKEN="$SECRET_RUNTIME" ACTIONS_ID_TOKEN_REQUEST_TOKEN="$SECRET_OIDC" \
                ACTIONS_ID_TOKEN_REQUEST_URL="https://token.fake.test/?id=$SECRET_OIDC" \
                GITHUB_TOKEN="$SECRET_GH" "$@"
}
# composite NAME DIR INPUTS-JSON [ARGS...]: the action's steps as the runner; $work/NAME.log (its output),
# $work/NAME.json (its state), $work/NAME.summary (the job summary of its steps), $status. The inputs go
# in a file of the runner's (a token among them must not be on a command line, as the runner has none).
composite() {
        local name=$1 dir=$2
        printf '%s' "$3" >"$work/$name.inputs"
        : >"$work/$name.summary"
        chown "$RUNNER" "$work/$name.summary" "$work/$name.inputs"
        chmod 0600 "$work/$name.inputs"
        shift 3
        as_job python3 "$COMPOSITE" composite "$dir" --inputs "@$work/$name.inputs" --state "$work/$name.json" \
                --summary "$work/$name.summary" "$@" </dev/null >"$work/$name.log" 2>&1
        status=$?
}
# state NAME EXPRESSION: a value of $work/NAME.json, as Python indexes it (say ["outputs"]["record"]).
state() { python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval("d" + sys.argv[2]))' "$work/$1.json" "$2" 2>&1; }
show() { sed 's/^/# | /' "$work/$1.log"; }
chown "$RUNNER" "$work" # the runner writes its states there

# The caller's files in the workspace: the configuration, and rules for its egress-policy input.
cat >"$WORKSPACE/agentic-job.toml" <<EOT
[sandbox]
user = "$SANDBOX"
runner-user = "$RUNNER"
groups = []

[sandbox.check]
control-url = "https://www.fake.test/"
fetch-repo = "https://www.fake.test/git/fixture.git"

[egress]
proxy = true
EOT
cat >"$WORKSPACE/egress-extra.toml" <<'EOT'
[[write]]
name = "ajt-upload"
why = "the action test's own rule, from the egress-policy input"
hosts = ["upload.fake.test"]
methods = ["POST"]
paths = ["/ajt-upload/**"]
EOT
chown "$RUNNER:$RUNNER" "$WORKSPACE/agentic-job.toml" "$WORKSPACE/egress-extra.toml"
INPUTS='{"config": "agentic-job.toml", "egress-policy": "egress-extra.toml"}'
if [ "$MODE" = package ]; then
        # The tree as a commit would hold it, built as debian/ says (its tests are tests/e2e/package.sh's).
        echo "# the package, built in the host"
        version=$(dpkg-parsechangelog -l "$SRC/debian/changelog" -S Version)
        tree=$work/agentic-job-$version
        mkdir "$tree"
        tar -C "$SRC" --exclude-vcs --exclude='./build*' --exclude='./obj-*' --exclude='*.o' -cf - . | tar -C "$tree" -xf -
        if ! (cd "$tree" && DEB_BUILD_OPTIONS=nocheck dpkg-buildpackage -us -uc -b) </dev/null >"$work/deb.log" 2>&1; then
                tail -n 30 "$work/deb.log" | sed 's/^/# build: /'
                echo "Bail out! dpkg-buildpackage failed"
                exit 1
        fi
        DEB=agentic-job_${version}_$(dpkg --print-architecture).deb
        install -m 0644 -o "$RUNNER" "$work/$DEB" "$WORKSPACE/$DEB"
        pass "dpkg-buildpackage built $DEB"
        INPUTS="{\"config\": \"agentic-job.toml\", \"egress-policy\": \"egress-extra.toml\", \"package\": \"$DEB\"}"
fi

# ---------------------------------------------------------------------------------------------------------
echo "# action/action.yml: the install step ($MODE, through the runner's sudo)"
composite install "$ACTION" "$INPUTS" --until install
[ "$status" = 0 ] || show install
expect_eq "install: status 0" 0 "$status"
expect_eq "install: only the inputs' check and that step ran" "['inputs', 'install']" "$(state install '["order"]')"
expect_eq "install: output client" "$CLIENT" "$(state install '["steps"]["install"]["outputs"]["client"]')"
expect_eq "install: output share" "$PREFIX/share/agentic-job" "$(state install '["steps"]["install"]["outputs"]["share"]')"
if [ "$MODE" = build ]; then
        expect_eq "install: built in RUNNER_TEMP from the action's source" 1 \
                "$(find "$RUNNER_TEMP/agentic-job" -maxdepth 2 -path '*/build.*/build.ninja' | wc -l)"
else
        expect_eq "install: the package is installed" "install ok installed" "$(dpkg-query -W -f '${Status}' agentic-job 2>&1)"
        expect_eq "install: nothing was built" 0 "$(find "$RUNNER_TEMP/agentic-job" -maxdepth 1 -name 'build.*' | wc -l)"
fi
expect_eq "install: the client and helper are root's" "root root" \
        "$(stat -c %U "$CLIENT" "$HELPER" 2>&1 | tr '\n' ' ' | sed 's/ $//')"
expect_eq "install: agentic-job is on the runner's PATH there (the custom shell's first word)" "$CLIENT" \
        "$(as_job sh -c 'command -v agentic-job')"
if [ "$status" != 0 ] || [ ! -x "$CLIENT" ]; then
        echo "Bail out! the action did not install agentic-job"
        exit 1
fi

# ---------------------------------------------------------------------------------------------------------
echo "# the configuration step on its own: the rule for config and the four inputs"
GEN=$RUNNER_TEMP/agentic-job/config.toml
KVM='[]'
getent group kvm >/dev/null && KVM='["kvm"]'
# gen NAME INPUTS EXPECTED-TEXT: the step writes exactly that; setup --dry-run, as root, takes it.
gen() {
        composite "$1" "$ACTION" "$2" --only config
        expect_eq "$1: status 0" 0 "$status"
        expect_eq "$1: output file" "$GEN" "$(state "$1" '["steps"]["config"]["outputs"]["file"]')"
        expect_eq "$1: the file" "$3" "$(cat "$GEN" 2>&1)"
        "$CLIENT" sandbox setup --config "$GEN" --dry-run </dev/null >"$work/$1.dry" 2>&1
        expect_eq "$1: sandbox setup --dry-run takes it" "0 dry run: nothing was changed" "$? $(tail -n 1 "$work/$1.dry")"
}
gen gen-defaults '{}' "# Written by the agentic-job action from its inputs.
[sandbox]
user = \"runner-sandbox\"
runner-user = \"$RUNNER\"
lock-runner = true
groups = $KVM

[egress]
proxy = true"
gen gen-inputs '{"lock": "false", "egress": "false", "sandbox-user": "builder", "runner-user": "runner"}' \
        "# Written by the agentic-job action from its inputs.
[sandbox]
user = \"builder\"
runner-user = \"runner\"
lock-runner = false
groups = $KVM

[egress]
proxy = false"
expect_absent "the dry runs changed nothing" /etc/agentic-job
# refuse NAME INPUTS MESSAGE: the first step, the inputs' check, fails, and its annotation says why.
refuse() {
        composite "$1" "$ACTION" "$2" --only inputs
        expect_eq "$1: the step fails" 1 "$status"
        expect_contains "$1: an ::error:: annotation says why" "::error title=agentic-job::agentic-job action: $3" \
                "$(cat "$work/$1.log")"
}
refuse gen-mixed '{"config": "agentic-job.toml", "lock": "false"}' \
        "input lock is set together with config: put it in the configuration file instead"
refuse gen-mixed-user '{"config": "agentic-job.toml", "sandbox-user": "builder"}' "input sandbox-user is set together with config"
refuse gen-bool '{"lock": "yes"}' "input lock must be true or false, not 'yes'"
refuse gen-egress '{"egress": "off"}' "input egress must be true or false, not 'off'"
refuse gen-name '{"sandbox-user": "Builder"}' "input sandbox-user is not a user name: 'Builder'"
refuse gen-inject '{"sandbox-user": "x\"\n[egress]\nproxy = false\n#"}' "input sandbox-user is not a user name"
refuse gen-missing '{"config": "no-such.toml"}' "config: no such file: no-such.toml"
refuse gen-check '{"check": "maybe"}' "input check must be true or false, not 'maybe'"
refuse gen-policy '{"egress-policy": "no-such.toml"}' "egress-policy: no such file: no-such.toml"
refuse gen-policy-off '{"egress": "false", "egress-policy": "agentic-job.toml"}' "egress-policy is set, but egress is false"
refuse gen-package '{"package": "agentic-job.toml"}' "package: not a .deb: agentic-job.toml"
# An input that would start a workflow command of its own, on a line of its own in the annotation: its
# newline is %0A, so the runner reads one command, the action's.
refuse gen-forge '{"sandbox-user": "x\n::warning title=forged::forged"}' "input sandbox-user is not a user name: 'x%0A::warning title=forged::forged'"
expect_eq "gen-forge: no line of the log begins a command of the input's" 0 "$(grep -c '^::warning' "$work/gen-forge.log")"
composite gen-unknown "$ACTION" '{"lok": "true"}' --only config
expect_eq "an input the action does not declare: the stand-in refuses it" 2 "$status"

# ---------------------------------------------------------------------------------------------------------
echo "# action/action.yml: the rest of its steps, in order, after the install"
composite secure "$ACTION" "$INPUTS" --from config --prior "$work/install.json"
show secure
expect_eq "secure: status 0" 0 "$status"
expect_eq "secure: every step, in order" "['inputs', 'install', 'config', 'setup', 'sandbox', 'check']" "$(state secure '["order"]')"
expect_eq "output sandbox-user" "$SANDBOX" "$(state secure '["outputs"]["sandbox-user"]')"
SANDBOX_HOME=$(getent passwd "$SANDBOX" | cut -d: -f6)
SANDBOX_UID=$(id -u "$SANDBOX" 2>/dev/null || echo none)
expect_eq "output sandbox-home" "$SANDBOX_HOME" "$(state secure '["outputs"]["sandbox-home"]')"
RECORD=$RUNNER_TEMP/agentic-job-sandbox-checked
expect_eq "output record" "$RECORD" "$(state secure '["outputs"]["record"]')"
expect_eq "the record: the runner's, 0600" "$RUNNER 600" "$(stat -c '%U %a' "$RECORD" 2>&1)"
expect_eq "the record: this job's run, attempt and job" "run-id=4242 run-attempt=1 job=secure" \
        "$(sed -n 2,4p "$RECORD" 2>&1 | tr '\n' ' ' | sed 's/ $//')"
expect_eq "the installed configuration is the caller's file, byte for byte" \
        "$(sha256sum <"$WORKSPACE/agentic-job.toml")" "$(sha256sum </etc/agentic-job/config.toml)"
expect_eq "setup's last stage, the lock, ran" 1 "$(grep -c '^stage lock: .* ok$' "$work/secure.log")"
expect_eq "the runner user has lost sudo" 1 "$(runuser -u "$RUNNER" -- sudo -n true >/dev/null 2>&1; echo $?)"
# The next job on this runner, were it reused: the first step says so, before any build.
composite again "$ACTION" "$INPUTS"
expect_eq "a second job on the machine: the action fails" "1 ['inputs']" "$status $(state again '["order"]')"
expect_contains "... in its first step, which says why" \
        "::error title=agentic-job::agentic-job action: this machine was set up by an earlier job" "$(cat "$work/again.log")"
POLICY=/opt/egress-proxy/policy/policy.toml
expect_contains "the egress policy holds the input's rule" 'name = "ajt-upload"' "$(cat "$POLICY" 2>&1)"
expect_contains "... after the shipped rules" 'name = "git-fetch"' "$(cat "$POLICY" 2>&1)"
"$CLIENT" policy test POST https://upload.fake.test/ajt-upload/x --body >/dev/null 2>&1
expect_eq "policy test: the input's rule admits its POST" 0 "$?"
"$CLIENT" policy test POST https://upload.fake.test/elsewhere --body >/dev/null 2>&1
expect_eq "policy test: and no other" 1 "$?"
SUM=$(cat "$work/secure.summary")
expect_contains "the job summary: the check's table" "### agentic-job sandbox check" "$SUM"
results=$(grep -cE '^(ok|FAIL|note) \[' "$work/secure.log")
checked=$(grep -c '^ok \[' "$work/secure.log")
expect_eq "the job summary: a row per result of the check" "$results" "$(grep -cE '^\| (ok|FAIL|note) \| `' <<<"$SUM")"
expect_eq "the job summary: more than a handful of probes" 1 "$([ "$checked" -ge 20 ] && echo 1 || echo 0)"
expect_contains "the job summary: none failed" ", 0 failed, " "$SUM"
expect_eq "the check step's summary is under 1 MiB" 1 \
        "$([ "$(state secure '["steps"]["check"]["summary_bytes"]')" -lt 1048576 ] && echo 1 || echo 0)"
if [ "$(state secure '["result"]')" != success ]; then
        echo "Bail out! the hardening action failed"
        exit 1
fi

# ---------------------------------------------------------------------------------------------------------
echo "# append-summary.sh: a step summary kept under 1 MiB"
APPEND=$ACTION/append-summary.sh
# shellcheck disable=SC2016 # the backquotes are Markdown's
seq 1 200000 | sed 's/^/| ok | `probe` | row /' >"$work/big.md"
# shellcheck disable=SC2016
seq 1 3 | sed 's/^/| ok | `probe` | row /' >"$work/small.md"
chmod 0644 "$work/big.md" "$work/small.md"
# append CASE PREFILL-BYTES SOURCE: $work/CASE.md is the step summary, holding PREFILL bytes before
append() {
        head -c "$2" /dev/zero | tr '\0' 'x' >"$work/$1.md"
        chown "$RUNNER" "$work/$1.md"
        as_job env GITHUB_STEP_SUMMARY="$work/$1.md" bash "$APPEND" "$3" >"$work/$1.out" 2>&1
        status=$?
}
append fits 0 "$work/small.md"
expect_eq "a small table: status 0" 0 "$status"
expect_eq "a small table: appended whole" "$(cat "$work/small.md")" "$(cat "$work/fits.md")"
append cut 0 "$work/big.md"
expect_eq "a table over the limit: status 0" 0 "$status"
size=$(wc -c <"$work/cut.md")
expect_eq "... the summary stays under 1 MiB (at most 1000000 bytes)" 1 "$([ "$size" -le 1000000 ] && [ "$size" -gt 990000 ] && echo 1 || echo 0)"
expect_contains "... with a note" "> **Truncated:** the step summary is limited to 1 MiB; the first" "$(tail -n 1 "$work/cut.md")"
# shellcheck disable=SC2016
kept=$(grep -c '^| ok | `probe` | row [0-9]*$' "$work/cut.md")
expect_eq "... cut at the end of a line: whole rows, then a blank line and the note" "$((kept + 3))" "$(wc -l <"$work/cut.md")"
expect_eq "... the rows kept are the first ones" "$(head -n "$kept" "$work/big.md" | sha256sum)" "$(head -n "$kept" "$work/cut.md" | sha256sum)"
expect_contains "... and the log says so" "did not fit in the step summary" "$(cat "$work/cut.out")"
append nearly-full 990000 "$work/big.md"
size=$(wc -c <"$work/nearly-full.md")
expect_eq "a summary holding 990000 bytes already: what is added stays under the limit" 1 \
        "$([ "$size" -le 1000000 ] && [ "$size" -gt 990000 ] && echo 1 || echo 0)"
expect_contains "... with the note" "**Truncated:**" "$(tail -n 1 "$work/nearly-full.md")"
append full 999800 "$work/big.md"
expect_eq "a summary with no room left: unchanged" 999800 "$(wc -c <"$work/full.md")"
expect_contains "... and the log says what was left out" "not appended" "$(cat "$work/full.out")"

# ---------------------------------------------------------------------------------------------------------
echo "# action/run/action.yml: a stand-in claude, the token through the input"
git_q() { git -c init.defaultBranch=main -c user.name=t -c user.email=t@t.test "$@" >/dev/null 2>&1; }
install -d -m 0755 "$REPO"
git_q -C "$REPO" init
echo hello >"$REPO/README"
git_q -C "$REPO" add -A
git_q -C "$REPO" commit -m base
COMMIT=$(git -C "$REPO" rev-parse HEAD)
chmod -R a+rX "$REPO"
# The stand-in: its key from the apiKeyHelper of its --settings, as Claude Code takes it; a review out;
# then it waits for root's look at every process (the go file, in its exported directory).
cat >/usr/local/bin/claude <<'EOT'
#!/bin/bash
settings=
for a in "$@"; do [ "$prev" = --settings ] && settings=$a; prev=$a; done
helper=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["apiKeyHelper"])' "$settings")
key=$(/bin/sh -c "$helper")
mkdir -p out
# The key by its hash: an output that held the key itself would be refused (run exports no secret).
[[ $key =~ ^ajb-[0-9a-f]{48}$ ]] && placeholder=yes || placeholder=no
printf '%s\n' "key-sha256: $(printf '%s' "$key" | sha256sum | cut -d' ' -f1)" "key-placeholder: $placeholder" \
        "argv: $*" "task: $(cat)" >out/record.txt
printf '# Review\n\nLooks fine.\n' >review.md
echo "stand-in claude: ready"
for _ in $(seq 300); do [ -e out/go ] && break; sleep 0.1; done
echo '{"type":"result","subtype":"success"}'
EOT
chmod 0755 /usr/local/bin/claude
on_exit "rm -f /usr/local/bin/claude"
echo "Review the change." >"$WORKSPACE/task.md"
chown "$RUNNER" "$WORKSPACE/task.md"
# While the stand-in waits: the token in any process's command line, or in the run's environment.
watch_token() {
        local p n_cmd=0 n_env=0 seen=0 go
        for _ in $(seq 600); do
                go=$(find "$SANDBOX_HOME" -maxdepth 4 -path '*/workspace/out' -type d 2>/dev/null | head -n 1)
                [ -n "$go" ] && grep -q 'stand-in claude: ready' "$work/run.log" 2>/dev/null && { seen=1; break; }
                sleep 0.1
        done
        # The token in a file of root's, for grep -f: on grep's command line it would find itself.
        for p in /proc/[0-9]*; do
                grep -qaF -f "$work/token.pattern" "$p/cmdline" 2>/dev/null && n_cmd=$((n_cmd + 1))
                [ "$(readlink "$p/exe" 2>/dev/null)" = "$CLIENT" ] && grep -qaF -f "$work/token.pattern" "$p/environ" 2>/dev/null &&
                        n_env=$((n_env + 1))
        done
        echo "seen=$seen cmdline=$n_cmd client-environ=$n_env" >"$work/watch.out"
        [ -n "$go" ] && runuser -u "$SANDBOX" -- touch "$go/go"
}
printf '%s\n' "$TOKEN" >"$work/token.pattern"
chmod 0600 "$work/token.pattern"
watch_token &
watcher=$!
on_exit "kill $watcher"
RUN_INPUTS=$(printf '{"repo": "%s", "commit": "%s", "base": "main", "task": "task.md", "outputs": "review.md\\nout/record.txt\\n", "profile": "claude", "token": "%s", "args": "--max-turns\\n3"}' \
        "$REPO" "$COMMIT" "$TOKEN")
composite run "$ACTION/run" "$RUN_INPUTS"
wait "$watcher"
show run
expect_eq "run: status 0" 0 "$status"
expect_eq "run: its steps, sandbox end last" "['inputs', 'check', 'run', 'end']" "$(state run '["order"]')"
expect_contains "run: the check took the hardening step's record" "no probe made" "$(cat "$work/run.log")"
expect_eq "run: output status" 0 "$(state run '["outputs"]["status"]')"
OUT=$RUNNER_TEMP/agentic-job-run
expect_eq "run: output out" "$OUT" "$(state run '["outputs"]["out"]')"
expect_eq "run: output summary" "$OUT/summary.json" "$(state run '["outputs"]["summary"]')"
expect_eq "run: review.md exported" "# Review

Looks fine." "$(cat "$OUT/workspace/review.md" 2>&1)"
# Confined, with the proxy, the claude profile's key stays with the key broker: the file holds a placeholder.
expect_eq "run: what reached the agent through its file is the run's placeholder" "key-placeholder: yes" \
        "$(grep '^key-placeholder: ' "$OUT/workspace/out/record.txt" 2>&1)"
expect_lacks "... not the key" "key-sha256: $(printf '%s' "$TOKEN" | sha256sum | cut -d' ' -f1)" \
        "$(grep '^key-sha256: ' "$OUT/workspace/out/record.txt" 2>&1)"
expect_contains "... as the summary says" '"token": "broker"' "$(cat "$OUT/summary.json" 2>&1)"
expect_contains "run: the words of args, one each" "argv: --bare -p " "$(grep '^argv: ' "$OUT/workspace/out/record.txt" 2>&1)"
expect_contains "... after the profile's" " --max-turns 3" "$(grep '^argv: ' "$OUT/workspace/out/record.txt" 2>&1)"
expect_eq "run: the task on the agent's standard input" "task: Review the change." "$(grep '^task: ' "$OUT/workspace/out/record.txt" 2>&1)"
expect_eq "while the agent ran: the token in no command line, nor in the client's environment" \
        "seen=1 cmdline=0 client-environ=0" "$(cat "$work/watch.out" 2>&1)"
expect_eq "the token in no file of RUNNER_TEMP, the export with them (the scripts, the summaries, the states)" "" \
        "$(grep -rlF -f "$work/token.pattern" "$RUNNER_TEMP" "$work/run.summary" "$work/run.json" 2>/dev/null)"
expect_eq "the run step's summary: the run's summary.md, whole" "$(wc -c <"$OUT/summary.md" 2>&1)" \
        "$(state run '["steps"]["run"]["summary_bytes"]')"
expect_eq "... after the check's" "$(cat "$OUT/summary.md" 2>&1)" \
        "$(tail -c "$(state run '["steps"]["run"]["summary_bytes"]')" "$work/run.summary")"
expect_contains "... which is the run's" "## agentic-job run: succeeded (exit 0)" "$(cat "$work/run.summary")"
expect_eq "nothing of the sandbox user survived the run" "" "$(live_of_uid "$SANDBOX_UID")"

echo "# action/run/action.yml: a failing agent, after a whole check (the record was taken)"
composite run-fail "$ACTION/run" "$(printf '{"repo": "%s", "ref": "main", "base": "main", "task": "task.md", "outputs": "review.md", "profile": "command", "args": "/bin/sh\\n-c\\nexit 1"}' "$REPO")"
expect_eq "run-fail: the action fails" 1 "$status"
expect_eq "run-fail: its check passed, every probe made" "0 $checked" \
        "$(state run-fail '["steps"]["check"]["status"]') $(grep -c '^ok \[' "$work/run-fail.log")"
expect_eq "run-fail: output status, the run's" 1 "$(state run-fail '["outputs"]["status"]')"
expect_eq "run-fail: out, the next free name" "$RUNNER_TEMP/agentic-job-run-2" "$(state run-fail '["outputs"]["out"]')"
expect_contains "run-fail: the summary says so" "(exit 1)" "$(cat "$work/run-fail.summary")"
expect_contains "run-fail: an annotation names the result" \
        "::error title=agentic-job run::agentic-job run action: agentic-job run ended with status 1 (agent-failed): $RUNNER_TEMP/agentic-job-run-2/summary.md says why" \
        "$(cat "$work/run-fail.log")"
composite run-none "$ACTION/run" "$(printf '{"repo": "%s", "ref": "main", "base": "main", "task": "task.md"}' "$REPO")"
expect_eq "run with neither outputs nor patch: refused in the first step" "1 ['inputs', 'end']" \
        "$status $(state run-none '["order"]')"
expect_contains "... which says why" "nothing to export: give outputs (one path a line), patch: true, or both" \
        "$(cat "$work/run-none.log")"
composite run-both "$ACTION/run" "$(printf '{"repo": "%s", "ref": "main", "commit": "%s", "base": "main", "task": "task.md", "outputs": "x"}' "$REPO" "$COMMIT")"
expect_eq "run with commit and ref: the action fails" 1 "$status"
expect_contains "... and says why" "inputs commit and ref exclude each other" "$(cat "$work/run-both.log")"

echo "# action/run/action.yml: the runner's cancellation mid-agent: SIGINT, 7.5 s, SIGTERM, 2.5 s, SIGKILL, to the step's shell alone"
touch "$work/run-cancel.go" # the cancel begins as the agent's line shows
composite run-cancel "$ACTION/run" "$(printf '{"repo": "%s", "commit": "%s", "base": "main", "task": "task.md", "outputs": "x", "profile": "command", "args": "/bin/sh\\n-c\\necho agent-waiting; exec sleep 300"}' "$REPO" "$COMMIT")" \
        --cancel-when "$work/run-cancel.go" --marker agent-waiting --orphans kill
show run-cancel
expect_contains "run-cancel: the agent ran before the cancel (the control)" "agent-waiting" "$(cat "$work/run-cancel.log")"
expect_eq "run-cancel: the action was cancelled" cancelled "$(state run-cancel '["result"]')"
expect_eq "run-cancel: SIGINT alone reached the step: run ended within the runner's first wait" "['SIGINT']" \
        "$(python3 -c 'import json, sys; print([s[0] for s in json.load(open(sys.argv[1]))["steps"]["run"]["cancel"]["signals"]])' "$work/run-cancel.json" 2>&1)"
expect_eq "run-cancel: the run step's status is run's, cancelled" 1 "$(state run-cancel '["steps"]["run"]["status"]')"
expect_contains "run-cancel: run's summary names the runner's signal" "cancelled by signal 2" \
        "$(cat "$(state run-cancel '["outputs"]["out"]')/summary.json" 2>&1)"
expect_eq "run-cancel: the sandbox end step ran after it (if: always())" 0 "$(state run-cancel '["steps"]["end"]["status"]')"
expect_eq "run-cancel: nothing was left for the runner's clean-up of orphans" "[]" "$(state run-cancel '["orphans_killed"]')"
expect_eq "run-cancel: nothing of the sandbox user survived" "" "$(live_of_uid "$SANDBOX_UID")"
echo "# run-cancel: run ended $(state run-cancel '["steps"]["run"]["cancel"]["exited_after"]') s after the SIGINT"

echo "# the check step again, with a protection removed: it fails, its table is in the summary, no record"
chmod 0755 "$RUNNER_HOME"
composite check-fail "$ACTION" "$INPUTS" --from check --prior "$work/secure.json"
chmod 0700 "$RUNNER_HOME"
expect_eq "check-fail: the step fails with the check's status" "1 1" "$status $(state check-fail '["steps"]["check"]["status"]')"
expect_contains "check-fail: the failed probe is in the summary" "| FAIL | \`private-dir:$RUNNER_HOME\` |" \
        "$(cat "$work/check-fail.summary")"
expect_eq "check-fail: output record empty" "" "$(state check-fail '["outputs"]["record"]')"
expect_contains "check-fail: an annotation says the check failed" \
        "::error title=agentic-job::agentic-job action: sandbox check failed: " "$(cat "$work/check-fail.log")"
expect_contains "... and names the first failure" "failed, the first: FAIL [private-dir:$RUNNER_HOME]" \
        "$(cat "$work/check-fail.log")"
expect_absent "check-fail: no record" "$RECORD"

# ---------------------------------------------------------------------------------------------------------
echo "# the custom shell, as the runner starts it"
# step NAME SCRIPT [TEMPLATE] [ARGS...]: one step; $work/NAME.out its output, $status.
step() {
        local name=$1 text=$2 template=${3:-$SHELL_TEMPLATE}
        shift 3 2>/dev/null || shift $#
        printf '%s\n' "$text" >"$work/$name.step"
        chmod 0644 "$work/$name.step"
        as_job python3 "$COMPOSITE" shell "$template" "$work/$name.step" \
                --env "{\"STEP_SECRET\": \"$SECRET_STEP\", \"GITHUB_STEP_VALUE\": \"$SECRET_STEP\"}" \
                --report "$work/$name.report" "$@" </dev/null >"$work/$name.out" 2>&1
        status=$?
}
step ok 'true'
expect_eq "status 0 passes through" 0 "$status"
step seven 'echo before; exit 7'
expect_eq "status 7 passes through" "7 before" "$status $(cat "$work/seven.out")"
step timeout 'exit 124'
expect_eq "status 124 passes through" 124 "$status"
step who 'id -un; pwd'
expect_eq "as the sandbox user, in its home" "$SANDBOX
$SANDBOX_HOME" "$(cat "$work/who.out")"
# shellcheck disable=SC2016 # the sandbox's shell expands it
step stdin 'IFS= read -r next || echo "read: the end of its input"
echo this-line-runs
printf "next=%s\n" "${next-}"'
expect_eq "standard input is /dev/null: a read takes nothing of the script, whose next line runs" \
        "read: the end of its input
this-line-runs
next=" "$(cat "$work/stdin.out")"
expect_contains "the script file is the runner's, in RUNNER_TEMP, without an extension" "$RUNNER_TEMP/" \
        "$(python3 -c 'import json, sys; a = json.load(open(sys.argv[1]))["argv"]; print(a[a.index("--script") + 1])' "$work/stdin.report" 2>&1)"
# shellcheck disable=SC2016 # the sandbox's shell expands it
step script-name 'printf "%s\n" "$0"'
expect_eq "bash reads the script as a file of the sandbox side's own (/dev/fd/N)" 1 \
        "$(grep -cx '/dev/fd/[0-9][0-9]*' "$work/script-name.out")"
step forge 'printf "::set-output name=patch::x\n::add-mask::y\n##[group]z\n"'
expect_eq "its output issues no workflow command" ": :set-output name=patch::x
: :add-mask::y
## [group]z" "$(cat "$work/forge.out")"
step elsewhere 'pwd' "$SHELL_TEMPLATE" --working-directory /tmp
expect_eq "a working-directory neither the workspace nor under the sandbox's home: refused, status 2" 2 "$status"
expect_contains "... and said" "agentic-job sandbox exec: the step's directory /tmp is not under the sandbox user's home $SANDBOX_HOME: cd in the script instead" \
        "$(cat "$work/elsewhere.out")"
ENV_SCRIPT='env | sort'
step env-control "$ENV_SCRIPT" "bash --noprofile --norc -e -o pipefail {0}"
for v in "GITHUB_TOKEN=$SECRET_GH" "ACTIONS_RUNTIME_TOKEN=$SECRET_RUNTIME" "ACTIONS_ID_TOKEN_REQUEST_TOKEN=$SECRET_OIDC" \
        "STEP_SECRET=$SECRET_STEP" "GITHUB_STEP_VALUE=$SECRET_STEP" "RUNNER_TEMP=$RUNNER_TEMP" "GITHUB_OUTPUT="; do
        expect_contains "control: the runner's own bash step has ${v%%=*}" "$v" "$(cat "$work/env-control.out")"
done
step env "$ENV_SCRIPT"
expect_eq "the sandbox's step: status 0" 0 "$status"
expect_contains "... it printed its environment" "USER=$SANDBOX" "$(cat "$work/env.out")"
expect_eq "... no GITHUB_*, RUNNER_* or ACTIONS_* variable" "" "$(grep -E '^(GITHUB|RUNNER|ACTIONS)_' "$work/env.out")"
for s in "$SECRET_GH" "$SECRET_RUNTIME" "$SECRET_OIDC" "$SECRET_STEP" "$TOKEN"; do
        expect_lacks "... no value of the step's: ${s%%-*}-..." "$s" "$(cat "$work/env.out")"
done

# kill_user: every process of the sandbox user ended, as the product ends them (the helper's kill-user,
# through the runner's sudo rule).
kill_user() { runuser -u "$RUNNER" -- sudo -n "$HELPER" helper kill-user </dev/null >/dev/null 2>&1; }
on_exit kill_user
# cancel NAME SCRIPT: the runner's cancellation of a step that printed "started"; the sandbox user's
# processes are counted before it (the control) and after the step has ended.
cancel() {
        local name=$1 pid before
        rm -f "$work/$name.go"
        kill_user
        expect_eq "$name: no process of the sandbox user before the step" "" "$(live_of_uid "$SANDBOX_UID")"
        step "$name" "$2" "$SHELL_TEMPLATE" --cancel-when "$work/$name.go" --marker started &
        pid=$!
        for _ in $(seq 200); do grep -q '^started$' "$work/$name.out" 2>/dev/null && break; sleep 0.05; done
        before=$(live_of_uid "$SANDBOX_UID" | wc -l)
        expect_eq "$name: before the cancel, its processes run (the control)" 1 "$([ "$before" -ge 2 ] && echo 1 || echo 0)"
        touch "$work/$name.go"
        wait "$pid"
        local after
        after=$(left_of_uid "$SANDBOX_UID")
        echo "# $name: $(python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); print("status", r["status"], "after", r.get("exited_after"), "s; sent", ", ".join(s[0] + " at " + str(s[1]) for s in r["signals"]))' "$work/$name.report" 2>&1)"
        expect_eq "$name: no process of the sandbox user is left" 0 "$after"
        [ "$after" = 0 ] || ps -o pid,user,stat,args -u "$SANDBOX_UID" | sed 's/^/# | /'
}
cancel cancel-plain 'sleep 300 &
echo started
sleep 301'
cancel cancel-deaf "trap '' INT TERM
sleep 300 &
echo started
sleep 301"

finish
