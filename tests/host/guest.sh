#!/usr/bin/env bash
# A guest script for tests/host/selftest.sh: what a test script can do to the harness.
#   exit N        ends with status N
#   fail-check    one failing check through tests/integration/lib.sh (status must not be 0)
#   sleep         runs until the harness stops it
case ${1:-} in
exit) exit "${2:?}" ;;
fail-check)
        . "$(dirname "$0")/../integration/lib.sh"
        pass "a passing check"
        fail "a deliberately failing check"
        ;;
sleep)
        echo "guest: sleeping"
        exec sleep 600
        ;;
*)
        echo "guest.sh: unknown mode '${1:-}'" >&2
        exit 2
        ;;
esac
