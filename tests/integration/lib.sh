# Shared by the host integration tests: assertions, a cleanup stack that runs also when a test fails,
# and helpers to act as the test's users. Source it; it sets -u and a trap on EXIT.
set -u

failures=0
passes=0
cleanup_stack=()

pass() {
        passes=$((passes + 1))
        printf 'ok - %s\n' "$*"
}

fail() {
        failures=$((failures + 1))
        printf 'not ok - %s\n' "$*"
}

# expect_eq WHAT EXPECTED ACTUAL
expect_eq() {
        if [ "$2" = "$3" ]; then pass "$1"; else fail "$1: expected '$2', got '$3'"; fi
}

# expect_contains WHAT NEEDLE HAYSTACK
expect_contains() {
        case "$3" in
        *"$2"*) pass "$1" ;;
        *) fail "$1: expected to contain '$2', got '${3:0:400}'" ;;
        esac
}

expect_absent() {
        if [ -e "$2" ] || [ -L "$2" ]; then fail "$1: $2 exists"; else pass "$1"; fi
}

# Cleanups run in reverse order of registration, whatever happened.
on_exit() {
        cleanup_stack+=("$*")
}

run_cleanups() {
        local i
        for ((i = ${#cleanup_stack[@]} - 1; i >= 0; i--)); do
                eval "${cleanup_stack[$i]}" >/dev/null 2>&1 || true
        done
        cleanup_stack=()
}

finish() {
        local rc=$?
        run_cleanups
        if [ "$rc" -ne 0 ] && [ "$failures" -eq 0 ]; then
                printf 'not ok - the test script itself failed with status %s\n' "$rc"
                exit "$rc"
        fi
        printf '# %d passed, %d failed\n' "$passes" "$failures"
        [ "$failures" -eq 0 ]
}
trap finish EXIT
trap 'exit 130' INT TERM

# Kills every process of a uid by having a process of that uid signal everything it may (never by name).
kill_uid() {
        local uid=$1 n
        for n in 1 2 3 4 5 6 7 8 9 10; do
                setpriv --reuid="$uid" --regid=65534 --clear-groups --inh-caps=-all \
                        --bounding-set=-all kill -KILL -1 2>/dev/null || true
                live_of_uid "$uid" >/dev/null || return 0
                sleep 0.1
        done
}

# Prints the pids whose real, effective or saved uid is in [lo, hi] and which are not zombies; status 1
# when there are none.
live_in_range() {
        local lo=$1 hi=$2 f pid state uids found=1
        for f in /proc/[0-9]*/status; do
                pid=${f#/proc/}
                pid=${pid%/status}
                state=$(awk '/^State:/ {print $2; exit}' "$f" 2>/dev/null) || continue
                [ -n "$state" ] || continue
                case "$state" in Z | X) continue ;; esac
                uids=$(awk '/^Uid:/ {print $2, $3, $4; exit}' "$f" 2>/dev/null) || continue
                for u in $uids; do
                        if [ "$u" -ge "$lo" ] && [ "$u" -le "$hi" ]; then
                                echo "$pid"
                                found=0
                                break
                        fi
                done
        done
        return $found
}

live_of_uid() {
        live_in_range "$1" "$1"
}
