#!/usr/bin/env bash
# The main job end to end, as README.md's first command shows it, inside a disposable test host: sandbox
# setup with the egress proxy, sandbox check, a run of a scripted agent (no model: a shell script that
# edits the clone and tries to reach what it must not), and an untrusted build step through sandbox exec.
# It prints each command and what it printed; the checks at the end make it a test too.
#
# usage: bash tests/demo [trixie|bookworm]       (installs what it needs, then this in a test host)
#        bash tests/host/run --release trixie|bookworm tests/e2e/demo.sh
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/integration/lib.sh
. "$here/../integration/lib.sh"

require_test_host tests/e2e/demo.sh
build=${AJH_BUILD:-/build}
CLIENT=/usr/local/bin/agentic-job
RUNNER=runner
work=$(mktemp -d /tmp/ajt-demo.XXXXXX)
chmod 0755 "$work"
on_exit "rm -rf $work"

ninja -C "$build" install >"$work/install.log" 2>&1 || { cat "$work/install.log"; echo "Bail out! install"; exit 1; }
useradd --create-home --shell /bin/bash "$RUNNER"
RUNNER_HOME=$(getent passwd "$RUNNER" | cut -d: -f6)
RUNNER_TEMP=$RUNNER_HOME/temp
install -d -m 0700 -o "$RUNNER" -g "$RUNNER" "$RUNNER_TEMP"
rm -f /etc/resolv.conf
printf 'nameserver 203.0.113.53\noptions timeout:1 attempts:1\n' >/etc/resolv.conf

# show TITLE CMD...: prints "$ CMD" and its output (indented), keeps its status in $status.
show() {
        local title=$1
        shift
        printf '#\n# ---- %s\n# $ %s\n' "$title" "$*"
        "$@" >"$work/out" 2>&1
        status=$?
        sed 's/^/#   /' "$work/out"
        echo "#   (exit $status)"
}
as_runner() {
        runuser -u "$RUNNER" -- env -i PATH=/usr/bin:/bin HOME="$RUNNER_HOME" RUNNER_TEMP="$RUNNER_TEMP" \
                GITHUB_RUN_ID=1 GITHUB_RUN_ATTEMPT=1 GITHUB_JOB=demo "$@"
}

cat >"$work/config.toml" <<EOT
[sandbox]
runner-user = "$RUNNER"
groups = []

[sandbox.check]
control-url = "https://www.fake.test/"
fetch-repo = "https://www.fake.test/git/fixture.git"

[egress]
proxy = true
EOT
chmod 0644 "$work/config.toml"
echo "# The configuration ($work/config.toml):"
sed 's/^/#   /' "$work/config.toml"
show "1. harden the machine (as root)" "$CLIENT" sandbox setup --config "$work/config.toml"
expect_eq "setup: status 0" 0 "$status"
SANDBOX_HOME=$(getent passwd runner-sandbox | cut -d: -f6)

show "2. prove it, as the runner" as_runner "$CLIENT" sandbox check
expect_eq "check: status 0" 0 "$status"
expect_contains "check: the last line counts the probes" " ok, 0 failed" "$(tail -n 1 "$work/out")"

# A repository and a scripted agent.
git_q() { git -c init.defaultBranch=main -c user.name=demo -c user.email=demo@fake.test "$@" >/dev/null 2>&1; }
repo=/srv/demo-repo
install -d -m 0755 "$repo"
git_q -C "$repo" init
printf 'def add(a, b):\n    return a - b\n' >"$repo/calc.py"
git_q -C "$repo" add -A
git_q -C "$repo" commit -m "calc"
commit=$(git -C "$repo" rev-parse HEAD)
chmod -R a+rX "$repo"
install -d -m 0755 /opt/demo
cat >/opt/demo/agent.sh <<'EOT'
#!/bin/bash
# A scripted "agent": fixes the bug, writes a review, and tries what it must not.
sed -i 's/a - b/a + b/' calc.py
{
        echo "Fixed add(): it subtracted."
        cat "$AGENTIC_JOB_TASK" >/dev/null && echo "Read the task."
        curl -s -m 5 https://www.fake.test/ >/dev/null && echo "Read https://www.fake.test/ through the proxy."
        curl -s -m 5 -o /dev/null -w '%{http_code}' -X POST -d x https://www.fake.test/upload |
                sed 's/^/A POST to www.fake.test was answered /'
        echo
        curl -s -m 5 --noproxy '*' http://169.254.169.254/ >/dev/null || echo "The metadata service is unreachable."
        cat ~runner/.bashrc >/dev/null 2>&1 || echo "The runner's home is closed."
} >review.md
EOT
chmod 0755 /opt/demo/agent.sh
echo "Fix the bug in calc.py and write review.md." >"$work/task.md"
chmod 0644 "$work/task.md"
show "3. an agent run from a clean clone of an exact commit" as_runner "$CLIENT" run --repo "$repo" \
        --commit "$commit" --base main --task "$work/task.md" --out "$RUNNER_HOME/out" --output review.md \
        --patch -- /opt/demo/agent.sh
expect_eq "run: status 0" 0 "$status"
printf '#\n# What the run exported (%s):\n' "$RUNNER_HOME/out"
(cd "$RUNNER_HOME/out" && find . -type f | sort | sed 's/^/#   /')
echo "# workspace/review.md:"
sed 's/^/#   /' "$RUNNER_HOME/out/workspace/review.md" 2>/dev/null
echo "# patch.diff:"
sed 's/^/#   /' "$RUNNER_HOME/out/patch.diff" 2>/dev/null

mkdir -p "$work/step"
printf 'echo "building as $(id -un) in $PWD"\nenv | grep -c "^GITHUB_" || true\nsudo -n true 2>&1 | head -n 1 || true\nexit 7\n' >"$work/step/script.sh"
chmod -R a+rX "$work/step"
show "4. an untrusted build step, as the workflow's custom shell runs it" as_runner env GITHUB_TOKEN=secret-demo \
        "$CLIENT" sandbox exec --chdir "$SANDBOX_HOME" --stdin "$work/step/script.sh" -- bash -eo pipefail -s
expect_eq "the step's status passes through" 7 "$status"
expect_contains "the step ran as the sandbox user" "building as runner-sandbox" "$(cat "$work/out")"
expect_lacks "no value of the job's reached it" "secret-demo" "$(cat "$work/out")"

expect_contains "the agent's review was exported" "Fixed add()" "$(cat "$RUNNER_HOME/out/workspace/review.md" 2>&1)"
expect_contains "so was its patch" "+    return a + b" "$(cat "$RUNNER_HOME/out/patch.diff" 2>&1)"
expect_contains "the POST met the proxy's 403" "answered 403" "$(cat "$RUNNER_HOME/out/workspace/review.md" 2>&1)"
expect_contains "the metadata service was unreachable" "metadata service is unreachable" \
        "$(cat "$RUNNER_HOME/out/workspace/review.md" 2>&1)"
finish
