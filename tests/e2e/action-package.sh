#!/usr/bin/env bash
# tests/e2e/action.sh with the action's input `package`: the .deb that debian/ builds, installed by the
# action in place of its meson build. The host is thrown away after the run.
#
# usage: bash tests/host/run --release trixie|bookworm tests/e2e/action-package.sh
set -u
exec bash "$(cd "$(dirname "$0")" && pwd)/action.sh" package
