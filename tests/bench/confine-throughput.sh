#!/usr/bin/env bash
# What the inner confinement costs a large read: an agent reads 64 MiB from the fake internet over HTTPS
# through the egress proxy (which ends TLS), inside a booted test host after `sandbox setup`; with
# `[run] confine = "bubblewrap"` the bytes also cross both ends of the socat bridge (127.0.0.1:3128 inside,
# a unix socket, the proxy), with `confine = "none"` the agent talks to the proxy directly: what a user
# without the inner layer would run. Interleaved runs, each agent timing several reads with curl; best of
# each and the ratio. Reports only; asserts nothing about time.
#
# usage: bash tests/host/run --release trixie|bookworm tests/bench/confine-throughput.sh [ROUNDS]
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/integration/lib.sh
. "$here/../integration/lib.sh"
# shellcheck source=tests/bench/host-setup.sh
. "$here/host-setup.sh"

require_test_host tests/bench/confine-throughput.sh
rounds=${1:-3}
reads=5
size=$((64 << 20))
build=${AJH_BUILD:-/build}
CLIENT=/usr/local/bin/agentic-job
RUNNER=runner
SANDBOX=runner-sandbox
REPO=/srv/ajt-bench-repo
AGENT=/opt/ajt-bench/read.sh
bench_host_setup

install -d -m 0755 "$REPO"
git -c init.defaultBranch=main -C "$REPO" init -q
echo bench >"$REPO/README"
git -C "$REPO" add -A
git -c user.name=b -c user.email=b@b.test -C "$REPO" commit -qm bench
COMMIT=$(git -C "$REPO" rev-parse HEAD)
chmod -R a+rX "$REPO"
echo "bench" >"$work/task"
chmod 0644 "$work/task"
install -d -m 0755 "$(dirname "$AGENT")"
cat >"$AGENT" <<EOT
#!/bin/bash
# $reads reads of $size bytes through the proxy: one line "BYTES SECONDS" each.
mkdir -p out
for i in \$(seq 1 $reads); do
        curl -s -f -o /dev/null -w '%{size_download} %{time_total}\n' -m 300 \
                https://www.fake.test/_ajh/bytes/$size >>out/times.txt || echo "failed" >>out/times.txt
done
EOT
chmod 0755 "$AGENT"
as_runner() { runuser -u "$RUNNER" -- env -i PATH=/usr/bin:/bin HOME="$RUNNER_HOME" "$@" </dev/null; }

CONFIG=/etc/agentic-job/config.toml
cp -p "$CONFIG" "$work/installed.toml"
on_exit "cp -p $work/installed.toml $CONFIG"
set_confine() { cp -p "$work/installed.toml" "$CONFIG"; printf '\n[run]\nconfine = "%s"\n' "$1" >>"$CONFIG"; }
declare -A best
for mode in bubblewrap none; do best[$mode]=999999; done
for i in $(seq 1 "$rounds"); do
        for mode in bubblewrap none; do
                set_confine "$mode"
                out=$RUNNER_HOME/bench-$mode-$i
                as_runner "$CLIENT" run --repo "$REPO" --commit "$COMMIT" --base main --task "$work/task" \
                        --out "$out" --output out/times.txt -- "$AGENT" >/dev/null 2>"$work/run.err" ||
                        { cat "$work/run.err"; echo "Bail out! run ($mode) failed"; exit 1; }
                t=$out/workspace/out/times.txt
                [ "$(grep -c "^$size " "$t")" -eq "$reads" ] || { cat "$t"; echo "Bail out! a read ($mode) failed"; exit 1; }
                ms=$(awk '{ ms = $2 * 1000; if (!b || ms < b) b = ms } END { printf "%d", b }' "$t")
                [ "$ms" -lt "${best[$mode]}" ] && best[$mode]=$ms
                rm -rf "$out"
        done
done

echo "# ${AJH_RELEASE:-?}: $(bwrap --version), $reads reads of $((size >> 20)) MiB over HTTPS through the proxy, best of $rounds interleaved runs"
awk -v a="${best[bubblewrap]}" -v n="${best[none]}" -v s="$size" 'BEGIN {
        printf "#   bubblewrap (bridge + proxy) %6d ms  %7.1f MiB/s\n", a, s / 1048576 / (a / 1000)
        printf "#   none (proxy alone)          %6d ms  %7.1f MiB/s\n", n, s / 1048576 / (n / 1000)
        printf "#   ratio (time, bubblewrap / none): %.2f\n", n ? a / n : 0
}'
pass "the benchmark ran ($rounds rounds)"
finish
