#!/usr/bin/env bash
# The egress proxy end to end, inside a booted test host (tests/host/run), with the host's real squid and
# the fake internet: `agentic-job egress start` (its refusals first, each before any change), what it
# made (the proxy user, its directories, the certificate authority and where it is published, the
# hardened transient unit, squid and its helpers without capabilities), then a sandbox user whose
# traffic nftables forces through the proxy. Through the helper's enter, with the environment egress_env()
# gives: a read gets through; a POST without a rule gets squid's 403 with X-Egress-Denied and never
# arrives; a git-upload-pack POST arrives; a git-receive-pack POST, a fronted request (Host header or TLS
# server name, or inside a tunnel an absolute-form URL naming another host or port), a host on the
# threat list and the metadata address through the proxy are refused; direct traffic is rejected by
# nftables (and the same request as root, unfiltered, arrives: the control). Every request is in the
# egress log with its decision, and `helper proxy-log --from N` returns exactly what was written after N.
# Then names resolving to each kind of local address (loopback on an ephemeral port, ::1, this host's
# own address, private, NAT64, IPv4-compatible, unique local, metadata) and the cache manager (by the proxy's name, its address and on
# another host) are refused by squid before it connects, logged with their reason, and never reach the
# runner's services, which root reaches (the control), each with its refusal alone in the log. Then a
# CONNECT inside a bumped tunnel followed by a POST, and ftp://, whois:// and urn: requests, refused with
# their reasons and never arriving; and CONNECTs to local and metadata addresses on several ports, refused
# before squid connects. Then every case of the shared corpus (tests/policy/cases.txt) goes through the
# running proxy, and the proxy's decision and reason must be `agentic-job policy test`'s and the corpus's.
# Then DNS rebinding: a tunnel's name that flips to 127.0.0.1 while squid waits for the TLS hello, under a
# flood of names: squid connects to the address it decided on (and with either protection taken away,
# answers kept 1 s or a cache of 1024 names, to the runner's service). Last, the proxy without systemd
# (the supervisor) and
# stop. Everything it creates is removed, also when it fails.
#
# usage: bash tests/host/run --release trixie|bookworm tests/e2e/egress.sh
#        (in the host: tests/e2e/egress.sh [BUILD_DIR], default $AJH_BUILD or /build)
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/integration/lib.sh
. "$here/../integration/lib.sh"

if [ ! -d /run/systemd/system ] || [ "$(id -u)" -ne 0 ] || ! command -v squid >/dev/null; then
        echo "Bail out! needs root on a test host with systemd and squid (bash tests/host/run ... tests/e2e/egress.sh)"
        trap - EXIT
        exit 1
fi
set -- "${1:-${AJH_BUILD:-/build}}"
# shellcheck source=tests/integration/fixture.sh
. "$here/../integration/fixture.sh"

ACL=/usr/local/libexec/agentic-job-egress-acl
SHARE=/usr/local/share/agentic-job
POLICY_DIR=/opt/egress-proxy
STATE=/var/lib/egress-proxy
PUB=/etc/egress-proxy
PIDFILE=/run/agentic-job-egress-proxy.pid
UNIT=egress-proxy.service
NFT_TABLE=ajt_egress
CASES=$src/tests/policy/cases.txt

echo "# ${AJH_RELEASE:-unknown release}: $(squid -v | head -n1), $(systemctl --version | head -n1)"
for p in "$ACL" "$SHARE/squid" "$POLICY_DIR" "$STATE" "$PUB" "$PIDFILE"; do
        if [ -e "$p" ]; then
                echo "Bail out! $p exists: not touching an installed egress proxy"
                exit 1
        fi
done
work=$(mktemp -d /tmp/ajt-egress.XXXXXX)
chmod 0755 "$work"
on_exit "rm -rf $work"
# Where curl, as the sandbox user, writes the response headers of each case.
install -m 0600 -o "$SANDBOX" /dev/null "$work/h"

now_ms() { echo $(($(date +%s%N) / 1000000)); }
log_size() { stat -c %s "$LOG_DIR/access.jsonl" 2>/dev/null || echo 0; }
# The log from byte $1 on, one "METHOD HOST PATH DECISION" line per request (path "-" for a CONNECT).
log_brief() {
        tail -c +$(($1 + 1)) "$LOG_DIR/access.jsonl" | python3 -c '
import json, sys
for line in sys.stdin:
    o = json.loads(line)
    print(o["method"], o["host"], o["path"] or "-", o["decision"])'
}
# What reached the fake internet's web servers: "METHOD PATH" per request (its DNS questions left out).
arrived() {
        curl -sS --max-time 10 --noproxy '*' http://www.fake.test/_ajh/requests |
                python3 -c 'import json, sys; [print(o["method"], o["path"]) for o in map(json.loads, sys.stdin) if "method" in o]'
}
# "METHOD HOST-HEADER PATH BODY-BYTES" per request that reached the fake internet.
arrived_full() {
        curl -sS --max-time 10 --noproxy '*' http://www.fake.test/_ajh/requests |
                python3 -c 'import json, sys; [print(o["method"], o["host"], o["path"], o["body_bytes"]) for o in map(json.loads, sys.stdin) if "method" in o]'
}
expect_arrived() {
        if arrived | grep -qxF -- "$2"; then pass "$1"; else fail "$1: '$2' did not reach the fake internet"; fi
}
expect_not_arrived() {
        if arrived | grep -qF -- "$2"; then fail "$1: '$2' reached the fake internet"; else pass "$1"; fi
}
start_proxy() { "$CLIENT" egress start; }
# Every process of the proxy user: uid, capabilities and no_new_privs as squid.md requires.
check_proxy_processes() {
        local what=$1 p n=0 bad=""
        for p in $(pgrep -u egress-proxy); do
                n=$((n + 1))
                awk '/^(Uid|Gid):/ { if ($2 != $3 || $3 != $4 || $4 != $5) bad = 1 }
                     /^(CapInh|CapPrm|CapEff|CapBnd|CapAmb):/ { if ($2 != "0000000000000000") bad = 1 }
                     /^NoNewPrivs:/ { if ($2 != 1) bad = 1 }
                     END { exit bad }' "/proc/$p/status" 2>/dev/null || bad+=" $p($(cat "/proc/$p/comm" 2>/dev/null))"
        done
        expect_eq "$what: squid and its helpers run ($n processes), each the proxy user alone, no capability, no_new_privs" "" "$bad"
        [ "$n" -ge 3 ] || fail "$what: only $n processes of the proxy user (squid, certgen, ACL helper expected)"
}

# ---------------------------------------------------------------------------------------------------------
echo "# install: the ACL helper, squid's template and error page, the test policy"

# start makes the proxy user and the log directory itself: undo the fixture's.
if [ "$created_proxy_user" = 1 ]; then userdel egress-proxy; fi
if [ "$created_log_dir" = 1 ]; then rmdir "$LOG_DIR"; fi
on_exit "rm -f $ACL"
install -D -o root -g root -m 0755 "$build/policy/squid/agentic-job-egress-acl" "$ACL"
# $SHARE itself is the fixture's (the agent profiles): only squid's part is this suite's.
on_exit "rm -rf $SHARE/squid"
install -D -o root -g root -m 0644 "$src/policy/squid/squid.conf.in" "$src/policy/squid/ERR_ACCESS_DENIED" \
        -t "$SHARE/squid"
on_exit "rm -rf $POLICY_DIR"
# Everything start makes, removed after the proxy is stopped (cleanups run in reverse).
on_exit "rm -rf $STATE $PUB $PIDFILE $LOG_DIR; userdel egress-proxy"
on_exit "id -u egress-proxy >/dev/null 2>&1 && kill_uid \$(id -u egress-proxy)"
on_exit "$CLIENT egress stop"

nothing_made() {
        local left=""
        for p in "$STATE" "$PUB" "$LOG_DIR" "$PIDFILE"; do [ -e "$p" ] && left+=" $p"; done
        id egress-proxy >/dev/null 2>&1 && left+=" the user egress-proxy"
        expect_eq "$1: nothing was made" "" "$left"
}
refused() {
        local what=$1 needle=$2
        shift 2
        run "$@"
        expect_eq "$what: refused with status 3" 3 "$status"
        expect_contains "$what: says why" "$needle" "$out"
        expect_contains "$what: says nothing was changed" "(nothing was changed)" "$out"
        nothing_made "$what"
}

echo "# start: refusals before the first change"
refused "not root" "must run as root" setpriv --reuid="$RUNNER_UID" --regid="$(id -g "$RUNNER")" --clear-groups "$CLIENT" egress start
refused "no policy installed" "$POLICY_DIR/policy/policy.toml" "$CLIENT" egress start
install -d -m 0755 "$POLICY_DIR/policy"
install -m 0644 -o "$RUNNER" "$src/tests/policy/policy.toml" "$POLICY_DIR/policy/policy.toml"
refused "a policy the runner owns" "$POLICY_DIR/policy/policy.toml" "$CLIENT" egress start
printf '[[write]]\nname = "x"\nbogus = 1\n' >"$POLICY_DIR/policy/policy.toml"
chown root:root "$POLICY_DIR/policy/policy.toml"
refused "an invalid policy" "bogus" "$CLIENT" egress start
install -m 0644 "$src/tests/policy/policy.toml" "$POLICY_DIR/policy/policy.toml"
printf 'good.example\nnot a host\n' >"$POLICY_DIR/denylist.txt"
refused "an invalid threat list" "$POLICY_DIR/denylist.txt" "$CLIENT" egress start
install -m 0644 "$src/tests/policy/threats.txt" "$POLICY_DIR/denylist.txt"
write_config <<<"${BASE_CONFIG/proxy = false/proxy = false
log-max-bytes = 5}"
refused "a log cap under 1 MiB in the configuration" "[egress] log-max-bytes" "$CLIENT" egress start
write_config <<<"$BASE_CONFIG"
socat TCP-LISTEN:3128,bind=127.0.0.1,reuseaddr,fork EXEC:/bin/true 2>/dev/null &
squatter=$!
for _ in $(seq 50); do (exec 3<>/dev/tcp/127.0.0.1/3128) 2>/dev/null && break; sleep 0.1; done
refused "the port taken" "something else listens on 127.0.0.1:3128" "$CLIENT" egress start
kill "$squatter"
wait "$squatter" 2>/dev/null

# squid resolves what /etc/hosts does not name with the fake internet's DNS (NXDOMAIN for unknown names).
cp /etc/resolv.conf "$work/resolv.orig"
on_exit "cat $work/resolv.orig >/etc/resolv.conf"
printf 'nameserver 203.0.113.53\noptions timeout:1 attempts:1\n' >/etc/resolv.conf
# Names that resolve to local addresses, one for each kind, read by squid when it starts (hosts_file).
# 198.51.100.2 is this test host's own address, outside every listed range.
cp /etc/hosts "$work/hosts.orig"
on_exit "cat $work/hosts.orig >/etc/hosts"
printf '%s\n' "127.0.0.1 loop.fake.test" "198.51.100.2 own.fake.test" "10.11.12.13 private.fake.test" \
        "::1 loop6.fake.test" "64:ff9b::7f00:1 nat64.fake.test" "::7f00:1 compat.fake.test" \
        "fd00:ec2::254 ula.fake.test" >>/etc/hosts
# The runner's services: one on loopback at a port the kernel hands out (as any program binding port 0
# gets), one on every address; each records who came.
read -r port_lo _ </proc/sys/net/ipv4/ip_local_port_range
LOOP_PORT=$((port_lo + 1234))
serve() { # serve ADDRESS PORT RECORD
        local a=$1 listen=TCP4-LISTEN
        [[ $a == *:* ]] && a="[$a]" && listen=TCP6-LISTEN
        : >"$3"
        socat "$listen:$2,bind=$a,reuseaddr,fork" \
                SYSTEM:"echo hit >>$3; cat $work/reply" 2>/dev/null &
        on_exit "kill $!"
        for _ in $(seq 50); do ss -Htln "sport = :$2" | grep -qF "$a:$2" && break; sleep 0.1; done
}
printf 'HTTP/1.0 200 OK\r\nContent-Length: 14\r\n\r\nrunner-secret\n' >"$work/reply"
serve 127.0.0.1 "$LOOP_PORT" "$work/loop-hits"
serve ::1 "$LOOP_PORT" "$work/loop6-hits"
serve 0.0.0.0 8098 "$work/own-hits"

# ---------------------------------------------------------------------------------------------------------
echo "# start"
t0=$(now_ms)
run start_proxy
t1=$(now_ms)
expect_eq "egress start succeeds" 0 "$status"
expect_eq "egress start says so" "egress proxy listening on 127.0.0.1:3128" "$out"
echo "# egress start (user, CA, certificate database, squid up and listening): $((t1 - t0)) ms"

IFS=: read -r _ _ PROXY_UID _ _ proxy_home proxy_shell < <(getent passwd egress-proxy)
if [ -n "${PROXY_UID:-}" ] && [ "$PROXY_UID" -lt 1000 ]; then pass "the proxy user is a system user ($PROXY_UID)"; else fail "the proxy user: uid '${PROXY_UID:-}'"; fi
expect_eq "the proxy user's home is the state directory" "$STATE" "${proxy_home:-}"
expect_contains "the proxy user cannot log in" "nologin" "${proxy_shell:-}"
expect_eq "state directory: 0700, the proxy user's" "700 egress-proxy egress-proxy directory" "$(stat -c '%a %U %G %F' "$STATE")"
expect_eq "the CA key: 0600, the proxy user's, in the state directory" "600 egress-proxy regular file" "$(stat -c '%a %U %F' "$STATE/ca/ca.key")"
expect_eq "log directory: 0750, the proxy user's" "750 egress-proxy directory" "$(stat -c '%a %U %F' "$LOG_DIR")"
expect_eq "the egress log exists already, the proxy user's regular file" "egress-proxy regular empty file" "$(stat -c '%U %F' "$LOG_DIR/access.jsonl")"
expect_eq "ca.pem published 0644, root's" "644 root" "$(stat -c '%a %U' "$PUB/ca.pem")"
expect_eq "ca-bundle.pem published 0644, root's" "644 root" "$(stat -c '%a %U' "$PUB/ca-bundle.pem")"
expect_eq "the published authority is the proxy's" "$(cat "$STATE/ca/ca.pem")" "$(cat "$PUB/ca.pem")"
expect_eq "the bundle ends with the proxy's authority" "$(cat "$PUB/ca.pem")" "$(tail -n "$(wc -l <"$PUB/ca.pem")" "$PUB/ca-bundle.pem")"
expect_eq "the bundle starts with the system's roots" "$(head -n 5 /etc/ssl/certs/ca-certificates.crt)" "$(head -n 5 "$PUB/ca-bundle.pem")"
expect_contains "the authority is a CA" "CA:TRUE" "$(openssl x509 -in "$PUB/ca.pem" -noout -text)"
if grep -rlq "PRIVATE KEY" "$PUB"; then fail "a private key is published in $PUB"; else pass "no private key in $PUB"; fi

props=$(systemctl show "$UNIT" -p User -p NoNewPrivileges -p CapabilityBoundingSet -p AmbientCapabilities \
        -p ProtectSystem -p ProtectHome -p PrivateTmp -p PrivateDevices -p RestrictSUIDSGID -p ReadWritePaths -p KillMode)
for want in User=egress-proxy NoNewPrivileges=yes "CapabilityBoundingSet=" "AmbientCapabilities=" \
        ProtectSystem=strict ProtectHome=yes PrivateTmp=yes PrivateDevices=yes RestrictSUIDSGID=yes \
        "ReadWritePaths=$STATE $LOG_DIR" KillMode=mixed; do
        if grep -qxF -- "$want" <<<"$props"; then pass "the unit: $want"; else fail "the unit: $want not in: $(tr '\n' ' ' <<<"$props")"; fi
done
check_proxy_processes "under systemd"
expect_eq "squid listens on 127.0.0.1:3128 only" "127.0.0.1:3128" "$(ss -Htln 'sport = :3128' | awk '{ print $4 }' | tr '\n' ' ' | sed 's/ $//')"
run "$CLIENT" egress start
expect_eq "a second start is refused (status 3)" 3 "$status"
expect_contains "a second start says the proxy runs" "already running" "$out"

# ---------------------------------------------------------------------------------------------------------
echo "# nftables: the sandbox user reaches only the proxy"
nft -f - <<EOF
table inet $NFT_TABLE {
        chain output {
                type filter hook output priority 0; policy accept;
                meta skuid $SB_UID ip daddr 169.254.169.254 counter reject
                meta skuid $SB_UID oifname "lo" ip daddr 127.0.0.1 tcp dport 3128 counter accept
                meta skuid $SB_UID counter reject
                meta skuid $PROXY_UID ip daddr 169.254.0.0/16 counter reject
        }
}
EOF
expect_eq "the nftables table is loaded" 0 "$?"
on_exit "nft delete table inet $NFT_TABLE"

write_config <<<"${BASE_CONFIG/proxy = false/proxy = true}"
sbx() { helper enter --chdir "$SB_HOME" -- "$@"; }
env_out=$(sbx env)
for v in HTTPS_PROXY=http://127.0.0.1:3128 HTTP_PROXY=http://127.0.0.1:3128 https_proxy=http://127.0.0.1:3128 \
        http_proxy=http://127.0.0.1:3128 NO_PROXY=localhost,127.0.0.1,::1 no_proxy=localhost,127.0.0.1,::1 \
        SSL_CERT_FILE=$PUB/ca-bundle.pem CURL_CA_BUNDLE=$PUB/ca-bundle.pem GIT_SSL_CAINFO=$PUB/ca-bundle.pem \
        REQUESTS_CA_BUNDLE=$PUB/ca-bundle.pem PIP_CERT=$PUB/ca-bundle.pem CARGO_HTTP_CAINFO=$PUB/ca-bundle.pem \
        NODE_EXTRA_CA_CERTS=$PUB/ca.pem NODE_USE_ENV_PROXY=1; do
        if grep -qxF -- "$v" <<<"$env_out"; then pass "enter gives $v"; else fail "enter does not give $v"; fi
done

# ---------------------------------------------------------------------------------------------------------
echo "# through the proxy, as the sandbox user, through the helper's enter"
C=(curl -sS --max-time 20 -D -)
# The helpers load the proxy's copy of the policy, made at start: a rule added to the installed file
# afterwards changes nothing, even for helpers squid starts later (SIGHUP restarts every one).
expect_contains "squid's helpers load the proxy's copies of the policy and the threat list" \
        "--policy $PUB/policy.toml --threats $PUB/denylist.txt " "$(grep '^external_acl_type' "$PUB/squid.conf")"
expect_eq "the copy is the installed policy as it was at start" "" \
        "$(cmp "$PUB/policy.toml" "$POLICY_DIR/policy/policy.toml" 2>&1)"
expect_eq "the copy is root's, 0644" "644 root" "$(stat -c '%a %U' "$PUB/policy.toml")"
cp -p "$POLICY_DIR/policy/policy.toml" "$work/policy.saved"
printf '\n[[write]]\nname = "ajt-late"\nwhy = "added after start"\nhosts = ["www.fake.test"]\nmethods = ["POST"]\npaths = ["/e2e/post"]\n' \
        >>"$POLICY_DIR/policy/policy.toml"
kill -HUP "$(cat "$STATE/squid.pid")" || fail "squid could not be told to restart its helpers"
for _ in $(seq 50); do
        out=$(sbx "${C[@]}" --data-binary x https://www.fake.test/e2e/post 2>&1) && [ -n "$out" ] && break
        sleep 0.2
done
expect_contains "a rule added to the installed file after start: the POST is still refused" \
        "X-Egress-Denied: a write to an endpoint not in the write allowlist: POST www.fake.test/e2e/post" "$out"
expect_not_arrived "and never arrived" "/e2e/post"
mv "$work/policy.saved" "$POLICY_DIR/policy/policy.toml"
off=$(log_size)
out=$(sbx curl -v -sS --max-time 20 'https://www.fake.test/e2e/read?token=secret' 2>&1)
expect_contains "a read gets through" '"path": "/e2e/read?token=secret"' "$out"
expect_contains "the certificate curl checked is the proxy's, from the CA variables" "agentic-job egress proxy CA" "$out"

out=$(sbx "${C[@]}" --data-binary x https://www.fake.test/e2e/post 2>&1)
expect_contains "a POST without a rule: squid's 403" "HTTP/1.1 403 Forbidden" "$out"
expect_contains "a POST without a rule: X-Egress-Denied says why" \
        "X-Egress-Denied: a write to an endpoint not in the write allowlist: POST www.fake.test/e2e/post" "$out"
expect_not_arrived "the refused POST never arrived" "/e2e/post"

out=$(printf '0014command=ls-refs\n0000' | sbx "${C[@]}" -H 'Content-Type: application/x-git-upload-pack-request' \
        -H 'Git-Protocol: version=2' --data-binary @- https://www.fake.test/e2e/repo.git/git-upload-pack 2>&1)
expect_contains "a git-upload-pack POST (a rule for www.fake.test) gets through" "HTTP/1.1 200 OK" "$out"
expect_arrived "the git-upload-pack POST arrived" "POST /e2e/repo.git/git-upload-pack"
sbx git ls-remote https://www.fake.test/e2e/git.git >/dev/null 2>&1
expect_arrived "git itself goes through the proxy, trusting it by GIT_SSL_CAINFO (its ref discovery arrived)" \
        "GET /e2e/git.git/info/refs?service=git-upload-pack"

out=$(sbx "${C[@]}" -H 'Content-Type: application/x-git-receive-pack-request' --data-binary x \
        https://www.fake.test/e2e/repo.git/git-receive-pack 2>&1)
expect_contains "a git-receive-pack POST: 403" "HTTP/1.1 403 Forbidden" "$out"
expect_contains "a git-receive-pack POST: X-Egress-Denied" "X-Egress-Denied: a write to an endpoint not in the write allowlist" "$out"
expect_not_arrived "the push never arrived" "git-receive-pack"

out=$(sbx "${C[@]}" -H 'Host: upload.fake.test' https://www.fake.test/e2e/front-host 2>&1)
expect_contains "a fronted request (Host header): refused" \
        "X-Egress-Denied: domain fronting: the Host header names upload.fake.test, but the connection is to www.fake.test" "$out"
expect_not_arrived "the request fronted by its Host header never arrived" "/e2e/front-host"
out=$(sbx "${C[@]}" --connect-to www.fake.test:443:other.fake.test:443 -H 'Host: other.fake.test' \
        https://www.fake.test/e2e/front-sni 2>&1)
expect_contains "a fronted request (TLS server name): refused" \
        "X-Egress-Denied: domain fronting: the TLS server name names www.fake.test, but the connection is to other.fake.test" "$out"
expect_not_arrived "the request fronted by its server name never arrived" "/e2e/front-sni"

# The audit's write past the rules: inside a tunnel to a host with a write rule, an absolute-form URL naming
# another host, with no Host header. Control first: the same in absolute form naming the tunnel's host
# arrives, so the refusal below is the URL's.
out=$(sbx "${C[@]}" --request-target https://upload.fake.test/upload/e2e-abs-same -H 'Host:' \
        --data-binary 123456789 https://upload.fake.test/upload/x 2>&1)
expect_contains "control: an absolute-form write naming the tunnel's host gets through" "HTTP/1.1 200 OK" "$out"
expect_eq "control: it arrived at upload.fake.test with its body" "POST upload.fake.test /upload/e2e-abs-same 9" \
        "$(arrived_full | grep -F /upload/e2e-abs-same)"
out=$(sbx "${C[@]}" --request-target https://other.fake.test/upload/e2e-abs-other -H 'Host:' \
        --data-binary 123456789 https://upload.fake.test/upload/x 2>&1)
expect_contains "an absolute-form URL naming another host inside the tunnel: refused" \
        "X-Egress-Denied: domain fronting: the URL names other.fake.test:443, but the tunnel is to upload.fake.test:443" "$out"
expect_not_arrived "the write naming another host never arrived" "/upload/e2e-abs-other"
out=$(sbx "${C[@]}" --request-target https://upload.fake.test:8443/upload/e2e-abs-port -H 'Host:' \
        --data-binary 123456789 https://upload.fake.test/upload/x 2>&1)
expect_contains "an absolute-form URL naming another port inside the tunnel: refused" \
        "X-Egress-Denied: domain fronting: the URL names upload.fake.test:8443, but the tunnel is to upload.fake.test:443" "$out"
expect_not_arrived "the write naming another port never arrived" "/upload/e2e-abs-port"

out=$(sbx "${C[@]}" https://ww.fake.test/e2e/threat 2>&1)
expect_contains "a refused CONNECT (threat list): 403 inside the tunnel, with the reason" \
        "X-Egress-Denied: a host on the threat list: ww.fake.test" "$out"
out=$(sbx "${C[@]}" http://169.254.169.254/e2e/meta 2>&1)
expect_contains "the metadata address through the proxy: refused" "X-Egress-Denied: a local destination: 169.254.169.254" "$out"
expect_not_arrived "the metadata request never arrived" "/e2e/meta"

echo "# direct traffic: rejected by nftables; the same as root (not filtered) arrives"
sbx curl --noproxy '*' -sS --max-time 10 -o /dev/null https://www.fake.test/e2e/direct 2>/dev/null
expect_eq "direct HTTPS from the sandbox user: connection refused (curl 7)" 7 "$?"
sbx curl --noproxy '*' -sS --max-time 10 -o /dev/null http://169.254.169.254/e2e/direct-meta 2>/dev/null
expect_eq "direct to the metadata address: refused (curl 7)" 7 "$?"
sbx curl --noproxy '*' -sS --max-time 10 -o /dev/null http://127.0.0.1:80/ 2>/dev/null
expect_eq "loopback other than the proxy port: refused (curl 7)" 7 "$?"
expect_not_arrived "the direct requests never arrived" "/e2e/direct"
curl --noproxy '*' -sS --max-time 10 -o /dev/null https://www.fake.test/e2e/direct-control
expect_arrived "control: the same request as root arrives" "GET /e2e/direct-control"
counters=$(nft list table inet "$NFT_TABLE" | grep -c 'counter packets [1-9]')
[ "$counters" -ge 3 ] && pass "the nftables rules counted what they saw ($counters rules)" || fail "nftables counters: $counters rules matched"

echo "# the egress log"
expected="CONNECT www.fake.test - allow
GET www.fake.test /e2e/read allow
CONNECT www.fake.test - allow
POST www.fake.test /e2e/post deny
CONNECT www.fake.test - allow
POST www.fake.test /e2e/repo.git/git-upload-pack allow
CONNECT www.fake.test - allow
GET www.fake.test /e2e/git.git/info/refs allow
CONNECT www.fake.test - allow
POST www.fake.test /e2e/repo.git/git-receive-pack deny
CONNECT www.fake.test - allow
GET www.fake.test /e2e/front-host deny
CONNECT other.fake.test - allow
GET other.fake.test /e2e/front-sni deny
CONNECT upload.fake.test - allow
POST upload.fake.test /upload/e2e-abs-same allow
CONNECT upload.fake.test - allow
POST upload.fake.test /upload/e2e-abs-other deny
CONNECT upload.fake.test - allow
POST upload.fake.test /upload/e2e-abs-port deny
CONNECT ww.fake.test - deny
GET 169.254.169.254 /e2e/meta deny"
expect_eq "every request, in order, with its decision (paths without query strings)" "$expected" "$(log_brief "$off")"
slice=$(tail -c +$((off + 1)) "$LOG_DIR/access.jsonl")
case $slice in *secret* | *token* | *Content-Type* | *git-upload-pack-request*) fail "the log holds a query string or a header" ;; *) pass "no query string or header in the log" ;; esac
expect_eq "each log line has exactly method, host, path, decision, reason" "method host path decision reason" \
        "$(head -n1 <<<"$slice" | python3 -c 'import json, sys; print(" ".join(json.loads(sys.stdin.readline())))')"

run helper proxy-log --from "$off"
expect_eq "proxy-log --from N: status 0" 0 "$status"
expect_eq "proxy-log --from N: exactly the lines written after N" "$slice" "$out"
expect_eq "proxy-log --from N: as many lines as requests" "$(wc -l <<<"$expected")" "$(wc -l <<<"$out")"
run helper proxy-log --from 0
expect_eq "proxy-log --from 0: the whole log" "$(cat "$LOG_DIR/access.jsonl")" "$out"
run helper proxy-log --from "$(log_size)"
expect_eq "proxy-log from the end: nothing" "0:" "$status:$out"
run helper proxy-log --from "$(($(log_size) + 1))"
expect_eq "proxy-log past the end: status 3 (truncated)" 3 "$status"

# ---------------------------------------------------------------------------------------------------------
echo "# local destinations by the address a name resolves to, and the cache manager"
# "METHOD HOST DECISION REASON" per log line from byte $1 on.
log_reasons() {
        tail -c +$(($1 + 1)) "$LOG_DIR/access.jsonl" | python3 -c '
import json, sys
for line in sys.stdin:
    o = json.loads(line)
    print(o["method"], o["host"], o["decision"], o["reason"])'
}
local_refused() { # local_refused WHAT URL NAME RECORD
        local what=$1 url=$2 name=$3 record=$4 before out
        before=$(log_size)
        out=$(sbx "${C[@]}" "$url" 2>&1)
        expect_contains "$what: 403 with the reason" \
                "X-Egress-Denied: a local destination: $name resolves to an address of this machine or its networks" "$out"
        expect_contains "$what: the log line names $name and why" \
                "deny a local destination: $name resolves to an address of this machine or its networks" \
                "$(log_reasons "$before" | grep -F " $name deny ")"
        [ -z "$record" ] || expect_eq "$what: never arrived" "" "$(cat "$record")"
        # squid's local_dst refuses it after the policy's first look, which logs no allow: one line.
        expect_eq "$what: one decision in the log, the refusal" "deny" \
                "$(log_reasons "$before" | awk '{ print $3 }' | tr '\n' ' ' | sed 's/ $//')"
}
local_refused "a name resolving to 127.0.0.1, a loopback service at an ephemeral port" \
        "http://loop.fake.test:$LOOP_PORT/secret" loop.fake.test "$work/loop-hits"
local_refused "a name resolving to ::1" "http://loop6.fake.test:$LOOP_PORT/secret" loop6.fake.test "$work/loop6-hits"
local_refused "a name resolving to this machine's own address (outside every listed range)" \
        "http://own.fake.test:8098/secret" own.fake.test "$work/own-hits"
local_refused "this machine's own address, written" "http://198.51.100.2:8098/secret" 198.51.100.2 "$work/own-hits"
local_refused "a name resolving to a private address" "http://private.fake.test/x" private.fake.test ""
local_refused "a name resolving to a NAT64 form of 127.0.0.1" "http://nat64.fake.test:$LOOP_PORT/x" nat64.fake.test ""
local_refused "a name resolving to an IPv4-compatible form of 127.0.0.1" "http://compat.fake.test:$LOOP_PORT/x" \
        compat.fake.test ""
local_refused "a name resolving to a unique local address (the IPv6 metadata service's)" "http://ula.fake.test/x" \
        ula.fake.test ""
local_refused "a name resolving to the metadata address" "http://metadata.fake.test/e2e/meta-name" \
        metadata.fake.test ""
expect_not_arrived "the metadata request by name never arrived" "/e2e/meta-name"
before=$(log_size)
out=$(sbx "${C[@]}" "https://loop.fake.test/e2e/loop-tunnel" 2>&1)
expect_contains "a tunnel to a name resolving to 127.0.0.1: refused inside the tunnel, with the reason" \
        "X-Egress-Denied: a local destination: loop.fake.test resolves to" "$out"
expect_contains "the tunnel's refusal is logged" "CONNECT loop.fake.test deny a local destination: loop.fake.test resolves to" \
        "$(log_reasons "$before")"
# Controls: root reaches each service directly, so the refusals above were the proxy's.
curl -sS --max-time 10 -o /dev/null "http://127.0.0.1:$LOOP_PORT/control"
curl -sS --max-time 10 -o /dev/null "http://[::1]:$LOOP_PORT/control"
curl -sS --max-time 10 -o /dev/null "http://198.51.100.2:8098/control"
expect_eq "control: root reaches the loopback and own-address services" "hit hit hit" \
        "$(cat "$work/loop-hits" "$work/loop6-hits" "$work/own-hits" | tr '\n' ' ' | sed 's/ $//')"

for page in info active_requests client_list ipcache fqdncache filedescriptors objects; do
        before=$(log_size)
        out=$(sbx "${C[@]}" "http://egress-proxy:3128/squid-internal-mgr/$page" 2>&1)
        expect_contains "the cache manager by the proxy's name ($page): refused" \
                "X-Egress-Denied: a local destination: egress-proxy" "$out"
        expect_contains "the cache manager by name ($page): logged" "GET egress-proxy deny a local destination: egress-proxy" \
                "$(log_reasons "$before")"
done
# squid takes a request to its own address and port for its own, and names it by its own name.
out=$(sbx "${C[@]}" "http://127.0.0.1:3128/squid-internal-mgr/info" 2>&1)
expect_contains "the cache manager by address: refused (squid names it egress-proxy)" \
        "X-Egress-Denied: a local destination: egress-proxy" "$out"
before=$(log_size)
out=$(sbx "${C[@]}" "http://www.fake.test/squid-internal-mgr/info" 2>&1)
expect_contains "a cache manager URL on another host: refused by squid's manager ACL, with the reason" \
        "X-Egress-Denied: the proxy's cache manager (/squid-internal-mgr/) is not reached through the proxy" "$out"
expect_contains "and logged" "GET www.fake.test deny the proxy's cache manager" "$(log_reasons "$before")"
case $out in *"Squid Object Cache"* | *"Cache Manager"* | *"Connection information"* | *"UP Time"*) fail "the cache manager answered" ;; *) pass "no cache manager page reached the sandbox" ;; esac

# ---------------------------------------------------------------------------------------------------------
echo "# a CONNECT inside a bumped tunnel, and schemes other than http and https"
# The audit's relay: inside a bumped tunnel to a host with read rights only, the client sends CONNECT again;
# decided as a fresh tunnel, squid relays every later byte to the origin unread, so the POST after it
# arrived. Python as the sandbox user: the outer CONNECT, TLS with the proxy (its certificate unchecked:
# the answers are what is tested), the inner CONNECT, then the POST; prints every answer's head.
inner_connect='
import socket, ssl, sys
host, path = sys.argv[1], sys.argv[2]
def head(sock):
    buf = b""
    try:
        while b"\r\n\r\n" not in buf:
            c = sock.recv(4096)
            if not c:
                break
            buf += c
    except (socket.timeout, OSError) as e:
        print("(read: %s)" % e)
    print(buf.split(b"\r\n\r\n")[0].decode("latin-1"))
    return buf
s = socket.create_connection(("127.0.0.1", 3128), timeout=5)
s.sendall(b"CONNECT %s:443 HTTP/1.1\r\nHost: %s:443\r\n\r\n" % (host.encode(), host.encode()))
head(s)
ctx = ssl.create_default_context()
ctx.check_hostname = False
ctx.verify_mode = ssl.CERT_NONE
t = ctx.wrap_socket(s, server_hostname=host)
t.sendall(b"CONNECT %s:443 HTTP/1.1\r\nHost: %s:443\r\n\r\n" % (host.encode(), host.encode()))
head(t)
try:
    t.sendall(b"POST %s HTTP/1.1\r\nHost: %s\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello"
              % (path.encode(), host.encode()))
    head(t)
except OSError as e:
    print("(POST: %s)" % e)
'
before=$(log_size)
out=$(sbx python3 -c "$inner_connect" www.fake.test /e2e/inner-post 2>&1)
expect_contains "a CONNECT inside a bumped tunnel: the outer CONNECT is answered" "HTTP/1.1 200 Connection established" "$out"
expect_contains "a CONNECT inside a bumped tunnel: refused with 403" "HTTP/1.1 403 Forbidden" "$out"
expect_contains "a CONNECT inside a bumped tunnel: X-Egress-Denied says why" \
        "X-Egress-Denied: a CONNECT inside a tunnel (to www.fake.test): the proxy would relay its bytes to the origin unread" "$out"
expect_not_arrived "the POST after the inner CONNECT (a host with read rights only) never arrived" "/e2e/inner-post"
reasons=$(log_reasons "$before")
expect_contains "the inner CONNECT is logged, refused, with its reason" \
        "CONNECT www.fake.test deny a CONNECT inside a tunnel (to www.fake.test)" "$reasons"
case $reasons in *"CONNECT www.fake.test allow"*"CONNECT www.fake.test allow"*) fail "a second CONNECT was allowed: $reasons" ;; *) pass "one CONNECT allowed, the outer one" ;; esac
# Control: the same POST inside the tunnel, without the inner CONNECT, is refused by the policy for itself.
out=$(sbx "${C[@]}" --data-binary hello https://www.fake.test/e2e/inner-post 2>&1)
expect_contains "control: the same POST without the inner CONNECT is refused by the write rules" \
        "X-Egress-Denied: a write to an endpoint not in the write allowlist: POST www.fake.test/e2e/inner-post" "$out"

# Another scheme makes squid speak another protocol: ftp's path and user name become FTP commands (CR LF
# decoded), whois sends a line to any port, urn makes squid fetch a URL of its own.
scheme_refused() { # scheme_refused WHAT SCHEME OUTPUT
        expect_contains "$1: 403" "HTTP/1.1 403 Forbidden" "$3"
        expect_contains "$1: X-Egress-Denied says why" "X-Egress-Denied: the scheme $2: only http and https are proxied" "$3"
}
before=$(log_size)
out=$(sbx "${C[@]}" -x http://127.0.0.1:3128 "ftp://www.fake.test/e2e/%0D%0ADELE%20x" 2>&1)
scheme_refused "an ftp:// GET through the proxy" ftp "$out"
expect_contains "the ftp:// GET is logged, refused, with its reason" \
        "GET www.fake.test deny the scheme ftp: only http and https are proxied" "$(log_reasons "$before")"
raw_request='
import socket, sys
s = socket.create_connection(("127.0.0.1", 3128), timeout=10)
s.sendall(sys.argv[1].encode().replace(b"|", b"\r\n"))
buf = b""
try:
    while b"\r\n\r\n" not in buf:
        c = s.recv(4096)
        if not c:
            break
        buf += c
except OSError as e:
    print("(read: %s)" % e)
print(buf.split(b"\r\n\r\n")[0].decode("latin-1"))
'
for name in whois urn; do
        before=$(log_size)
        case $name in
        whois) target="whois://www.fake.test:80/e2e-whois-line" ;;
        urn) target="urn:x-ajt:e2e" ;;
        esac
        out=$(sbx python3 -c "$raw_request" "GET $target HTTP/1.1|Host: www.fake.test|Connection: close||" 2>&1)
        scheme_refused "a $name: request through the proxy" "$name" "$out"
        expect_contains "the $name: request is logged, refused" "deny the scheme $name: only http and https" \
                "$(log_reasons "$before")"
        expect_eq "the $name: request has one decision in the log" 1 "$(log_reasons "$before" | wc -l)"
done

echo "# the key broker's placeholder, anywhere but the broker"
# The placeholder (ajb- and 48 hexadecimal digits) is worth nothing but to run's key broker, which never
# sends it on: in x-api-key, in Authorization or in the URL, to a host the policy lets anyone read, the
# proxy refuses it (403, its reason logged) and nothing arrives; one digit short, the same request passes.
ph="ajb-$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n')"
for way in key auth url; do
        before=$(log_size)
        case $way in
        key) out=$(sbx "${C[@]}" -H "x-api-key: $ph" "https://www.fake.test/e2e/placeholder-$way" 2>&1) ;;
        auth) out=$(sbx "${C[@]}" -H "Authorization: Bearer $ph" "https://www.fake.test/e2e/placeholder-$way" 2>&1) ;;
        url) out=$(sbx "${C[@]}" "https://www.fake.test/e2e/placeholder-$way?key=$ph" 2>&1) ;;
        esac
        expect_contains "the placeholder in $way: 403" "HTTP/1.1 403 Forbidden" "$out"
        expect_contains "the placeholder in $way: X-Egress-Denied says why" \
                "X-Egress-Denied: the key broker's placeholder, to www.fake.test: it is worth nothing but to the broker" "$out"
        expect_contains "the placeholder in $way: logged, refused" \
                "GET www.fake.test deny the key broker's placeholder, to www.fake.test" "$(log_reasons "$before")"
        expect_not_arrived "the placeholder in $way: nothing arrived" "GET /e2e/placeholder-$way"
done
short=${ph%?}
out=$(sbx "${C[@]}" -H "x-api-key: $short" -H "Authorization: Bearer $short" "https://www.fake.test/e2e/placeholder-short?key=$short" 2>&1)
expect_contains "control: one digit short, the same request is answered by the host" "HTTP/1.1 200" "$out"
expect_arrived "control: ... and arrived" "GET /e2e/placeholder-short?key=$short"

echo "# a CONNECT to a local or metadata address, on several ports"
# A CONNECT to a local or metadata address, on any port: refused by the policy before squid connects
# anywhere. squid answers a refused CONNECT "200 Connection established" all the same (it ends TLS to
# deliver its 403 inside the tunnel, as it does for every refused CONNECT on a bumping port: only a 407
# is exempt), so what the client reads next is the 403 with X-Egress-Denied; nothing reaches the target
# (the metadata stand-in records every request on 169.254.169.254:443 and :80).
for target in 169.254.169.254:81 169.254.169.254:443 169.254.169.254:80 169.254.169.254:22 127.0.0.1:3128 \
        127.0.0.1:8098 10.0.0.1:443 "[::1]:443" "[fd00:ec2::254]:80"; do
        before=$(log_size)
        path=/e2e/connect-local-$(tr -c 'a-z0-9' - <<<"$target" | sed 's/-*$//')
        out=$(sbx "${C[@]}" -k -x http://127.0.0.1:3128 --noproxy "" "https://$target$path" 2>&1)
        expect_contains "a CONNECT to $target: refused, 403 inside the tunnel" "HTTP/1.1 403 Forbidden" "$out"
        expect_contains "a CONNECT to $target: X-Egress-Denied says why" "X-Egress-Denied: a local destination: " "$out"
        case $out in *"HTTP/1.1 200 OK"*) fail "a CONNECT to $target: an origin answered" ;; *) pass "a CONNECT to $target: no origin answered" ;; esac
        expect_eq "a CONNECT to $target: one decision in the log, the refusal" "CONNECT deny" \
                "$(log_reasons "$before" | awk '{ print $1, $3 }' | tr '\n' ' ' | sed 's/ $//')"
        expect_not_arrived "a CONNECT to $target: nothing arrived" "$path"
done

# ---------------------------------------------------------------------------------------------------------
echo "# the shared corpus: the running proxy and agentic-job policy test decide alike"
mapfile -t SB_ENV < <(grep -E '^(HTTPS?_PROXY|https?_proxy|NO_PROXY|no_proxy|SSL_CERT_FILE|CURL_CA_BUNDLE)=' <<<"$env_out")
as_sb() {
        setpriv --reuid="$SB_UID" --regid="$SB_GID" --clear-groups --inh-caps=-all \
                env -i HOME="$SB_HOME" PATH=/usr/bin:/bin "${SB_ENV[@]}" "$@"
}
n_cases=0
n_agree=0
n_squid=0
n_mapped=0
t0=$(now_ms)
while read -r verdict method url flags; do
        case $verdict in '' | '#'*) continue ;; esac
        n_cases=$((n_cases + 1))
        read -ra fl <<<"$flags"
        # Through the proxy always, loopback too (the corpus is about the proxy's decisions).
        args=(-sS -o /dev/null -D "$work/h" --max-time 10 --path-as-is -x http://127.0.0.1:3128 --noproxy '')
        pt=("$method" "$url")
        host_h="" sni="" authority=""
        for f in "${fl[@]}"; do
                case $f in
                body) args+=(--data-binary x) && pt+=(--body) ;;
                upgrade) args+=(-H 'Upgrade: websocket' -H 'Connection: Upgrade') && pt+=(--upgrade) ;;
                host=*) host_h=${f#host=} && pt+=(--host "$host_h") ;;
                sni=*) sni=${f#sni=} && pt+=(--sni "$sni") ;;
                authority=*) authority=${f#authority=} && pt+=(--authority "$authority") ;;
                rule=*) ;;
                esac
        done
        target=$url
        if [ -n "$sni" ]; then
                # Connect to the URL's host, with the server name and the URL naming sni=.
                rest=${url#https://}
                real=${rest%%/*}
                target="https://$sni/${rest#*/}"
                args+=(--connect-to "$sni:443:$real:443")
                [ -n "$host_h" ] || host_h=$real
        fi
        if [ -n "$authority" ]; then
                # Inside the tunnel, the request line names the authority in absolute form; no Host header
                # unless host= gives one.
                rest=${url#https://}
                args+=(--request-target "https://$authority/${rest#*/}")
                [ -n "$host_h" ] || args+=(-H 'Host:')
        fi
        [ -n "$host_h" ] && args+=(-H "Host: $host_h")
        case $method in
        HEAD) [[ " ${fl[*]} " == *" body "* ]] && args+=(-X HEAD --max-time 3) || args+=(-I) ;;
        GET) [[ " ${fl[*]} " == *" body "* ]] && args+=(-X GET) ;;
        *) args+=(-X "$method") ;;
        esac
        before=$(log_size)
        : >"$work/h"
        as_sb curl "${args[@]}" "$target" </dev/null 2>/dev/null
        proxy=$(tail -c +$((before + 1)) "$LOG_DIR/access.jsonl" | tail -n 1 |
                python3 -c 'import json, sys; o = json.loads(sys.stdin.read() or "null") or {}; print(o.get("decision", "none"), o.get("reason", "(no log line)"))')
        tested=$("$CLIENT" policy test "${pt[@]}")
        header=$(tr -d '\r' <"$work/h" 2>/dev/null | sed -n 's/^X-Egress-Denied: //p' | tail -n 1)
        code=$(tr -d '\r' <"$work/h" 2>/dev/null | awk '/^HTTP\// { c = $2 } END { print c }')
        note=""
        problem=""
        # Known ways squid itself changes what the helper is asked, each checked for what it is.
        if [ "$proxy" != "$tested" ] && [ "$verdict" = deny ] && [ "${tested%% *}" = deny ] &&
                [ "$proxy" = "allow tunnel" ] && [ "$code" = 503 ] && [[ $header == "upstream TLS verification failed: "* ]]; then
                # A Host header the origin's certificate does not name: squid refuses the first request
                # in the tunnel itself (its delayed TLS error) before asking the helper.
                note=" (refused by squid before the policy: $header)"
                n_squid=$((n_squid + 1))
        elif [ "$proxy" != "$tested" ] && [ "$proxy" = "$(sed -E 's/\[::ffff:([0-9.]+)\]/\1/g' <<<"$tested")" ]; then
                note=" (squid names the IPv4-mapped address as IPv4)"
                n_mapped=$((n_mapped + 1))
        else
                [ "$proxy" = "$tested" ] || problem+=" proxy '$proxy' vs policy test '$tested';"
                [ "${proxy%% *}" = "$verdict" ] || problem+=" corpus says $verdict;"
                # A response arrived: the proxy's 403 says why; none arrives when the client cannot
                # check squid's certificate for an address (squid names none in it): curl fails first.
                if [ "$verdict" = deny ] && [ -n "$code" ] && [ "$code" != 200 ] && [ "$header" != "${proxy#* }" ]; then
                        problem+=" X-Egress-Denied '$header' (status $code);"
                fi
                [ "$verdict" = allow ] && [ -n "$header" ] && problem+=" X-Egress-Denied on an allowed request: '$header';"
        fi
        if [ -z "$problem" ]; then
                n_agree=$((n_agree + 1))
                pass "case $n_cases: $verdict $method $url $flags (${proxy#* })$note"
        else
                fail "case $n_cases: $verdict $method $url $flags:$problem"
        fi
done <"$CASES"
t1=$(now_ms)
expect_eq "every case of the corpus agrees ($n_cases cases, $((t1 - t0)) ms)" "$n_cases" "$n_agree"
echo "# of them, refused by squid before the policy: $n_squid; with the IPv4-mapped address named as IPv4: $n_mapped"
[ "$n_cases" -ge 60 ] && pass "the corpus has $n_cases cases" || fail "the corpus has only $n_cases cases"

# ---------------------------------------------------------------------------------------------------------
echo "# the proxy held open: 3000 connections with half-sent requests, from the sandbox"
squid_fds() { ls "/proc/$(cat "$STATE/squid.pid")/fd" | wc -l; }
fds0=$(squid_fds)
rm -f "$SB_HOME/held"
sbx bash -c 'trap "" PIPE; ulimit -n 4096 || exit 3; n=0
        for i in $(seq 3000); do
                exec {fd}<>/dev/tcp/127.0.0.1/3128 || break
                printf "GET http://www.fake.test/e2e/held HTTP/1.1\r\nHost: www.fake.test\r\n" >&$fd
                n=$((n + 1))
        done
        echo "$n" >held; exec sleep 600' </dev/null >/dev/null 2>&1 &
for _ in $(seq 600); do [ -s "$SB_HOME/held" ] && break; sleep 0.1; done
sleep 1
fds1=$(squid_fds)
echo "# the sandbox opened $(cat "$SB_HOME/held" 2>/dev/null) connections; squid has $fds1 descriptors (before: $fds0)"
expect_eq "the holder opened its 3000 connections" 3000 "$(cat "$SB_HOME/held" 2>/dev/null)"
if [ "$fds1" -le $((fds0 + 2048 + 64)) ]; then
        pass "squid holds at most 2048 of them ($((fds1 - fds0)) descriptors more)"
else
        fail "squid holds $((fds1 - fds0)) descriptors more than before, past 2048"
fi
t0=$(now_ms)
for _ in $(seq 45); do
        out=$(sbx curl -sS --max-time 5 'https://www.fake.test/e2e/read?after=held' 2>&1) && break
        sleep 2
done
expect_contains "within 90 s squid closed the half-sent requests: a request gets through again ($(($(now_ms) - t0)) ms)" \
        '"path": "/e2e/read?after=held"' "$out"
expect_eq "... while the holder still runs" 1 "$(pgrep -u "$SB_UID" -fxc 'sleep 600')"
run helper kill-user
expect_eq "the holder ended" "0:0" "$status:$(pgrep -u "$SB_UID" -fxc 'sleep 600')"
rm -f "$SB_HOME/held"

# ---------------------------------------------------------------------------------------------------------
echo "# the egress log's cap: [egress] log-max-bytes = 1 MiB, the log filled to 100 bytes under it"
write_config <<<"${BASE_CONFIG/proxy = false/proxy = true
log-max-bytes = 1048576}"
run "$CLIENT" egress stop
run start_proxy
expect_eq "egress start with log-max-bytes = 1048576" "0:egress proxy listening on 127.0.0.1:3128" "$status:$out"
expect_contains "squid's helper is told the cap" "--log $LOG_DIR/access.jsonl --log-max 1048576" "$(grep '^external_acl_type' "$PUB/squid.conf")"
: >"$LOG_DIR/access.jsonl"
head -c $((1048576 - 100)) /dev/zero | tr '\0' 'x' >>"$LOG_DIR/access.jsonl"
out=$(sbx "${C[@]}" 'https://www.fake.test/e2e/read?after=full' 2>&1)
expect_contains "a read with the log full: refused" "X-Egress-Denied: the egress log could not be written" "$out"
expect_not_arrived "... and it never arrived" "/e2e/read?after=full"
# The CONNECT's short line may still fit in the 100 bytes; the request's own does not.
size=$(log_size)
if [ "$size" -le 1048576 ]; then pass "the log did not pass the cap ($size bytes)"; else fail "the log passed the cap: $size bytes"; fi
expect_lacks "... and the refused read is not in it" '"path":"/e2e/read"' "$(tail -c +1048477 "$LOG_DIR/access.jsonl")"
expect_contains "the helper said why, once, in squid's cache.log" \
        "has reached [egress] log-max-bytes (1048576 bytes): every request that would be logged is refused" \
        "$(cat "$LOG_DIR/cache.log")"
: >"$LOG_DIR/access.jsonl"
out=$(sbx curl -sS --max-time 20 'https://www.fake.test/e2e/read?after=emptied' 2>&1)
expect_contains "the log emptied: a read gets through again" '"path": "/e2e/read?after=emptied"' "$out"
expect_contains "... and is logged (the control of the line looked for above)" '"path":"/e2e/read"' "$(cat "$LOG_DIR/access.jsonl")"
write_config <<<"${BASE_CONFIG/proxy = false/proxy = true}"

# ---------------------------------------------------------------------------------------------------------
echo "# [egress] reads = listed: a read, and a tunnel, only to a host a rule names"
# The attack it bounds: with reads = any, a GET to any host carries data in its URL (the control: such a
# read of other.fake.test arrives).
out=$(sbx "${C[@]}" https://other.fake.test/e2e/any-read 2>&1)
expect_contains "control, reads = any: a read of a host no rule names gets through" "HTTP/1.1 200 OK" "$out"
expect_arrived "... and arrived" "GET /e2e/any-read"
cp -p "$POLICY_DIR/policy/policy.toml" "$work/policy.saved"
printf '\n[[read]]\nname = "ajt-www"\nwhy = "the one host reads may reach"\nhosts = ["www.fake.test"]\n' \
        >>"$POLICY_DIR/policy/policy.toml"
write_config <<<"${BASE_CONFIG/proxy = false/proxy = true
reads = \"listed\"}"
run "$CLIENT" egress stop
run start_proxy
expect_eq "egress start with reads = listed" "0:egress proxy listening on 127.0.0.1:3128" "$status:$out"
expect_contains "squid's helper is told" "--reads listed" "$(grep '^external_acl_type' "$PUB/squid.conf")"
out=$(sbx "${C[@]}" https://www.fake.test/e2e/listed-read 2>&1)
expect_contains "a read of the listed host gets through" "HTTP/1.1 200 OK" "$out"
expect_arrived "... and arrived" "GET /e2e/listed-read"
# registry.npmjs.org is in the fake internet and no rule of the test policy names it (other.fake.test has
# a write rule: its tunnel opens, as upload.fake.test's below).
out=$(sbx "${C[@]}" https://registry.npmjs.org/e2e/unlisted-tls 2>&1)
expect_contains "an https read of a host no rule names: refused" "X-Egress-Denied: " "$out"
expect_contains "... at its tunnel" \
        '{"method":"CONNECT","host":"registry.npmjs.org","path":null,"decision":"deny","reason":"a tunnel to a host no rule names: registry.npmjs.org ([egress] reads = listed)"}' \
        "$(cat "$LOG_DIR/access.jsonl")"
expect_not_arrived "... and it never arrived" "/e2e/unlisted-tls"
out=$(sbx "${C[@]}" http://other.fake.test/e2e/unlisted-plain 2>&1)
expect_contains "a plain http read of a host no rule names: refused" \
        "X-Egress-Denied: a read of a host no [[read]] rule names: other.fake.test ([egress] reads = listed)" "$out"
expect_not_arrived "... and it never arrived" "/e2e/unlisted-plain"
# upload.fake.test has write rules and no read rule: its tunnel is open for the writes, not for reads.
out=$(sbx "${C[@]}" --data-binary x https://upload.fake.test/upload/e2e-listed-write 2>&1)
expect_contains "a write its rule allows, to a host no read rule names: gets through" "HTTP/1.1 200 OK" "$out"
expect_arrived "... and arrived" "POST /upload/e2e-listed-write"
out=$(sbx "${C[@]}" https://upload.fake.test/e2e/listed-write-host-read 2>&1)
expect_contains "a read of that write host: refused" \
        "X-Egress-Denied: a read of a host no [[read]] rule names: upload.fake.test ([egress] reads = listed)" "$out"
expect_not_arrived "... and it never arrived" "/e2e/listed-write-host-read"
expect_contains "the egress log has the refusal, one line" \
        '"host":"other.fake.test","path":"/e2e/unlisted-plain","decision":"deny"' "$(cat "$LOG_DIR/access.jsonl")"
# policy test takes the mode from the configuration, and says which rule admitted a read.
expect_eq "policy test, the mode from the configuration: the listed host" "allow ajt-www" \
        "$(runuser -u "$RUNNER" -- "$CLIENT" policy test GET https://www.fake.test/x 2>&1)"
expect_eq "policy test: a host no rule names, refused as the proxy refused it" \
        "deny a tunnel to a host no rule names: registry.npmjs.org ([egress] reads = listed)" \
        "$(runuser -u "$RUNNER" -- "$CLIENT" policy test GET https://registry.npmjs.org/x 2>&1)"
expect_eq "policy test: a host only a write rule names, its read refused as the proxy refused it" \
        "deny a read of a host no [[read]] rule names: other.fake.test ([egress] reads = listed)" \
        "$(runuser -u "$RUNNER" -- "$CLIENT" policy test GET https://other.fake.test/x 2>&1)"
expect_eq "policy test --reads any overrides it" "allow read" \
        "$(runuser -u "$RUNNER" -- "$CLIENT" policy test GET https://other.fake.test/x --reads any 2>&1)"
write_config <<<"${BASE_CONFIG/proxy = false/proxy = true
reads = \"some\"}"
run "$CLIENT" egress stop
run "$CLIENT" egress start
expect_eq "reads neither any nor listed: refused with status 3" 3 "$status"
expect_contains "... naming the key and the choices" '"some" is not one of "any", "listed"' "$out"
expect_contains "... nothing changed" "(nothing was changed)" "$out"
expect_eq "... and no squid runs" "" "$(pgrep -u egress-proxy -x squid)"
mv "$work/policy.saved" "$POLICY_DIR/policy/policy.toml"
write_config <<<"${BASE_CONFIG/proxy = false/proxy = true}"
run start_proxy
expect_eq "egress start with reads = any again" "0:egress proxy listening on 127.0.0.1:3128" "$status:$out"
expect_contains "... its helper told so" "--reads any" "$(grep '^external_acl_type' "$PUB/squid.conf")"

# ---------------------------------------------------------------------------------------------------------
echo "# DNS rebinding: a tunnel's name that flips to a local address while squid waits for the TLS hello"
# The fake DNS answers a name below rebind.fake.test with www.fake.test's address for 20 s from its first
# question, then with 127.0.0.1, always with a TTL of 0. The sandbox sends the CONNECT (decided on the
# public address), keeps the tunnel silent 25 s (squid waits 30 s for the hello), meanwhile making squid
# resolve FLOOD distinct names (the push that would empty a small cache), then sends the hello and a GET.
# Unless squid connects to the address it decided on, it connects to 127.0.0.1:443, where a service of
# the runner records who came (the proxy user may reach loopback here: this suite's nftables leaves it).
rebind='
import socket, ssl, sys, threading, time
host, path, flood = sys.argv[1], sys.argv[2], int(sys.argv[3])
def head(sock):
    buf = b""
    try:
        while b"\r\n\r\n" not in buf:
            c = sock.recv(4096)
            if not c:
                break
            buf += c
    except OSError as e:
        print("(read: %s)" % e)
    return buf.split(b"\r\n\r\n")[0].decode("latin-1")
done, lock, end = [0], threading.Lock(), time.monotonic() + 22
def push(k):
    i = 0
    while time.monotonic() < end:
        with lock:
            if done[0] >= flood:
                return
        name = "f%d-%d.flood.fake.test" % (k, i)
        i += 1
        try:
            c = socket.create_connection(("127.0.0.1", 3128), timeout=10)
            c.sendall(b"GET http://%s/ HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n" % (name.encode(), name.encode()))
            head(c)
            c.close()
        except OSError:
            continue
        with lock:
            done[0] += 1
s = socket.create_connection(("127.0.0.1", 3128), timeout=60)
s.sendall(b"CONNECT %s:443 HTTP/1.1\r\nHost: %s:443\r\n\r\n" % (host.encode(), host.encode()))
t0 = time.monotonic()
print(head(s).splitlines()[0])
pushers = [threading.Thread(target=push, args=(k,)) for k in range(32 if flood else 0)]
for p in pushers:
    p.start()
for p in pushers:
    p.join()
print("flood: %d names resolved in %.1f s" % (done[0], time.monotonic() - t0))
time.sleep(max(0, 25 - (time.monotonic() - t0)))
ctx = ssl.create_default_context()
ctx.check_hostname = False
ctx.verify_mode = ssl.CERT_NONE
try:
    t = ctx.wrap_socket(s, server_hostname=host)
    t.sendall(b"GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n" % (path.encode(), host.encode()))
    print(head(t))
except OSError as e:
    print("(TLS: %s)" % e)
'
: >"$work/rebind-hits"
socat TCP4-LISTEN:443,bind=127.0.0.1,reuseaddr,fork SYSTEM:"echo hit >>$work/rebind-hits" 2>/dev/null &
on_exit "kill $!"
for _ in $(seq 50); do ss -Htln 'sport = :443' | grep -qF 127.0.0.1:443 && break; sleep 0.1; done
# The A questions the fake DNS was asked for $1, with what it answered: "ANSWER ANSWER ...".
dns_answers() {
        curl -sS --max-time 10 --noproxy '*' http://www.fake.test/_ajh/requests | python3 -c '
import json, sys
print(" ".join(o["answer"] or "-" for o in map(json.loads, sys.stdin)
               if o.get("server") == "dns" and o["name"] == sys.argv[1] and o["type"] == 1))' "$1"
}
rebind_case() { # rebind_case WHAT LABEL FLOOD: runs the attack, sets $out
        : >"$work/rebind-hits"
        out=$(sbx python3 -c "$rebind" "$2.rebind.fake.test" "/e2e/rebind-$2" "$3" 2>&1)
        echo "# $1: $(grep '^flood' <<<"$out"); DNS: $(dns_answers "$2.rebind.fake.test")"
}
rebind_case "the shipped configuration" pinned 10000000
expect_contains "rebinding: the CONNECT was decided (on the public address)" "HTTP/1.1 200 Connection established" "$out"
expect_contains "rebinding: squid connected to the address it decided on, which answered" "HTTP/1.1 200 OK" "$out"
expect_arrived "... the request arrived at www.fake.test" "GET /e2e/rebind-pinned"
expect_eq "... squid asked for the name once, before the flip" "203.0.113.10" "$(dns_answers pinned.rebind.fake.test)"
expect_eq "... nothing reached the runner's service on 127.0.0.1:443" "" "$(cat "$work/rebind-hits")"
flood=$(sed -n 's/^flood: \([0-9]*\) names resolved in .*/\1/p' <<<"$out")
# The attack, each protection taken away in turn: it must get through, or the test above proves nothing.
cp "$SHARE/squid/squid.conf.in" "$work/squid.conf.in.saved"
sed -i 's/^negative_dns_ttl .*/negative_dns_ttl 1 second/' "$SHARE/squid/squid.conf.in"
"$CLIENT" egress stop >/dev/null && start_proxy >/dev/null || fail "the proxy did not restart"
rebind_case "answers kept 1 s (negative_dns_ttl 1 second)" unpinned 0
expect_eq "removal, answers kept 1 s: squid asked again and got 127.0.0.1" "203.0.113.10 127.0.0.1" \
        "$(dns_answers unpinned.rebind.fake.test)"
expect_eq "removal, answers kept 1 s: squid connected to the runner's service on 127.0.0.1:443" "hit" \
        "$(sort -u "$work/rebind-hits")"
cp "$work/squid.conf.in.saved" "$SHARE/squid/squid.conf.in"
sed -i 's/^ipcache_size .*/ipcache_size 1024/' "$SHARE/squid/squid.conf.in"
"$CLIENT" egress stop >/dev/null && start_proxy >/dev/null || fail "the proxy did not restart"
rebind_case "squid's default cache of 1024 names" evicted 2000
expect_eq "removal, a cache of 1024 names and a flood of 2000: squid asked again and got 127.0.0.1" \
        "203.0.113.10 127.0.0.1" "$(dns_answers evicted.rebind.fake.test)"
expect_eq "removal, a cache of 1024 names: squid connected to the runner's service" "hit" "$(sort -u "$work/rebind-hits")"
cp "$work/squid.conf.in.saved" "$SHARE/squid/squid.conf.in"
"$CLIENT" egress stop >/dev/null && start_proxy >/dev/null || fail "the proxy did not restart"
echo "# the flood: ${flood:-?} names resolved in 22 s; squid's cache keeps $(sed -n 's/^ipcache_size //p' "$SHARE/squid/squid.conf.in")"

# ---------------------------------------------------------------------------------------------------------
echo "# stop"
t0=$(now_ms)
run "$CLIENT" egress stop
echo "# egress stop: $(($(now_ms) - t0)) ms"
expect_eq "egress stop: stopped" "0:egress proxy stopped" "$status:$out"
expect_eq "the unit is gone" "inactive" "$(systemctl is-active "$UNIT")"
if pgrep -u egress-proxy >/dev/null; then fail "processes of the proxy user remain: $(pgrep -u egress-proxy | tr '\n' ' ')"; else pass "no process of the proxy user remains"; fi
if (exec 3<>/dev/tcp/127.0.0.1/3128) 2>/dev/null; then fail "something still listens on 3128"; else pass "nothing listens on 3128"; fi
run "$CLIENT" egress stop
expect_eq "a second stop: not running" "0:egress proxy was not running" "$status:$out"

echo "# without systemd: the supervisor"
t0=$(now_ms)
run unshare -m --propagation private sh -c "mount -t tmpfs tmpfs /run/systemd && exec $CLIENT egress start"
echo "# egress start with a supervisor: $(($(now_ms) - t0)) ms"
expect_eq "start where systemd does not run" "0:egress proxy listening on 127.0.0.1:3128" "$status:$out"
expect_eq "no unit was made" "inactive" "$(systemctl is-active "$UNIT")"
read -r sup _ <"$PIDFILE" 2>/dev/null
expect_eq "the pid file names the supervisor, the proxy user's" "egress-proxy" "$(ps -o user= -p "${sup:-0}" 2>/dev/null)"
check_proxy_processes "under the supervisor"
out=$(sbx "${C[@]}" https://www.fake.test/e2e/supervised 2>&1)
expect_contains "a read through the supervised proxy" "HTTP/1.1 200 OK" "$out"
old=$(pgrep -u egress-proxy -x squid | head -n1)
kill -KILL "$old"
new=""
for _ in $(seq 50); do
        new=$(pgrep -u egress-proxy -x squid | head -n1)
        [ -n "$new" ] && [ "$new" != "$old" ] && (exec 3<>/dev/tcp/127.0.0.1/3128) 2>/dev/null && break
        sleep 0.1
done
[ -n "$new" ] && [ "$new" != "$old" ] && pass "the supervisor starts squid again after it was killed" || fail "squid was not started again"
out=$(sbx "${C[@]}" https://www.fake.test/e2e/supervised-again 2>&1)
expect_contains "a read after the restart" "HTTP/1.1 200 OK" "$out"
run "$CLIENT" egress stop
expect_eq "stop ends the supervisor" "0:egress proxy stopped" "$status:$out"
if pgrep -u egress-proxy >/dev/null; then fail "processes of the proxy user remain"; else pass "no process of the proxy user remains"; fi
expect_absent "the pid file is removed" "$PIDFILE"
