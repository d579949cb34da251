#!/usr/bin/env bash
# The fresh-machine proof's guest: in a bare host (tests/host/run --bare --no-boot), where .ci/install has
# just installed .ci/packages on a minbase Debian 12 with systemd, runs every part of tests/run that needs
# no test host of its own: the package check, the build, lint, the unit tests and fuzz corpora (plain,
# under valgrind, under ASan and UBSan), the integration tests through real sudo, the fuzzers' build with
# a run of 20 s each, and meson dist. A program that the list does not bring fails it. tests/run runs
# these steps here and only here.
#
# usage: bash tests/host/run --bare --no-boot tests/host/fresh.sh
set -euo pipefail
if [ -z "${AJH_ID:-}" ] || [ "$(id -u)" != 0 ]; then
        echo "tests/host/fresh.sh: runs only as root in a bare test host (tests/host/run --bare --no-boot)" >&2
        exit 2
fi
export BUILD_ROOT=/build FUZZ_SECONDS=20
exec bash /src/tests/run --no-hosts
