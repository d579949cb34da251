#!/usr/bin/env bash
# `agentic-job sandbox setup` with [egress] proxy = false, inside a test host (tests/host/run). First a
# runner whose root comes from a rule setup's could not outrank, one in /etc/sudoers after its
# @includedir (read after every drop-in): refused before any change. Then a runner that needs a tty for
# sudo (requiretty), so the helper cannot be reached from a job: the lock's proof must catch that and fail
# the setup (status 4, one line naming the stage) rather than report a usable lock. And the network rules
# without the proxy: the sandbox user reaches the fake internet directly, never the metadata address.
#
# usage: bash tests/host/run --release trixie|bookworm tests/e2e/setup-noproxy.sh
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/integration/lib.sh
. "$here/../integration/lib.sh"

require_test_host tests/e2e/setup-noproxy.sh
build=${AJH_BUILD:-/build}
CLIENT=/usr/local/bin/agentic-job
RUNNER=runner
SANDBOX=runner-sandbox
work=$(mktemp -d /tmp/ajt-noproxy.XXXXXX)
on_exit "rm -rf $work"

echo "# install; a runner whose grant sits in /etc/sudoers after the drop-ins"
ninja -C "$build" install >"$work/install.log" 2>&1 || { cat "$work/install.log"; exit 1; }
useradd --create-home --shell /bin/bash "$RUNNER"
cp -a /etc/sudoers "$work/sudoers.orig"
printf '%s ALL=(ALL) NOPASSWD: ALL\n' "$RUNNER" >>/etc/sudoers
visudo -c -q || { echo "Bail out! the prepared /etc/sudoers does not pass visudo -c"; exit 1; }
expect_eq "control: the rule comes after the include" "yes" \
        "$(awk '/^@includedir|^#includedir/ { inc = NR } /^runner ALL/ { r = NR } END { print (r > inc ? "yes" : "no") }' /etc/sudoers)"
expect_eq "control: it gives the runner root" 0 "$(runuser -u "$RUNNER" -- sudo -n true >/dev/null 2>&1; echo $?)"
rule_line=$(grep -n "^$RUNNER ALL" /etc/sudoers | cut -d: -f1)

printf '[sandbox]\nuser = "%s"\nrunner-user = "%s"\ngroups = []\n\n[egress]\nproxy = false\n' \
        "$SANDBOX" "$RUNNER" >"$work/config.toml"

"$CLIENT" sandbox setup --config "$work/config.toml" >"$work/out" 2>"$work/err"
expect_eq "refused before any change: status 2" 2 "$?"
expect_eq "with one line naming the line and why" \
        "agentic-job sandbox setup: /etc/sudoers line $rule_line comes after its include of /etc/sudoers.d, so sudo would apply it after the sandbox's rules (nothing was changed)" \
        "$(cat "$work/err")"
expect_absent "no /etc/agentic-job" /etc/agentic-job
expect_eq "no sandbox user" "absent" "$(id "$SANDBOX" >/dev/null 2>&1 && echo present || echo absent)"

echo "# the grant moved before the include; sudo asks the runner for a tty (requiretty)"
cp -a "$work/sudoers.orig" /etc/sudoers
printf '%s ALL=(ALL) NOPASSWD: ALL\n' "$RUNNER" >/etc/sudoers.d/runner
printf 'Defaults:%s requiretty\n' "$RUNNER" >/etc/sudoers.d/0-requiretty
chmod 0440 /etc/sudoers.d/runner /etc/sudoers.d/0-requiretty
visudo -c -q || { echo "Bail out! the prepared sudoers do not pass visudo -c"; exit 1; }
"$CLIENT" sandbox setup --config "$work/config.toml" >"$work/out" 2>"$work/err"
status=$?
sed 's/^/# | /' "$work/out" "$work/err"
expect_eq "setup fails after its changes: status 4" 4 "$status"
expect_eq "one line on standard error" 1 "$(wc -l <"$work/err")"
expect_contains "it names the lock's proof that failed" \
        "stage lock failed: as $RUNNER, sudo -n /usr/local/libexec/agentic-job helper ping failed (status 1)" \
        "$(cat "$work/err")"
expect_contains "and says the machine is not to be used" "(the machine is half set up; do not use it)" \
        "$(cat "$work/err")"
expect_contains "the lock's stage line says failed" "stage lock: " "$(grep '^stage lock: .* failed$' "$work/out")"
expect_contains "the refusal of general sudo was proven before" "proof: sudo -n true refused (status 1" \
        "$(cat "$work/out")"
expect_lacks "no helper proof is claimed" "proof: helper ping succeeded" "$(cat "$work/out")"
expect_lacks "no 'setup done' line" "setup done" "$(cat "$work/out")"
for stage in state-dir sandbox-user deny network-rules walk config; do
        expect_contains "stage $stage ran" "ok" "$(grep "^stage $stage: " "$work/out")"
done
expect_eq "a second setup is refused (status 2)" 2 \
        "$("$CLIENT" sandbox setup --config "$work/config.toml" >/dev/null 2>&1; echo $?)"

echo "# the network rules without the proxy"
ruleset=$(nft list table inet agentic_job 2>&1)
expect_contains "the table is loaded" "chain output" "$ruleset"
expect_lacks "no proxy port in it" "3128" "$ruleset"
expect_contains "the metadata address is refused to the sandbox" "169.254.169.254" "$ruleset"
expect_eq "no proxy user was made" "absent" "$(id egress-proxy >/dev/null 2>&1 && echo present || echo absent)"
# Only the fake internet: the harness checked that these addresses route through its veth alone.
curl_code() { runuser -u "$1" -- curl -s -o /dev/null -w '%{http_code}' --max-time 10 "$2"; echo " $?"; }
expect_eq "the sandbox user reaches the fake internet directly" "200 0" "$(curl_code "$SANDBOX" http://www.fake.test/)"
expect_eq "control: root reaches the metadata stand-in" "200 0" "$(curl_code root http://169.254.169.254/)"
expect_eq "the sandbox user does not (refused, curl 7)" "000 7" "$(curl_code "$SANDBOX" http://169.254.169.254/)"
expect_eq "another user does (the rules touch no one else)" "200 0" "$(curl_code nobody http://169.254.169.254/)"
finish
