#!/usr/bin/env bash
# The harness's own test, on the machine (as root): a script's status comes back, a failing check fails, a
# script that runs too long is stopped (124), an interrupted run tears itself down (130), a killed run is
# torn down by `tests/host/run --cleanup`, and afterwards nothing of any run remains on the machine: no
# container process, pid or network namespace, mount, cgroup, run directory or harness helper.
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../integration/lib.sh
. "$here/../integration/lib.sh"
# shellcheck source=gone.sh
. "$here/gone.sh"
run=$here/run
guest=$here/guest.sh
cache=${AJH_CACHE:-/var/cache/agentic-job-test}
release=${1:-trixie}

before_roots=$(for r in $(cgroup_roots); do ls -d "$r/payload" "$r/supervisor" 2>/dev/null; done)

# Every run's log goes to one file: the ids and pid namespaces in it are what must be gone at the end.
all=$(mktemp)
on_exit "rm -f $all"
log_of() { tr -d '\0' <"$1" | tr '\n' '|'; }
bash "$run" --release "$release" "$guest" exit 3 2>>"$all"
expect_eq "the script's exit status comes back" 3 "$?"
bash "$run" --release "$release" "$guest" fail-check >/dev/null 2>>"$all"
expect_eq "a failing check fails the run" 1 "$?"
bash "$run" --release "$release" --timeout 3 "$guest" sleep >/dev/null 2>>"$all"
expect_eq "a script over its time is stopped with 124" 124 "$?"
bash "$run" --release "$release" nonexistent.sh >/dev/null 2>&1
expect_eq "a missing script is a usage error" 2 "$?"

# wait_for_script LOGFILE PID: until the run's guest has started (or the run ended).
wait_for_script() {
        local n
        for ((n = 0; n < 600; n++)); do
                grep -q "guest: sleeping" "$1" 2>/dev/null && return 0
                [ -d "/proc/$2" ] || return 1
                sleep 0.1
        done
        return 1
}

out=$(mktemp)
on_exit "rm -f $out"
bash "$run" --release "$release" "$guest" sleep >"$out" 2>&1 &
harness=$!
if wait_for_script "$out" "$harness"; then
        cat "$out" >>"$all"
        kill -TERM "$harness"
        wait "$harness"
        expect_eq "a run stopped by SIGTERM ends with 143" 143 "$?"
        expect_contains "an interrupted run tears itself down" "torn down: no container" "$(log_of "$out")"
else
        fail "the guest did not start: $(log_of "$out")"
fi

bash "$run" --release "$release" "$guest" sleep >"$out" 2>&1 &
harness=$!
if wait_for_script "$out" "$harness"; then
        id=$(sed -n 's/^# host: \([0-9a-f]\{6\}\): .*/\1/p' "$out" | head -n1)
        kill -KILL "$harness"
        wait "$harness" 2>/dev/null
        if [ -d "$cache/run/$id" ] && ip netns list | grep -q "^ajh-$id-"; then
                pass "a killed run leaves its host running (so the cleanup below has work to do)"
        else
                fail "a killed run left nothing behind, so its cleanup is not tested"
        fi
        cat "$out" >>"$all"
        bash "$run" --cleanup >"$out" 2>&1
        st=$?
        expect_eq "--cleanup succeeds (output: $(log_of "$out"))" 0 "$st"
        expect_contains "--cleanup tears down the killed run" "tearing down $id" "$(log_of "$out")"
        expect_absent "the killed run's directory is gone" "$cache/run/$id"
else
        kill -KILL "$harness" 2>/dev/null
        fail "the guest did not start: $(log_of "$out")"
fi

check_runs_gone "$all" 5
expect_eq "nspawn left no payload/supervisor cgroup at a hierarchy's root" "$before_roots" \
        "$(for r in $(cgroup_roots); do ls -d "$r/payload" "$r/supervisor" 2>/dev/null; done)"
