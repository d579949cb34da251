# The installed helper for host tests and benchmarks: sourced after lib.sh, with "$here" and "$1" (the
# build directory) set. Creates the runner, sandbox and other users and a group, installs the helper, the
# client, the agent profiles, a configuration and the sudo rule, and registers the undo of each step with on_exit.
build=$(cd "${1:?usage: helper.sh BUILD_DIR}" && pwd)
src=$(cd "$here/../.." && pwd)
# The helper's path and the profiles' directory are the build's (the option helper_path and the prefix):
# the client runs the helper, and reads the profiles, exactly there.
if ! HELPER=$(build_define "$build/build-config.h" HELPER_PATH) ||
        ! PROFILES=$(build_define "$build/build-config.h" PROFILE_DIR); then
        echo "Bail out! $build/build-config.h names no HELPER_PATH or PROFILE_DIR: not a build directory"
        trap - EXIT
        exit 1
fi
CLIENT=/usr/local/bin/agentic-job
CONF_DIR=/etc/agentic-job
CONF=$CONF_DIR/config.toml
SUDOERS=/etc/sudoers.d/zz-agentic-job-test
LOG_DIR=/var/log/egress-proxy
LOG=$LOG_DIR/access.jsonl
RUNNER=ajt-runner
SANDBOX=ajt-sandbox
OTHER=ajt-other
GROUP=ajt-grp

if [ "$(id -u)" -ne 0 ]; then
        echo "1..0 # SKIP needs root (real users, sudo rules and files under /etc)"
        trap - EXIT
        exit 77
fi
for p in "$HELPER" "$CLIENT" "$PROFILES" "$CONF_DIR" "$SUDOERS"; do
        if [ -e "$p" ]; then
                echo "Bail out! $p exists: this machine has agentic-job installed; not touching it"
                trap - EXIT
                exit 1
        fi
done

# ---------------------------------------------------------------------------------------------------------
# Setup, each step registering its undo first.

for u in "$RUNNER" "$SANDBOX" "$OTHER"; do
        if id "$u" >/dev/null 2>&1; then
                # Left by a killed run: the names are this test's own.
                kill_uid "$(id -u "$u")"
                userdel -r "$u" >/dev/null 2>&1
        fi
done
getent group "$GROUP" >/dev/null && groupdel "$GROUP"

on_exit "groupdel $GROUP"
groupadd "$GROUP"
for u in "$RUNNER" "$OTHER" "$SANDBOX"; do
        on_exit "userdel -r $u"
        on_exit "kill_uid \$(id -u $u)"
        useradd -m -s /bin/bash "$u"
done
usermod -aG "$GROUP" "$SANDBOX"
SB_UID=$(id -u "$SANDBOX")
SB_GID=$(id -g "$SANDBOX")
SB_HOME=$(getent passwd "$SANDBOX" | cut -d: -f6)
RUNNER_UID=$(id -u "$RUNNER")
chmod 0755 "$SB_HOME"

# A subordinate range for the sandbox user, so kill-user's reach to it is tested.
if [ ! -e /etc/subuid ]; then
        on_exit "rm -f /etc/subuid /etc/subgid"
        install -m 0644 /dev/null /etc/subuid
        install -m 0644 /dev/null /etc/subgid
fi
sub_line=$(grep "^$SANDBOX:" /etc/subuid | head -n1)
if [ -z "$sub_line" ]; then
        usermod --add-subuids 400000-465535 --add-subgids 400000-465535 "$SANDBOX"
        sub_line=$(grep "^$SANDBOX:" /etc/subuid | head -n1)
fi
SUB_START=$(echo "$sub_line" | cut -d: -f2)
SUB_COUNT=$(echo "$sub_line" | cut -d: -f3)
SUB_UID=$((SUB_START + 5))
on_exit "kill_uid $SUB_UID"

created_proxy_user=0
if ! id egress-proxy >/dev/null 2>&1; then
        useradd --system --no-create-home --shell /usr/sbin/nologin egress-proxy
        created_proxy_user=1
fi
[ "$created_proxy_user" = 1 ] && on_exit "userdel egress-proxy"
created_log_dir=0
if [ ! -e "$LOG_DIR" ]; then
        mkdir -m 0755 "$LOG_DIR"
        created_log_dir=1
fi
[ "$created_log_dir" = 1 ] && on_exit "rm -rf $LOG_DIR"

[ -d "$(dirname "$HELPER")" ] || on_exit "rmdir $(dirname "$HELPER")"
on_exit "rm -f $HELPER"
install -D -o root -g root -m 0755 "$build/helper/agentic-job" "$HELPER"
on_exit "rm -f $CLIENT"
install -o root -g root -m 0755 "$build/client/agentic-job" "$CLIENT"
# The agent profiles, where the client reads them (root's alone on the whole path).
[ -d "$(dirname "$PROFILES")" ] || on_exit "rmdir $(dirname "$PROFILES")"
on_exit "rm -rf $PROFILES"
install -d -o root -g root -m 0755 "$PROFILES"
install -o root -g root -m 0644 "$src"/client/run/profiles/*.toml "$PROFILES"

on_exit "rm -rf $CONF_DIR"
install -d -o root -g root -m 0755 "$CONF_DIR"
write_config() {
        local tmp
        tmp=$(mktemp "$CONF_DIR/.config.XXXXXX")
        cat >"$tmp"
        chmod 0644 "$tmp"
        mv -f "$tmp" "$CONF"
}
BASE_CONFIG="[sandbox]
user = \"$SANDBOX\"
runner-user = \"$RUNNER\"
groups = [\"$GROUP\"]
env = { AJT_FROM_CONFIG = \"configured\" }
step-env = [\"AJT_STEP_VALUE\"]

[egress]
proxy = false
"
write_config <<<"$BASE_CONFIG"

on_exit "rm -f $SUDOERS"
sed -e "s|@HELPER@|$HELPER|g" -e "s|@RUNNER@|$RUNNER|g" -e "s|@SANDBOX@|$SANDBOX|g" \
        "$src/sudoers.d/agentic-job" >"$SUDOERS.tmp"
# Test only: let a canary variable through sudo, so the test sees that the helper itself drops it.
echo "Defaults!$HELPER env_keep += \"AJT_CANARY\"" >>"$SUDOERS.tmp"
chmod 0440 "$SUDOERS.tmp"
if visudo -c -q -f "$SUDOERS.tmp"; then pass "the sudo rule passes visudo -c"; else fail "visudo -c"; fi
mv -f "$SUDOERS.tmp" "$SUDOERS"

CG2=$(findmnt -n -t cgroup2 -o TARGET | head -n1)
[ -n "$CG2" ] && on_exit "rmdir $CG2/agentic-job/enter-* $CG2/agentic-job"

helper() {
        runuser -u "$RUNNER" -- sudo -n "$HELPER" helper "$@"
}
# run_capture VAR_OUT VAR_STATUS CMD...: stdout+stderr into VAR_OUT, status into VAR_STATUS.
run() {
        out=$("$@" 2>&1)
        status=$?
}

# The live threads of the sandbox user (a zombie leader's working thread counts).
threads_left() {
        cat /proc/[0-9]*/task/[0-9]*/status 2>/dev/null | awk -v u="$SB_UID" '
                /^State:/ { s = $2 } /^Uid:/ { if (s != "Z" && s != "X" && ($2 == u || $4 == u)) n++ }
                END { print n + 0 }'
}

# What enter's command sees of /proc: its own processes, not a runner process with a canary on its
# command line, not pid 1. The words it prints are split in its source, so its own command line never
# matches them.
expect_proc_view() {
        local canary=ajt-proc-canary-$$-$RANDOM runner_pid
        setpriv --reuid="$RUNNER_UID" --regid="$(id -g "$RUNNER")" --clear-groups sh -c 'sleep 1000; :' "$canary" \
                </dev/null >/dev/null 2>&1 &
        runner_pid=$!
        on_exit "kill $runner_pid"
        for _ in $(seq 50); do grep -qs "$canary" "/proc/$runner_pid/cmdline" && break; sleep 0.05; done
        expect_contains "a runner process with a canary on its command line runs" "$canary" \
                "$(tr '\0' ' ' <"/proc/$runner_pid/cmdline")"
        run helper enter --chdir "$SB_HOME" -- sh -c 'cat /proc/[0-9]*/cmdline 2>/dev/null | tr "\0" " "; echo; test -d /proc/$$ && echo "own-""visible"; test -e /proc/'"$runner_pid"' && echo "runner-""visible"; test -e /proc/1 && echo "init-""visible"; true' </dev/null
        expect_lacks "enter: the runner's command line is not readable" "$canary" "$out"
        expect_lacks "enter: the runner's process is not there" "runner-visible" "$out"
        expect_lacks "enter: pid 1 is not there" "init-visible" "$out"
        expect_contains "enter: its own processes are" "own-visible" "$out"
        kill "$runner_pid"
}

# expect_forward_misses_reused_pid HELPER_PID PID: PID (the helper's child, reaped, while the helper is
# held in its last audit record) is given to another user's process through ns_last_pid, written in a
# mount namespace of its own where a container's read-only /proc/sys is made writable (on a machine it is
# already, and nothing of the machine changes); then the helper is sent SIGTERM, which it forwards, and
# that process must live on.
expect_forward_misses_reused_pid() {
        local helper_pid=$1 pid=$2 other_uid victim="" v
        other_uid=$(id -u "$OTHER")
        for _ in 1 2 3 4 5; do
                unshare -m --propagation private sh -c \
                        'mount -o remount,rw /proc/sys 2>/dev/null; echo "$1" >/proc/sys/kernel/ns_last_pid' \
                        sh $((pid - 1))
                setpriv --reuid="$other_uid" --regid="$other_uid" --clear-groups sleep 1000 </dev/null >/dev/null 2>&1 &
                v=$!
                if [ "$v" = "$pid" ]; then victim=$v; break; fi
                kill "$v"
        done
        if [ -z "$victim" ] || [ -z "$helper_pid" ] || [ ! -e "/proc/$helper_pid" ]; then
                fail "enter: could not give the child's pid ${pid:-?} to another process while the helper waited (the pid reuse test did not run)"
                return
        fi
        on_exit "kill $victim"
        kill -TERM "$helper_pid"
        sleep 0.3
        if kill -0 "$victim" 2>/dev/null; then
                pass "enter: a signal forwarded after the reap does not reach the process that reused the pid"
        else
                fail "enter: the forwarded signal killed another user's process that reused the child's pid"
        fi
        kill "$victim"
}
