# shellcheck shell=bash
# shellcheck disable=SC2154,SC2034 # build, CLIENT, RUNNER, SANDBOX are the caller's; work and RUNNER_HOME are for it
# What each benchmark in a test host starts with (sourced after tests/integration/lib.sh, with build,
# CLIENT, RUNNER and SANDBOX set): the build installed, the runner's user, the fake internet's resolver,
# and `sandbox setup` of a configuration with the egress proxy. bench_host_setup [EXTRA]: EXTRA is more of
# that configuration (TOML, backslash escapes read), put before [egress]. Sets work (a directory removed at
# exit) and RUNNER_HOME.
# shellcheck disable=SC2120 # EXTRA is optional
bench_host_setup() {
        work=$(mktemp -d /tmp/ajt-bench.XXXXXX)
        chmod 0755 "$work"
        on_exit "rm -rf $work"

        ninja -C "$build" install >"$work/install.log" 2>&1 || { cat "$work/install.log"; echo "Bail out! install"; exit 1; }
        useradd --create-home --shell /bin/bash "$RUNNER"
        RUNNER_HOME=$(getent passwd "$RUNNER" | cut -d: -f6)
        rm -f /etc/resolv.conf
        printf 'nameserver 203.0.113.53\noptions timeout:1 attempts:1\n' >/etc/resolv.conf
        printf '[sandbox]\nuser = "%s"\nrunner-user = "%s"\ngroups = []\n\n%b[egress]\nproxy = true\n' \
                "$SANDBOX" "$RUNNER" "${1:-}" >"$work/config.toml"
        "$CLIENT" sandbox setup --config "$work/config.toml" </dev/null >"$work/setup.out" 2>&1 ||
                { sed 's/^/# setup: /' "$work/setup.out"; echo "Bail out! setup failed"; exit 1; }
}
