#!/usr/bin/env bash
# `agentic-job sandbox check` end to end, inside a booted test host (tests/host/run), after the project's
# own `sandbox setup` (with the egress proxy, the fake internet as control-url). First the whole check
# passes, as the runner, every probe named; then, for each probe, one protection is removed and exactly
# the expected set of probe names must fail; restored, the check passes again. Then the refusals (root,
# usage), --json, the step summary, and the pass record's rules (written only on a pass; removed by every
# check and by sandbox exec; taken only when it matches this job, attempt, binary and configuration).
#
# The host is thrown away after the run: this suite installs the project and changes the host for good.
#
# usage: bash tests/host/run --release trixie|bookworm tests/e2e/check.sh
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/integration/lib.sh
. "$here/../integration/lib.sh"

require_test_host tests/e2e/check.sh
build=${AJH_BUILD:-/build}
CLIENT=/usr/local/bin/agentic-job
RUNNER=runner
SANDBOX=runner-sandbox
PRIVATE=/opt/ajt-private
NFT_SAVED=
work=$(mktemp -d /tmp/ajt-check.XXXXXX)
chmod 0755 "$work"
on_exit "rm -rf $work"

echo "# ${AJH_RELEASE:-unknown release}: $(systemctl --version | head -n1)"
ninja -C "$build" install >"$work/install.log" 2>&1 || { cat "$work/install.log"; echo "Bail out! install"; exit 1; }
useradd --create-home --shell /bin/bash "$RUNNER"
printf '%s ALL=(ALL) NOPASSWD: ALL\n' "$RUNNER" >/etc/sudoers.d/runner
chmod 0440 /etc/sudoers.d/runner
RUNNER_HOME=$(getent passwd "$RUNNER" | cut -d: -f6)
install -d -m 0755 "$PRIVATE"
rm -f /etc/resolv.conf
printf 'nameserver 203.0.113.53\noptions timeout:1 attempts:1\n' >/etc/resolv.conf
# A daemon for setup to stop ([sandbox] stop-services), running when setup starts.
DAEMON=ajt-daemon.service
printf '[Service]\nExecStart=/bin/sleep infinity\n' >/etc/systemd/system/$DAEMON
systemctl daemon-reload
systemctl start "$DAEMON"
on_exit "systemctl stop $DAEMON; rm -f /etc/systemd/system/$DAEMON; systemctl daemon-reload"
cat >"$work/config.toml" <<EOT
[sandbox]
user = "$SANDBOX"
runner-user = "$RUNNER"
groups = []
private-dirs = ["$PRIVATE"]
stop-services = ["$DAEMON"]

[sandbox.check]
control-url = "https://www.fake.test/"
fetch-repo = "https://www.fake.test/git/fixture.git"

[egress]
proxy = true
EOT
chmod 0644 "$work/config.toml"
if ! "$CLIENT" sandbox setup --config "$work/config.toml" </dev/null >"$work/setup.out" 2>&1; then
        sed 's/^/# setup: /' "$work/setup.out"
        echo "Bail out! setup failed"
        exit 1
fi
pass "sandbox setup"

# The runner's job: its own temporary directory and a job's variables, nothing of root's environment.
RUNNER_TEMP=$RUNNER_HOME/temp
install -d -m 0700 -o "$RUNNER" -g "$RUNNER" "$RUNNER_TEMP"
RECORD=$RUNNER_TEMP/agentic-job-sandbox-checked
OIDC_ENV=() # a job's OIDC request values, where a case gives it some
as_runner() {
        runuser -u "$RUNNER" -- env -i PATH=/usr/bin:/bin HOME="$RUNNER_HOME" RUNNER_TEMP="$RUNNER_TEMP" \
                GITHUB_RUN_ID=4242 GITHUB_RUN_ATTEMPT="${ATTEMPT:-1}" GITHUB_JOB=agent "${OIDC_ENV[@]}" "$@"
}

# check [ARGS...]: runs the check as the runner; $work/out, $work/err, $status; $failed the sorted names
# of the FAIL lines, space-separated.
check() {
        local start
        start=$(date +%s%N)
        as_runner "$CLIENT" sandbox check "$@" </dev/null >"$work/out" 2>"$work/err"
        status=$?
        elapsed_ms=$((($(date +%s%N) - start) / 1000000))
        failed=$(sed -n 's/^FAIL \[\([^]]*\)\].*/\1/p' "$work/out" | sort -u | tr '\n' ' ' | sed 's/ $//')
}
# What failed first, then all of it: a CI log that keeps only its start still names the cause.
show() {
        grep -v '^\(ok\|note\) ' "$work/out" | sed 's/^/# ! /'
        sed 's/^/# | /' "$work/out" "$work/err"
}

# unexpected_fails "NAMES...": the FAIL lines of any other probe, each after "; ", cut at 300 characters:
# the "not ok" line itself says why, as a CI log's tail repeats no more than it.
unexpected_fails() {
        local line name
        while IFS= read -r line; do
                name=${line#FAIL [}
                name=${name%%]*}
                [[ " $1 " == *" $name "* ]] || printf '; %s' "${line:0:300}"
        done < <(grep '^FAIL \[' "$work/out")
}

# expect_failing WHAT "NAMES...": the check (with CHECK_ARGS) fails (status 1) with exactly these probe
# names, and says so on standard error; or, with no names, passes (status 0).
CHECK_ARGS=()
expect_failing() {
        local what=$1 want
        want=$(tr ' ' '\n' <<<"$2" | sed '/^$/d' | sort -u | tr '\n' ' ' | sed 's/ $//')
        check "${CHECK_ARGS[@]}"
        if [ -z "$want" ]; then
                if [ "$status" = 0 ] && [ -z "$failed" ]; then
                        pass "$what: the check passes (in $elapsed_ms ms)"
                else
                        fail "$what: status $status, failed '$failed', expected a pass$(unexpected_fails "")"
                        show
                fi
                return
        fi
        if [ "$status" = 1 ] && [ "$failed" = "$want" ]; then
                pass "$what: exactly {$want} fail"
        else
                fail "$what: status $status, failed {$failed}, expected {$want}$(unexpected_fails "$want")"
                show
        fi
        expect_eq "$what: standard error names them" \
                "agentic-job sandbox check: $(wc -w <<<"$want") failed: $want" "$(cat "$work/err")"
}

# ---------------------------------------------------------------------------------------------------------
echo "# the whole check"
check
show
expect_eq "the check passes: status 0" 0 "$status"
expect_eq "no probe failed" "" "$failed"
echo "# ${AJH_RELEASE:-?}: the whole check took $elapsed_ms ms"
PROBES=(private-dir-control metadata-control groups-control groups sudo-control sudo "private-dir:$RUNNER_HOME"
        "private-dir:$PRIVATE" state-write-control state-write user-manager-control user-manager
        polkit-control polkit linger-control linger
        network-control metadata egress-post egress-direct egress-tcp-control egress-tcp egress-udp-control
        egress-udp egress-dns-control egress-dns egress-read egress-git-refused egress-push
        egress-fronting-control egress-fronting
        egress-proxy-metadata egress-proxy-local egress-resolve-control egress-resolve userns-net-control userns-net
        local-tcp-control local-tcp local-abstract-control local-abstract local-sockets-control local-sockets
        local-udp-control local-udp
        probe-inside runner-sudo-control runner-sudo runner-sudo-list runner-su runner-groups-control
        cron-control cron at-control at
        environ-runner-control environ-runner proc-mem-control proc-mem ptrace-runner-control ptrace-runner
        signal-runner-control signal-runner tiocsti-control tiocsti environ-sandbox-control environ-canary
        environ-job-variables env-job-variables service-control "service:$DAEMON")
# run0 where systemd has it (trixie); notes where it has not (bookworm). No pkexec in the test hosts. No
# OIDC request values in this job (oidc-control). No --walk (walk). No cargo, no npm (egress-cargo,
# egress-npm: the shipped policy admits their requests); no IPv6 in the fake internet (egress-ipv6-control,
# egress-ipv6).
NOTES=8
expect_contains "no pkexec: a note" "note [runner-pkexec] /usr/bin/pkexec is not installed" "$(cat "$work/out")"
if [ -x /usr/bin/run0 ]; then
        PROBES+=(run0-control run0 runner-run0)
        RUN0=run0
else
        NOTES=11
        RUN0=
        expect_contains "no run0: a note" "note [run0] not probed: there is no run0" "$(cat "$work/out")"
        expect_contains "no run0: a note of the runner's too" "note [runner-run0] /usr/bin/run0 is not installed" \
                "$(cat "$work/out")"
fi
# The resources: RLIMIT_NPROC is tasks-max on every enter. oom_score_adj is 1000, a floor only where root
# has CAP_SYS_RESOURCE to set one (not in the test hosts of this machine: a note that says so). The test
# hosts' memory hierarchy (v1, read-only: this machine's cgroups are v1 hybrid) holds all of a host at its
# root, which the host's systemd does not manage, so the slice's MemoryMax= is recorded and not enforced:
# a note, never ok.
PROBES+=(resources-control tasks-budget)
expect_contains "tasks-budget: tasks-max, which the sandbox cannot raise" \
        "ok [tasks-budget] RLIMIT_NPROC 8192 (soft 8192), for every task of the sandbox uid; raising it is refused" \
        "$(cat "$work/out")"
if [ $(((16#$(awk '/^CapBnd:/ { print $2 }' /proc/self/status) >> 24) & 1)) = 1 ]; then
        PROBES+=(oom-score)
else
        NOTES=$((NOTES + 1))
        expect_contains "oom-score: 1000 without a floor, a note" \
                "note [oom-score] oom_score_adj 1000, but the sandbox may lower it to 0 (never below)" "$(cat "$work/out")"
fi
NOTES=$((NOTES + 1))
expect_contains "memory-budget: not enforced in the test hosts, a note" \
        "note [memory-budget] not enforced here: in the memory hierarchy (cgroup v1) the sandbox side is at /, no cgroup of the sandbox user's own" \
        "$(cat "$work/out")"
# AppArmor: this machine's kernel has none, so nothing restricts user namespaces and there is nothing
# to prove (what only an Ubuntu runner can show: README.md).
NOTES=$((NOTES + 2))
for p in userns-restricted-control userns-restricted; do
        expect_contains "$p: no AppArmor restriction, a note" \
                "note [$p] AppArmor does not restrict user namespaces here (/proc/sys/kernel/apparmor_restrict_unprivileged_userns is not 1): nothing to prove" \
                "$(cat "$work/out")"
done
# Yama is the machine's kernel's: the test hosts share it.
PROBES+=(ptrace-scope-control)
YAMA=/proc/sys/kernel/yama/ptrace_scope
if [ -e "$YAMA" ]; then
        PROBES+=(ptrace-scope)
else
        NOTES=$((NOTES + 1))
        expect_contains "no Yama: a note" "note [ptrace-scope] this kernel has no Yama (no $YAMA)" "$(cat "$work/out")"
fi
# Rootless podman is installed (tests/host/base.sh), but the sandbox user's subordinate ids are of no use
# under enter's no_new_privs: newuidmap is set-uid, and podman stops before any container. Each container
# probe is a note that says so, never ok.
CONTAINER_PROBES=(container-pull container-build container-built-run container-control container-metadata
        egress-container-post egress-container-direct egress-container-own-network)
NOTES=$((NOTES + ${#CONTAINER_PROBES[@]}))
for p in "${CONTAINER_PROBES[@]}"; do
        expect_contains "$p: a note, podman cannot start" \
                "note [$p] not probed: rootless podman cannot start for the sandbox user (podman info: status 125: " \
                "$(cat "$work/out")"
done
expect_contains "... naming newuidmap" "newuidmap" "$(grep '^note \[container-pull\]' "$work/out")"
for p in "${PROBES[@]}"; do
        expect_eq "ok [$p]" 1 "$(grep -c "^ok \[$p\] " "$work/out")"
done
expect_eq "every line is a result, but the last" "" \
        "$(sed '$d' "$work/out" | grep -vE '^(ok|FAIL|note) \[[^]]+\] ' | head -n 3)"
expect_contains "kill-user is named in a note" "note [kill-user] ended " "$(cat "$work/out")"
expect_contains "userns-net: pasta's namespace too" "; from pasta's namespace, www.fake.test (203.0.113.10) port 443: not reached" \
        "$(cat "$work/out")"
expect_contains "egress-fronting: the front is another name of the origin's certificate" \
        "ok [egress-fronting-control] the certificate of www.fake.test also names upload.fake.test: the front" "$(cat "$work/out")"
expect_contains "without --walk: a note" "note [walk] world-writable, sandbox-writable, runner-world-write and setuid-unowned are made with --walk" \
        "$(cat "$work/out")"
expect_contains "no OIDC request values: a note" "note [oidc-control] no ACTIONS_ID_TOKEN_REQUEST_URL nor _TOKEN" \
        "$(cat "$work/out")"
expect_eq "the last line counts them" "${#PROBES[@]} ok, 0 failed, $NOTES notes" "$(tail -n1 "$work/out")"
expect_eq "nothing on standard error" "" "$(cat "$work/err")"

# ---------------------------------------------------------------------------------------------------------
echo "# each protection removed, then restored"

usermod --append --groups adm "$SANDBOX"
on_exit "gpasswd --delete $SANDBOX adm"
expect_failing "the sandbox user in group adm" "groups"
gpasswd --delete "$SANDBOX" adm >/dev/null

# The locked runner: a grant read after setup's rule, root's password emptied.
printf '%s ALL=(ALL) NOPASSWD: ALL\n' "$RUNNER" >/etc/sudoers.d/zzz-ajt-grant
chmod 0440 /etc/sudoers.d/zzz-ajt-grant
on_exit "rm -f /etc/sudoers.d/zzz-ajt-grant"
expect_failing "a sudo grant for the runner read after the lock" "runner-sudo runner-sudo-list"
rm -f /etc/sudoers.d/zzz-ajt-grant
printf '%s ALL=(root) NOPASSWD: /usr/bin/id\n' "$RUNNER" >/etc/sudoers.d/zzz-ajt-grant
chmod 0440 /etc/sudoers.d/zzz-ajt-grant
expect_failing "one more command granted after the lock" "runner-sudo-list"
rm -f /etc/sudoers.d/zzz-ajt-grant
# A job that still holds a root-equivalent group (one that started before the lock took the runner out).
usermod --append --groups shadow "$RUNNER"
on_exit "gpasswd --delete $RUNNER shadow"
expect_failing "the runner's job in group shadow" "runner-group:shadow"
expect_contains "what it reaches is named" "/etc/shadow" "$(grep '^FAIL \[runner-group:shadow\]' "$work/out")"
gpasswd --delete "$RUNNER" shadow >/dev/null
# cron and at: the sandbox user's line taken out of setup's deny lists. at's list is 0640 root:daemon, and
# at, set-id daemon, cannot read it under the enter's no_new_privs: it then admits root alone. So for at
# the list is also made readable by all, or its removal would change nothing.
for list in cron at; do
        cp -p "/etc/$list.deny" "$work/$list.deny"
        on_exit "cp -p $work/$list.deny /etc/$list.deny"
        grep -vx "$SANDBOX" "$work/$list.deny" >"/etc/$list.deny"
        [ "$list" = at ] && chmod 0644 /etc/at.deny
        expect_failing "the sandbox user out of /etc/$list.deny" "$list"
        cp -p "$work/$list.deny" "/etc/$list.deny"
done
grep -vx "$SANDBOX" "$work/at.deny" >/etc/at.deny
expect_failing "out of /etc/at.deny, which at cannot read under no_new_privs" ""
cp -p "$work/at.deny" /etc/at.deny
# Yama's scope lowered to 0 (the machine's own setting: put back on exit, also on failure).
if [ -e "$YAMA" ]; then
        scope=$(cat "$YAMA")
        on_exit "echo $scope >$YAMA"
        echo 0 >"$YAMA"
        expect_failing "kernel.yama.ptrace_scope 0" "ptrace-scope"
        echo "$scope" >"$YAMA"
else
        echo "# no Yama in this kernel: ptrace-scope's removal cannot be shown here"
fi
ROOT_HASH=$(getent shadow root | cut -d: -f2)
passwd -q -d root
on_exit "usermod -p '$ROOT_HASH' root"
expect_failing "root's password emptied" "runner-su"
usermod -p "$ROOT_HASH" root

chmod 0755 "$RUNNER_HOME"
on_exit "chmod 0700 $RUNNER_HOME"
expect_failing "the runner's home 0755" "private-dir:$RUNNER_HOME"
chmod 0711 "$RUNNER_HOME"
expect_failing "the runner's home 0711" "private-dir:$RUNNER_HOME"
chmod 0700 "$RUNNER_HOME"
chmod 0755 "$PRIVATE"
on_exit "chmod 0700 $PRIVATE"
expect_failing "a private directory 0755" "private-dir:$PRIVATE"
chmod 0700 "$PRIVATE"

POLICY=/opt/egress-proxy/policy/policy.toml
chmod o+w "$POLICY"
on_exit "chmod o-w $POLICY"
expect_failing "the egress policy writable by others" "state-write"
expect_contains "it is named" "$POLICY" "$(grep '^FAIL \[state-write\]' "$work/out")"
chmod o-w "$POLICY"

SB_UID=$(id -u "$SANDBOX")
expect_eq "setup masked the sandbox user's user manager" "masked" "$(systemctl is-enabled "user@$SB_UID.service" 2>&1)"
# With [sandbox] user-manager = true the probe is a note naming that choice, never ok.
cp -p /etc/agentic-job/config.toml "$work/installed.toml"
on_exit "cp -p $work/installed.toml /etc/agentic-job/config.toml"
sed -i 's|^\[sandbox\]$|&\nuser-manager = true|' /etc/agentic-job/config.toml
expect_failing "[sandbox] user-manager = true" ""
expect_contains "a note names the choice" "note [user-manager] not probed: [sandbox] user-manager = true" \
        "$(cat "$work/out")"
cp -p "$work/installed.toml" /etc/agentic-job/config.toml
# Every check ends the user and the next starts it again: checks in quick succession reach systemd's start
# limit of user-runtime-dir@UID.service, without which no user manager starts; reset before the case.
systemctl reset-failed "user-runtime-dir@$SB_UID.service" "user@$SB_UID.service" 2>/dev/null
systemctl unmask --quiet "user@$SB_UID.service"
on_exit "systemctl mask --quiet user@$SB_UID.service"
expect_failing "the user manager unmasked" "user-manager"
systemctl mask --quiet "user@$SB_UID.service"
# The user manager that case started is ended here, and logind let finish, before the next case: logind
# ends a user after kill-user has returned, and a session opened meanwhile goes with it (seen on bookworm).
loginctl terminate-user "$SANDBOX" 2>/dev/null
for _ in $(seq 100); do loginctl show-user "$SANDBOX" >/dev/null 2>&1 || break; sleep 0.1; done

# polkit: a rule read before setup's that says yes to the sandbox user, for everything, then for lingering
# alone; then setup's rule moved away (no rule: an administrator's challenge, not a no). polkitd reloads its
# rules when they change: each case waits until pkcheck, asked by root about a process of the sandbox
# user's, gives the answer the case is about. Every rule comes and goes by a rename on the rules' own
# filesystem, as setup writes its own: a file copied in from /tmp (another filesystem) can be read by
# polkitd while still empty, and once in CI it did not read it again.
RULES=/etc/polkit-1/rules.d
SETUP_RULE=$(grep -l 'agentic-job' "$RULES"/*.rules | head -n 1)
expect_contains "setup's polkit rule is there" "agentic-job" "$(cat "$SETUP_RULE" 2>&1)"
polkit_answer() { # ACTION: pkcheck's status for a process of the sandbox user
        local pid status
        # setpriv execs sleep itself: the subject is $! once its uid is the sandbox user's, never root's.
        setpriv --reuid="$SB_UID" --regid="$(id -g "$SANDBOX")" --clear-groups sleep 30 </dev/null >/dev/null 2>&1 &
        pid=$!
        for _ in $(seq 100); do
                [ "$(awk '/^Uid:/ { print $2 }' "/proc/$pid/status" 2>/dev/null)" = "$SB_UID" ] && break
                sleep 0.01
        done
        pkcheck --action-id "$1" --process "$pid" >/dev/null 2>&1
        status=$?
        kill "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
        echo "$status"
}
await_polkit() { # ACTION STATUS
        for _ in $(seq 100); do [ "$(polkit_answer "$1")" = "$2" ] && return; sleep 0.1; done
        fail "polkitd did not come to answer $2 for $1"
        journalctl --no-pager -n 20 -u polkit.service 2>&1 | sed 's/^/# | /'
}
put_rule() { # TEXT: the yes rule, put in place by a rename
        printf '%s' "$1" >/etc/polkit-1/ajt-yes.rules.new && mv /etc/polkit-1/ajt-yes.rules.new "$RULES/0-ajt-yes.rules"
}
on_exit "rm -f $RULES/0-ajt-yes.rules /etc/polkit-1/ajt-yes.rules.new; loginctl disable-linger $SANDBOX"
put_rule "$(printf 'polkit.addRule(function (action, subject) {\n        if (subject.user == "%s") {\n                return polkit.Result.YES;\n        }\n});\n' \
        "$SANDBOX")"
await_polkit org.freedesktop.systemd1.manage-units 0
expect_failing "a polkit rule that says yes to the sandbox user" "polkit linger $RUN0"
expect_eq "... the linger it got was undone by the sandbox user" "Linger=no" \
        "$(loginctl show-user "$SANDBOX" --property=Linger 2>/dev/null || echo Linger=no)"
put_rule "$(printf 'polkit.addRule(function (action, subject) {\n        if (action.id == "org.freedesktop.login1.set-self-linger" && subject.user == "%s") {\n                return polkit.Result.YES;\n        }\n});\n' \
        "$SANDBOX")"
await_polkit org.freedesktop.systemd1.manage-units 1
await_polkit org.freedesktop.login1.set-self-linger 0
expect_failing "a polkit rule that says yes to its lingering" "linger"
if [ -n "$RUN0" ]; then
        put_rule "$(printf 'polkit.addRule(function (action, subject) {\n        if (subject.user == "%s") {\n                return polkit.Result.YES;\n        }\n});\n' \
                "$RUNNER")"
        for _ in $(seq 100); do
                runuser -u "$RUNNER" -- run0 --no-ask-password /bin/true </dev/null >/dev/null 2>&1 && break
                sleep 0.1
        done
        expect_failing "a polkit rule that says yes to the runner" "runner-run0"
fi
rm -f "$RULES/0-ajt-yes.rules"
mv "$SETUP_RULE" /etc/polkit-1/ajt-setup.rules.saved
on_exit "mv /etc/polkit-1/ajt-setup.rules.saved $SETUP_RULE"
await_polkit org.freedesktop.systemd1.manage-units 2
# Without setup's rule, polkit's own default for lingering decides: yes on trixie (systemd 257), so the
# sandbox user would linger; asked of pkcheck by root, not of the probe.
expected=polkit
[ "$(polkit_answer org.freedesktop.login1.set-self-linger)" = 0 ] && expected="polkit linger"
echo "# without setup's rule, polkit's default lets the sandbox user linger: $([ "$expected" = polkit ] && echo no || echo yes)"
expect_failing "setup's polkit rule moved away" "$expected"
mv /etc/polkit-1/ajt-setup.rules.saved "$SETUP_RULE"
await_polkit org.freedesktop.systemd1.manage-units 1
loginctl disable-linger "$SANDBOX" 2>/dev/null
systemctl reset-failed "user-runtime-dir@$SB_UID.service" "user@$SB_UID.service" 2>/dev/null
expect_failing "setup's polkit rule back" ""
# polkitd slow: one thread answers every question of the machine, and on a loaded runner logind waited
# longer than a program's 10 s on it (CI, bookworm). A rule read before setup's that takes 12 s of the
# sandbox user's lingering and says nothing: setup's rule still answers no, only later. The probe waits
# on polkitd longer than on a program, and a refusal late is still a refusal, never a failure.
SLOW_RULE=$RULES/0-ajt-slow.rules
on_exit "rm -f $SLOW_RULE /etc/polkit-1/ajt-slow.rules.new"
printf 'polkit.addRule(function (action, subject) {\n        if (action.id == "org.freedesktop.login1.set-self-linger" && subject.user == "%s") {\n                var end = Date.now() + 12000;\n                while (Date.now() < end) {}\n        }\n});\n' \
        "$SANDBOX" >/etc/polkit-1/ajt-slow.rules.new && mv /etc/polkit-1/ajt-slow.rules.new "$SLOW_RULE"
slow=0
for _ in 1 2 3 4 5; do
        start=$(date +%s)
        answer=$(polkit_answer org.freedesktop.login1.set-self-linger)
        [ "$answer" = 1 ] && [ $(($(date +%s) - start)) -ge 11 ] && { slow=1; break; }
        sleep 1
done
expect_eq "polkitd takes 12 s to refuse the sandbox user's lingering" 1 "$slow"
expect_failing "polkitd 12 s slow on lingering" ""
expect_contains "... linger: refused, late" "ok [linger] loginctl enable-linger refused (status 1: " "$(cat "$work/out")"
expect_eq "... the check did wait on polkitd (at least 12 s)" 1 "$([ "$elapsed_ms" -ge 12000 ] && echo 1 || echo 0)"
rm -f "$SLOW_RULE"
await_polkit org.freedesktop.systemd1.manage-units 1
# No answer is no refusal. A run0 that never answers, where systemd has none (bookworm: the helper's enter
# does not use run0 there): a stand-in, as no polkit rule can hold an answer back longer than polkitd's
# own 15 s. Both probes wait 20 s for it, and neither reads its end as a refusal.
if [ -z "$RUN0" ]; then
        on_exit "rm -f /usr/bin/run0"
        printf '#!/bin/sh\n[ "$1" = --version ] && exit 0\nexec sleep 120\n' >/usr/bin/run0
        chmod 0755 /usr/bin/run0
        expect_failing "a run0 that never answers (a stand-in)" "run0 runner-run0"
        expect_contains "... run0: cannot tell" "FAIL [run0] run0: cannot tell (killed by signal 9)" "$(cat "$work/out")"
        expect_contains "... runner-run0: cannot tell, timeout's 124" "FAIL [runner-run0] /usr/bin/run0: cannot tell (status 124: " \
                "$(cat "$work/out")"
        rm -f /usr/bin/run0
fi

# The proxy reads the policy when it starts; the check reads the installed file. A proxy started with a
# rule that admits the POST, the file then put back: the proxy no longer enforces what the check reads.
cp -p "$POLICY" "$work/policy.orig"
on_exit "cp -p $work/policy.orig $POLICY; $CLIENT egress stop; $CLIENT egress start"
printf '\n[[write]]\nname = "ajt-post"\nwhy = "the removal test of egress-post"\nhosts = ["www.fake.test"]\nmethods = ["POST"]\npaths = ["/"]\n' >>"$POLICY"
restart_proxy() {
        "$CLIENT" egress stop >"$work/proxy.out" 2>&1 && "$CLIENT" egress start >>"$work/proxy.out" 2>&1 ||
                { sed 's/^/# proxy: /' "$work/proxy.out"; fail "$1: the proxy did not restart"; }
}
restart_proxy "a rule for the POST"
expect_failing "a policy that admits the POST" ""
expect_contains "egress-post is a note then, never ok" "note [egress-post] not probed: the egress policy admits a POST" \
        "$(cat "$work/out")"
cp -p "$work/policy.orig" "$POLICY"
expect_failing "the proxy started with that rule, the installed policy without it" "egress-post"
restart_proxy "the installed policy"
expect_failing "the proxy restarted with the installed policy" ""

# The policy's forms of git, npm and the push. fetch-repo is on www.fake.test, for which the shipped
# policy has no git-upload-pack rule: egress-git-refused. With a rule, installed and started: egress-git,
# git ls-remote through the proxy. The proxy started with the rule, the installed file without it:
# egress-git-refused meets the origin's answer, not the proxy's 403. The reverse, the file with the rule
# and the proxy without: egress-git meets the proxy's 403.
GIT_RULE='\n[[write]]\nname = "ajt-git"\nwhy = "the removal test of egress-git"\nhosts = ["www.fake.test"]\nmethods = ["POST"]\npaths = ["/**/git-upload-pack"]\n'
printf "$GIT_RULE" >>"$POLICY"
restart_proxy "a git-upload-pack rule"
expect_failing "a policy with a git-upload-pack rule for fetch-repo" ""
expect_contains "egress-git: git ls-remote through the proxy" "ok [egress-git] git ls-remote https://www.fake.test/git/fixture.git HEAD through the proxy" \
        "$(cat "$work/out")"
cp -p "$work/policy.orig" "$POLICY"
expect_failing "the proxy started with the git rule, the installed policy without it" "egress-git-refused"
restart_proxy "the installed policy"
printf "$GIT_RULE" >>"$POLICY"
expect_failing "the installed policy with the git rule, the proxy started without it" "egress-git"
cp -p "$work/policy.orig" "$POLICY"

# The push: a rule for git-receive-pack in the proxy alone.
printf '\n[[write]]\nname = "ajt-push"\nwhy = "the removal test of egress-push"\nhosts = ["www.fake.test"]\nmethods = ["POST"]\npaths = ["/**/git-receive-pack"]\n' >>"$POLICY"
restart_proxy "a git-receive-pack rule"
expect_failing "a policy that admits the push" ""
expect_contains "egress-push is a note then, never ok" "note [egress-push] not probed: the egress policy admits a push" \
        "$(cat "$work/out")"
cp -p "$work/policy.orig" "$POLICY"
expect_failing "the proxy started with the push rule, the installed policy without it" "egress-push"
restart_proxy "the installed policy"

# npm's audit: the shipped rule npm-audit taken out of the installed file while the proxy keeps it, then
# the proxy restarted without it. (registry.npmjs.org does not resolve in the fake internet: the proxy
# that admits the POST answers 503 of its own, which is no refusal.)
python3 -c '
import re, sys
p = sys.argv[1]
s = open(p).read()
t = re.sub(r"\n\[\[write\]\]\nname = \"npm-audit\".*?(?=\n\[\[write\]\]|\Z)", "", s, flags=re.S)
assert t != s, "no npm-audit rule"
open(p, "w").write(t)
' "$POLICY" || fail "the npm-audit rule could not be taken out"
expect_failing "the installed policy without npm-audit, the proxy started with it" "egress-npm-refused"
restart_proxy "the policy without npm-audit"
expect_failing "the proxy restarted without npm-audit" ""
expect_contains "egress-npm-refused: the audit's POST refused" "ok [egress-npm-refused] POST https://registry.npmjs.org/-/npm/v1/security/advisories/bulk, which the policy refuses: 403" \
        "$(cat "$work/out")"
cp -p "$work/policy.orig" "$POLICY"
restart_proxy "the installed policy"

# [egress] reads = "listed", with the shipped policy's read rules and one for www.fake.test (control-url's
# and fetch-repo's host): the check passes, and the shipped rules list cargo's and npm's registries, so
# their probes take their admitted forms. With those two rules taken out, the probes take their refused
# forms and meet the proxy's 403. Then www.fake.test's rule gone: control-url is no longer readable, and
# the check says so before any probe (status 2).
cp -p /etc/agentic-job/config.toml "$work/config.orig"
on_exit "cp -p $work/config.orig /etc/agentic-job/config.toml"
sed -i 's/^proxy = true$/&\nreads = "listed"/' /etc/agentic-job/config.toml
printf '\n[[read]]\nname = "ajt-fake"\nwhy = "the fake internet"\nhosts = ["www.fake.test"]\n' >>"$POLICY"
restart_proxy "listed reads"
expect_failing "listed reads, the shipped read rules and www.fake.test's" ""
expect_contains "... egress-cargo in its admitted form (the shipped crates rule)" "[egress-cargo] " "$(cat "$work/out")"
expect_lacks "... not its refused one" "[egress-cargo-refused]" "$(cat "$work/out")"
expect_contains "... egress-npm in its admitted form (the shipped npm rule)" "[egress-npm] " "$(cat "$work/out")"
python3 -c '
import re, sys
p = sys.argv[1]
s = open(p).read()
t = re.sub(r"\n\[\[read\]\]\nname = \"(crates|npm)\".*?(?=\n\[\[|\Z)", "", s, flags=re.S)
assert t.count("[[read]]") == s.count("[[read]]") - 2, "no crates and npm read rules"
open(p, "w").write(t)
' "$POLICY" || fail "the crates and npm read rules could not be taken out"
restart_proxy "listed reads without the crates and npm rules"
expect_failing "listed reads without the crates and npm rules" ""
expect_contains "egress-cargo-refused: cargo's index read, refused by the proxy" \
        "ok [egress-cargo-refused] GET https://index.crates.io/config.json, which the policy refuses: 403" "$(cat "$work/out")"
expect_contains "egress-npm-refused: npm's registry read, refused by the proxy" \
        "ok [egress-npm-refused] GET https://registry.npmjs.org/is-number, which the policy refuses: 403" "$(cat "$work/out")"
cp -p "$work/policy.orig" "$POLICY"
check
expect_eq "listed reads, control-url's host listed by no rule: the check cannot run (status 2)" 2 "$status"
expect_contains "... and says why" \
        "[sandbox.check] control-url: the egress policy refuses a read of it (a tunnel to a host no rule names: www.fake.test ([egress] reads = listed))" \
        "$(cat "$work/err")"
cp -p "$work/config.orig" /etc/agentic-job/config.toml
restart_proxy "reads of any host again"
expect_failing "reads of any host again" ""

# egress-read: control-url's host on the threat list when the proxy started, then taken off the list:
# the check reads the list and finds the read admitted, the proxy refuses it. network-control fails with
# it, and egress-fronting, whose refusal no longer names fronting, and userns-net-control, which fetches
# control-url through the proxy from pasta's namespace.
THREATS=/opt/egress-proxy/denylist.txt
if [ -e "$THREATS" ]; then cp -p "$THREATS" "$work/threats.orig"; else : >"$work/threats.orig"; fi
on_exit "cp $work/threats.orig $THREATS"
cat "$work/threats.orig" >"$THREATS"
echo www.fake.test >>"$THREATS"
restart_proxy "control-url's host on the threat list"
cat "$work/threats.orig" >"$THREATS"
expect_failing "the proxy refusing reads of control-url" "egress-fronting egress-read network-control userns-net-control"
restart_proxy "the threat list as it was"
expect_failing "the proxy restarted with the threat list as it was" ""

# squid's configuration changed under the running proxy (SIGHUP: squid reads it again, its helpers
# restarted), put back by restarting the proxy. reconfigure_proxy WHAT SED-SCRIPT.
SQUID_CONF=/etc/egress-proxy/squid.conf
reconfigure_proxy() {
        sed -i "$2" "$SQUID_CONF" || fail "$1: squid.conf not changed"
        kill -HUP "$(cat /var/lib/egress-proxy/squid.pid)" || fail "$1: squid not told"
        # squid answers again once it has read the file and started a helper.
        for ((i = 0; i < 100; i++)); do
                curl -s -o /dev/null -m 2 --noproxy '' -x http://127.0.0.1:3128 http://www.fake.test/ && break
                sleep 0.1
        done
}
on_exit "$CLIENT egress stop >/dev/null 2>&1; $CLIENT egress start >/dev/null 2>&1"

# egress-fronting: the helper no longer told the server name and the tunnel's target (an absent header in
# their place), so that inside a tunnel it decides each request by its Host header alone, as for plain HTTP.
reconfigure_proxy "the helper blind to the tunnel" 's/%ssl::>sni/%{X-Ajt-Absent}>h/; s/%{clt_conn_tag}note/%{X-Ajt-Absent}>h/'
expect_failing "the helper told neither the server name nor the tunnel's target" "egress-fronting"
restart_proxy "squid's own configuration"
expect_failing "the proxy restarted" ""

# egress-proxy-local: squid's local_dst refuses the test host's own address (198.51.100.2, in no range the
# policy knows as local) by the address it would connect to. Without it nftables still refuses the proxy's
# connection, which the probe cannot tell from a closed port: it counts only the proxy's own 403, so it
# fails. egress-proxy-metadata does not: the policy's decision refuses both metadata addresses itself
# (169.254.169.254 and, since it was added there, fd00:ec2::254, which local_dst alone used to stop).
reconfigure_proxy "squid without local_dst" '/^http_access deny local_dst/d'
expect_failing "squid without its local_dst refusal" "egress-proxy-local"
expect_contains "the host's own address: not reached, nftables refused the proxy" "FAIL [egress-proxy-local] the proxy asked for http://198.51.100.2/: HTTP 503" \
        "$(cat "$work/out")"
restart_proxy "squid's own configuration"
expect_failing "squid's local_dst back" ""

# egress-resolve (and egress-dns): a rule before the others that lets the sandbox uid reach port 53.
nft list table inet agentic_job >"$work/table-dns.nft"
on_exit "nft list table inet agentic_job >/dev/null 2>&1 && nft delete table inet agentic_job; nft -f $work/table-dns.nft"
nft insert rule inet agentic_job output meta skuid "$SB_UID" meta l4proto '{ tcp, udp }' th dport 53 accept
expect_failing "a rule that lets the sandbox user reach port 53" "egress-dns egress-resolve"
nft delete table inet agentic_job
nft -f "$work/table-dns.nft"
expect_failing "the table put back" ""

# local UDP: a rule before the others that lets the sandbox uid's datagrams reach loopback; the table is
# put back as it was after it. (A drop there refuses as a reject does: the kernel fails the send with
# EPERM either way, for what this machine itself sends.)
nft list table inet agentic_job >"$work/table-udp.nft"
on_exit "nft list table inet agentic_job >/dev/null 2>&1 && nft delete table inet agentic_job; nft -f $work/table-udp.nft"
nft insert rule inet agentic_job output meta skuid "$SB_UID" ip daddr 127.0.0.1 udp dport 1-65535 accept
nft insert rule inet agentic_job output meta skuid "$SB_UID" ip6 daddr ::1 udp dport 1-65535 accept
expect_failing "a rule that lets the sandbox user's datagrams reach loopback" "local-udp"
nft delete table inet agentic_job
nft -f "$work/table-udp.nft"
expect_failing "the table put back" ""

NFT_SAVED=$work/table.nft
nft list table inet agentic_job >"$NFT_SAVED"
nft delete table inet agentic_job
on_exit "nft list table inet agentic_job >/dev/null 2>&1 || nft -f $NFT_SAVED"
expect_failing "the nftables table deleted" "egress-direct egress-dns egress-resolve egress-tcp egress-udp local-tcp local-udp metadata userns-net"
nft -f "$NFT_SAVED"

python3 -c '
import os, socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind("\0ajt-check-abstract")
s.listen(8)
print("ready", flush=True)
time.sleep(600)' >"$work/abstract.ready" &
abstract_pid=$!
on_exit "kill $abstract_pid"
for _ in $(seq 100); do [ -s "$work/abstract.ready" ] && break; sleep 0.05; done
expect_failing "an abstract socket of root's" "local-abstract"
expect_contains "it is named, with its owner" "@ajt-check-abstract (uid 0)" "$(grep '^FAIL \[local-abstract\]' "$work/out")"
sed -i 's|^control-url = .*|&\nallow-sockets = ["@ajt-check-abstract"]|' /etc/agentic-job/config.toml
expect_failing "the same socket in [sandbox.check] allow-sockets" ""
cp -p "$work/installed.toml" /etc/agentic-job/config.toml
kill "$abstract_pid"
wait "$abstract_pid" 2>/dev/null

# A socket of root's on a path that anyone may connect to (a daemon's API, as snapd's or a container
# engine's); then allowed by name.
python3 -c '
import os, socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind("/run/ajt-check.sock")
os.chmod("/run/ajt-check.sock", 0o666)
s.listen(8)
print("ready", flush=True)
time.sleep(600)' >"$work/path.ready" &
path_pid=$!
on_exit "kill $path_pid; rm -f /run/ajt-check.sock"
for _ in $(seq 100); do [ -s "$work/path.ready" ] && break; sleep 0.05; done
expect_failing "a socket of root's on a path, 0666" "local-sockets"
expect_contains "it is named" "/run/ajt-check.sock" "$(grep '^FAIL \[local-sockets\]' "$work/out")"
sed -i 's|^control-url = .*|&\nallow-sockets = ["/run/ajt-check.sock"]|' /etc/agentic-job/config.toml
expect_failing "the same socket in [sandbox.check] allow-sockets" ""
cp -p "$work/installed.toml" /etc/agentic-job/config.toml
chmod 0600 /run/ajt-check.sock
expect_failing "the same socket 0600" ""
kill "$path_pid"
wait "$path_pid" 2>/dev/null
rm -f /run/ajt-check.sock

# The same socket where its bound name no longer says where it is: renamed; hard-linked into another
# directory and its bound name unlinked; bound by a relative name; and an abstract name with a NUL inside
# it, and an abstract datagram socket, which /proc/net/unix cannot show as they are. Each is found by
# what it is (sock_diag, the inode of its file).
python3 -c '
import os, socket, sys, time
os.makedirs("/run/ajt-hidden", exist_ok=True)
os.makedirs("/run/ajt-elsewhere", mode=0o755, exist_ok=True)
socks = []
def listen(name, then=None, kind=socket.SOCK_STREAM):
    s = socket.socket(socket.AF_UNIX, kind)
    s.bind(name)
    if isinstance(name, str):
        os.chmod(name, 0o666)
    if kind == socket.SOCK_STREAM:
        s.listen(8)
    if then:
        then()
    socks.append(s)
listen("/run/ajt-hidden/moved.sock", lambda: os.rename("/run/ajt-hidden/moved.sock", "/run/ajt-hidden/moved-to"))
listen("/run/ajt-hidden/linked.sock", lambda: (os.link("/run/ajt-hidden/linked.sock", "/run/ajt-elsewhere/link"),
                                               os.unlink("/run/ajt-hidden/linked.sock")))
os.chdir("/run/ajt-hidden")
listen("relative.sock")
listen(b"\0ajt-check-nul\0inside")
listen(b"\0ajt-check-dgram", kind=socket.SOCK_DGRAM)
print("ready", flush=True)
time.sleep(600)' >"$work/hidden.ready" &
hidden_pid=$!
on_exit "kill $hidden_pid; rm -rf /run/ajt-hidden /run/ajt-elsewhere"
for _ in $(seq 100); do [ -s "$work/hidden.ready" ] && break; sleep 0.05; done
expect_failing "sockets of root's, 0666, renamed, linked elsewhere, bound relatively; abstract ones /proc/net/unix cannot show" "local-abstract local-sockets"
for name in /run/ajt-hidden/moved-to /run/ajt-elsewhere/link /run/ajt-hidden/relative.sock; do
        expect_contains "$name is named" "$name" "$(grep '^FAIL \[local-sockets\]' "$work/out")"
done
for name in @ajt-check-nul@inside @ajt-check-dgram; do
        expect_contains "$name is named" "$name" "$(grep '^FAIL \[local-abstract\]' "$work/out")"
done
# A socket whose file is in no tree the check looks in, and not at its bound name (in a directory the
# sandbox user may search): it cannot say who reaches it, so it fails, naming the bound name.
mkdir -p /usr/local/lib/ajt-bound /usr/local/lib/ajt-hidden
on_exit "rm -rf /usr/local/lib/ajt-bound /usr/local/lib/ajt-hidden"
python3 -c '
import os, socket, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind("/usr/local/lib/ajt-bound/lost.sock")
s.listen(8)
os.link("/usr/local/lib/ajt-bound/lost.sock", "/usr/local/lib/ajt-hidden/lost")
os.unlink("/usr/local/lib/ajt-bound/lost.sock")
os.chmod("/usr/local/lib/ajt-hidden/lost", 0o600)
print("ready", flush=True)
time.sleep(600)' >"$work/lost.ready" &
lost_pid=$!
on_exit "kill $lost_pid"
for _ in $(seq 100); do [ -s "$work/lost.ready" ] && break; sleep 0.05; done
kill "$hidden_pid"
wait "$hidden_pid" 2>/dev/null
expect_failing "a socket whose file is found nowhere" "local-sockets"
expect_contains "it says so, naming its bound name" "whose file was found nowhere, bound as: /usr/local/lib/ajt-bound/lost.sock" \
        "$(grep '^FAIL \[local-sockets\]' "$work/out")"
kill "$lost_pid"
wait "$lost_pid" 2>/dev/null
rm -rf /run/ajt-hidden /run/ajt-elsewhere /usr/local/lib/ajt-bound /usr/local/lib/ajt-hidden

expect_failing "everything restored" ""

# ---------------------------------------------------------------------------------------------------------
echo "# --walk: setup's walk again, report-only, as the sandbox user and as the runner"
CHECK_ARGS=(--walk)
expect_failing "the check with --walk" ""
for p in world-writable-control world-writable sandbox-writable-control sandbox-writable runner-world-write-control runner-world-write setuid-control setuid-unowned; do
        expect_eq "--walk: ok [$p]" 1 "$(grep -c "^ok \[$p\] " "$work/out")"
done
expect_eq "--walk: no note of the walk" 0 "$(grep -c '^note \[walk\]' "$work/out")"
grep -E '^ok \[(world-writable|runner-world-write|setuid-unowned)\]' "$work/out" | sed 's/^/# | /'
echo "# ${AJH_RELEASE:-?}: the check with --walk took $elapsed_ms ms"
install -m 0666 /dev/null /etc/ajt-world-writable
on_exit "rm -f /etc/ajt-world-writable"
expect_failing "a file of root's that all may write" "runner-world-write world-writable"
expect_contains "it is named" "/etc/ajt-world-writable" "$(grep '^FAIL \[world-writable\]' "$work/out")"
rm -f /etc/ajt-world-writable
install -d -m 0777 /var/lib/ajt-open
on_exit "rmdir /var/lib/ajt-open"
expect_failing "a directory of root's that all may write, no sticky bit" "runner-world-write world-writable"
chmod 1777 /var/lib/ajt-open
expect_failing "the same with the sticky bit" ""
rmdir /var/lib/ajt-open
install -m 4755 /bin/true /usr/local/bin/ajt-setuid
on_exit "rm -f /usr/local/bin/ajt-setuid"
expect_failing "a set-uid program of root's that no package owns" "setuid-unowned"
expect_contains "it is named" "/usr/local/bin/ajt-setuid" "$(grep '^FAIL \[setuid-unowned\]' "$work/out")"
rm -f /usr/local/bin/ajt-setuid
# What the sandbox user may write without o+w: a file cron would read, 0640, with an ACL entry naming
# it; a program in root's tree that it owns; a directory of /var/lib its group owns, 0770.
install -m 0640 /dev/null /etc/ajt-acl
setfacl -m "u:$SANDBOX:rw" /etc/ajt-acl
install -m 0755 -o "$SANDBOX" /bin/true /usr/local/sbin/ajt-owned
install -d -m 0770 -g "$SANDBOX" /var/lib/ajt-group
on_exit "rm -rf /etc/ajt-acl /usr/local/sbin/ajt-owned /var/lib/ajt-group"
expect_failing "an ACL entry, a program, a directory of the sandbox user's in root's trees" "sandbox-writable"
for f in /etc/ajt-acl /usr/local/sbin/ajt-owned /var/lib/ajt-group; do
        expect_contains "$f is named" "$f" "$(grep '^FAIL \[sandbox-writable\]' "$work/out")"
done
expect_eq "... by no probe of o+w" "" "$(grep -E '^FAIL \[(world-writable|runner-world-write)\]' "$work/out")"
rm -rf /etc/ajt-acl /usr/local/sbin/ajt-owned /var/lib/ajt-group
expect_failing "the walk's removals put back" ""
CHECK_ARGS=()

# ---------------------------------------------------------------------------------------------------------
echo "# processes and environments"

# A job's variable in the service manager's own environment: every unit gets it, the enter's among them.
systemctl set-environment ACTIONS_AJT_LEAK=1
on_exit "systemctl unset-environment ACTIONS_AJT_LEAK"
expect_failing "ACTIONS_AJT_LEAK in the service manager's environment" "env-job-variables environ-job-variables"
expect_contains "it is named" "ACTIONS_AJT_LEAK" "$(grep '^FAIL \[env-job-variables\]' "$work/out")"
systemctl unset-environment ACTIONS_AJT_LEAK

# A job with OIDC request values (stand-ins): looked for and found nowhere, then the token under another
# name in the service manager's environment. The check never shows the value.
OIDC_TOKEN=$(head -c 48 /dev/urandom | base64 | tr -d '/+=\n')
OIDC_ENV=("ACTIONS_ID_TOKEN_REQUEST_URL=https://203.0.113.7/_apis/token?api-version=2.0"
        "ACTIONS_ID_TOKEN_REQUEST_TOKEN=$OIDC_TOKEN")
expect_failing "a job with OIDC request values" ""
for v in URL TOKEN; do
        expect_eq "ok [oidc-value:ACTIONS_ID_TOKEN_REQUEST_$v]" 1 \
                "$(grep -c "^ok \[oidc-value:ACTIONS_ID_TOKEN_REQUEST_$v\] " "$work/out")"
done
expect_contains "oidc-control: ok" "ok [oidc-control] " "$(cat "$work/out")"
systemctl set-environment "AJT_SAVED=Bearer $OIDC_TOKEN"
on_exit "systemctl unset-environment AJT_SAVED"
expect_failing "the OIDC request token in the service manager's environment" \
        "oidc-value:ACTIONS_ID_TOKEN_REQUEST_TOKEN"
systemctl unset-environment AJT_SAVED
expect_eq "the token is nowhere in what the check wrote" "" "$(grep -lF "$OIDC_TOKEN" "$work/out" "$work/err")"
OIDC_ENV=()

systemctl start "$DAEMON"
expect_failing "a unit setup stopped, started again" "service:$DAEMON"
systemctl stop "$DAEMON"

# What stops the rest is the boundary itself (the uid split; the enter's no_new_privs, environment and
# /proc), which no setting of the host removes. So the boundary is removed: the sandbox side is run by
# hand, against a decoy of the runner's made here (a process in a session of its own whose controlling
# terminal is a pseudo-terminal of script(1)'s, a canary its only environment).
DECOY_CANARY=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
install -m 0644 -o "$RUNNER" /dev/null "$work/decoy.pid"
runuser -u "$RUNNER" -- setsid script -qfec \
        "echo \$\$ >$work/decoy.pid; exec env -i AGENTIC_JOB_CHECK_CANARY=$DECOY_CANARY sleep 600" /dev/null \
        </dev/null >/dev/null 2>&1 &
for _ in $(seq 100); do
        DECOY=$(cat "$work/decoy.pid")
        [ -n "$DECOY" ] && [ "$(readlink "/proc/$DECOY/exe")" = /usr/bin/sleep ] && break
        sleep 0.05
done
DECOY_SCRIPT=$(ps -o ppid= -p "$DECOY" | tr -d ' ')
on_exit "kill $DECOY $DECOY_SCRIPT"
DECOY_TTY=$(readlink "/proc/$DECOY/fd/0")
expect_contains "the test's decoy runs, its terminal a pseudo-terminal" "/dev/pts/" "$DECOY_TTY"
INSIDE=(sandbox probe-inside --proxy-port 3128 --user-manager masked --post none
        --control-url https://www.fake.test/ --fetch-repo https://www.fake.test/git/fixture.git --tcp-control 9
        --udp-target 9 --abstract agentic-job-check-00
        --socket-control /tmp/agentic-job-check-00/socket
        --decoy "$DECOY" --decoy-tty "$DECOY_TTY" --canary "$DECOY_CANARY")
# inside_run WHAT GROUP...: runs the side of these groups as INSIDE_AS says, from /; $got the sorted names
# of what failed.
inside_run() {
        local what=$1 only=()
        shift
        for g in "$@"; do only+=(--only "$g"); done
        (cd / && "${INSIDE_AS[@]}" "$CLIENT" "${INSIDE[@]}" "${only[@]}") </dev/null >"$work/inside.out" 2>"$work/inside.err"
        expect_eq "$what: nothing on standard error" "" "$(cat "$work/inside.err")"
        got=$(sed -n 's/^{"name":"\([^"]*\)","result":"fail".*/\1/p' "$work/inside.out" | sort | tr '\n' ' ' | sed 's/ $//')
}
# As the runner: no uid split. Yama, where the kernel has it, would stop tracing (and opening the memory
# of) a process that is not a descendant even for the same uid: then those two pass.
want="environ-canary environ-runner proc-mem ptrace-runner signal-runner tiocsti"
[ -e "$YAMA" ] && [ "$(cat "$YAMA")" != 0 ] && want="environ-canary environ-runner signal-runner tiocsti"
INSIDE_AS=(runuser -u "$RUNNER" -- env -i PATH=/usr/bin:/bin HOME="$RUNNER_HOME")
inside_run "the sandbox side run as the runner" processes
expect_eq "the sandbox side run as the runner: exactly {$want} fail" "$want" "$got"
[ "$got" = "$want" ] || sed 's/^/# | /' "$work/inside.out"
# As the sandbox user, without the helper (no no_new_privs, the whole /proc), with a sudo rule for it
# and the canary in its own environment: sudo works, the canary is found, and the uid split alone still
# keeps the runner's decoy out of reach.
printf '%s ALL=(ALL) NOPASSWD: ALL\n' "$SANDBOX" >/etc/sudoers.d/zzz-ajt-sandbox-grant
chmod 0440 /etc/sudoers.d/zzz-ajt-sandbox-grant
on_exit "rm -f /etc/sudoers.d/zzz-ajt-sandbox-grant"
SB_HOME=$(getent passwd "$SANDBOX" | cut -d: -f6)
INSIDE_AS=(setpriv --reuid="$SB_UID" --regid="$(id -g "$SANDBOX")" --init-groups env -i PATH=/usr/bin:/bin
        HOME="$SB_HOME" AGENTIC_JOB_CHECK_CANARY="$DECOY_CANARY")
inside_run "the sandbox side without the helper" privilege processes
expect_eq "the sandbox side without the helper, a sudo rule for it: exactly {environ-canary sudo} fail" \
        "environ-canary sudo" "$got"
[ "$got" = "environ-canary sudo" ] || sed 's/^/# | /' "$work/inside.out"
expect_contains "... the decoy's environment refused, not hidden, without the enter's /proc" \
        "/proc/$DECOY/environ refused" "$(grep '"environ-runner"' "$work/inside.out")"
expect_failing "the same sudo rule, through the helper (no_new_privs)" ""
# The resources without the helper's enter: oom_score_adj 0 and the kernel's RLIMIT_NPROC, which is more
# than tasks-max; through the helper both pass (the whole check above).
INSIDE+=(--tasks-max 8192)
inside_run "the sandbox side without the helper: its resources" resources
expect_eq "... exactly {oom-score tasks-budget} fail" "oom-score tasks-budget" "$got"
[ "$got" = "oom-score tasks-budget" ] || sed 's/^/# | /' "$work/inside.out"
expect_contains "... oom-score names the value" "oom_score_adj is 0, not 1000" "$(grep '"oom-score"' "$work/inside.out")"
rm -f /etc/sudoers.d/zzz-ajt-sandbox-grant
kill "$DECOY" "$DECOY_SCRIPT" 2>/dev/null

# ---------------------------------------------------------------------------------------------------------
echo "# refusals, --json, the step summary"

"$CLIENT" sandbox check >"$work/out" 2>"$work/err"
expect_eq "as root: status 2" 2 "$?"
expect_eq "as root: one line" "agentic-job sandbox check: refused as root: run it as the runner's user" "$(cat "$work/err")"
check --bogus
expect_eq "an unknown option: status 2" 2 "$status"
chmod o+w /etc/agentic-job/config.toml
check
expect_eq "a configuration others can write: status 2" 2 "$status"
expect_contains "it is named" "/etc/agentic-job/config.toml" "$(cat "$work/err")"
expect_eq "before any probe" "" "$(cat "$work/out")"
chmod o-w /etc/agentic-job/config.toml
cp -p "$POLICY" "$work/policy.saved"
on_exit "cp -p $work/policy.saved $POLICY"
printf '[[write]]\nname = "x"\nbogus = 1\n' >"$POLICY"
check
expect_eq "an egress policy that does not parse: status 2" 2 "$status"
expect_contains "it is named" "the egress policy: $POLICY" "$(cat "$work/err")"
expect_eq "before any probe" "" "$(cat "$work/out")"
cp -p "$work/policy.saved" "$POLICY"
check --record --unless-passed
expect_eq "--record with --unless-passed: status 2" 2 "$status"

check --json
expect_eq "--json: status 0" 0 "$status"
expect_eq "--json: one document with the counts" "${#PROBES[@]} 0 $NOTES" \
        "$(python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(d["ok"], d["failed"], d["notes"])' "$work/out")"
expect_eq "--json: every result has a group" "" \
        "$(python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(" ".join(r["name"] for r in d["results"] if r.get("group") is None))' "$work/out")"

install -m 0600 -o "$RUNNER" /dev/null "$RUNNER_TEMP/summary.md"
as_runner env GITHUB_STEP_SUMMARY="$RUNNER_TEMP/summary.md" "$CLIENT" sandbox check >/dev/null 2>&1
expect_eq "GITHUB_STEP_SUMMARY: a Markdown row per result" "$((${#PROBES[@]} + NOTES))" \
        "$(grep -cE '^\| (ok|FAIL|note) \| `' "$RUNNER_TEMP/summary.md")"

# ---------------------------------------------------------------------------------------------------------
echo "# the record"

check --record
expect_eq "--record on a pass: status 0" 0 "$status"
expect_contains "it says so" "note [record] record written: $RECORD" "$(cat "$work/out")"
expect_eq "the record: the runner's, 0600" "$RUNNER 600" "$(stat -c '%U %a' "$RECORD")"
expect_eq "its fields" "run-id=4242 run-attempt=1 job=agent version=$("$CLIENT" --version | cut -d' ' -f2) binary-sha256=$(sha256sum "$CLIENT" | cut -d' ' -f1) config-sha256=$(sha256sum /etc/agentic-job/config.toml | cut -d' ' -f1) policy-sha256=$(sha256sum /opt/egress-proxy/policy/policy.toml | cut -d' ' -f1)" \
        "$(sed 1d "$RECORD" | tr '\n' ' ' | sed 's/ $//')"

check --unless-passed
expect_eq "--unless-passed with the record: status 0" 0 "$status"
expect_contains "no probe made" "no probe made" "$(cat "$work/out")"
expect_eq "no probe line" "" "$(grep -E '^(ok|FAIL) ' "$work/out")"
expect_absent "the record was removed" "$RECORD"
echo "# ${AJH_RELEASE:-?}: --unless-passed with a record took $elapsed_ms ms"
check --unless-passed
expect_eq "--unless-passed again, no record: it probes" "${#PROBES[@]}" "$(grep -c '^ok ' "$work/out")"
expect_absent "and leaves no record" "$RECORD"

check --record
expect_eq "a record again" "yes" "$([ -f "$RECORD" ] && echo yes)"
check
expect_absent "a plain check removes it" "$RECORD"
check --record
as_runner env GITHUB_STEP_SUMMARY= "$CLIENT" sandbox exec -- true </dev/null
expect_absent "sandbox exec removes it" "$RECORD"

check --record
ATTEMPT=2 check --unless-passed
expect_contains "another attempt: not taken" "note [record] not taken: its run-attempt is not this one's" "$(cat "$work/out")"
expect_eq "another attempt: it probes" "${#PROBES[@]}" "$(grep -c '^ok ' "$work/out")"

check --record
cp "$RECORD" "$work/record.saved"
rm -f "$RECORD"
ln -s "$work/record.saved" "$RECORD"
check --unless-passed
expect_contains "a link: not taken" "note [record] the record was not taken: it is a link" "$(cat "$work/out")"
expect_absent "the link removed" "$RECORD"

install -m 0600 -o nobody "$work/record.saved" "$RECORD"
check --unless-passed
expect_contains "another owner's file: not taken" "not the runner's file" "$(cat "$work/out")"
expect_absent "removed all the same" "$RECORD"

install -m 0600 -o "$RUNNER" "$work/record.saved" "$RECORD"
chmod 0770 "$RUNNER_TEMP"
check --unless-passed
expect_contains "a group-writable directory: not taken" "is not a directory of the runner's that no one else can write" "$(cat "$work/out")"
chmod 0700 "$RUNNER_TEMP"

install -m 0600 -o "$RUNNER" "$work/record.saved" "$RECORD"
echo "# a comment changes the bytes" >>/etc/agentic-job/config.toml
check --unless-passed
expect_contains "a changed configuration: not taken" "not taken: its config-sha256 is not this one's" "$(cat "$work/out")"
sed -i '$d' /etc/agentic-job/config.toml

check --record
cp -p "$CLIENT" "$work/client.saved"
on_exit "cp -p $work/client.saved $CLIENT"
printf '\0' >>"$CLIENT"
check --unless-passed
expect_contains "a changed binary: not taken" "not taken: its binary-sha256 is not this one's" "$(cat "$work/out")"
cp -p "$work/client.saved" "$CLIENT"

chmod 0777 "$RUNNER_TEMP"
check --record
expect_contains "--record into a directory others can write: refused" "no record written" "$(cat "$work/out")"
expect_absent "no record there" "$RECORD"
chmod 0700 "$RUNNER_TEMP"

chmod 0755 "$RUNNER_HOME"
check --record
expect_eq "--record when a probe fails: status 1" 1 "$status"
expect_absent "--record when a probe fails: no record" "$RECORD"
chmod 0700 "$RUNNER_HOME"

# ---------------------------------------------------------------------------------------------------------
echo "# planted: what an earlier step wrote where the probes' programs look"

# Every earlier step ran as the sandbox user and could write its home, /tmp and /var/tmp. Here one
# (sandbox exec, as a workflow's step would) writes every per-user and per-directory file the probes'
# programs are known to read, each made to forge a probe, to fail one, or, where it is read at all, to
# leave a mark in PLANTED: curl's, git's (its repository in the home, its global files), cargo and npm
# in ~/.cargo/bin, their configuration, ssh's, the shells', podman's. The check must say exactly what it
# says without them, leave no mark, and, with a real exposure opened (the metadata service let through
# to the sandbox uid), fail exactly as it fails without them and write no record.
PLANTED=$(mktemp -d /tmp/ajt-planted.XXXXXX)
chmod 0777 "$PLANTED"
on_exit "rm -rf $PLANTED /tmp/.git /tmp/.cargo /var/tmp/.git"
# results: each line's result and name, sorted (the details hold times and pids).
results() { sed -n 's/^\(ok\|FAIL\|note\) \(\[[^]]*\]\).*/\1 \2/p' "$work/out" | sort; }
# With a git-upload-pack rule, egress-git runs git itself (and so reads what git reads).
cp -p "$POLICY" "$work/policy.orig"
printf "$GIT_RULE" >>"$POLICY"
restart_proxy "a git-upload-pack rule, for the planted files"
expect_failing "before anything is planted" ""
results >"$work/results.clean"
expect_contains "egress-git runs git" "ok [egress-git] git ls-remote" "$(cat "$work/out")"
nft insert rule inet agentic_job output meta skuid "$SB_UID" ip daddr 169.254.169.254 accept
expect_failing "the metadata service let through, nothing planted" "metadata"
results >"$work/results.exposed"
nft delete table inet agentic_job
nft -f "$NFT_SAVED"

# --keep: what it plants in /tmp and /var/tmp stays for the check (a step without it would have it removed).
as_runner "$CLIENT" sandbox exec --keep -- bash -c '
set -e
m=$1
cd "$HOME"
printf "trace-ascii = \"%s/curlrc-read\"\nproxy = \"http://127.0.0.1:1\"\nresolve = \"169.254.169.254:80:127.0.0.1\"\nresolve = \"www.fake.test:443:127.0.0.1\"\n" "$m" >.curlrc
printf "machine www.fake.test login ajt password planted\n" >.netrc
printf "output_document = %s/wgetrc-read\n" "$m" >.wgetrc
mkdir -p .ssh .cargo/bin .config/git .config/containers
printf "Host *\n  ProxyCommand sh -c \"touch %s/ssh-read\"\n" "$m" >.ssh/config
for f in .bashrc .profile .bash_profile .zshenv; do printf "touch %s/shell-read\n" "$m" >"$f"; done
for tool in cargo npm git curl podman; do
        printf "#!/bin/sh\ntouch %s/%s-ran\nexit 0\n" "$m" "$tool" >".cargo/bin/$tool"
        chmod 0755 ".cargo/bin/$tool"
done
printf "[http]\nproxy = \"http://127.0.0.1:1\"\n[net]\noffline = true\n" >.cargo/config.toml
mkdir -p /tmp/.cargo && cp .cargo/config.toml /tmp/.cargo/config.toml
printf "registry=http://127.0.0.1:1/\nproxy=http://127.0.0.1:1/\n" >.npmrc
# insteadOf replaces the prefix: what follows it in the URL lands after the "#", a comment to sh.
gitcfg=$(printf "[protocol \"ext\"]\n\tallow = always\n[url \"ext::sh -c touch%% %s/git-read%% #\"]\n\tinsteadOf = https://www.fake.test/\n" "$m")
printf "%s\n" "$gitcfg" >.gitconfig
printf "%s\n" "$gitcfg" >.config/git/config
for d in "$HOME" /tmp /var/tmp; do git init -q "$d" && printf "%s\n" "$gitcfg" >>"$d/.git/config"; done
printf "[engine]\nenv = [\"LD_PRELOAD=%s/none.so\"]\n[engine.runtimes\n" "$m" >.config/containers/containers.conf
printf "not = [toml\n" >.config/containers/storage.conf
' sh "$PLANTED" </dev/null || fail "an earlier step planting its files"
expect_eq "the step planted them" "yes" "$([ -f "$SB_HOME/.curlrc" ] && [ -d "$SB_HOME/.git" ] && echo yes)"

expect_failing "the planted files, nothing exposed" ""
results >"$work/results.planted"
expect_eq "every probe's result the same as without them" "" "$(diff "$work/results.clean" "$work/results.planted")"
expect_contains "containers: podman still says why it cannot start" "newuidmap" "$(grep '^note \[container-pull\]' "$work/out")"
check --record
expect_eq "--record with them: status 0" 0 "$status"
expect_eq "... and a record" yes "$([ -f "$RECORD" ] && echo yes)"

nft insert rule inet agentic_job output meta skuid "$SB_UID" ip daddr 169.254.169.254 accept
on_exit "nft list table inet agentic_job >/dev/null 2>&1 && nft delete table inet agentic_job; nft -f $NFT_SAVED"
expect_failing "the metadata service let through, the planted files" "metadata"
results >"$work/results.planted-exposed"
expect_eq "every probe's result the same as without them" "" "$(diff "$work/results.exposed" "$work/results.planted-exposed")"
check --record
expect_eq "--record with the exposure: status 1" 1 "$status"
expect_absent "--record with the exposure: no record" "$RECORD"
nft delete table inet agentic_job
nft -f "$NFT_SAVED"

for mark in curlrc-read wgetrc-read ssh-read shell-read git-read cargo-ran npm-ran git-ran curl-ran podman-ran; do
        expect_absent "no program of the check read or ran what was planted: $mark" "$PLANTED/$mark"
done
# The control: the same files, read by the sandbox user's own programs in a step, are live.
as_runner "$CLIENT" sandbox exec -- sh -c 'curl -s -m 2 -o /dev/null http://www.fake.test/; git ls-remote https://www.fake.test/git/fixture.git' </dev/null >/dev/null 2>&1
expect_eq "the control: a step's own curl read its .curlrc" yes "$([ -e "$PLANTED/curlrc-read" ] && echo yes)"
expect_eq "the control: a step's own git ran its planted ext:: command" yes "$([ -e "$PLANTED/git-read" ] && echo yes)"

as_runner "$CLIENT" sandbox exec -- sh -c 'cd "$HOME" && rm -rf .curlrc .netrc .wgetrc .ssh .cargo .npmrc .gitconfig .config/git .config/containers .git /tmp/.git /tmp/.cargo /var/tmp/.git .bashrc .profile .bash_profile .zshenv' </dev/null ||
        fail "the planted files removed"
cp -p "$work/policy.orig" "$POLICY"
restart_proxy "the installed policy"
expect_failing "the planted files removed, the installed policy" ""

# ---------------------------------------------------------------------------------------------------------
echo "# containers"

# Podman can start for the sandbox user where it has no subordinate ids: one uid mapped, its own, which
# podman writes itself. Setup gives the ids; this part takes them away, as a host without them would be
# (podman_without_subids, which also says what a test host adds). The image is made here, without a
# registry: busybox and the host's curl (curl_image_tar).
podman_without_subids "$SANDBOX" "$work"
as_sandbox() { as_runner "$CLIENT" sandbox exec -- "$@" </dev/null; }
curl_image_archive "$work" as_sandbox || fail "the image's archive, made by the sandbox user's podman"
IMAGE=$CURL_IMAGE
sed -i "s|^control-url = .*|&\ncontainer-image = \"$IMAGE\"|" /etc/agentic-job/config.toml
on_exit "cp -p $work/installed.toml /etc/agentic-job/config.toml"

check_start=$(date +%s%N)
expect_failing "the sandbox user without subordinate ids, the image an archive of root's" ""
for p in "${CONTAINER_PROBES[@]}"; do
        expect_eq "ok [$p]" 1 "$(grep -c "^ok \[$p\] " "$work/out")"
done
expect_contains "the image pulled into the check's own store" "ok [container-pull] podman pull $IMAGE into the check's own store: " \
        "$(cat "$work/out")"
expect_contains "the container's POST: the proxy's refusal" "403 with X-Egress-Denied" \
        "$(grep '^ok \[egress-container-post\]' "$work/out")"
expect_eq "the check's own home (and store) removed" "" "$(ls -d /tmp/agentic-job-check-home-* 2>/dev/null)"
for d in /tmp/agentic-job-check-home-*; do
        [ -e "$d" ] && find "$d" -maxdepth 6 -printf '# left: %M %u %p\n' | head -n 20
        [ -e "$d" ] && ps -o pid=,args= -u "$SANDBOX" | sed 's/^/# left running: /'
done
expect_eq "nothing in the sandbox user's own store" "" "$(as_sandbox podman images -q 2>/dev/null)"

# An image of the sandbox user's choosing: an archive it may write, a store it owns.
install -d -o "$SANDBOX" -m 0755 "$work/sandbox-archive"
cp /var/lib/ajt-images/curl.tar "$work/sandbox-archive/curl.tar"
chown "$SANDBOX" "$work/sandbox-archive/curl.tar"
sed -i "s|^container-image = .*|container-image = \"docker-archive:$work/sandbox-archive/curl.tar\"|" /etc/agentic-job/config.toml
expect_failing "an archive the sandbox user may write" "container-pull"
expect_contains "... named as not root's" "not an archive root's alone" "$(grep '^FAIL \[container-pull\]' "$work/out")"
sed -i "s|^container-image = .*|container-image = \"containers-storage:localhost/ajt-check-curl:1\"|" /etc/agentic-job/config.toml
expect_failing "the sandbox user's own store as the transport" "container-pull"
sed -i "s|^container-image = .*|container-image = \"$IMAGE\"|" /etc/agentic-job/config.toml
echo "# ${AJH_RELEASE:-?}: the whole check with its container probes took $elapsed_ms ms"
grep -E '^ok \[(container-metadata|egress-container-direct|egress-container-own-network)\]' "$work/out" | sed 's/^/# /'
echo "# processes of $SANDBOX after the check: $(ps -o pid=,comm= -u "$SANDBOX" | tr '\n' ' ')"
python3 -c 'import json, sys
d = json.load(sys.stdin)
ms = sum(r["ms"] for r in d["results"] if r["group"] == "containers")
print("# the container probes, one after another: %d ms of it" % ms)' < <(as_runner "$CLIENT" sandbox check --json </dev/null 2>/dev/null)

nft delete table inet agentic_job
expect_failing "the nftables table deleted, with containers" "container-metadata egress-container-direct egress-container-own-network egress-direct egress-dns egress-resolve egress-tcp egress-udp local-tcp local-udp metadata userns-net"
nft -f "$NFT_SAVED"

cp -p "$POLICY" "$work/policy.orig"
printf '\n[[write]]\nname = "ajt-post"\nwhy = "the removal test of egress-container-post"\nhosts = ["www.fake.test"]\nmethods = ["POST"]\npaths = ["/"]\n' >>"$POLICY"
restart_proxy "a rule for the POST"
cp -p "$work/policy.orig" "$POLICY"
expect_failing "the proxy started with a POST rule, the installed policy without it, with containers" "egress-container-post egress-post"
restart_proxy "the installed policy"

sed -i "s|^container-image = .*|container-image = \"localhost/ajt-check-absent:1\"|" /etc/agentic-job/config.toml
expect_failing "an image that is not there and no registry to pull it from" "container-pull"
for p in "${CONTAINER_PROBES[@]:1}"; do
        expect_contains "$p: a note" "note [$p] not probed: container-pull failed" "$(cat "$work/out")"
done
sed -i "s|^container-image = .*|container-image = \"$IMAGE\"|" /etc/agentic-job/config.toml

sed -i 's|^control-url = .*|&\ncontainers = false|' /etc/agentic-job/config.toml
expect_failing "[sandbox.check] containers = false" ""
for p in "${CONTAINER_PROBES[@]}"; do
        expect_contains "$p: a note" "note [$p] not probed: [sandbox.check] containers = false" "$(cat "$work/out")"
done
sed -i '/^containers = false$/d' /etc/agentic-job/config.toml

chmod 0700 /usr/bin/podman
on_exit "chmod 0755 /usr/bin/podman"
expect_failing "podman not runnable by the sandbox user" ""
for p in "${CONTAINER_PROBES[@]}"; do
        expect_contains "$p: a note" "note [$p] not probed: no /usr/bin/podman that the sandbox user may run" "$(cat "$work/out")"
done
chmod 0755 /usr/bin/podman
expect_failing "everything put back, with containers" ""
echo "# ${AJH_RELEASE:-?}: containers: $((($(date +%s%N) - check_start) / 1000000)) ms"

finish
