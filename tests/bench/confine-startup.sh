#!/usr/bin/env bash
# What the inner confinement costs at start-up: `agentic-job run` of an agent that does nothing (true), on
# a repository of 100 files, inside a booted test host after `sandbox setup` (egress proxy on), with
# `[run] confine = "bubblewrap"` (the preflight in the clone's enter, the host end of the bridge, bubblewrap
# with its namespaces and seccomp filter, the inner end of the bridge and its accept) against the same run
# with `confine = "none"`, interleaved rounds, best of each: the whole run, the clone phase and the agent
# phase, and their ratios. Reports only; asserts nothing about time.
#
# usage: bash tests/host/run --release trixie|bookworm tests/bench/confine-startup.sh [ROUNDS]
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/integration/lib.sh
. "$here/../integration/lib.sh"
# shellcheck source=tests/bench/host-setup.sh
. "$here/host-setup.sh"

require_test_host tests/bench/confine-startup.sh
rounds=${1:-10}
build=${AJH_BUILD:-/build}
CLIENT=/usr/local/bin/agentic-job
RUNNER=runner
SANDBOX=runner-sandbox
REPO=/srv/ajt-bench-repo
bench_host_setup
SANDBOX_HOME=$(getent passwd "$SANDBOX" | cut -d: -f6)

install -d -m 0755 "$REPO"
git -c init.defaultBranch=main -C "$REPO" init -q
for d in $(seq 1 10); do
        mkdir -p "$REPO/d$d"
        for f in $(seq 1 10); do head -c $((200 * f)) /dev/zero | tr '\0' "$((f % 10))" >"$REPO/d$d/f$f"; done
done
git -C "$REPO" add -A
git -c user.name=b -c user.email=b@b.test -C "$REPO" commit -qm bench
COMMIT=$(git -C "$REPO" rev-parse HEAD)
chmod -R a+rX "$REPO"
echo "bench" >"$work/task"
chmod 0644 "$work/task"
as_runner() { runuser -u "$RUNNER" -- env -i PATH=/usr/bin:/bin HOME="$RUNNER_HOME" "$@" </dev/null; }

CONFIG=/etc/agentic-job/config.toml
cp -p "$CONFIG" "$work/installed.toml"
on_exit "cp -p $work/installed.toml $CONFIG"
set_confine() { cp -p "$work/installed.toml" "$CONFIG"; printf '\n[run]\nconfine = "%s"\n' "$1" >>"$CONFIG"; }
phase_ms() { # PHASE ERRFILE
        sed -n "s/^agentic-job run: $1: ok in \([0-9.]*\) s.*/\1/p" "$2" | awk '{ printf "%d", $1 * 1000 }'
}
declare -A best_all best_clone best_agent
for mode in bubblewrap none; do best_all[$mode]=999999 best_clone[$mode]=999999 best_agent[$mode]=999999; done
for i in $(seq 1 "$rounds"); do
        for mode in bubblewrap none; do
                set_confine "$mode"
                t0=$(date +%s%N)
                as_runner "$CLIENT" run --repo "$REPO" --commit "$COMMIT" --base main --task "$work/task" \
                        --out "$RUNNER_HOME/bench-$mode-$i" --patch -- /bin/true >/dev/null 2>"$work/run.err" ||
                        { cat "$work/run.err"; echo "Bail out! run ($mode) failed"; exit 1; }
                t1=$(date +%s%N)
                grep -q "\"confine\": \"$mode\"" "$RUNNER_HOME/bench-$mode-$i/summary.json" ||
                        { echo "Bail out! the summary does not say confine = $mode"; exit 1; }
                all=$(((t1 - t0) / 1000000)) clone=$(phase_ms clone "$work/run.err") agent=$(phase_ms agent "$work/run.err")
                [ "$all" -lt "${best_all[$mode]}" ] && best_all[$mode]=$all
                [ "$clone" -lt "${best_clone[$mode]}" ] && best_clone[$mode]=$clone
                [ "$agent" -lt "${best_agent[$mode]}" ] && best_agent[$mode]=$agent
                rm -rf "$RUNNER_HOME/bench-$mode-$i"
        done
done
[ -z "$(find "$SANDBOX_HOME" -maxdepth 1 -name 'agentic-job-run-*')" ] || { echo "Bail out! a run's directory was left"; exit 1; }

echo "# ${AJH_RELEASE:-?}: $(bwrap --version), run of a true agent, best of $rounds interleaved rounds (ms)"
echo "#                      bubblewrap   none   ratio"
for what in all clone agent; do
        declare -n b=best_$what
        awk -v w="$what" -v a="${b[bubblewrap]}" -v n="${b[none]}" \
                'BEGIN { printf "#   %-16s %10d %6d   %.2f\n", w == "all" ? "whole run" : w " phase", a, n, n ? a / n : 0 }'
        unset -n b
done
pass "the benchmark ran ($rounds rounds)"
finish
