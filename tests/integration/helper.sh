#!/usr/bin/env bash
# The helper on this machine, as root, through real sudo: a runner user and a sandbox user are created,
# the helper, its configuration and the sudo rule installed; every operation is run where it should work,
# a table of bad calls is each refused with its message and nothing done, and kill-user is set against a
# fork bomb, a setsid daemon, a stopped process, one ignoring SIGTERM and one of a subordinate uid.
# Everything it creates is removed, also when it fails.
#
# usage: tests/integration/helper.sh BUILD_DIR
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/integration/lib.sh
. "$here/lib.sh"

. "$here/fixture.sh"


# A syslog socket to read the audit trail from, where this machine runs no syslog daemon.
audit_log=$(mktemp /tmp/ajt-audit.XXXXXX)
on_exit "rm -f $audit_log"
if [ ! -e /dev/log ]; then
        socat -u UNIX-RECV:/dev/log,mode=0666 "OPEN:$audit_log,append" &
        socat_pid=$!
        on_exit "rm -f /dev/log"
        on_exit "kill $socat_pid"
        for _ in $(seq 50); do [ -S /dev/log ] && break; sleep 0.05; done
fi


# ---------------------------------------------------------------------------------------------------------
echo "# ping and enter"

run helper ping
expect_eq "ping succeeds" "0" "$status"

# The kernel keeps a process from lowering its oom_score_adj below the value a process with
# CAP_SYS_RESOURCE last wrote. Where root itself lacks it (not in its bounding set, as on some VMs), no
# writer can set that floor: the command can go back from 1000 to 0 there, but still not below.
if [ $(((16#$(awk '/^CapBnd:/ { print $2 }' /proc/self/status) >> 24) & 1)) = 1 ]; then sys_resource=1; else sys_resource=0; fi
# expect_oom_floor WHAT PROBE_OUTPUT
expect_oom_floor() {
        expect_contains "$1: the command cannot make its oom_score_adj negative" "oom-negative=refused" "$2"
        if [ "$sys_resource" = 1 ]; then
                expect_contains "$1: the command cannot lower its oom_score_adj" "oom-lower=refused oom-after=1000" "$2"
        else
                echo "# note: $1: root has no CAP_SYS_RESOURCE here, so no floor of 1000 can be set ($(grep '^oom-lower=' <<<"$2"))"
        fi
}
cat >"$SB_HOME/probe.sh" <<'EOF'
echo "uid=$(id -u) gid=$(id -g) groups=$(id -G)"
grep -E '^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs):' /proc/self/status | tr -d '\t' | tr '\n' ' '
echo
echo "oom=$(cat /proc/self/oom_score_adj)"
echo "oom-lower=$( (echo 999 >/proc/self/oom_score_adj) 2>/dev/null && echo done || echo refused) oom-after=$(cat /proc/self/oom_score_adj)"
echo "oom-negative=$( (echo -1 >/proc/self/oom_score_adj) 2>/dev/null && echo done || echo refused)"
echo "cwd=$(pwd)"
echo "sid=$(ps -o sid= -p $$ | tr -d ' ') pid=$$"
echo "tty=$(tty -s && tty || echo none)"
echo "fds=$(ls /proc/self/fd | sort -n | tr '\n' ' ')"
echo "cgroup=$(grep '^0::' /proc/self/cgroup)"
env | sort | sed 's/^/env:/'
EOF
chmod 0644 "$SB_HOME/probe.sh"
mkdir -p "$SB_HOME/work/sub"
chown -R "$SANDBOX:$SANDBOX" "$SB_HOME/work"

probe=$(AJT_CANARY=canary-d41d8cd9 runuser -u "$RUNNER" -- sudo -n "$HELPER" helper enter \
        --chdir "$SB_HOME/work/sub" -- bash "$SB_HOME/probe.sh" </dev/null 2>&1)
expect_contains "enter: uid, gid" "uid=$SB_UID gid=$SB_GID" "$probe"
expect_eq "enter: supplementary groups are the sandbox user's" "groups=$(id -G "$SANDBOX")" \
        "$(grep '^uid=' <<<"$probe" | sed 's/.* groups=/groups=/')"
for set in CapInh CapPrm CapEff CapBnd CapAmb; do
        expect_contains "enter: $set empty" "$set:0000000000000000" "$probe"
done
expect_contains "enter: no_new_privs" "NoNewPrivs:1" "$probe"
expect_contains "enter: the OOM killer's first choice (oom_score_adj 1000)" "oom=1000" "$probe"
expect_oom_floor "enter" "$probe"
expect_contains "enter: cwd as asked" "cwd=$SB_HOME/work/sub" "$probe"
sid=$(sed -n 's/^sid=\([0-9]*\) pid=\([0-9]*\)$/\1 \2/p' <<<"$probe")
expect_eq "enter: a new session (the command leads it)" "${sid#* }" "${sid% *}"
expect_contains "enter: no terminal" "tty=none" "$probe"
expect_contains "enter: only the standard descriptors (and ls's own)" "fds=0 1 2 3 
" "$probe"
expect_contains "enter: a cgroup of its own" "cgroup=0::/agentic-job/enter-" "$probe"
expect_contains "enter: fixed PATH" "env:PATH=/usr/local/bin:/usr/bin:/bin" "$probe"
expect_contains "enter: fixed LANG" "env:LANG=C.UTF-8" "$probe"
expect_contains "enter: HOME of the sandbox user" "env:HOME=$SB_HOME" "$probe"
expect_contains "enter: [sandbox] env" "env:AJT_FROM_CONFIG=configured" "$probe"
case "$probe" in *canary-d41d8cd9*) fail "enter: the caller's canary variable crossed" ;; *) pass "enter: no caller variable (canary)" ;; esac
case "$probe" in *env:SUDO_*) fail "enter: SUDO_* variables crossed" ;; *) pass "enter: no SUDO_* variables" ;; esac
case "$probe" in *_PROXY=*) fail "enter: proxy variables with proxy = false" ;; *) pass "enter: no proxy variables when [egress] proxy = false" ;; esac
n_env=$(grep -c '^env:' <<<"$probe")
expect_eq "enter: exactly the expected variables (PATH LANG HOME USER LOGNAME SHELL AJT_FROM_CONFIG, PWD SHLVL _ from bash)" "10" "$n_env"
expect_absent "enter: the cgroup is removed after the command" "$(ls -d $CG2/agentic-job/enter-* 2>/dev/null | head -n1)"

run helper enter --chdir "$SB_HOME" -- sh -c 'exit 7'
expect_eq "enter: the command's exit status passes through" "7" "$status"
run helper enter --chdir "$SB_HOME" -- sh -c 'kill -TERM $$'
expect_eq "enter: a signal is 128+N" "143" "$status"
out=$(echo "through stdin" | helper enter --chdir "$SB_HOME" -- cat)
expect_eq "enter: standard input and output pass through" "through stdin" "$out"
out=$(helper enter --chdir "$SB_HOME" -- sh -c 'echo to-stderr >&2' 2>&1 >/dev/null)
expect_eq "enter: standard error passes through" "to-stderr" "$out"
run helper enter --chdir "$SB_HOME" -- ajt-no-such-command
expect_eq "enter: a missing command is 127" "127" "$status"
expect_contains "enter: a missing command says so" "agentic-job-helper: enter: could not execute the command ajt-no-such-command" "$out"
run helper enter --chdir "$SB_HOME" -- "$SB_HOME/probe.sh"
expect_eq "enter: a command that cannot be executed is 126" "126" "$status"

write_config <<<"${BASE_CONFIG/proxy = false/proxy = true}"
probe=$(helper enter --chdir "$SB_HOME" -- env </dev/null 2>&1)
expect_contains "enter: proxy variables when [egress] proxy = true" "HTTPS_PROXY=http://127.0.0.1:3128" "$probe"
expect_contains "enter: lower-case proxy variable too" "https_proxy=http://127.0.0.1:3128" "$probe"
write_config <<<"$BASE_CONFIG"

run helper enter --chdir "$SB_HOME" -- bash -c 'ulimit -Su; ulimit -Hu'
expect_eq "enter: RLIMIT_NPROC is [sandbox] tasks-max (8192 by default), soft and hard" "8192
8192" "$out"
run helper enter --chdir "$SB_HOME" -- bash -c 'ulimit -u 9000 2>/dev/null || echo refused'
expect_eq "enter: the command cannot raise it" "refused" "$out"

# ---------------------------------------------------------------------------------------------------------
echo "# the check's resources probes, through the direct enter"

# The sandbox side of the check, its resources group alone (the other arguments are only parsed).
install -o root -g root -m 0755 "$build/client/agentic-job" "$SB_HOME/ajt-client"
RESOURCES=("$SB_HOME/ajt-client" sandbox probe-inside --proxy-port 0 --user-manager masked --post none
        --control-url https://www.fake.test/ --fetch-repo https://www.fake.test/r.git --tcp-control 9
        --udp-target 9 --abstract agentic-job-check-00 --socket-control /tmp/agentic-job-check-00/socket
        --decoy $$ --decoy-tty /dev/pts/0 --canary 0123456789abcdef0123456789abcdef --tasks-max 8192
        --only resources)
run helper enter --chdir "$SB_HOME" -- "${RESOURCES[@]}"
expect_eq "resources: the sandbox side succeeds" 0 "$status"
expect_contains "resources: tasks-budget ok, RLIMIT_NPROC tasks-max" '{"name":"tasks-budget","result":"ok","detail":"RLIMIT_NPROC 8192 (soft 8192)' "$out"
if [ "$sys_resource" = 1 ]; then
        expect_contains "resources: oom-score ok" '{"name":"oom-score","result":"ok"' "$out"
else
        expect_contains "resources: oom-score a note, no floor without CAP_SYS_RESOURCE" '{"name":"oom-score","result":"note"' "$out"
fi
# A v1 memory hierarchy this test may write (this machine's is; a test host's is read-only): the limit the
# probe reads on a cgroup named as systemd names the sandbox user's slice, the command placed in it by
# its caller (the enter leaves a v1 hierarchy's cgroup as it is); then the limit taken away.
MEM=/sys/fs/cgroup/memory
SLICE=$MEM/user.slice/user-$SB_UID.slice
# Cleanups run last first: user.slice, where this test made it, after the slice.
[ -e "$MEM/user.slice" ] || on_exit "rmdir $MEM/user.slice"
if [ "$(stat -f -c %T "$MEM" 2>/dev/null)" = cgroupfs ] && [ -f "$MEM/memory.limit_in_bytes" ] &&
        [ ! -e "$SLICE" ] && mkdir -p "$SLICE/ajt-test.scope" 2>/dev/null; then
        on_exit "rmdir $SLICE/ajt-test.scope $SLICE"
        echo $((512 * 1024 * 1024)) >"$SLICE/memory.limit_in_bytes"
        run sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$SLICE/ajt-test.scope" \
                runuser -u "$RUNNER" -- sudo -n "$HELPER" helper enter --chdir "$SB_HOME" -- "${RESOURCES[@]}"
        expect_contains "resources: memory-budget ok, the slice's limit named" \
                "{\"name\":\"memory-budget\",\"result\":\"ok\",\"detail\":\"512 MiB at most, set at /user.slice/user-$SB_UID.slice (cgroup v1), over /user.slice/user-$SB_UID.slice/ajt-test.scope\"" "$out"
        echo -1 >"$SLICE/memory.limit_in_bytes"
        run sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$SLICE/ajt-test.scope" \
                runuser -u "$RUNNER" -- sudo -n "$HELPER" helper enter --chdir "$SB_HOME" -- "${RESOURCES[@]}"
        if [ -d /run/systemd/system ]; then want=fail; else want=note; fi
        expect_contains "resources: memory-budget $want without the limit" \
                "{\"name\":\"memory-budget\",\"result\":\"$want\",\"detail\":\"no memory limit from /user.slice/user-$SB_UID.slice/ajt-test.scope up to /user.slice/user-$SB_UID.slice (cgroup v1)" "$out"
else
        echo "# note: no v1 memory hierarchy this test may write here: memory-budget's limit is not shown"
        expect_contains "resources: memory-budget a note, never ok, where nothing enforces a budget" '{"name":"memory-budget","result":"note"' "$out"
fi

# ---------------------------------------------------------------------------------------------------------
echo "# sandbox exec (the client)"

out=$(runuser -u "$RUNNER" -- "$CLIENT" sandbox exec -- sh -c 'id -u; pwd' </dev/null 2>&1)
expect_eq "sandbox exec: runs as the sandbox user, in its home by default" "$SB_UID
$SB_HOME" "$out"
script=$(mktemp /tmp/ajt-step.XXXXXX)
on_exit "rm -f $script"
printf 'echo "step ran as $(id -un)"\nexit 3\n' >"$script"
chmod 0644 "$script"
out=$(runuser -u "$RUNNER" -- "$CLIENT" sandbox exec --stdin "$script" -- bash -eo pipefail -s 2>&1)
status=$?
expect_eq "sandbox exec --stdin FILE: a workflow step's script" "step ran as $SANDBOX" "$out"
expect_eq "sandbox exec: the command's status" "3" "$status"
out=$(head -c 300000 /dev/zero | runuser -u "$RUNNER" -- "$CLIENT" sandbox exec -- wc -c 2>&1)
expect_eq "sandbox exec: standard input streamed whole" "300000" "$out"
out=$(runuser -u "$RUNNER" -- "$CLIENT" sandbox exec --chdir "$SB_HOME/work" -- sh -c 'head -c 500000 /dev/zero; pwd >&2' 2>&1 >/dev/null </dev/null)
expect_eq "sandbox exec --chdir, large output not blocking stderr" "$SB_HOME/work" "$out"
run runuser -u "$RUNNER" -- "$CLIENT" sandbox exec id
expect_eq "sandbox exec without --: usage error" "2" "$status"
# The step's output is the job's log: a line of the sandbox user's there sets no output of the step (which
# a later step would put into its script), masks nothing, stops no command. --raw passes bytes as they are.
errf=$(mktemp /tmp/ajt-exec-err.XXXXXX)
on_exit "rm -f $errf"
commands='printf "::set-output name=patch::x\n  ::add-mask::s\n##[group]g\n::stop-commands::t"; printf "::error::e\n" >&2'
out=$(runuser -u "$RUNNER" -- "$CLIENT" sandbox exec -- sh -c "$commands" </dev/null 2>"$errf")
expect_eq "sandbox exec: no workflow command in the output, the last line ended" ": :set-output name=patch::x
  : :add-mask::s
## [group]g
: :stop-commands::t" "$out"
expect_eq "... nor in its standard error" ": :error::e" "$(cat "$errf")"
out=$(runuser -u "$RUNNER" -- "$CLIENT" sandbox exec --raw -- sh -c "$commands" </dev/null 2>"$errf" | od -An -c | tr -s ' \n' ' ')
expect_eq "sandbox exec --raw: the bytes as they came (the control)" \
        "$(sh -c "$commands" 2>/dev/null | od -An -c | tr -s ' \n' ' ')" "$out"
expect_eq "... standard error too" "::error::e" "$(cat "$errf")"
# A script step (--script), as the runner starts a custom shell: the script a file of the sandbox side's,
# standard input /dev/null (a read takes nothing of the script), the variables [sandbox] step-env names
# and no other, the step's directory where it is the sandbox user's.
stepf=$(mktemp /tmp/ajt-step.XXXXXX)
on_exit "rm -f $stepf"
# shellcheck disable=SC2016 # the sandbox's bash expands it
printf 'IFS= read -r x || echo "read: nothing"\necho "next line runs"\necho "value=${AJT_STEP_VALUE-unset} other=${AJT_OTHER-unset}"\npwd\nexit 5\n' >"$stepf"
chmod 0600 "$stepf"
chown "$RUNNER" "$stepf"
out=$(cd / && runuser -u "$RUNNER" -- env AJT_STEP_VALUE="step's value" AJT_OTHER=secret GITHUB_WORKSPACE=/ \
        "$CLIENT" sandbox exec --script "$stepf" -- bash -eo pipefail 2>&1)
status=$?
expect_eq "sandbox exec --script: the script's status" 5 "$status"
expect_eq "... a read takes nothing, the next line runs; step-env's variable alone; in the home from the workspace" \
        "read: nothing
next line runs
value=step's value other=unset
$SB_HOME" "$out"
out=$(cd "$SB_HOME/work/sub" && runuser -u "$RUNNER" -- env GITHUB_WORKSPACE=/ "$CLIENT" sandbox exec --script "$stepf" -- bash 2>&1 | tail -n 1)
expect_eq "... in the step's directory where it is under the sandbox user's home" "$SB_HOME/work/sub" "$out"
run sh -c "cd /tmp && runuser -u $RUNNER -- env GITHUB_WORKSPACE=/ $CLIENT sandbox exec --script $stepf -- bash"
expect_eq "... refused where it is neither the workspace nor the sandbox user's (status 2)" 2 "$status"
out=$(cd /tmp && runuser -u "$RUNNER" -- "$CLIENT" sandbox exec --script "$stepf" --stdin "$stepf" -- bash 2>&1)
expect_eq "--script and --stdin exclude each other" "agentic-job sandbox exec: --stdin and --script exclude each other" "$(head -n 1 <<<"$out")"
ln -sf "$stepf" "$stepf.link"
on_exit "rm -f $stepf.link"
out=$(cd / && runuser -u "$RUNNER" -- env GITHUB_WORKSPACE=/ "$CLIENT" sandbox exec --script "$stepf.link" -- bash 2>&1)
expect_eq "--script: a link is refused" "agentic-job sandbox exec: --script $stepf.link: is a link" "$out"
# A step that leaves a daemon (a session of its own, SIGTERM ignored): ended when the step ends, and said;
# with --keep, what a step starts runs on (the control), until a step without it ends.
out=$(runuser -u "$RUNNER" -- "$CLIENT" sandbox exec -- sh -c 'setsid sh -c "trap \"\" TERM; while :; do sleep 1; done" </dev/null >/dev/null 2>&1 & exit 0' </dev/null 2>&1)
expect_eq "sandbox exec: a step that leaves a daemon: its status" 0 "$?"
expect_contains "... the client says it ended what the step left" "the command left processes behind: ended" "$out"
expect_eq "... nothing of the sandbox user lives once the step has ended" 0 "$(live_of_uid "$SB_UID" | wc -l)"
run runuser -u "$RUNNER" -- "$CLIENT" sandbox exec --keep -- sh -c 'setsid sleep 300 </dev/null >/dev/null 2>&1 & exit 0'
expect_eq "sandbox exec --keep: status 0" 0 "$status"
expect_eq "... what the step started runs on (the control)" 1 \
        "$([ "$(live_of_uid "$SB_UID" | wc -l)" -ge 1 ] && echo 1 || echo 0)"
run runuser -u "$RUNNER" -- "$CLIENT" sandbox exec -- true
expect_eq "... until a step without --keep has ended" 0 "$(live_of_uid "$SB_UID" | wc -l)"
run runuser -u "$RUNNER" -- "$CLIENT" sandbox exec --keep --keep -- true
expect_eq "sandbox exec --keep twice: usage error" 2 "$status"

# The runner's last word on a cancelled step: SIGKILL to the client alone. sudo waits on for the helper;
# the helper, which watches the process that started sudo, ends every process of the sandbox user as it
# goes (the direct backend here: its cgroup, then kill-user's rounds).
runuser -u "$RUNNER" -- "$CLIENT" sandbox exec -- sh -c 'sleep 300 & echo started; sleep 301' \
        </dev/null >"$script.caller" 2>&1 &
caller_bg=$!
on_exit "rm -f $script.caller"
for _ in $(seq 200); do grep -q '^started$' "$script.caller" 2>/dev/null && break; sleep 0.05; done
client_pid=$(pgrep -P "$caller_bg" -x agentic-job)
expect_eq "sandbox exec, its caller killed: before, the command and what it started run (the control)" 1 \
        "$([ "$(live_of_uid "$SB_UID" | wc -l)" -ge 2 ] && echo 1 || echo 0)"
kill -KILL "$client_pid"
left=$(left_of_uid "$SB_UID")
expect_eq "sandbox exec, its caller killed: nothing of the sandbox user is left, no kill-user called" 0 "$left"
wait "$caller_bg"
kill_uid "$SB_UID"

# sandbox end: every process of the sandbox user ended, then what runs left in its home removed by the
# sandbox user (a run the runner's SIGKILL ended leaves its directory, the model's token in it): its token
# and a chain deeper than any path, a link named like a run's directory (removed, never followed), and
# what is not a run's (kept).
runuser -u "$SANDBOX" -- sh -c '
        cd "$1" || exit 1
        mkdir -p agentic-job-run-00000000000000aa/token && echo secret >agentic-job-run-00000000000000aa/token/token
        d=agentic-job-run-00000000000000aa/deep
        mkdir "$d" && cd "$d" && for i in $(seq 300); do mkdir d && cd d || exit 1; done
        cd "$1" && mkdir -p keep-me && ln -s /etc agentic-job-run-00000000000000bb
        setsid sleep 300 </dev/null >/dev/null 2>&1 &' sh "$SB_HOME"
expect_eq "sandbox end: a process of the sandbox user runs before (the control)" 1 \
        "$([ "$(live_of_uid "$SB_UID" | wc -l)" -ge 1 ] && echo 1 || echo 0)"
out=$(runuser -u "$RUNNER" -- "$CLIENT" sandbox end </dev/null 2>&1)
status=$?
expect_eq "sandbox end: status 0" 0 "$status"
expect_contains "sandbox end: it says what it removed" "removed the directories of 2 runs" "$out"
expect_eq "sandbox end: no process of the sandbox user is left" "" "$(live_of_uid "$SB_UID")"
expect_absent "sandbox end: the run's directory and its token are gone" "$SB_HOME/agentic-job-run-00000000000000aa"
expect_absent "sandbox end: the link named like a run's is gone" "$SB_HOME/agentic-job-run-00000000000000bb"
expect_eq "sandbox end: ... and what it pointed at is untouched" 1 "$([ -f /etc/passwd ] && echo 1 || echo 0)"
expect_eq "sandbox end: what is not a run's stays" 1 "$([ -d "$SB_HOME/keep-me" ] && echo 1 || echo 0)"
out=$(runuser -u "$RUNNER" -- "$CLIENT" sandbox end </dev/null 2>&1)
expect_contains "sandbox end again: nothing left, status 0" "removed the directories of 0 runs" "$out"
run runuser -u "$RUNNER" -- "$CLIENT" sandbox end now
expect_eq "sandbox end with an argument: usage error" 2 "$status"
rm -rf "$SB_HOME/keep-me"

# ---------------------------------------------------------------------------------------------------------
echo "# bad calls: each refused with its message, nothing done"

marker=$SB_HOME/work/marker
mkdir -p "$SB_HOME/work/dir"
ln -s /tmp "$SB_HOME/work/link-out"
ln -s "$SB_HOME/work/dir" "$SB_HOME/work/link-in"
touch "$SB_HOME/work/file"
chown -h "$SANDBOX:$SANDBOX" "$SB_HOME/work/"*

# bad_call NAME EXPECTED_STATUS MESSAGE CMD...
bad_call() {
        local name=$1 want=$2 msg=$3
        shift 3
        rm -f "$marker" /tmp/ajt-marker
        run "$@"
        expect_eq "refused: $name (status)" "$want" "$status"
        expect_contains "refused: $name (message)" "$msg" "$out"
        if [ -e "$marker" ] || [ -e /tmp/ajt-marker ]; then fail "refused: $name: something was done"; fi
}
T=(touch "$marker")
H=(runuser -u "$RUNNER" -- sudo -n "$HELPER" helper)

# Refused by sudo: the rule admits only the four forms.
bad_call "unknown operation (sudo)" 1 "sudo" "${H[@]}" bogus
bad_call "no operation (sudo)" 1 "sudo" runuser -u "$RUNNER" -- sudo -n "$HELPER" helper
bad_call "ping with an extra argument (sudo)" 1 "sudo" "${H[@]}" ping extra
bad_call "kill-user with an extra argument (sudo)" 1 "sudo" "${H[@]}" kill-user "$SANDBOX"
bad_call "enter without --chdir (sudo)" 1 "sudo" "${H[@]}" enter -- "${T[@]}"
bad_call "the helper without 'helper' (sudo)" 1 "sudo" runuser -u "$RUNNER" -- sudo -n "$HELPER" ping
bad_call "the sandbox user calling the helper" 1 "sudo" runuser -u "$SANDBOX" -- sudo -n "$HELPER" helper ping
bad_call "the sandbox user running anything through sudo" 1 "sudo" runuser -u "$SANDBOX" -- sudo -n "${T[@]}"

# Refused by the helper's argument checks (status 120).
bad_call "proxy-log --from not a number" 120 "not a byte offset" "${H[@]}" proxy-log --from abc
bad_call "proxy-log --from negative" 120 "not a byte offset" "${H[@]}" proxy-log --from -1
bad_call "proxy-log --from leading zero" 120 "not a byte offset" "${H[@]}" proxy-log --from 007
bad_call "proxy-log --from past 2^63-1" 120 "not a byte offset" "${H[@]}" proxy-log --from 9223372036854775808
bad_call "proxy-log with an extra argument" 120 "usage: proxy-log --from N" "${H[@]}" proxy-log --from 1 2
bad_call "enter outside the home" 120 "not under the sandbox home" "${H[@]}" enter --chdir /tmp -- touch /tmp/ajt-marker
bad_call "enter in a sibling that shares the prefix" 120 "not under the sandbox home" "${H[@]}" enter --chdir "${SB_HOME}x" -- "${T[@]}"
bad_call "enter with a relative path" 120 "not an absolute path" "${H[@]}" enter --chdir work -- "${T[@]}"
bad_call "enter with .." 120 "not plainly spelled" "${H[@]}" enter --chdir "$SB_HOME/work/../.." -- "${T[@]}"
bad_call "enter with ." 120 "not plainly spelled" "${H[@]}" enter --chdir "$SB_HOME/./work" -- "${T[@]}"
bad_call "enter with //" 120 "not plainly spelled" "${H[@]}" enter --chdir "$SB_HOME//work" -- "${T[@]}"
bad_call "enter into a link pointing out" 120 "is a link" "${H[@]}" enter --chdir "$SB_HOME/work/link-out" -- touch /tmp/ajt-marker
bad_call "enter into a link pointing in" 120 "is a link" "${H[@]}" enter --chdir "$SB_HOME/work/link-in" -- "${T[@]}"
bad_call "enter into a missing directory" 120 "No such file or directory" "${H[@]}" enter --chdir "$SB_HOME/work/nothing" -- "${T[@]}"
bad_call "enter into a file" 120 "is not a directory" "${H[@]}" enter --chdir "$SB_HOME/work/file" -- "${T[@]}"
bad_call "enter without --" 120 "usage: enter --chdir DIR -- ARGV" "${H[@]}" enter --chdir "$SB_HOME" "${T[@]}"
bad_call "enter without a command" 120 "usage: enter --chdir DIR -- ARGV" "${H[@]}" enter --chdir "$SB_HOME" --
bad_call "enter with an empty command" 120 "the command is empty" "${H[@]}" enter --chdir "$SB_HOME" -- ""
write_config <<<"${BASE_CONFIG/\[egress\]/enter = \"run0\"
[egress]}"
bad_call "enter = run0 where systemd does not run" 125 "systemd is not running here" "${H[@]}" enter --chdir "$SB_HOME" -- "${T[@]}"
write_config <<<"${BASE_CONFIG/\[egress\]/enter = \"systemd-run\"
[egress]}"
bad_call "enter = systemd-run where systemd does not run" 125 "systemd is not running here" "${H[@]}" enter --chdir "$SB_HOME" -- "${T[@]}"

# Refused for who calls (status 121).
bad_call "the helper run by the runner without sudo" 121 "must run as root" runuser -u "$RUNNER" -- "$HELPER" helper enter --chdir "$SB_HOME" -- "${T[@]}"
bad_call "the helper run by root without sudo" 121 "not called through sudo" env -u SUDO_UID "$HELPER" helper enter --chdir "$SB_HOME" -- "${T[@]}"
write_config <<<"${BASE_CONFIG/runner-user = \"$RUNNER\"/runner-user = \"$OTHER\"}"
bad_call "a caller that is not the configured runner user" 121 "only the runner user $OTHER" "${H[@]}" enter --chdir "$SB_HOME" -- "${T[@]}"

# Refused for the configuration (status 122).
write_config <<<"${BASE_CONFIG/AJT_FROM_CONFIG/ACTIONS_RUNTIME_TOKEN}"
bad_call "an ACTIONS_ variable in the configuration" 122 "ACTIONS_RUNTIME_TOKEN" "${H[@]}" enter --chdir "$SB_HOME" -- "${T[@]}"
write_config <<<"${BASE_CONFIG/user = \"$SANDBOX\"/user = \"root\"}"
bad_call "a sandbox user named root" 122 "root" "${H[@]}" enter --chdir "$SB_HOME" -- "${T[@]}"
write_config <<<"${BASE_CONFIG/user = \"$SANDBOX\"/user = \"ajt-nobody-here\"}"
bad_call "a sandbox user that does not exist" 122 "sandbox user ajt-nobody-here does not exist" "${H[@]}" ping
write_config <<<"${BASE_CONFIG/runner-user = \"$RUNNER\"/}"
bad_call "no runner-user in the configuration" 122 "runner-user is not set" "${H[@]}" ping
write_config <<<"$BASE_CONFIG
[sandbox.nope]
control-url = \"https://example.org/\""
bad_call "an unknown table in the configuration" 122 "sandbox.nope" "${H[@]}" ping
write_config <<<"${BASE_CONFIG/\[egress\]/usr = \"x\"
[egress]}"
bad_call "an unknown key in the configuration" 122 "usr" "${H[@]}" ping
write_config <<<"$BASE_CONFIG"
chmod 0666 "$CONF"
bad_call "a configuration writable by others" 122 "writable by others" "${H[@]}" enter --chdir "$SB_HOME" -- "${T[@]}"
chmod 0664 "$CONF"
chgrp "$GROUP" "$CONF"
bad_call "a configuration writable by a group" 122 "writable by group" "${H[@]}" enter --chdir "$SB_HOME" -- "${T[@]}"
chgrp root "$CONF"
chmod 0644 "$CONF"
chown "$OTHER" "$CONF"
bad_call "a configuration owned by another user" 122 "owned by uid $(id -u "$OTHER")" "${H[@]}" enter --chdir "$SB_HOME" -- "${T[@]}"
chown root "$CONF"
setfacl -m "u:$OTHER:rw" "$CONF"
bad_call "a configuration another user may write through an ACL" 122 "has an access ACL" "${H[@]}" enter --chdir "$SB_HOME" -- "${T[@]}"
setfacl -b "$CONF"
chmod 0777 "$CONF_DIR"
bad_call "a configuration directory writable by others" 122 "$CONF_DIR is writable by others" "${H[@]}" ping
chmod 0755 "$CONF_DIR"
chown "$OTHER" "$CONF_DIR"
bad_call "a configuration directory owned by another user" 122 "$CONF_DIR is owned by uid" "${H[@]}" ping
chown root "$CONF_DIR"
mv "$CONF" "$CONF_DIR/real.toml"
ln -s "$CONF_DIR/real.toml" "$CONF"
bad_call "a configuration that is a link" 122 "is a link" "${H[@]}" ping
rm -f "$CONF"
bad_call "no configuration" 122 "No such file or directory" "${H[@]}" ping
mv "$CONF_DIR/real.toml" "$CONF"

# Refused for the fixed PATH (status 123).
mode=$(stat -c %a /usr/local/sbin)
on_exit "chmod $mode /usr/local/sbin"
chmod 0777 /usr/local/sbin
bad_call "a PATH directory writable by others" 123 "PATH directory not root's alone: /usr/local/sbin" "${H[@]}" ping
chmod "$mode" /usr/local/sbin

# kill-user refuses subordinate ranges it cannot trust (status 122).
cp -p /etc/subuid /etc/subuid.ajt-saved
on_exit "mv -f /etc/subuid.ajt-saved /etc/subuid"
echo "$SANDBOX:1000:65536" >>/etc/subuid
bad_call "kill-user with a subordinate range over ordinary users' uids" 122 "starts below 65536" "${H[@]}" kill-user
cp -p /etc/subuid.ajt-saved /etc/subuid
chmod 0666 /etc/subuid
bad_call "kill-user with /etc/subuid writable by others" 122 "/etc/subuid is writable by others" "${H[@]}" kill-user
chmod 0644 /etc/subuid

# proxy-log refusals (status 4, 3, 125).
rm -f "$LOG"
bad_call "proxy-log without a log" 4 "there is no log" "${H[@]}" proxy-log --from 0
mkfifo "$LOG"
chown egress-proxy "$LOG"
bad_call "proxy-log on a FIFO (without blocking)" 125 "is not a regular file" timeout 10 "${H[@]}" proxy-log --from 0
rm -f "$LOG"
printf '{"x":1}\n' >/tmp/ajt-elsewhere.jsonl
chown -h egress-proxy /tmp/ajt-elsewhere.jsonl
on_exit "rm -f /tmp/ajt-elsewhere.jsonl"
ln -s /tmp/ajt-elsewhere.jsonl "$LOG"
bad_call "proxy-log on a link" 125 "is a link" "${H[@]}" proxy-log --from 0
rm -f "$LOG"
printf '{"x":1}\n' >"$LOG"
chown "$OTHER" "$LOG"
bad_call "proxy-log on a file not the proxy user's" 125 "not egress-proxy" "${H[@]}" proxy-log --from 0
chown egress-proxy "$LOG"
bad_call "proxy-log past the end (truncated log)" 3 "truncated or replaced" "${H[@]}" proxy-log --from 9
if [ "$created_log_dir" = 1 ]; then
        mv "$LOG_DIR" "$LOG_DIR.real"
        ln -s "$LOG_DIR.real" "$LOG_DIR"
        bad_call "proxy-log through a linked directory" 125 "is a link" "${H[@]}" proxy-log --from 0
        rm -f "$LOG_DIR"
        mv "$LOG_DIR.real" "$LOG_DIR"
fi

# ---------------------------------------------------------------------------------------------------------
echo "# proxy-log"

: >"$LOG"
chown egress-proxy "$LOG"
printf '{"method":"GET","host":"a.example","path":"/","decision":"allow"}\n' >>"$LOG"
n1=$(stat -c %s "$LOG")
printf '{"method":"POST","host":"b.example","path":"/x","decision":"deny"}\n' >>"$LOG"
printf '{"method":"GET","host":"c.example","path":"/y","decision":"allow"}\n' >>"$LOG"
run helper proxy-log --from 0
expect_eq "proxy-log --from 0: the whole log" "$(cat "$LOG")" "$out"
out=$(helper proxy-log --from "$n1" | od -An -c)
expect_eq "proxy-log --from N: exactly the bytes after N" "$(tail -c +$((n1 + 1)) "$LOG" | od -An -c)" "$out"
run helper proxy-log --from "$(stat -c %s "$LOG")"
expect_eq "proxy-log --from the end: nothing, success" "0:" "$status:$out"
run helper proxy-log --from end
expect_eq "proxy-log --from end: the log's size, read from its inode" "0:$(stat -c %s "$LOG")" "$status:$out"
# A log larger than one call's cap: 64 MiB and status 5, then the rest from there.
truncate -s $((64 * 1024 * 1024 + 1000)) "$LOG"
n=$(helper proxy-log --from 0 | wc -c; echo "status ${PIPESTATUS[0]}")
expect_eq "proxy-log: at most 64 MiB a call, status 5 says more follows" "$((64 * 1024 * 1024))
status 5" "$n"
n=$(helper proxy-log --from $((64 * 1024 * 1024)) | wc -c; echo "status ${PIPESTATUS[0]}")
expect_eq "proxy-log: the rest from where the last call stopped" "1000
status 0" "$n"

# ---------------------------------------------------------------------------------------------------------
echo "# kill-user"

# A process of a subordinate uid, as a rootless container's would be.
setpriv --reuid="$SUB_UID" --regid="$SUB_UID" --clear-groups --inh-caps=-all --bounding-set=-all \
        sleep 10000 </dev/null >/dev/null 2>&1 &
helper enter --chdir "$SB_HOME" -- bash -c '
        setsid sleep 10000 </dev/null >/dev/null 2>&1 &
        sleep 10000 </dev/null >/dev/null 2>&1 & kill -STOP $!
        bash -c "trap \"\" TERM; while :; do sleep 1; done" </dev/null >/dev/null 2>&1 &
' </dev/null
# The fork bomb last, bounded by its own process limit.
helper enter --chdir "$SB_HOME" -- bash -c 'ulimit -u 800; b() { b | b & }; b' </dev/null >/dev/null 2>&1
# Up to 60 s for the bomb to grow (a loaded 2-core runner took more than 5 s to reach 300). Its
# population rises and falls as its shells exit, so the count judged is the one that ended the wait (a
# second count taken after it once saw 291).
for _ in $(seq 1200); do
        before=$( (live_of_uid "$SB_UID"; live_of_uid "$SUB_UID") | wc -l)
        [ "$before" -ge 300 ] && break
        sleep 0.05
done
if [ "$before" -ge 300 ]; then pass "kill-user: $before processes to end (fork bomb running)"; else fail "kill-user: only $before processes started"; fi
stopped=$(for p in $(live_of_uid "$SB_UID"); do awk '/^State:/ {print $2}' /proc/$p/status 2>/dev/null; done | grep -c T)
if [ "$stopped" -ge 1 ]; then pass "kill-user: a stopped process is among them"; else fail "kill-user: no stopped process"; fi

run helper kill-user
expect_eq "kill-user succeeds" "0" "$status"
expect_contains "kill-user reports how many and how long" "processes of $SANDBOX in" "$out"
echo "# $out"
left=$(live_in_range "$SB_UID" "$SB_UID" | wc -l)
expect_eq "kill-user: no process of the sandbox user remains" "0" "$left"
left=$(live_in_range "$SUB_START" "$((SUB_START + SUB_COUNT - 1))" | wc -l)
expect_eq "kill-user: no process of its subordinate uids remains" "0" "$left"
run helper kill-user
expect_eq "kill-user with nothing to end succeeds" "0" "$status"
expect_contains "kill-user with nothing to end says 0" "ended 0 processes" "$out"
expect_absent "kill-user: the enter cgroups are removed" "$(ls -d $CG2/agentic-job/enter-* 2>/dev/null | head -n1)"

# ---------------------------------------------------------------------------------------------------------
echo "# kill-user: what the sandbox user left in the shared temporary directories, and its IPC objects"

# Memory that no process holds: a file in /dev/shm, a directory tree in /tmp it made hard to remove, a
# link to a file of root's in /var/tmp, and a System V shared memory segment, message queue and semaphore.
# Beside them, files of root's and of the runner's in the same directories, which stay.
echo root >/tmp/ajt-left-target
echo root >/dev/shm/ajt-left-root
runuser -u "$RUNNER" -- sh -c 'echo runner >/dev/shm/ajt-left-runner'
on_exit "rm -rf /tmp/ajt-left-target /dev/shm/ajt-left-root /dev/shm/ajt-left-runner /dev/shm/ajt-left /tmp/ajt-left-dir /var/tmp/ajt-left-link"
# shellcheck disable=SC2016
helper enter --chdir "$SB_HOME" -- sh -c '
        head -c 8388608 /dev/zero >/dev/shm/ajt-left
        mkdir -p /tmp/ajt-left-dir/sub && echo x >/tmp/ajt-left-dir/sub/f && chmod 0500 /tmp/ajt-left-dir/sub /tmp/ajt-left-dir
        ln -s /tmp/ajt-left-target /var/tmp/ajt-left-link
        ipcmk -M 1048576 && ipcmk -Q && ipcmk -S 1' </dev/null >/dev/null 2>&1
ipc_of_sandbox() { awk -v u="$SB_UID" '
        FNR == 1 { for (i = 1; i <= NF; i++) if ($i == "uid") c = i; next } $c == u { n++ } END { print n + 0 }' \
        /proc/sysvipc/shm /proc/sysvipc/msg /proc/sysvipc/sem; }
expect_eq "the sandbox user's leftovers are there (the control)" "yes yes yes 3" \
        "$([ -f /dev/shm/ajt-left ] && echo yes) $([ -d /tmp/ajt-left-dir ] && echo yes) $([ -L /var/tmp/ajt-left-link ] && echo yes) $(ipc_of_sandbox)"
run helper kill-user
expect_eq "kill-user with leftovers: succeeds" 0 "$status"
expect_contains "... and says what it removed" "; removed " "$out"
expect_eq "... the file in /dev/shm, the tree in /tmp and the link in /var/tmp are gone" "" \
        "$(ls -d /dev/shm/ajt-left /tmp/ajt-left-dir /var/tmp/ajt-left-link 2>/dev/null)"
expect_eq "... and its IPC objects" 0 "$(ipc_of_sandbox)"
expect_eq "... the link's target, root's and the runner's files stay" "root root runner" \
        "$(cat /tmp/ajt-left-target /dev/shm/ajt-left-root /dev/shm/ajt-left-runner | tr '\n' ' ' | sed 's/ $//')"
run helper kill-user
expect_lacks "kill-user with nothing left says no removal" "removed" "$out"

# ---------------------------------------------------------------------------------------------------------
echo "# kill-user against what hides from a /proc scan and against what stops its killer"

HOSTILE=$SB_HOME/ajt-hostile
install -o root -g root -m 0755 "$build/tests/integration/ajt-hostile" "$HOSTILE"
# "${RO_CGROUP[@]}" CMD...: CMD in a mount namespace of its own where cgroup2 is read-only, as in a
# container: the helper then makes no enter cgroup and finds the sandbox's processes by their uids alone.
RO_CGROUP=(unshare -m --propagation private sh -c 'mount -o remount,bind,ro "$1" || exit 99; shift; exec "$@"' sh "$CG2")

for where in "cgroup2 writable" "cgroup2 read-only"; do
        wrap=()
        [ "$where" = "cgroup2 read-only" ] && wrap=("${RO_CGROUP[@]}")
        # A few, then 2,000 with a fork bomb beside them: every main thread gone, every process still working.
        for n in 3 2000; do
                run "${wrap[@]}" runuser -u "$RUNNER" -- sudo -n "$HELPER" helper enter --chdir "$SB_HOME" -- \
                        "$HOSTILE" zombie-leader "$n" </dev/null
                expect_eq "zombie leaders ($where, $n): started" "started $n" "$out"
                if [ "$n" = 2000 ]; then
                        "${wrap[@]}" runuser -u "$RUNNER" -- sudo -n "$HELPER" helper enter --chdir "$SB_HOME" -- \
                                bash -c 'ulimit -u 5000; b() { b | b & }; b' </dev/null >/dev/null 2>&1
                fi
                zl=$(cat /proc/[0-9]*/status 2>/dev/null | awk -v u="$SB_UID" '/^State:/ { s = $2 } /^Uid:/ { if (s == "Z" && $2 == u) n++ } END { print n + 0 }')
                if [ "$zl" -ge "$n" ]; then pass "zombie leaders ($where, $n): $zl show State: Z while their threads run"; else fail "zombie leaders ($where, $n): only $zl show State: Z"; fi
                run "${wrap[@]}" runuser -u "$RUNNER" -- sudo -n "$HELPER" helper kill-user
                expect_eq "kill-user against zombie leaders ($where, $n): succeeds" "0" "$status"
                echo "# $out"
                expect_eq "kill-user against zombie leaders ($where, $n): no thread of the sandbox user works on" "0" "$(threads_left)"
                expect_eq "kill-user against zombie leaders ($where, $n): no enter cgroup remains" "" \
                        "$(ls -d "$CG2"/agentic-job/enter-* 2>/dev/null)"
                kill_uid "$SB_UID"
        done
done

# The killer is the sandbox's uid, so the sandbox can stop it: 2,000 idle processes (a kill(-1) that
# takes a while) and a stopper that moves to a new process each round (one that fork() made wait while
# kill(-1) walked the list survives it) and sends SIGSTOP to the pids around ns_last_pid, all in no enter
# cgroup. Five times: the stopper does not win every race.
for round in 1 2 3 4 5; do
        run "${RO_CGROUP[@]}" runuser -u "$RUNNER" -- sudo -n "$HELPER" helper enter --chdir "$SB_HOME" -- "$HOSTILE" idle 2000 </dev/null
        expect_eq "stopper ($round): 2,000 idle processes started" "started 2000" "$out"
        run "${RO_CGROUP[@]}" runuser -u "$RUNNER" -- sudo -n "$HELPER" helper enter --chdir "$SB_HOME" -- "$HOSTILE" stopper </dev/null
        expect_eq "stopper ($round): the stopper started" "started 1" "$out"
        run timeout 60 "${RO_CGROUP[@]}" runuser -u "$RUNNER" -- sudo -n "$HELPER" helper kill-user
        echo "# $out"
        case $status in
        0)
                pass "kill-user against the stopper ($round): ended everything"
                expect_eq "kill-user against the stopper ($round): nothing of the sandbox user remains" "0" "$(threads_left)"
                ;;
        125) expect_contains "kill-user against the stopper ($round): fails within its deadline, saying what survives" "survive" "$out" ;;
        *) fail "kill-user against the stopper ($round): status $status (124: it hung)" ;;
        esac
        kill_uid "$SB_UID"
done

# ---------------------------------------------------------------------------------------------------------
echo "# enter: a /proc that hides other users' processes"

expect_proc_view

# ---------------------------------------------------------------------------------------------------------
echo "# enter --chdir: looked up as the sandbox user, so its answer tells nothing more"

mkdir -m 0700 "$SB_HOME/work/closed" "$SB_HOME/work/closed/inner"
on_exit "rm -rf $SB_HOME/work/closed"
run helper enter --chdir "$SB_HOME/work/closed/inner" -- true
out_inner="$status ${out//inner/NAME}"
run helper enter --chdir "$SB_HOME/work/closed/absent" -- true
out_absent="$status ${out//absent/NAME}"
expect_eq "enter --chdir under a directory the sandbox user cannot search: an existing and a missing name get the same answer" "$out_absent" "$out_inner"
expect_contains "enter --chdir under a directory the sandbox user cannot search: refused as a usage error" "120 " "$out_inner"
rm -rf "$SB_HOME/work/closed"

# ---------------------------------------------------------------------------------------------------------
echo "# the helper's cgroups are as agentic-job-helper(8) says"

if [ -n "$CG2" ]; then
        helper enter --chdir "$SB_HOME" -- sh -c 'sed -n "s/^0:://p" /proc/self/cgroup; exec sleep 2' </dev/null >"$SB_HOME/cg.out" 2>&1 &
        cg_enter=$!
        for _ in $(seq 50); do [ -s "$SB_HOME/cg.out" ] && break; sleep 0.05; done
        cg=$(head -n1 "$SB_HOME/cg.out")
        expect_eq "the enter cgroups' parent is root's alone (0700)" "700 root" "$(stat -c '%a %U' "$CG2/agentic-job")"
        expect_eq "an enter cgroup is root's alone (0700)" "700 root" "$(stat -c '%a %U' "$CG2$cg" 2>&1)"
        wait "$cg_enter"
        rm -f "$SB_HOME/cg.out"
fi

# ---------------------------------------------------------------------------------------------------------
echo "# audit"

if [ -n "${socat_pid:-}" ]; then
        sleep 0.2
        trail=$(tr '<' '\n' <"$audit_log" | grep agentic-job-helper)
        expect_contains "audit: a call accepted, with the caller" "caller uid $RUNNER_UID: op ping: accepted" "$trail"
        expect_contains "audit: its outcome" "caller uid $RUNNER_UID: op ping: done" "$trail"
        expect_contains "audit: a refusal with its status" "op enter: refused (status 120)" "$trail"
        expect_contains "audit: kill-user's count" "op kill-user: done: ended" "$trail"
        expect_contains "audit: an enter whose caller ended first" "ended before the command: every process of $SANDBOX is ended" "$trail"
        case "$trail" in *probe.sh*) fail "audit: enter's command line is logged" ;; *) pass "audit: enter's command line is not logged" ;; esac
        # sudo's own record too: !log_allowed for the helper's command (the helper audits every call). The
        # control: another command sudo allows (root's) is in the same log.
        sudo -n /bin/echo sudo-control-7f3e >/dev/null 2>&1
        sleep 0.2
        expect_contains "sudo's log records another allowed command (control)" "sudo-control-7f3e" "$(cat "$audit_log")"
        case "$(cat "$audit_log")" in *probe.sh*) fail "sudo's log holds enter's command line" ;; *) pass "sudo's log holds no word of enter's command" ;; esac

        # Caller text with a newline in every field the helper may quote stays inside one record.
        run helper proxy-log --from "$(printf '1\nFORGED-RECORD-1')"
        expect_eq "a --from with a newline: refused" "120" "$status"
        run helper enter --chdir "$(printf 'relative\nFORGED-RECORD-2')" -- true
        expect_eq "a relative --chdir with a newline: refused" "120" "$status"
        run helper enter --chdir "$(printf '%s/\nFORGED-RECORD-3' "$SB_HOME")" -- true
        expect_eq "an absolute --chdir with a newline: refused" "120" "$status"
        run env SUDO_UID="$RUNNER_UID" "$HELPER" helper "$(printf 'x\nFORGED-RECORD-4')"
        expect_eq "an operation with a newline: refused" "120" "$status"
        expect_eq "the refusal on standard error is one line" "1" "$(printf '%s\n' "$out" | wc -l)"
        # A refusal whose standard error is a closed pipe is still recorded.
        { sleep 0.3; runuser -u "$RUNNER" -- sudo -n "$HELPER" helper proxy-log --from BROKEN-PIPE-MARKER; } 2>&1 | head -c 0
        sleep 0.3
        log=$(tr '<' '\n' <"$audit_log")
        for i in 1 2 3 4; do
                expect_eq "audit: caller text with a newline starts no record of its own ($i)" "0" "$(grep -c "^FORGED-RECORD-$i" <<<"$log")"
        done
        for i in 1 4; do
                line=$(grep "FORGED-RECORD-$i" <<<"$log")
                expect_contains "audit: quoted caller text stays in its record ($i)" "agentic-job-helper" "$line"
                expect_contains "audit: the newline in it is escaped ($i)" '\x0aFORGED-RECORD' "$line"
        done
        expect_eq "audit: a --chdir with a control character is refused without quoting it" "2" \
                "$(grep -c 'refused (status 120): --chdir: path holds a control character' <<<"$log")"
        expect_contains "audit: a refusal is recorded though standard error is a closed pipe" "BROKEN-PIPE-MARKER" "$log"

        # A signal forwarded after the command was reaped never reaches a process that took its pid. The
        # window is made wide: the syslog reader is stopped and its queue full, so the helper waits in its
        # last audit record after reaping; the pid is given to another user's process (ns_last_pid), then
        # the helper is sent SIGTERM, which it forwards.
        rm -f "$SB_HOME/go" "$SB_HOME/pid"
        runuser -u "$RUNNER" -- sudo -n "$HELPER" helper enter --chdir "$SB_HOME" -- \
                sh -c 'echo $$ >pid.tmp; mv pid.tmp pid; while [ ! -e go ]; do sleep 0.02; done' </dev/null >/dev/null 2>&1 &
        enter_bg=$!
        for _ in $(seq 100); do [ -s "$SB_HOME/pid" ] && break; sleep 0.05; done
        cmd_pid=$(cat "$SB_HOME/pid")
        helper_pid=$(awk '/^PPid:/ { print $2 }' "/proc/$cmd_pid/status")
        kill -STOP "$socat_pid"
        python3 -c '
import socket
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.setblocking(False)
s.connect("/dev/log")
try:
    while True:
        s.send(b"<13>ajt-fill")
except BlockingIOError:
    pass'
        touch "$SB_HOME/go"
        for _ in $(seq 200); do [ -e "/proc/$cmd_pid" ] || break; sleep 0.01; done
        expect_forward_misses_reused_pid "$helper_pid" "$cmd_pid"
        kill -CONT "$socat_pid"
        wait "$enter_bg"
else
        echo "# note: /dev/log exists (a syslog daemon runs): the audit trail goes there and is not read here"
fi
