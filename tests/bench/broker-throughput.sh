#!/usr/bin/env bash
# What run's key broker costs an agent's API traffic, against the same request going straight through the
# egress proxy, in one run: inside a booted test host after `sandbox setup`, an agent in the confinement
# reads from the fake internet over HTTPS (the proxy ends TLS) both ways, interleaved: through the broker
# (127.0.0.1:3129, the socat bridge, the broker, which sends it on through the proxy with the key) and
# straight (127.0.0.1:3128, the bridge, the proxy). A small answer for the time to the first byte, a
# large one for throughput; medians of each and the ratios. Reports only; asserts nothing about time.
#
# usage: bash tests/host/run --release trixie|bookworm tests/bench/broker-throughput.sh [READS]
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/integration/lib.sh
. "$here/../integration/lib.sh"
# shellcheck source=tests/bench/host-setup.sh
. "$here/host-setup.sh"

require_test_host tests/bench/broker-throughput.sh
reads=${1:-9}
small=1024
large=$((64 << 20))
build=${AJH_BUILD:-/build}
CLIENT=/usr/local/bin/agentic-job
PROFILES=/usr/local/share/agentic-job/profiles
RUNNER=runner
SANDBOX=runner-sandbox
REPO=/srv/ajt-bench-repo
AGENT=/opt/ajt-bench/api-read.sh
# broker-egress (a probe of run's, before the agent) needs a control-url the proxy reaches: the fake internet.
bench_host_setup '[sandbox.check]\ncontrol-url = "https://www.fake.test/"\n\n'

install -d -m 0755 "$REPO"
git -c init.defaultBranch=main -C "$REPO" init -q
echo bench >"$REPO/README"
git -C "$REPO" add -A
git -c user.name=b -c user.email=b@b.test -C "$REPO" commit -qm bench
COMMIT=$(git -C "$REPO" rev-parse HEAD)
chmod -R a+rX "$REPO"
echo "bench" >"$work/task"
chmod 0644 "$work/task"
printf 'sk-ajt-%s\n' "$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')" >"$work/token"
chmod 0600 "$work/token"
cat >"$PROFILES/ajt-bench-api.toml" <<'EOT'
description = "bench: reads of the fake internet through the key broker"
command = ["/opt/ajt-bench/api-read.sh"]
token = "required"

[env]
AJT_API_URL = "${API_URL}"

[api]
base = "https://www.fake.test"
header = "x-api-key"
paths = ["/_ajh/"]
EOT
chmod 0644 "$PROFILES/ajt-bench-api.toml"
on_exit "rm -f $PROFILES/ajt-bench-api.toml"
install -d -m 0755 "$(dirname "$AGENT")"
cat >"$AGENT" <<EOT
#!/bin/bash
# Each round: a small and a large read, through the broker and straight, in an order of the round's own.
# One line each: "WAY SIZE BYTES FIRST-BYTE-SECONDS TOTAL-SECONDS".
mkdir -p out
key=\$(cat "\$AGENTIC_JOB_TOKEN_FILE")
read_one() { # WAY SIZE
        if [ "\$1" = broker ]; then
                curl -s -f -o /dev/null -w "broker \$2 %{size_download} %{time_starttransfer} %{time_total}\n" -m 300 \
                        -H "x-api-key: \$key" "\$AJT_API_URL/_ajh/bytes/\$2"
        else
                curl -s -f -o /dev/null -w "straight \$2 %{size_download} %{time_starttransfer} %{time_total}\n" -m 300 \
                        "https://www.fake.test/_ajh/bytes/\$2"
        fi >>out/times.txt || echo "failed \$1 \$2" >>out/times.txt
}
for i in \$(seq 1 $reads); do
        for size in $small $large; do
                if [ \$((i % 2)) = 0 ]; then read_one broker \$size; read_one straight \$size
                else read_one straight \$size; read_one broker \$size; fi
        done
done
EOT
chmod 0755 "$AGENT"
out=$RUNNER_HOME/bench-broker
runuser -u "$RUNNER" -- env -i PATH=/usr/bin:/bin HOME="$RUNNER_HOME" "$CLIENT" run --repo "$REPO" \
        --commit "$COMMIT" --base main --task "$work/task" --out "$out" --profile ajt-bench-api --token-stdin \
        --output out/times.txt <"$work/token" >/dev/null 2>"$work/run.err" ||
        { cat "$work/run.err"; echo "Bail out! run failed"; exit 1; }
t=$out/workspace/out/times.txt
grep -q '^failed' "$t" && { cat "$t"; echo "Bail out! a read failed"; exit 1; }
grep -q '"token": "broker"' "$out/summary.json" || { echo "Bail out! the broker did not hold the key"; exit 1; }
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
col() { awk -v w="$1" -v s="$2" -v c="$3" '$1 == w && $2 == s && $3 == s { print $c * 1000 }' "$t" | median; }
fb=$(col broker $small 4) fs=$(col straight $small 4)
tb=$(col broker $large 5) ts=$(col straight $large 5)
echo "# ${AJH_RELEASE:-?}: $reads rounds, medians; over HTTPS through the egress proxy, in the confinement"
awk -v fb="$fb" -v fs="$fs" -v tb="$tb" -v ts="$ts" -v s="$large" 'BEGIN {
        printf "#   first byte (1 KiB): straight %.1f ms, through the broker %.1f ms (%+.1f ms, %.2fx)\n", fs, fb, fb - fs, fb / fs
        printf "#   64 MiB: straight %.0f ms (%.1f MiB/s), through the broker %.0f ms (%.1f MiB/s): throughput %.2fx\n",
                ts, s / 1048576 / (ts / 1000), tb, s / 1048576 / (tb / 1000), ts / tb
}'
pass "the benchmark ran ($reads rounds)"
finish
