#!/usr/bin/env bash
# The cost of `agentic-job sandbox check` inside a booted test host after `sandbox setup` (egress proxy
# on): the whole check, and `--unless-passed` with a record that matches, against what any use of the
# boundary pays, one `sandbox exec -- true` (one helper enter), interleaved rounds, best and median of
# each, as ratios, timed in the runner's own shell as a job step would pay them (the harness's runuser,
# which a job does not run, reported apart); and the slowest probes of the best check, each as a share of its wall time (from
# --json). Without the container probes (containers = false: each a note), as the issue asks; check.sh
# prints what they add. Reports only; asserts nothing about time.
#
# usage: bash tests/host/run --release trixie|bookworm tests/bench/check.sh [ROUNDS]
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/integration/lib.sh
. "$here/../integration/lib.sh"
# shellcheck source=tests/bench/host-setup.sh
. "$here/host-setup.sh"

require_test_host tests/bench/check.sh
rounds=${1:-10}
build=${AJH_BUILD:-/build}
CLIENT=/usr/local/bin/agentic-job
RUNNER=runner
SANDBOX=runner-sandbox
bench_host_setup '[sandbox.check]\ncontrol-url = "https://www.fake.test/"\nfetch-repo = "https://www.fake.test/git/fixture.git"\ncontainers = false\n\n'
RUNNER_TEMP=$RUNNER_HOME/temp
install -d -m 0700 -o "$RUNNER" -g "$RUNNER" "$RUNNER_TEMP"
as_runner() {
        runuser -u "$RUNNER" -- env -i PATH=/usr/bin:/bin HOME="$RUNNER_HOME" RUNNER_TEMP="$RUNNER_TEMP" \
                GITHUB_RUN_ID=1 GITHUB_RUN_ATTEMPT=1 GITHUB_JOB=bench "$@" </dev/null
}
# The wall time of a command as the runner's job step pays it: taken in the runner's own shell
# (bash's EPOCHREALTIME, no process around the command), so that runuser's PAM session and env, which only
# this harness needs to become the runner, are not counted; as_runner's own cost is reported beside it.
touch "$work/last.out"
chown "$RUNNER:" "$work/last.out"
us_of() { # COMMAND...: its wall time in microseconds in $us; fails the benchmark if the command fails
        us=$(as_runner bash -c "$WALL_US" "$work/last.out" "$@") || { sed 's/^/# | /' "$work/last.out"; echo "Bail out! $*"; exit 1; }
}

: >"$work/exec.us"
: >"$work/check.us"
: >"$work/unless.us"
: >"$work/harness.us"
best_check=999999999
for i in $(seq 1 "$rounds"); do
        t0=$(date +%s%N)
        as_runner true
        echo $((($(date +%s%N) - t0) / 1000)) >>"$work/harness.us"
        us_of "$CLIENT" sandbox exec -- true
        echo "$us" >>"$work/exec.us"
        us_of "$CLIENT" sandbox check --json
        echo "$us" >>"$work/check.us"
        [ "$us" -lt "$best_check" ] && { best_check=$us; cp "$work/last.out" "$work/best.json"; }
        us_of "$CLIENT" sandbox check --record
        us_of "$CLIENT" sandbox check --unless-passed
        grep -q 'no probe made' "$work/last.out" || { sed 's/^/# | /' "$work/last.out"; echo "Bail out! the record was not taken"; exit 1; }
        echo "$us" >>"$work/unless.us"
done

stats() { sort -n "$1" | awk '{ v[NR] = $1 } END { printf "%.1f %.1f", v[1] / 1000, v[int((NR + 1) / 2)] / 1000 }'; }
read -r exec_best exec_median <<<"$(stats "$work/exec.us")"
read -r check_best check_median <<<"$(stats "$work/check.us")"
read -r unless_best unless_median <<<"$(stats "$work/unless.us")"
read -r harness_best harness_median <<<"$(stats "$work/harness.us")"
best_ms=$((best_check / 1000))
echo "# ${AJH_RELEASE:-?}: $rounds interleaved rounds, best and median (ms), timed in the runner's shell"
echo "#   sandbox check (every probe, $(python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(len(d["results"]))' "$work/best.json") results): $check_best, $check_median"
echo "#   sandbox check --unless-passed, a matching record:      $unless_best, $unless_median"
echo "#   sandbox exec -- true (one helper enter):                $exec_best, $exec_median"
echo "#   (not counted above: this harness's runuser and env to become the runner, $harness_best, $harness_median)"
awk -v c="$check_best" -v u="$unless_best" -v e="$exec_best" \
        'BEGIN { printf "#   ratios to one enter: the check %.1f, --unless-passed %.2f\n", c / e, u / e }'
echo "#   the slowest results of the best check, as shares of its $best_ms ms:"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
wall = int(sys.argv[2])
for r in sorted(d["results"], key=lambda r: -r["ms"])[:6]:
    print("#     %-28s %5d ms  %3.0f %%" % (r["name"], r["ms"], 100.0 * r["ms"] / wall))' "$work/best.json" "$best_ms"
pass "the benchmark ran ($rounds rounds)"
finish
