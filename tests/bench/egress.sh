#!/usr/bin/env bash
# The egress proxy's added latency, inside a test host (tests/host/run) with its fake internet: the same
# read, each a new curl process, direct to the fake server and through the running proxy (HTTPS: a
# CONNECT, a bumped TLS handshake with a certificate squid made, two helper decisions; HTTP: one
# decision), interleaved in rounds of the same run, as medians and their ratio. Starts and stops the
# proxy with `agentic-job egress start|stop` and removes what that made. Reports only; asserts nothing
# about time.
#
# usage: bash tests/host/run --release trixie|bookworm tests/bench/egress.sh [ITERATIONS]
#        (in the host: tests/bench/egress.sh [ITERATIONS], the build in $AJH_BUILD or /build)
set -u
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
# shellcheck source=tests/integration/lib.sh
. "$here/../integration/lib.sh"
iterations=${1:-100}
build=${AJH_BUILD:-/build}

if [ ! -d /run/systemd/system ] || [ "$(id -u)" -ne 0 ] || ! command -v squid >/dev/null; then
        echo "Bail out! needs root on a test host with systemd and squid (bash tests/host/run ... tests/bench/egress.sh)"
        trap - EXIT
        exit 1
fi
for p in /usr/local/bin/agentic-job /usr/local/libexec/agentic-job-egress-acl /usr/local/share/agentic-job \
        /opt/egress-proxy /var/lib/egress-proxy /etc/egress-proxy /var/log/egress-proxy; do
        if [ -e "$p" ]; then
                echo "Bail out! $p exists: not touching an installed egress proxy"
                trap - EXIT
                exit 1
        fi
done

on_exit "rm -rf /usr/local/bin/agentic-job /usr/local/libexec/agentic-job-egress-acl /usr/local/share/agentic-job /opt/egress-proxy"
install -o root -g root -m 0755 "$build/client/agentic-job" /usr/local/bin/agentic-job
install -D -o root -g root -m 0755 "$build/policy/squid/agentic-job-egress-acl" /usr/local/libexec/agentic-job-egress-acl
install -D -o root -g root -m 0644 "$src/policy/squid/squid.conf.in" "$src/policy/squid/ERR_ACCESS_DENIED" \
        -t /usr/local/share/agentic-job/squid
install -D -o root -g root -m 0644 "$src/policy/policy.toml" /opt/egress-proxy/policy/policy.toml
on_exit "rm -rf /var/lib/egress-proxy /etc/egress-proxy /var/log/egress-proxy; userdel egress-proxy"
on_exit "agentic-job egress stop"
t0=$(date +%s%N)
agentic-job egress start || exit 1
echo "# ${AJH_RELEASE:-?}: $(squid -v | head -n1); egress start took $((($(date +%s%N) - t0) / 1000000)) ms (the first: user, CA key)"

proxy=(-x http://127.0.0.1:3128 --cacert /etc/egress-proxy/ca-bundle.pem)
direct=(--noproxy '*')
# One request: its total time in seconds, as curl measures it (process start not included).
once() { curl -sS -o /dev/null --max-time 10 -w '%{time_total}\n' "$@"; }
# Warm both paths once (squid's first certificate for the name, the helper's start).
once "${proxy[@]}" https://www.fake.test/bench/warm >/dev/null
once "${direct[@]}" https://www.fake.test/bench/warm >/dev/null

median() { sort -n | awk '{ v[NR] = $1 } END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.3f", m * 1000 }'; }
declare -A all
for round in 1 2 3; do
        for kind in https-direct https-proxy http-direct http-proxy; do
                case $kind in
                https-direct) args=("${direct[@]}" https://www.fake.test/bench/read) ;;
                https-proxy) args=("${proxy[@]}" https://www.fake.test/bench/read) ;;
                http-direct) args=("${direct[@]}" http://www.fake.test/bench/read) ;;
                http-proxy) args=("${proxy[@]}" http://www.fake.test/bench/read) ;;
                esac
                times=$(for ((i = 0; i < iterations; i++)); do once "${args[@]}"; done)
                all[$kind]+="$times"$'\n'
                printf 'round %d: %-13s median %s ms of %d\n' "$round" "$kind" "$(median <<<"$times")" "$iterations"
        done
done
for scheme in https http; do
        d=$(grep . <<<"${all[$scheme-direct]}" | median)
        p=$(grep . <<<"${all[$scheme-proxy]}" | median)
        awk -v s="$scheme" -v d="$d" -v p="$p" 'BEGIN {
                printf "%s read: direct %.3f ms, through the proxy %.3f ms: +%.3f ms, ratio %.2f\n", s, d, p, p - d, p / d }'
done
denied=$(grep -c '"decision":"deny"' /var/log/egress-proxy/access.jsonl)
lines=$(wc -l </var/log/egress-proxy/access.jsonl)
echo "# the egress log: $lines lines, $denied refused"
pass "the proxy answered every read ($lines decisions logged)"
