#!/usr/bin/env bash
# Back-to-back kill-user and enter, as a job's quick steps come (issue 35 item 2, the status 255 flake):
# each enter, right after a kill-user, leaves a daemon in a session of its own; the enter must end with
# its command's status (0, never 255: its unit's main process killed) and the daemon must live until the
# next kill-user, which ends it (its count says 1 or more). Before kill-user waited for systemd to stop
# the user's slice and reset the start limits of its services, about 1 pair in 40 failed on bookworm: the
# session's scope was refused while the slice had a stop job queued, and the command ran in the transient
# unit, whose end killed the daemon.
#
# usage: bash tests/host/run --release trixie|bookworm tests/e2e/pairs.sh [BUILD_DIR [PAIRS]]
#        (PAIRS: default 50; the closing note of issue 35 ran 500 in each release)
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/integration/lib.sh
. "$here/../integration/lib.sh"

if [ ! -d /run/systemd/system ] || [ "$(id -u)" -ne 0 ]; then
        echo "Bail out! needs root on a host where systemd runs (bash tests/host/run ... tests/e2e/pairs.sh)"
        trap - EXIT
        exit 1
fi
pairs=${2:-50}
set -- "${1:-${AJH_BUILD:-/build}}"
# shellcheck source=tests/integration/fixture.sh
. "$here/../integration/fixture.sh"
write_config <<<"$BASE_CONFIG"

run helper kill-user
expect_eq "the first kill-user" 0 "$status"
bad=0
kill_ms=0
t0=$(date +%s%N)
for i in $(seq "$pairs"); do
        run helper enter --chdir "$SB_HOME" -- sh -c 'setsid sleep 1000 </dev/null >/dev/null 2>&1 & exit 0'
        enter_status=$status
        run helper kill-user
        kill_status=$status
        n=$(sed -n 's/^ended \([0-9]*\) processes .*/\1/p' <<<"$out")
        k=$(sed -n 's/^ended .* in \([0-9]*\)\.[0-9] ms.*/\1/p' <<<"$out")
        kill_ms=$((kill_ms + ${k:-0}))
        if [ "$enter_status" != 0 ] || [ "$kill_status" != 0 ] || [ "${n:-0}" -lt 1 ]; then
                bad=$((bad + 1))
                echo "# pair $i: enter status $enter_status, kill-user status $kill_status: $out"
        fi
done
ms=$((($(date +%s%N) - t0) / 1000000))
echo "# $pairs pairs in $ms ms ($((ms / pairs)) ms a pair, kill-user's own $((kill_ms / pairs)) ms of it), $bad failed"
expect_eq "$pairs enters right after a kill-user: each ends 0 and its daemon lives until the next kill-user" 0 "$bad"
expect_eq "nothing of the sandbox user lives after them" 0 "$(live_of_uid "$SB_UID" | wc -l)"
finish
