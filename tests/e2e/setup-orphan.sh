#!/usr/bin/env bash
# `agentic-job sandbox setup` on a machine where an earlier user of the uid the sandbox user is given left
# a program in /usr/local/sbin, inside a test host (tests/host/run): the file would be the sandbox's to
# rewrite, and root may run it. The uid is known only once useradd has run, so the walk stage finds it
# and fails the setup (status 4, the machine half set up, one line naming the stage, the uid and the file).
# Every other suite's setup is the control that a clean image passes the same stage.
#
# usage: bash tests/host/run --release trixie|bookworm tests/e2e/setup-orphan.sh
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/integration/lib.sh
. "$here/../integration/lib.sh"

require_test_host tests/e2e/setup-orphan.sh
build=${AJH_BUILD:-/build}
CLIENT=/usr/local/bin/agentic-job
RUNNER=runner
SANDBOX=runner-sandbox
TOOL=/usr/local/sbin/ajt-earlier-tool
work=$(mktemp -d /tmp/ajt-orphan.XXXXXX)
on_exit "rm -rf $work"

echo "# install; a runner with sudo; an earlier user of the next uid, gone, its program left"
ninja -C "$build" install >"$work/install.log" 2>&1 || { cat "$work/install.log"; exit 1; }
useradd --create-home --shell /bin/bash "$RUNNER"
echo "$RUNNER ALL=(ALL) NOPASSWD: ALL" >/etc/sudoers.d/runner
chmod 0440 /etc/sudoers.d/runner
useradd --no-create-home --shell /usr/sbin/nologin ajt-earlier
earlier_uid=$(id -u ajt-earlier)
install -m 0755 -o ajt-earlier -g root /dev/null "$TOOL"
userdel ajt-earlier
expect_eq "control: the program is owned by a uid no user has" "$earlier_uid" "$(stat -c %u "$TOOL")"

printf '[sandbox]\nuser = "%s"\nrunner-user = "%s"\ngroups = []\n\n[egress]\nproxy = false\n' \
        "$SANDBOX" "$RUNNER" >"$work/config.toml"
"$CLIENT" sandbox setup --config "$work/config.toml" >"$work/out" 2>"$work/err"
status=$?
sed 's/^/# | /' "$work/err"
expect_eq "control: useradd gave the sandbox user the earlier user's uid" "$earlier_uid" "$(id -u "$SANDBOX" 2>&1)"
expect_eq "setup fails after its changes: status 4" 4 "$status"
expect_eq "one line on standard error" 1 "$(wc -l <"$work/err")"
expect_contains "it names the stage, the uid and the file" \
        "stage walk failed: the sandbox user (uid $earlier_uid) owns or may write 1 files where root runs or trusts them, such as $TOOL" \
        "$(cat "$work/err")"
expect_contains "and says the machine is not to be used" "(the machine is half set up; do not use it)" \
        "$(cat "$work/err")"
expect_lacks "no 'setup done' line" "setup done" "$(cat "$work/out")"
expect_eq "the program is untouched" "755 $earlier_uid" "$(stat -c '%a %u' "$TOOL")"
finish
