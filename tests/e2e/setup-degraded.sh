#!/usr/bin/env bash
# `agentic-job sandbox setup` where systemd does not run, inside a test host (tests/host/run): setup runs in
# a mount namespace of its own in which /run/systemd is an empty tmpfs, so it takes every path it takes on
# a machine without systemd (what systemd_running() sees). With it, the other choices the main suite
# (setup.sh) does not make: an image's own sandbox user taken with allow-existing-user (its lingering
# removed through the linger file), lock-runner = false (the runner keeps sudo), no groups, and the
# proxy started under the supervisor instead of as a service. Also the refusal of stop-services without
# systemd.
#
# usage: bash tests/host/run --release trixie|bookworm tests/e2e/setup-degraded.sh
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/integration/lib.sh
. "$here/../integration/lib.sh"

require_test_host tests/e2e/setup-degraded.sh
build=${AJH_BUILD:-/build}
CLIENT=/usr/local/bin/agentic-job
RUNNER=runner
SANDBOX=image-sandbox
LINGER=/var/lib/systemd/linger/$SANDBOX
PIDFILE=/run/agentic-job-egress-proxy.pid
work=$(mktemp -d /tmp/ajt-degraded.XXXXXX)
on_exit "rm -rf $work"

# Runs the client as root with /run/systemd hidden: no systemd, as far as setup can tell.
without_systemd() {
        unshare --mount --propagation private -- sh -c 'mount -t tmpfs -o mode=0755 none /run/systemd && exec "$@"' \
                sh "$@"
}

echo "# install and prepare: a runner with sudo, an image's sandbox user that lingers"
ninja -C "$build" install >"$work/install.log" 2>&1 || { cat "$work/install.log"; exit 1; }
useradd --create-home --shell /bin/bash "$RUNNER"
echo "$RUNNER ALL=(ALL) NOPASSWD: ALL" >/etc/sudoers.d/runner
chmod 0440 /etc/sudoers.d/runner
useradd --create-home --shell /bin/bash "$SANDBOX"
SB_UID=$(id -u "$SANDBOX")
chmod 0755 "/home/$SANDBOX"
mkdir -p "$(dirname "$LINGER")"
touch "$LINGER"
grep -q '^nameserver' /etc/resolv.conf || echo "nameserver 198.51.100.1" >>/etc/resolv.conf

config="[sandbox]
user = \"$SANDBOX\"
allow-existing-user = true
runner-user = \"$RUNNER\"
groups = []
lock-runner = false

[egress]
proxy = true
"
printf '%s' "$config" >"$work/config.toml"

echo "# refused: stop-services without systemd"
printf '%s' "${config/groups = \[\]/groups = []
stop-services = [\"cron.service\"]}" >"$work/services.toml"
without_systemd "$CLIENT" sandbox setup --config "$work/services.toml" >"$work/out" 2>"$work/err"
expect_eq "stop-services without systemd: refused with status 2" 2 "$?"
expect_contains "the reason names systemd" "systemd is not running" "$(cat "$work/err")"
expect_eq "nothing was changed: no /etc/agentic-job" "absent" "$( [ -e /etc/agentic-job ] && echo present || echo absent)"

echo "# setup without systemd"
without_systemd "$CLIENT" sandbox setup --config "$work/config.toml" >"$work/out" 2>"$work/err"
status=$?
sed 's/^/# | /' "$work/out" "$work/err"
expect_eq "setup without systemd: status 0" 0 "$status"
out=$(cat "$work/out")
expect_contains "the image's user is taken, not made" "sandbox user $SANDBOX: uid $SB_UID," "$out"
expect_lacks "no useradd" "useradd" "$out"
expect_contains "lingering: the linger file is removed" "rm $LINGER" "$out"
expect_eq "the linger file is gone" "absent" "$( [ -e "$LINGER" ] && echo present || echo absent)"
expect_contains "the proxy is started under the supervisor" "a supervisor" "$out"
expect_contains "the runner keeps sudo, and says so" "runner keeps its sudo rights (lock-runner = false)" "$out"
expect_contains "the helper's ping is proven" "proof: helper ping succeeded" "$out"
expect_lacks "no lock proof is claimed" "proof: sudo -n true refused" "$out"
expect_contains "setup ends with its time" "setup done in" "$out"
echo "# $(grep '^setup done in' "$work/out") (no systemd, $AJH_RELEASE)"

expect_eq "the image user's home is closed" 700 "$(stat -c %a "/home/$SANDBOX")"
expect_eq "the runner still has sudo" 0 "$(runuser -u "$RUNNER" -- sudo -n true >/dev/null 2>&1; echo $?)"
expect_eq "the sandbox user has none" 1 "$(runuser -u "$SANDBOX" -- sudo -n true >/dev/null 2>&1; echo $?)"
sudoers=$(cat /etc/sudoers.d/zz-agentic-job)
expect_lacks "the sudo rule takes nothing from the runner" "$RUNNER ALL=(ALL:ALL) !ALL" "$sudoers"
expect_contains "the sudo rule denies the sandbox user" "$SANDBOX ALL=(ALL:ALL) !ALL" "$sudoers"

pid=$(cut -d' ' -f1 "$PIDFILE" 2>/dev/null)
expect_eq "the supervisor's pid file names a live process" "yes" "$( [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && echo yes || echo no)"
proxy_uid=$(id -u egress-proxy)
expect_eq "the supervisor runs as the proxy user" "$proxy_uid" "$(awk '/^Uid:/ { print $2 }' "/proc/$pid/status" 2>/dev/null)"
expect_eq "no egress-proxy.service (systemd was not used)" "inactive" "$(systemctl is-active egress-proxy.service)"
squid_uids=$(for p in $(pgrep -P "$pid"); do awk '/^Uid:/ { print $2 }' "/proc/$p/status"; done | sort -u)
expect_eq "squid, the supervisor's child, runs as the proxy user" "$proxy_uid" "$squid_uids"
expect_eq "the network rules are loaded" 0 "$(nft list table inet agentic_job >/dev/null 2>&1; echo $?)"

# Network: only to the fake internet, which the harness checked routes only through its veth.
curl_as() {
        runuser -u "$1" -- curl -s -o /dev/null -w '%{http_code}' --max-time 10 "${@:2}"
}
direct=$(curl_as "$SANDBOX" http://www.fake.test/)
expect_eq "the sandbox user's direct request is refused (curl 7)" "000 7" "$direct $?"
proxied=$(curl_as "$SANDBOX" --proxy http://127.0.0.1:3128 http://www.fake.test/)
expect_eq "through the proxy it is answered" "200 0" "$proxied $?"
[ "$proxied" = 200 ] || tail -n 30 /var/log/egress-proxy/cache.log | sed 's/^/# /' 

# The proxy's user reaches no service on loopback (a fixed port), while root does; squid's own helpers
# (ephemeral ports) kept working above.
python3 -m http.server 8081 --bind 127.0.0.1 --directory "$work" >/dev/null 2>&1 &
server=$!
on_exit "kill $server"
for _ in $(seq 50); do (exec 3<>/dev/tcp/127.0.0.1/8081) 2>/dev/null && break; sleep 0.1; done
expect_eq "root reaches a loopback service" "200 0" "$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 http://127.0.0.1:8081/; echo " $?")"
expect_eq "the proxy's user does not (refused, curl 7)" "000 7" \
        "$(runuser -u egress-proxy -- curl -s -o /dev/null -w '%{http_code}' --max-time 5 http://127.0.0.1:8081/; echo " $?")"
expect_eq "nor does the sandbox user" "000 7" \
        "$(runuser -u "$SANDBOX" -- curl -s -o /dev/null -w '%{http_code}' --max-time 5 http://127.0.0.1:8081/; echo " $?")"

without_systemd "$CLIENT" egress stop >"$work/stop" 2>&1
expect_eq "egress stop finds and stops the supervisor" "egress proxy stopped" "$(cat "$work/stop")"
expect_eq "the supervisor is gone" "no" "$(kill -0 "$pid" 2>/dev/null && echo yes || echo no)"

expect_eq "a second setup is refused" 2 "$(without_systemd "$CLIENT" sandbox setup --config "$work/config.toml" >/dev/null 2>&1; echo $?)"
finish
