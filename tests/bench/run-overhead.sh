#!/usr/bin/env bash
# The fixed overhead of `agentic-job run` around an agent that does nothing (true), on a repository of 100
# files, inside a booted test host after `sandbox setup` (egress proxy on): its whole wall time and each
# phase's, against what a user would otherwise run for the same clone and agent, `sandbox exec` of git
# clone --no-checkout and git checkout of the commit, then true, interleaved rounds, best of each, as a
# ratio, each timed in the runner's own shell. Reports only; asserts nothing about time.
#
# usage: bash tests/host/run --release trixie|bookworm tests/bench/run-overhead.sh [ROUNDS]
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/integration/lib.sh
. "$here/../integration/lib.sh"
# shellcheck source=tests/bench/host-setup.sh
. "$here/host-setup.sh"

require_test_host tests/bench/run-overhead.sh
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

# Each timed in the runner's own shell, as a job step pays it (WALL_US); becoming the runner, which only
# this harness needs, is reported apart.
touch "$work/run.err" "$work/exec.out"
chown "$RUNNER:" "$work/run.err" "$work/exec.out"
best_run=999999999 best_exec=999999999 best_harness=999999999
for i in $(seq 1 "$rounds"); do
        t0=$(date +%s%N)
        as_runner true
        h=$((($(date +%s%N) - t0) / 1000))
        r=$(as_runner bash -c "$WALL_US" "$work/run.err" "$CLIENT" run --repo "$REPO" --commit "$COMMIT" \
                --base main --task "$work/task" --out "$RUNNER_HOME/bench-$i" --patch -- /bin/true) ||
                { cat "$work/run.err"; echo "Bail out! run failed"; exit 1; }
        x=$(as_runner bash -c "$WALL_US" "$work/exec.out" "$CLIENT" sandbox exec -- \
                sh -c "git clone -q --no-checkout $REPO c && git -C c checkout -q $COMMIT && true; rm -rf c") ||
                { cat "$work/exec.out"; echo "Bail out! sandbox exec of git failed"; exit 1; }
        [ "$r" -lt "$best_run" ] && { best_run=$r; cp "$work/run.err" "$work/best.err"; }
        [ "$x" -lt "$best_exec" ] && best_exec=$x
        [ "$h" -lt "$best_harness" ] && best_harness=$h
        rm -rf "$RUNNER_HOME/bench-$i"
done
[ -z "$(find "$SANDBOX_HOME" -maxdepth 1 -name 'agentic-job-run-*')" ] || { echo "Bail out! a run's directory was left"; exit 1; }

echo "# ${AJH_RELEASE:-?}: run of a true agent on a $(git -C "$REPO" ls-files | wc -l)-file repository, best of $rounds rounds"
awk -v a="$best_run" -v b="$best_exec" -v h="$best_harness" 'BEGIN {
        printf "#   agentic-job run (record, kill-user, clone, agent, shutdown, export of the patch, egress log, disposal, summary): %.1f ms\n", a / 1000
        printf "#   sandbox exec -- git clone --no-checkout + git checkout + true:                                             %.1f ms\n", b / 1000
        printf "#   ratio run / sandbox exec: %.2f (timed in the shell of the runner; runuser and env of this harness apart: %.1f ms)\n", a / b, h / 1000 }'
echo "#   the phases of the best run:"
sed -n 's/^agentic-job run: \([a-z-]*\): ok in \([0-9.]*\) s.*/#     \1 \2 s/p' "$work/best.err"
pass "the benchmark ran ($rounds rounds)"
finish
