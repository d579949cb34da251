#!/usr/bin/env bash
# `agentic-job sandbox setup` end to end, inside a booted test host (tests/host/run), on a machine made to
# look like a CI runner: a runner user with sudo for everything (group sudo and a NOPASSWD rule), a secret
# in its open home, an open private directory, a running service to stop, world-writable files and
# directories, an unowned setuid and setgid program, credentials in /etc/environment. First a dry run,
# which must print what it would do and change nothing; then every refusal of the contract, each on a
# host state made to trigger it, which must exit 2 with one line on standard error and change nothing;
# then the real setup, its stages in order, and the state it leaves: the sandbox user, the closed homes,
# the stopped service, the helper, the sudo, polkit, cron and linger denials, the egress proxy and the
# nftables rules (proven with traffic to the fake internet), the walk's o+w and setuid changes, the
# configuration, and the lock proven by sudo as the runner. Last, a second setup is refused.
#
# The host is thrown away after the run: this suite installs the project and changes the host for good.
#
# usage: bash tests/host/run --release trixie|bookworm tests/e2e/setup.sh
#        (in the host: tests/e2e/setup.sh [BUILD_DIR], default $AJH_BUILD or /build)
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/integration/lib.sh
. "$here/../integration/lib.sh"

require_test_host tests/e2e/setup.sh
build=$(cd "${1:-${AJH_BUILD:-/build}}" && pwd)

CLIENT=/usr/local/bin/agentic-job
HELPER=/usr/local/libexec/agentic-job
SHARE=/usr/local/share/agentic-job
STATE_DIR=/etc/agentic-job
SUDOERS=/etc/sudoers.d/zz-agentic-job
POLKIT_DIR=/etc/polkit-1/rules.d
POLKIT=$POLKIT_DIR/00-agentic-job.rules
EGRESS_POLICY=/opt/egress-proxy/policy/policy.toml
SANDBOX=runner-sandbox
RUNNER=runner
GROUP=ajt-grp
PRIVATE=/opt/ajt-private
DUMMY=ajt-dummy.service
WW_FILE=/usr/local/share/ajt-ww
WW_DIR=/usr/local/share/ajt-wwdir
STICKY_DIR=/usr/local/share/ajt-sticky
TMP_WW=/tmp/ajt-tmp-ww
VARTMP_WW=/var/tmp/ajt-vartmp-ww
SUID=/usr/local/bin/ajt-suid
SGID=/usr/local/bin/ajt-sgid
STAGES=(state-dir sandbox-user environment close-homes stop-services helper deny budget apparmor egress-proxy network-rules walk
        setuid-owners ptrace config lock)
ROOT_EQUIVALENT="root wheel sudo admin adm disk shadow docker podman lxd incus incus-admin libvirt systemd-journal"

work=$(mktemp -d /tmp/ajt-setup.XXXXXX)
chmod 0755 "$work"
on_exit "rm -rf $work"

echo "# ${AJH_RELEASE:-unknown release}: $(systemctl --version | head -n1), $(sudo -V | head -n1)"

# ---------------------------------------------------------------------------------------------------------
echo "# install and the runner's machine"

if ninja -C "$build" install >"$work/install.log" 2>&1; then
        pass "ninja install"
else
        fail "ninja install: $(tail -n 5 "$work/install.log")"
        echo "Bail out! the project did not install"
        exit 1
fi
for f in "$CLIENT" "$HELPER" /usr/local/libexec/agentic-job-egress-acl "$SHARE/squid/squid.conf.in" \
        "$SHARE/squid/ERR_ACCESS_DENIED" "$SHARE/policy.toml"; do
        if [ -f "$f" ]; then pass "installed: $f"; else fail "not installed: $f"; fi
done

useradd --create-home --shell /bin/bash "$RUNNER"
if getent group sudo >/dev/null; then usermod --append --groups sudo "$RUNNER"; fi
# Root by other names, which the lock takes away: group docker with its service running (a stand-in
# that only sleeps), and root with an empty password (su would let anyone in).
groupadd docker
usermod --append --groups docker "$RUNNER"
systemd-run --quiet --unit=docker.service --service-type=exec sleep 1000
passwd -d root >/dev/null
printf '%s ALL=(ALL) NOPASSWD: ALL\n' "$RUNNER" >/etc/sudoers.d/runner
chmod 0440 /etc/sudoers.d/runner
visudo -c -q -f /etc/sudoers.d/runner || fail "the runner's own sudo rule does not pass visudo -c"
groupadd "$GROUP"
RUNNER_UID=$(id -u "$RUNNER")
RUNNER_HOME=$(getent passwd "$RUNNER" | cut -d: -f6)
chmod 0755 "$RUNNER_HOME"
echo "runner's secret" >"$RUNNER_HOME/secret"
chown "$RUNNER:$RUNNER" "$RUNNER_HOME/secret"
chmod 0644 "$RUNNER_HOME/secret"
HOME_BASE=$(useradd -D | sed -n 's/^HOME=//p')
SB_HOME=${HOME_BASE:-/home}/$SANDBOX

# What setup must close, stop, filter, fix; and what it must leave.
install -d -m 0755 "$PRIVATE"
echo private >"$PRIVATE/file"
chmod 0644 "$PRIVATE/file"
systemd-run --quiet --unit="$DUMMY" --service-type=exec sleep 1000
install -m 0644 /dev/null "$WW_FILE" && chmod 0666 "$WW_FILE"
install -d "$WW_DIR" && chmod 0777 "$WW_DIR"
install -d "$STICKY_DIR" && chmod 1777 "$STICKY_DIR"
install -m 0644 /dev/null "$TMP_WW" && chmod 0666 "$TMP_WW"
install -m 0644 /dev/null "$VARTMP_WW" && chmod 0666 "$VARTMP_WW"
install -m 0755 /usr/bin/true "$SUID" && chmod 4755 "$SUID"
install -m 0755 /usr/bin/true "$SGID" && chmod 2755 "$SGID"
# A fixed-PATH directory, group-writable by a group that is not root's: setup makes it root's alone.
chgrp "$GROUP" /usr/local/sbin
chmod 0775 /usr/local/sbin
ENV_KEPT="AJT_KEEP_FIRST=1
AJT_KEEP=kept"
printf 'AJT_KEEP_FIRST=1\nACTIONS_RUNTIME_TOKEN=secret\nXDG_RUNTIME_DIR=/run/user/1000\nAJT_KEEP=kept\n' >/etc/environment
# A literal name server, as setup wants with the proxy (documentation address: nothing answers there).
cp -a /etc/resolv.conf "$work/resolv.conf.orig"
rm -f /etc/resolv.conf
printf 'nameserver 203.0.113.53\noptions timeout:1 attempts:1\n' >/etc/resolv.conf
cp -a /etc/resolv.conf "$work/resolv.conf.saved"

expect_eq "the service to stop runs" "active" "$(systemctl is-active "$DUMMY")"
expect_eq "control: docker.service runs" "active" "$(systemctl is-active docker.service)"
expect_eq "control: root's password is empty" "NP" "$(passwd -S root | cut -d' ' -f2)"
runuser -u "$RUNNER" -- sudo -n true 2>/dev/null
expect_eq "control: before setup the runner has sudo for everything" 0 "$?"
runuser -u nobody -- cat "$RUNNER_HOME/secret" >/dev/null 2>&1
expect_eq "control: before setup another user reads the runner's secret" 0 "$?"
runuser -u nobody -- cat "$PRIVATE/file" >/dev/null 2>&1
expect_eq "control: before setup another user reads the private directory" 0 "$?"
[ -e "$STATE_DIR" ] && echo "Bail out! $STATE_DIR exists before setup" && exit 1

# A configuration: the base, with each given KEY=VALUE (a [sandbox] key, or proxy) replacing the key's
# value or added; an empty VALUE leaves the key out. Written to $work/NAME.toml, 0644; prints the path.
declare -A BASE=([user]="\"$SANDBOX\"" [runner-user]="\"$RUNNER\"" [groups]="[\"$GROUP\"]"
        [private-dirs]="[\"$PRIVATE\"]" [stop-services]="[\"$DUMMY\"]")
BASE_KEYS=(user runner-user groups private-dirs stop-services)
cfg() {
        local name=$1 kv k proxy=true file=$work/$1.toml
        shift
        local -A c=()
        local keys=("${BASE_KEYS[@]}")
        for k in "${BASE_KEYS[@]}"; do c[$k]=${BASE[$k]}; done
        for kv in "$@"; do
                k=${kv%%=*}
                if [ "$k" = proxy ]; then
                        proxy=${kv#*=}
                        continue
                fi
                [ -v "c[$k]" ] || keys+=("$k")
                c[$k]=${kv#*=}
        done
        {
                echo "# tests/e2e/setup.sh: $name"
                echo "[sandbox]"
                for k in "${keys[@]}"; do
                        [ -n "${c[$k]}" ] && echo "$k = ${c[$k]}"
                done
                echo
                echo "[egress]"
                echo "proxy = $proxy"
        } >"$file"
        chmod 0644 "$file"
        echo "$file"
}
CFG=$(cfg base)

setup() { "$CLIENT" sandbox setup "$@"; }

# Everything setup may change, as text: users, groups, subordinate ids, sudo, polkit, cron, at, linger,
# files it filters or writes, modes it closes, the service to stop, the proxy, nftables, world-writable
# and setuid files (outside /tmp and /var/tmp), Yama, root's password.
snapshot() {
        local f
        {
                echo "== accounts"
                cat /etc/passwd /etc/group /etc/shadow /etc/gshadow /etc/subuid /etc/subgid
                echo "== files"
                for f in /etc/sudoers /etc/sudoers.d/* /etc/environment /etc/resolv.conf /etc/cron.allow \
                        /etc/cron.deny /etc/at.allow /etc/at.deny "$POLKIT_DIR"/* "$EGRESS_POLICY"; do
                        if [ -e "$f" ] || [ -L "$f" ]; then
                                stat -c '%a %U:%G %F %N' "$f"
                                [ -f "$f" ] && sha256sum "$f"
                        fi
                done
                echo "== directories"
                for f in "$STATE_DIR" /opt /opt/egress-proxy /var/lib/systemd/linger "$POLKIT_DIR" /etc/sudoers.d \
                        "$HOME_BASE"; do
                        [ -d "$f" ] && find "$f" -maxdepth 1 -printf '%m %u:%g %y %p\n' | sort
                done
                echo "== modes"
                stat -c '%a %U:%G %n' "$RUNNER_HOME" "$RUNNER_HOME/secret" "$PRIVATE" "$PRIVATE/file" "$HELPER" \
                        /usr/local/libexec /usr/local/bin /usr/local/sbin /usr/local /usr /etc / "$WW_FILE" \
                        "$WW_DIR" "$STICKY_DIR" "$TMP_WW" "$VARTMP_WW" "$SUID" "$SGID" /usr/bin/sudo 2>&1
                echo "== units"
                systemctl is-active "$DUMMY" egress-proxy.service
                echo "== nft"
                nft list ruleset | sed 's/counter packets [0-9]* bytes [0-9]*/counter/'
                echo "== o+w, setuid, setgid"
                find / -xdev \( -path /tmp -o -path /var/tmp -o -path /proc -o -path /sys \) -prune -o ! -type l \
                        \( -perm -0002 -o -perm -4000 -o -perm -2000 \) -printf '%m %u:%g %p\n' 2>/dev/null | sort
                echo "== kernel, root"
                cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null
                passwd -S root | cut -d' ' -f1-2
        } 2>&1
}
BASELINE=$(snapshot)

# changed BEFORE AFTER: the lines that differ, for a message.
changed() { diff <(echo "$1") <(echo "$2") | grep '^[<>]' | head -n 12 | tr '\n' ';'; }

# restored WHAT: the preparation for WHAT was undone (a problem of this test, not of setup, if not).
restored() {
        local now
        now=$(snapshot)
        if [ "$now" = "$BASELINE" ]; then
                pass "$1: the preparation was undone"
        else
                fail "$1: the preparation was not undone (test problem): $(changed "$BASELINE" "$now")"
                BASELINE=$now
        fi
}

# refused WHAT PATTERN CMD...: CMD (a setup) is refused before any change: status 2, one line on standard
# error, "agentic-job sandbox setup: REASON (nothing was changed)" with REASON matching the extended regular
# expression PATTERN, and the host as it was. STATE_DIR_PREPARED=1 when the test made /etc/agentic-job.
STATE_DIR_PREPARED=0
refused() {
        local what=$1 pattern=$2 before after line
        shift 2
        before=$(snapshot)
        "$@" </dev/null >"$work/out" 2>"$work/err"
        status=$?
        after=$(snapshot)
        line=$(cat "$work/err")
        expect_eq "$what: refused with status 2" 2 "$status"
        if [ "$(wc -l <"$work/err")" = 1 ] && [[ $line == "agentic-job sandbox setup: "*" (nothing was changed)" ]]; then
                pass "$what: one line on standard error, 'agentic-job sandbox setup: ... (nothing was changed)'"
        else
                fail "$what: standard error is not one refusal line: '${line:0:400}'"
        fi
        if grep -qE -- "$pattern" "$work/err"; then
                pass "$what: says why ($line)"
        else
                fail "$what: the reason does not match /$pattern/: '${line:0:400}'"
        fi
        [ "$STATE_DIR_PREPARED" = 1 ] || expect_absent "$what: $STATE_DIR not made" "$STATE_DIR"
        if [ "$before" = "$after" ]; then
                pass "$what: nothing was changed"
        else
                fail "$what: the host changed: $(changed "$before" "$after")"
        fi
        if grep -q '^would:' "$work/out"; then fail "$what: a refused setup printed would: lines"; fi
}

# usage_refused WHAT PATTERN ARGS...: a usage error: status 2, the first line of standard error names the
# command and matches PATTERN, nothing changed.
usage_refused() {
        local what=$1 pattern=$2 before after first
        shift 2
        before=$(snapshot)
        setup "$@" </dev/null >"$work/out" 2>"$work/err"
        status=$?
        after=$(snapshot)
        first=$(head -n1 "$work/err")
        expect_eq "$what: usage error, status 2" 2 "$status"
        if [[ $first == "agentic-job sandbox setup: "* ]] && grep -qE -- "$pattern" <<<"$first"; then
                pass "$what: says why ($first)"
        else
                fail "$what: the first line of standard error is not 'agentic-job sandbox setup: ...' matching /$pattern/: '${first:0:400}'"
        fi
        expect_absent "$what: $STATE_DIR not made" "$STATE_DIR"
        if [ "$before" = "$after" ]; then pass "$what: nothing was changed"; else fail "$what: the host changed: $(changed "$before" "$after")"; fi
}

# ---------------------------------------------------------------------------------------------------------
echo "# before setup, the runner's commands say what to do"

for cmd in "sandbox check" "sandbox exec -- true" "sandbox end" "run --repo /x --commit 0000000000000000000000000000000000000000 --base main --task /dev/null --out /tmp/ajt-x --output a -- true"; do
        # shellcheck disable=SC2086 # the words of the command
        runuser -u "$RUNNER" -- "$CLIENT" $cmd </dev/null >"$work/out" 2>"$work/err"
        status=$?
        expect_eq "before setup, $cmd: status 2" 2 "$status"
        expect_contains "before setup, $cmd: run setup first" \
                ": No such file or directory: this machine is not set up; run 'sudo agentic-job sandbox setup --config FILE' first" \
                "$(cat "$work/err")"
done

# ---------------------------------------------------------------------------------------------------------
echo "# dry run"

before=$(snapshot)
setup --config "$CFG" --dry-run </dev/null >"$work/dry.out" 2>"$work/dry.err"
status=$?
after=$(snapshot)
sed 's/^/# dry run: /' "$work/dry.out" "$work/dry.err"
expect_eq "dry run: status 0" 0 "$status"
expect_eq "dry run: the last line" "dry run: nothing was changed" "$(tail -n1 "$work/dry.out")"
n=$(grep -c '^would: ' "$work/dry.out")
if [ "$n" -gt 0 ]; then pass "dry run: $n would: lines"; else fail "dry run: no would: line"; fi
expect_eq "dry run: every stage, in order, each 'stage NAME: dry run'" \
        "$(printf 'stage %s: dry run\n' "${STAGES[@]}")" "$(grep '^stage ' "$work/dry.out")"
for needle in "useradd" "$SANDBOX" "$RUNNER_HOME" "$PRIVATE" "$DUMMY" "$SUDOERS" "$WW_FILE" "$WW_DIR" "$SUID" \
        "$SGID" "$STATE_DIR/config.toml" "/etc/environment" "/etc/cron.deny" /usr/local/sbin "user-UID.slice MemoryMax=75%"; do
        if grep '^would: ' "$work/dry.out" | grep -qF -- "$needle"; then
                pass "dry run: a would: line names $needle"
        else
                fail "dry run: no would: line names $needle"
        fi
done
for needle in "$TMP_WW" "$VARTMP_WW" "$STICKY_DIR" /usr/bin/sudo; do
        if grep '^would: ' "$work/dry.out" | grep -qF -- "$needle"; then
                fail "dry run: a would: line names $needle, which setup must leave: $(grep -F -- "$needle" "$work/dry.out" | head -n1)"
        else
                pass "dry run: no would: line names $needle"
        fi
done
expect_absent "dry run: $STATE_DIR not made" "$STATE_DIR"
if [ "$before" = "$after" ]; then pass "dry run: nothing was changed"; else fail "dry run: the host changed: $(changed "$before" "$after")"; fi
expect_eq "dry run: the service still runs" "active" "$(systemctl is-active "$DUMMY")"

# The helper's own directory group-writable by a group that is not root's: the helper stage makes it root's
# alone (before the proxy starts), so it is no reason to refuse.
chgrp "$GROUP" /usr/local/libexec
chmod 0775 /usr/local/libexec
before=$(snapshot)
setup --config "$CFG" --dry-run </dev/null >"$work/out" 2>"$work/err"
status=$?
after=$(snapshot)
expect_eq "dry run, the helper's directory group-writable: status 0" "0:" "$status:$(head -c 400 "$work/err")"
if grep '^would: ' "$work/out" | grep -qF /usr/local/libexec; then
        pass "dry run, the helper's directory group-writable: a would: line names /usr/local/libexec"
else
        fail "dry run, the helper's directory group-writable: no would: line names /usr/local/libexec"
fi
if [ "$before" = "$after" ]; then pass "dry run, the helper's directory group-writable: nothing was changed"; else fail "dry run, the helper's directory group-writable: the host changed: $(changed "$before" "$after")"; fi
chgrp root /usr/local/libexec
chmod 0755 /usr/local/libexec

# The runner from SUDO_USER when the configuration names none.
SUDO_USER=$RUNNER setup --config "$(cfg no-runner runner-user=)" --dry-run </dev/null >"$work/out" 2>"$work/err"
expect_eq "dry run without runner-user, SUDO_USER=$RUNNER: status 0" "0:" "$?:$(head -c 400 "$work/err")"
restored "dry runs"

# ---------------------------------------------------------------------------------------------------------
echo "# refusals, each before any change"

refused "not root" "must run as root" runuser -u "$RUNNER" -- "$CLIENT" sandbox setup --config "$CFG"
refused "not root, dry run" "must run as root" runuser -u "$RUNNER" -- "$CLIENT" sandbox setup --config "$CFG" --dry-run

usage_refused "no --config" "--config" --dry-run
usage_refused "no argument at all" "--config"
usage_refused "--config without its value" "--config" --config
usage_refused "an unknown option" "--bogus" --config "$CFG" --bogus
usage_refused "an extra argument" "extra" --config "$CFG" extra

refused "a configuration file that does not exist" "$work/absent.toml" setup --config "$work/absent.toml"
printf '[sandbox]\nusr = "x"\n' >"$work/bad-key.toml"
refused "invalid configuration: an unknown key" "$work/bad-key.toml:2:1: .*unknown key \"usr\"" setup --config "$work/bad-key.toml"
refused "invalid configuration: a value of the wrong type" "$work/wrong-type.toml:[0-9]+:[0-9]+: .*proxy" \
        setup --config "$(cfg wrong-type proxy='"yes"')"
refused "invalid configuration: a root-equivalent group" "$work/sudo-group.toml:[0-9]+:[0-9]+: .*sudo" \
        setup --config "$(cfg sudo-group groups='["ajt-grp", "sudo"]')"

mkdir -m 0755 "$STATE_DIR"
STATE_DIR_PREPARED=1
refused "$STATE_DIR exists" "$STATE_DIR exists: setup ran on this machine before" setup --config "$CFG"
STATE_DIR_PREPARED=0
rmdir "$STATE_DIR"
restored "$STATE_DIR exists"

ALLOW=$(cfg allow allow-existing-user=true)

useradd --create-home --shell /bin/bash "$SANDBOX"
refused "the sandbox user exists" "the sandbox user $SANDBOX exists" setup --config "$CFG"
usermod --append --groups sudo "$SANDBOX"
refused "allow-existing-user: the user is in group sudo" "$SANDBOX.*sudo|sudo.*$SANDBOX" setup --config "$ALLOW"
userdel -r "$SANDBOX" 2>/dev/null
restored "the sandbox user exists"

cp -p /etc/group "$work/group.saved"
cp -p /etc/gshadow "$work/gshadow.saved"
groupadd -o -g 0 toor
useradd --create-home --shell /bin/bash --groups toor "$SANDBOX"
refused "allow-existing-user: the user is in a group of gid 0 (toor)" "$SANDBOX" setup --config "$ALLOW"
userdel -r "$SANDBOX" 2>/dev/null
cp "$work/group.saved" /etc/group
cp "$work/gshadow.saved" /etc/gshadow
restored "a user in a group of gid 0"

useradd --create-home --shell /bin/bash --no-user-group --gid 0 "$SANDBOX"
refused "allow-existing-user: the user's primary group is gid 0" "$SANDBOX" setup --config "$ALLOW"
userdel -r "$SANDBOX" 2>/dev/null
restored "a user of primary gid 0"

useradd --create-home --shell /bin/bash "$SANDBOX"
setpriv --reuid="$SANDBOX" --regid="$SANDBOX" --clear-groups sleep 1000 </dev/null >/dev/null 2>&1 &
sleeper=$!
on_exit "kill $sleeper"
for _ in $(seq 50); do [ "$(stat -c %U "/proc/$sleeper" 2>/dev/null)" = "$SANDBOX" ] && break; sleep 0.1; done
refused "allow-existing-user: the user has a running process" "has running processes" setup --config "$ALLOW"
kill "$sleeper"
wait "$sleeper" 2>/dev/null
userdel -r "$SANDBOX" 2>/dev/null
restored "a user with a running process"

# An image's own user that owns what root runs (a program in /usr/local/sbin that cron could run), or
# whose group may write what root reads (a file in /etc): it could rewrite them, and no o+w walk sees it.
# A file of its group that the group may not write, and its own home, are no reason (setup-degraded.sh
# takes such a user).
useradd --create-home --shell /bin/bash "$SANDBOX"
install -m 0644 -o root -g "$SANDBOX" /dev/null /etc/ajt-group-readable
install -m 0700 -o "$SANDBOX" /dev/null "/home/$SANDBOX/its-own"
install -m 0755 -o "$SANDBOX" /dev/null /usr/local/sbin/ajt-sandbox-owned
refused "allow-existing-user: the user owns a program in /usr/local/sbin" \
        "owns or may write 1 files .*such as /usr/local/sbin/ajt-sandbox-owned" setup --config "$ALLOW"
rm -f /usr/local/sbin/ajt-sandbox-owned
install -m 0664 -o root -g "$SANDBOX" /dev/null /etc/ajt-group-writable
refused "allow-existing-user: its group may write a file in /etc" \
        "owns or may write 1 files .*such as /etc/ajt-group-writable" setup --config "$ALLOW"
rm -f /etc/ajt-group-writable /etc/ajt-group-readable
userdel -r "$SANDBOX" 2>/dev/null
restored "a user that owns files root runs"

useradd --no-create-home --home-dir "$SB_HOME" --shell /bin/bash --non-unique --uid "$RUNNER_UID" "$SANDBOX"
install -d -m 0700 -o "$RUNNER_UID" -g "$SANDBOX" "$SB_HOME"
refused "allow-existing-user: the sandbox user has the runner's uid" "is the sandbox user|uid" setup --config "$ALLOW"
userdel "$SANDBOX" 2>/dev/null
rm -rf "$SB_HOME"
restored "a sandbox user with the runner's uid"

mkdir -m 0755 "$SB_HOME"
refused "a leftover home" "leftover home" setup --config "$CFG"
rmdir "$SB_HOME"
restored "a leftover home"

groupadd "$SANDBOX"
refused "a group of the sandbox user's name" "$SANDBOX" setup --config "$CFG"
groupdel "$SANDBOX"
restored "a group of the sandbox user's name"

refused "a configured group that does not exist" "ajt-nogroup" setup --config "$(cfg nogroup groups='["ajt-nogroup"]')"
cp -p /etc/group "$work/group.saved"
cp -p /etc/gshadow "$work/gshadow.saved"
groupadd -o -g 0 toor
refused "a configured group of gid 0 (toor)" "toor" setup --config "$(cfg toor groups='["ajt-grp", "toor"]')"
cp "$work/group.saved" /etc/group
cp "$work/gshadow.saved" /etc/gshadow
restored "a configured group of gid 0"

refused "runner-user = root" "root" setup --config "$(cfg runner-root runner-user='"root"')"
refused "a runner user that does not exist" "ajt-nobody" setup --config "$(cfg runner-absent runner-user='"ajt-nobody"')"
refused "no runner-user and no SUDO_USER" "runner|SUDO_USER" env -u SUDO_USER "$CLIENT" sandbox setup \
        --config "$(cfg no-runner runner-user=)"
refused "SUDO_USER=root and no runner-user" "root" env SUDO_USER=root "$CLIENT" sandbox setup \
        --config "$(cfg no-runner runner-user=)"
refused "the runner is the sandbox user" "$SANDBOX" setup --config "$(cfg runner-is-sandbox runner-user="\"$SANDBOX\"")"

cp -p /etc/passwd "$work/passwd.saved"
sed -i "s/^\($RUNNER:[^:]*:[^:]*:\)[^:]*:/\10:/" /etc/passwd
expect_eq "prepared: the runner's primary gid is 0" 0 "$(id -g "$RUNNER")"
refused "lock-runner and the runner's primary gid is 0" "$RUNNER" setup --config "$CFG"
cp "$work/passwd.saved" /etc/passwd
usermod --home /home/ajt-nohome "$RUNNER"
refused "the runner's home does not exist" "/home/ajt-nohome" setup --config "$CFG"
ln -s "$RUNNER_HOME" /home/ajt-linkhome
usermod --home /home/ajt-linkhome "$RUNNER"
refused "the runner's home is a symbolic link" "/home/ajt-linkhome" setup --config "$CFG"
cp "$work/passwd.saved" /etc/passwd
rm -f /home/ajt-linkhome
restored "the runner's primary group and home"

ln -s "$PRIVATE" /opt/ajt-link
refused "a private-dirs entry that is a symbolic link" "/opt/ajt-link" \
        setup --config "$(cfg private-link private-dirs='["/opt/ajt-link"]')"
rm -f /opt/ajt-link
install -m 0644 /dev/null /opt/ajt-file
refused "a private-dirs entry that is not a directory" "/opt/ajt-file" \
        setup --config "$(cfg private-file private-dirs='["/opt/ajt-file"]')"
rm -f /opt/ajt-file
restored "private-dirs entries"

rm -f /etc/resolv.conf
printf 'nameserver dns.fake.test\n' >/etc/resolv.conf
refused "proxy: a name server given by name in resolv.conf" "resolv.conf" setup --config "$CFG"
printf 'options timeout:1\n' >/etc/resolv.conf
refused "proxy: no name server in resolv.conf" "resolv.conf" setup --config "$CFG"
rm -f /etc/resolv.conf
cp -a "$work/resolv.conf.saved" /etc/resolv.conf
restored "resolv.conf"

mv /usr/sbin/squid "$work/squid"
refused "proxy: squid missing" "squid" setup --config "$CFG"
mv "$work/squid" /usr/sbin/squid
restored "squid missing"

python3 -c '
import socket, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 3128))
s.listen(8)
time.sleep(600)' </dev/null >/dev/null 2>&1 &
squatter=$!
on_exit "kill $squatter"
for _ in $(seq 50); do (exec 3<>/dev/tcp/127.0.0.1/3128) 2>/dev/null && break; sleep 0.1; done
if (exec 3<>/dev/tcp/127.0.0.1/3128) 2>/dev/null; then pass "prepared: something listens on 127.0.0.1:3128"; else fail "prepared: the listener on 3128 did not start"; fi
refused "proxy: port 3128 taken" "3128" setup --config "$CFG"
kill "$squatter"
wait "$squatter" 2>/dev/null
restored "port 3128 taken"

install -d -m 0755 /opt/egress-proxy/policy
printf '[[write]]\nname = "x"\nbogus = 1\n' >"$EGRESS_POLICY"
refused "proxy: an installed egress policy that is not valid" "policy" setup --config "$CFG"
rm -rf /opt/egress-proxy
restored "an invalid egress policy"

mv /usr/sbin/visudo "$work/visudo"
refused "a program setup needs (visudo) missing" "visudo" setup --config "$CFG"
mv "$work/visudo" /usr/sbin/visudo
mv /usr/bin/dpkg-query "$work/dpkg-query"
refused "no package database (no dpkg-query, no rpm)" "dpkg-query|package" setup --config "$CFG"
mv "$work/dpkg-query" /usr/bin/dpkg-query
restored "programs missing"

cp -p /etc/sudoers "$work/sudoers.saved"
sed -i '/^[@#]includedir/d' /etc/sudoers
refused "/etc/sudoers does not include /etc/sudoers.d" "sudoers" setup --config "$CFG"
cp "$work/sudoers.saved" /etc/sudoers
install -m 0440 /dev/null /etc/sudoers.d/zzz
echo "# sorts after zz-agentic-job" >/etc/sudoers.d/zzz
refused "an /etc/sudoers.d entry that sorts after zz-agentic-job" "zzz" setup --config "$CFG"
rm -f /etc/sudoers.d/zzz
restored "sudoers"

printf '%s\n' "$SANDBOX" >/etc/cron.allow
refused "the sandbox user in /etc/cron.allow" "cron.allow" setup --config "$CFG"
rm -f /etc/cron.allow
printf '%s\n' "$SANDBOX" >/etc/at.allow
refused "the sandbox user in /etc/at.allow" "at.allow" setup --config "$CFG"
rm -f /etc/at.allow
restored "allow lists"

mv "$HELPER" "$work/helper.saved"
refused "the helper missing" "$HELPER" setup --config "$CFG"
mv "$work/helper.saved" "$HELPER"
refused "--helper: a file that does not exist" "$work/no-helper" setup --config "$CFG" --helper "$work/no-helper"
mkdir "$work/helper-dir"
refused "--helper: a directory" "$work/helper-dir" setup --config "$CFG" --helper "$work/helper-dir"
rmdir "$work/helper-dir"
restored "the helper"

chown nobody /usr/local/sbin
refused "a fixed-PATH directory not owned by root (/usr/local/sbin)" "/usr/local/sbin" setup --config "$CFG"
chown root /usr/local/sbin
restored "a directory not root's"

# ---------------------------------------------------------------------------------------------------------
echo "# setup"

CFG=$(cfg setup "private-dirs=[\"$PRIVATE\", \"/opt/ajt-missing\"]" "stop-services=[\"$DUMMY\", \"ajt-absent.service\"]")
sed 's/^/# config: /' "$CFG"
setup --config "$CFG" </dev/null >"$work/setup.out" 2>"$work/setup.err"
status=$?
sed 's/^/# setup: /' "$work/setup.out"
sed 's/^/# setup (stderr): /' "$work/setup.err"
expect_eq "setup: status 0" 0 "$status"
if [ "$status" != 0 ]; then
        line=$(cat "$work/setup.err")
        if [ "$status" = 4 ] && [ "$(wc -l <"$work/setup.err")" = 1 ] &&
                [[ $line == "agentic-job sandbox setup: stage "*" failed: "*" (the machine is half set up; do not use it)" ]]; then
                pass "setup failed as the contract says a failure after a change looks (status 4, one line)"
        else
                fail "setup failed with status $status and standard error '${line:0:400}'"
        fi
fi
expect_eq "setup: every stage, in order" "${STAGES[*]}" \
        "$(sed -n 's/^stage \([a-z-]*\): .*/\1/p' "$work/setup.out" | tr '\n' ' ' | sed 's/ $//')"
for stage in "${STAGES[@]}"; do
        if grep -qE "^stage $stage: [0-9]+\.[0-9]{3}s ok$" "$work/setup.out"; then
                pass "setup: stage $stage: S.SSSs ok"
        else
                fail "setup: no 'stage $stage: S.SSSs ok' line: '$(grep "^stage $stage:" "$work/setup.out")'"
        fi
done
done_line=$(tail -n1 "$work/setup.out")
if [[ $done_line =~ ^setup\ done\ in\ [0-9]+\.[0-9]{3}s$ ]]; then pass "setup: the last line is 'setup done in S.SSSs'"; else fail "setup: the last line is '$done_line'"; fi
echo "# ${AJH_RELEASE:-?}: $(grep '^setup done in' "$work/setup.out" || echo "no setup done line")"
if grep -q '^would:' "$work/setup.out"; then fail "setup printed would: lines"; else pass "setup printed no would: line"; fi
bad=$(grep -vE '^(  .*|stage [a-z-]+: [0-9]+\.[0-9]{3}s ok|setup done in [0-9]+\.[0-9]{3}s)$' "$work/setup.out" | head -n 3)
expect_eq "setup: every other line is a change line (two spaces, then text)" "" "$bad"
# stage_lines NAME: the change lines printed for the stage (after the previous stage line).
stage_lines() {
        awk -v s="$1" '/^stage / { if (index($0, "stage " s ":") == 1) { printf "%s", buf; exit } buf = ""; next } { buf = buf $0 "\n" }' \
                "$work/setup.out"
}
expect_contains "setup: the missing private directory is printed" "/opt/ajt-missing" "$(stage_lines close-homes)"
expect_contains "setup: the absent unit is printed" "ajt-absent.service" "$(stage_lines stop-services)"
# The test hosts' kernel has no AppArmor: the stage says no profile is needed and writes none.
expect_eq "setup: apparmor: the restriction is off here, so a note and no profile" \
        "  AppArmor does not restrict user namespaces here: bubblewrap needs no profile" "$(stage_lines apparmor)"
expect_absent "setup: apparmor: no profile written" /etc/apparmor.d/agentic-job-bwrap
expect_contains "setup: lock: the proof that sudo -n true is refused" "  proof: sudo -n true refused" "$(stage_lines lock)"
expect_contains "setup: lock: the proof that helper ping succeeds" "  proof: helper ping succeeded" "$(stage_lines lock)"
if [ -e /proc/sys/kernel/yama/ptrace_scope ]; then
        scope=$(cat /proc/sys/kernel/yama/ptrace_scope)
        if [ "$scope" -ge 1 ]; then pass "ptrace_scope is $scope"; else fail "ptrace_scope is still $scope"; fi
else
        if [ -n "$(stage_lines ptrace)" ]; then pass "no Yama: a note line ($(stage_lines ptrace | head -n1))"; else fail "no Yama, and stage ptrace printed no note"; fi
fi

# ---------------------------------------------------------------------------------------------------------
echo "# the AppArmor profile setup writes where user namespaces are restricted (Ubuntu), to this parser"
# The text setup's apparmor stage writes for /usr/bin/bwrap (policy/apparmor/agentic-job-bwrap, which
# test-apparmor-profile holds equal to it), given to apparmor_parser as the stage's own check does
# (parsed and compiled, nothing loaded); the control, a rule AppArmor does not know in its place, must be
# refused. AppArmor 4 (trixie's; Ubuntu 24.04 has 4.0) knows the userns rule; bookworm's 3.0 does not.
expect_eq "the installed bubblewrap is /usr/bin/bwrap, links resolved, as the profile names it" /usr/bin/bwrap \
        "$(readlink -f /usr/bin/bwrap)"
expect_contains "the profile names it, unconfined but for userns" \
        "profile agentic-job-bwrap /usr/bin/bwrap flags=(unconfined) {
  userns,
}" "$(cat "$here/../../policy/apparmor/agentic-job-bwrap")"
if [ "${AJH_RELEASE:-}" = trixie ]; then
        cp "$here/../../policy/apparmor/agentic-job-bwrap" "$work/aa-profile"
        out=$(apparmor_parser --skip-kernel-load --skip-cache "$work/aa-profile" 2>&1)
        status=$?
        # Its one line where the kernel has no AppArmor: "Cache read/write disabled: interface file missing".
        expect_eq "apparmor_parser ($(apparmor_parser --version | head -n1)) accepts it" "0:" \
                "$status:$(grep -v '^Cache read/write disabled: interface file missing' <<<"$out")"
        sed 's/userns,/usernz,/' "$work/aa-profile" >"$work/aa-control"
        out=$(apparmor_parser --skip-kernel-load --skip-cache "$work/aa-control" 2>&1)
        status=$?
        if [ "$status" != 0 ]; then pass "control: the same profile with a rule AppArmor does not know is refused ($status)"; else fail "control: apparmor_parser accepted a rule it does not know"; fi
else
        echo "# $(apparmor_parser --version | head -n1): predates AppArmor 4's userns rule; parsed in the trixie host"
fi

# ---------------------------------------------------------------------------------------------------------
echo "# the sandbox user"

# mode_of PATH: "MODE OWNER:GROUP".
mode_of() { stat -c '%a %U:%G' "$1" 2>&1; }

if id "$SANDBOX" >/dev/null 2>&1; then pass "the sandbox user exists"; else fail "no sandbox user"; fi
SB_UID=$(id -u "$SANDBOX" 2>/dev/null)
IFS=: read -r _ _ _ sb_gid _ sb_home sb_shell < <(getent passwd "$SANDBOX")
expect_eq "its shell" "/bin/bash" "${sb_shell:-}"
expect_eq "its primary group is its own" "$SANDBOX" "$(getent group "${sb_gid:-x}" | cut -d: -f1)"
expect_eq "its home" "$SB_HOME" "${sb_home:-}"
# The budget on its slice, which holds every session it opens: the default share of memory and tasks-max.
expect_contains "setup: budget: printed" "  systemctl set-property -- user-$SB_UID.slice MemoryMax=75% TasksMax=8192" \
        "$(stage_lines budget)"
expect_eq "the slice's TasksMax is tasks-max" 8192 "$(systemctl show -p TasksMax --value "user-$SB_UID.slice")"
mem=$(systemctl show -p MemoryMax --value "user-$SB_UID.slice")
# In bash's arithmetic: bookworm's mawk prints a product past 2^31 as 2.52762e+10, which no test takes.
total=$(($(awk '/^MemTotal:/ { print $2 }' /proc/meminfo) * 1024))
if [[ $mem =~ ^[0-9]+$ ]] && [ $((mem * 100 / total)) -ge 74 ] && [ $((mem * 100 / total)) -le 75 ]; then
        pass "the slice's MemoryMax is 75% of the machine's memory ($mem of $total bytes)"
else
        fail "the slice's MemoryMax is $mem, not 75% of $total bytes"
fi
expect_eq "its home: 0700, its own" "700 $SANDBOX:$SANDBOX" "$(mode_of "$SB_HOME")"
groups=" $(id -nG "$SANDBOX" 2>/dev/null) "
expect_contains "it is in $GROUP" " $GROUP " "$groups"
bad=""
for g in $ROOT_EQUIVALENT; do [[ $groups == *" $g "* ]] && bad+=" $g"; done
for g in $(id -G "$SANDBOX" 2>/dev/null); do [ "$g" = 0 ] && bad+=" gid0"; done
expect_eq "it is in no root-equivalent group (groups:$groups)" "" "$bad"
for f in /etc/subuid /etc/subgid; do
        line=$(grep "^$SANDBOX:" "$f")
        IFS=: read -r _ start count <<<"$line"
        if [ -n "$line" ] && [ "$(grep -c "^$SANDBOX:" "$f")" = 1 ] && [ "${count:-0}" -ge 65536 ]; then
                pass "$f: one range of ${count} ($line)"
        else
                fail "$f: '$line'"
                continue
        fi
        overlap=$(awk -F: -v u="$SANDBOX" -v s="$start" -v c="$count" \
                '$1 != u && $2 < s + c && s < $2 + $3 { print $0 }' "$f")
        expect_eq "$f: the range overlaps no other user's" "" "$overlap"
        [ "$f" = /etc/subuid ] && SUB_START=$start
done

# ---------------------------------------------------------------------------------------------------------
echo "# environment, homes, services, helper"

expect_eq "/etc/environment: ACTIONS_* and XDG_RUNTIME_DIR gone, the rest kept" "$ENV_KEPT" "$(cat /etc/environment)"
expect_eq "the runner's home: 0700" "700 $RUNNER:$RUNNER" "$(mode_of "$RUNNER_HOME")"
expect_eq "the private directory: 0700" "700 root:root" "$(mode_of "$PRIVATE")"
runuser -u "$SANDBOX" -- cat "$RUNNER_HOME/secret" >/dev/null 2>&1
expect_eq "the sandbox user cannot read the runner's secret" 1 "$?"
if runuser -u "$SANDBOX" -- ls "$PRIVATE" >/dev/null 2>&1; then fail "the sandbox user lists $PRIVATE"; else pass "the sandbox user cannot list the private directory"; fi
expect_eq "the service is stopped" "inactive" "$(systemctl is-active "$DUMMY")"
expect_eq "the helper: 0755 root:root" "755 root:root" "$(mode_of "$HELPER")"
expect_eq "/usr/local/sbin lost its group write (group $GROUP)" "755 root:$GROUP" "$(mode_of /usr/local/sbin)"
expect_eq "$STATE_DIR: 0755 root:root" "755 root:root" "$(mode_of "$STATE_DIR")"
expect_eq "$STATE_DIR/config.toml: 0644 root:root" "644 root:root" "$(mode_of "$STATE_DIR/config.toml")"
if cmp -s "$CFG" "$STATE_DIR/config.toml"; then pass "config.toml holds the given bytes"; else fail "config.toml differs from --config"; fi

# ---------------------------------------------------------------------------------------------------------
echo "# denials: sudo, polkit, cron, at, linger"

expect_eq "$SUDOERS: 0440 root:root" "440 root:root" "$(mode_of "$SUDOERS")"
if out=$(visudo -c -f "$SUDOERS" 2>&1); then pass "$SUDOERS passes visudo -c"; else fail "visudo -c -f $SUDOERS: $out"; fi
if visudo -c -q >/dev/null 2>&1; then pass "the whole sudo configuration passes visudo -c"; else fail "visudo -c fails: $(visudo -c 2>&1 | head -n 3)"; fi
sudoers_text=$(cat "$SUDOERS" 2>/dev/null)
expect_contains "$SUDOERS: the sandbox user may run nothing" "$SANDBOX ALL=(ALL:ALL) !ALL" "$sudoers_text"
expect_contains "$SUDOERS: the runner loses every grant (lock)" "$RUNNER ALL=(ALL:ALL) !ALL" "$sudoers_text"
expect_contains "$SUDOERS: the runner's helper grant" "$RUNNER ALL=(root) NOPASSWD: AGENTIC_JOB_HELPER" "$sudoers_text"
expect_contains "$SUDOERS: the helper's forms" "$HELPER helper ping" "$sudoers_text"
if [ -d "$POLKIT_DIR" ]; then
        expect_eq "$POLKIT: 0644 root:root" "644 root:root" "$(mode_of "$POLKIT")"
        polkit_text=$(cat "$POLKIT" 2>/dev/null)
        expect_contains "$POLKIT: refuses" "polkit.Result.NO" "$polkit_text"
        expect_contains "$POLKIT: names the sandbox user" "\"$SANDBOX\"" "$polkit_text"
        expect_contains "$POLKIT: names the runner (lock)" "\"$RUNNER\"" "$polkit_text"
        # polkit itself decides: two actions logind grants anyone (implicit any: yes), asked by a process
        # of each user. Another user keeps them: the control that the rule, not polkit's defaults, refuses.
        for action in org.freedesktop.login1.inhibit-block-idle org.freedesktop.login1.set-self-linger; do
                for u in "$SANDBOX" "$RUNNER" nobody; do
                        runuser -u "$u" -- sh -c "pkcheck --action-id $action --process \$\$" >/dev/null 2>&1
                        got=$?
                        if [ "$u" = nobody ]; then
                                expect_eq "polkit: $action still granted to nobody (control)" 0 "$got"
                        else
                                expect_eq "polkit: $action refused to $u (pkcheck: not authorized)" 1 "$got"
                        fi
                done
        done
else
        expect_absent "no $POLKIT_DIR: no polkit rule" "$POLKIT"
fi
expect_eq "/etc/cron.deny: created 0644 root:root" "644 root:root" "$(mode_of /etc/cron.deny)"
if grep -qxF "$SANDBOX" /etc/cron.deny 2>/dev/null; then pass "/etc/cron.deny lists the sandbox user"; else fail "/etc/cron.deny: '$(head -c 200 /etc/cron.deny 2>&1)'"; fi
# at ships /etc/at.deny (the test hosts' base has it): setup appends the sandbox user.
if grep -qxF "$SANDBOX" /etc/at.deny 2>/dev/null; then pass "/etc/at.deny lists the sandbox user"; else fail "/etc/at.deny: '$(head -c 200 /etc/at.deny 2>&1)'"; fi
expect_absent "no linger file for the sandbox user" "/var/lib/systemd/linger/$SANDBOX"
linger=$(loginctl show-user --property=Linger --value "$SANDBOX" 2>/dev/null)
case $linger in
"" | no) pass "the sandbox user does not linger (loginctl: '${linger:-not logged in}')" ;;
*) fail "loginctl says Linger=$linger" ;;
esac

# ---------------------------------------------------------------------------------------------------------
echo "# the egress proxy and the nftables rules"

if id egress-proxy >/dev/null 2>&1; then pass "the proxy user exists"; else fail "no proxy user"; fi
PROXY_UID=$(id -u egress-proxy 2>/dev/null)
if cmp -s "$SHARE/policy.toml" "$EGRESS_POLICY"; then pass "the shipped policy is installed at $EGRESS_POLICY"; else fail "$EGRESS_POLICY is not the shipped policy"; fi
expect_eq "egress-proxy.service is active" "active" "$(systemctl is-active egress-proxy.service)"
main=$(systemctl show --property=MainPID --value egress-proxy.service)
echo "# the proxy's main process: $main ($(cat "/proc/$main/comm" 2>/dev/null))"
expect_eq "the proxy's main process runs as egress-proxy (real, effective, saved, fs)" \
        "${PROXY_UID:-?} ${PROXY_UID:-?} ${PROXY_UID:-?} ${PROXY_UID:-?}" \
        "$(awk '/^Uid:/ { print $2, $3, $4, $5 }' "/proc/$main/status" 2>/dev/null)"
if (exec 3<>/dev/tcp/127.0.0.1/3128) 2>/dev/null; then pass "127.0.0.1:3128 listens"; else fail "nothing listens on 127.0.0.1:3128"; fi
expect_eq "$STATE_DIR/rules.nft: 0644 root:root" "644 root:root" "$(mode_of "$STATE_DIR/rules.nft")"
if table=$(nft list table inet agentic_job 2>&1); then pass "nft: table inet agentic_job is loaded"; else fail "nft list table inet agentic_job: $table"; fi
if grep -qwE -- "${SB_UID:-x}|\"?$SANDBOX\"?" <<<"$table"; then pass "the table names the sandbox uid ($SB_UID)"; else fail "the table does not name uid $SB_UID"; fi
if [ -n "${SUB_START:-}" ]; then
        expect_contains "the table holds the sandbox user's subordinate range" "$SUB_START" "$table"
fi

arrived() {
        curl -sS --max-time 10 --noproxy '*' http://www.fake.test/_ajh/requests |
                python3 -c 'import json, sys; [print(json.loads(l)["method"], json.loads(l)["path"]) for l in sys.stdin]'
}
runuser -u "$SANDBOX" -- curl --noproxy '*' -sS --max-time 10 -o /dev/null http://www.fake.test/setup-e2e/direct 2>/dev/null
expect_eq "the sandbox user, directly: connection refused (curl 7)" 7 "$?"
runuser -u "$SANDBOX" -- curl --noproxy '*' -sS --max-time 10 -o /dev/null http://169.254.169.254/setup-e2e/direct-meta 2>/dev/null
expect_eq "the sandbox user, directly to the metadata address: refused (curl 7)" 7 "$?"
code=$(runuser -u "$SANDBOX" -- curl -sS --max-time 20 --proxy http://127.0.0.1:3128 -o /dev/null -w '%{http_code}' \
        http://www.fake.test/setup-e2e/proxied 2>&1)
expect_eq "the sandbox user, through the proxy: 200" "200" "$code"
requests=$(arrived)
if grep -qxF "GET /setup-e2e/proxied" <<<"$requests"; then pass "the proxied request arrived"; else fail "the proxied request did not arrive: ${requests:0:300}"; fi
if grep -qF "/setup-e2e/direct" <<<"$requests"; then fail "a direct request arrived"; else pass "the direct requests never arrived"; fi

# The proxy's user reaches no address of this machine: a root service on every address, reached at the
# host's own 198.51.100.2, outside every listed range (fib daddr type local); root reaches it (the control).
printf 'HTTP/1.0 200 OK\r\nContent-Length: 3\r\n\r\nok\n' >"$work/reply"
: >"$work/own-hits"
socat TCP4-LISTEN:8098,bind=0.0.0.0,reuseaddr,fork SYSTEM:"echo hit >>$work/own-hits; cat $work/reply" 2>/dev/null &
own_server=$!
on_exit "kill $own_server"
for _ in $(seq 50); do ss -Htln 'sport = :8098' | grep -q . && break; sleep 0.1; done
setpriv --reuid="$PROXY_UID" --regid="$(id -g egress-proxy)" --clear-groups \
        curl --noproxy '*' -sS --max-time 10 -o /dev/null http://198.51.100.2:8098/proxy-user 2>/dev/null
expect_eq "the proxy's user, to a service on this machine's own address: refused (curl 7)" 7 "$?"
setpriv --reuid="$PROXY_UID" --regid="$(id -g egress-proxy)" --clear-groups \
        curl --noproxy '*' -sS --max-time 10 -o /dev/null http://127.0.0.1:8098/proxy-user-loopback 2>/dev/null
expect_eq "the proxy's user, to the same service on loopback: refused (curl 7)" 7 "$?"
expect_eq "neither reached the service" "" "$(cat "$work/own-hits")"
curl --noproxy '*' -sS --max-time 10 -o /dev/null http://198.51.100.2:8098/root
expect_eq "control: root reaches it" "hit" "$(cat "$work/own-hits")"
expect_contains "the rule that refused it counted" "fib daddr type local counter packets" \
        "$(nft list table inet agentic_job | grep -F 'fib daddr type local' | grep -v 'packets 0 ')"

# ---------------------------------------------------------------------------------------------------------
echo "# the walk: world-writable and setuid"

expect_eq "$WW_FILE lost o+w" "664" "$(stat -c %a "$WW_FILE")"
expect_eq "$WW_DIR (not sticky) lost o+w" "775" "$(stat -c %a "$WW_DIR")"
expect_eq "$STICKY_DIR (sticky) kept its mode" "1777" "$(stat -c %a "$STICKY_DIR")"
expect_eq "$TMP_WW kept o+w" "666" "$(stat -c %a "$TMP_WW")"
expect_eq "$VARTMP_WW kept o+w" "666" "$(stat -c %a "$VARTMP_WW")"
left=$(find / -xdev \( -path /tmp -o -path /var/tmp -o -path /proc -o -path /sys \) -prune -o -perm -0002 ! -type l \
        ! \( -type d -perm -1000 \) -printf '%m %p\n' 2>/dev/null | head -n 10)
expect_eq "no world-writable file or directory left outside /tmp and /var/tmp but sticky directories" "" "$left"
expect_eq "$SUID (no package owns it) lost setuid" "755" "$(stat -c %a "$SUID")"
expect_eq "$SGID (no package owns it) lost setgid" "755" "$(stat -c %a "$SGID")"
for p in /usr/bin/sudo /usr/bin/passwd /usr/bin/su; do
        [ -e "$p" ] || continue
        # Before the merged-/usr move in dpkg's database (bookworm), a package may list /bin/su for /usr/bin/su.
        owner=$({ dpkg-query -S "$p" || dpkg-query -S "${p#/usr}"; } 2>/dev/null | cut -d: -f1)
        if [ -u "$p" ]; then pass "$p (package ${owner:-?}) kept setuid"; else fail "$p (package ${owner:-?}) lost setuid"; fi
done

# ---------------------------------------------------------------------------------------------------------
echo "# the lock"

groups=" $(id -nG "$RUNNER") "
bad=""
for g in $ROOT_EQUIVALENT; do [[ $groups == *" $g "* ]] && bad+=" $g"; done
expect_eq "the runner is in no root-equivalent group (groups:$groups)" "" "$bad"
if out=$(runuser -u "$RUNNER" -- sudo -n true 2>&1); then fail "as the runner, sudo -n true succeeds"; else pass "as the runner, sudo -n true fails ($out)"; fi
out=$(runuser -u "$RUNNER" -- sudo -n "$HELPER" helper ping 2>&1)
expect_eq "as the runner, sudo -n $HELPER helper ping succeeds" "0" "$?${out:+: $out}"
if out=$(runuser -u "$SANDBOX" -- sudo -n true 2>&1); then fail "as the sandbox user, sudo -n true succeeds"; else pass "as the sandbox user, sudo -n true fails ($out)"; fi
if runuser -u "$SANDBOX" -- sudo -n "$HELPER" helper ping >/dev/null 2>&1; then fail "as the sandbox user, sudo helper ping succeeds"; else pass "as the sandbox user, the helper is refused too"; fi
expect_eq "root's empty password is locked (passwd -S)" "L" "$(passwd -S root | cut -d' ' -f2)"
expect_contains "setup says so" "  passwd --lock root" "$(stage_lines lock)"
expect_contains "the runner left group docker, and setup says so" "  gpasswd --delete $RUNNER docker" "$(stage_lines lock)"
expect_contains "and group sudo" "  gpasswd --delete $RUNNER sudo" "$(stage_lines lock)"
expect_contains "docker's service was stopped, and setup says so" "  systemctl stop docker.service" "$(stage_lines lock)"
expect_eq "docker.service no longer runs" "inactive" "$(systemctl is-active docker.service)"

# ---------------------------------------------------------------------------------------------------------
echo "# a second setup"

STATE_DIR_PREPARED=1
refused "a second setup" "$STATE_DIR exists: setup ran on this machine before" setup --config "$CFG"
refused "a second setup, dry run" "$STATE_DIR exists: setup ran on this machine before" setup --config "$CFG" --dry-run
