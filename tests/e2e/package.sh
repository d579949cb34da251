#!/usr/bin/env bash
# The Debian package end to end, inside a booted test host (tests/host/run): a copy of the source tree is
# built with `dpkg-buildpackage -us -uc -b` (its own meson test run included), lintian reports no error
# and no warning on the .deb, which installs nothing under /usr/local or /etc and depends on what
# .ci/packages' [run] section names. `dpkg -i` installs it; every file meson installs is in it, at the
# package's paths (the client in /usr/bin, the helper at /usr/libexec/agentic-job, the build option
# helper_path), and the installed manual pages name those paths, which exist. Then the installed client
# sets the host up (with the egress proxy, so squid runs the packaged decision helper and template), the
# check passes as the runner and a command runs as the sandbox user through the packaged helper. Last,
# `dpkg --purge`: its prerm stopped the egress proxy (squid ran the package's decision helper), and every
# file `dpkg -L` listed is gone, and every directory too unless another package still owns it.
#
# What the purge leaves is setup's, not the package's, and this test does not look at it: the users
# (runner-sandbox, egress-proxy) and the sandbox's home, /etc/agentic-job, /etc/sudoers.d/zz-agentic-job
# (naming a helper that is gone), the polkit rule, the cron and at deny lists, /etc/subuid and
# /etc/subgid, /opt/egress-proxy (the installed policy), /etc/egress-proxy (the proxy's certificate
# authority), /var/log/egress-proxy, the nftables table, the runner's lock and the permissions setup's walk
# changed: a machine set up is used for one job and thrown away, as this host is.
#
# usage: bash tests/host/run --release trixie|bookworm tests/e2e/package.sh
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/integration/lib.sh
. "$here/../integration/lib.sh"

require_test_host tests/e2e/package.sh
src=$(cd "$here/../.." && pwd)
PKG=agentic-job
HELPER=/usr/libexec/agentic-job
CLIENT=/usr/bin/agentic-job
DATA=/usr/share/agentic-job
RUNNER=runner
SANDBOX=runner-sandbox
work=$(mktemp -d /tmp/ajt-package.XXXXXX)
chmod 0755 "$work"
on_exit "rm -rf $work"
echo "# ${AJH_RELEASE:-unknown release}: $(dpkg-query -W -f '${Package} ${Version} ' debhelper lintian)"

# ---------------------------------------------------------------------------------------------------------
echo "# build"
# The tree as a commit would hold it: no .git, no build directories (.gitignore's).
version=$(dpkg-parsechangelog -l "$src/debian/changelog" -S Version)
project_version=$(meson introspect --projectinfo "$src/meson.build" |
        python3 -c 'import json, sys; print(json.load(sys.stdin)["version"])')
expect_eq "debian/changelog's version is meson.build's project version" "$project_version" "$version"
tree=$work/$PKG-$version
mkdir "$tree"
tar -C "$src" --exclude-vcs --exclude='./build*' --exclude='./obj-*' --exclude=./tests/fuzz/artifacts \
        --exclude='*.o' --exclude=./debian/.debhelper --exclude="./debian/$PKG" -cf - . | tar -C "$tree" -xf - ||
        { echo "Bail out! could not copy $src"; exit 1; }
start=$(date +%s)
if ! (cd "$tree" && dpkg-buildpackage -us -uc -b) </dev/null >"$work/build.log" 2>&1; then
        grep -A8 -E '^not ok' "$work/build.log" | sed 's/^/# build: /'
        tail -n 40 "$work/build.log" | sed 's/^/# build: /'
        # The log of each failing test (dh_auto_test runs meson test without --print-errorlogs).
        for log in "$tree"/obj-*/meson-logs/testlog.txt; do
                [ -f "$log" ] || continue
                awk -v RS='\n=+\n' '/\nresult: +(exit status [1-9]|killed|timeout)/' "$log" | head -n 120 |
                        sed 's/^/# testlog: /'
        done
        echo "Bail out! dpkg-buildpackage failed"
        exit 1
fi
deb=$work/${PKG}_${version}_$(dpkg --print-architecture).deb
if [ ! -f "$deb" ]; then
        printf '# built: %s\n' "$work"/*
        echo "Bail out! dpkg-buildpackage built no $deb"
        exit 1
fi
pass "dpkg-buildpackage built $(basename "$deb") (in $(($(date +%s) - start)) s)"
# dh_auto_test ran meson test: the paths test among them, on this build's /usr/libexec.
expect_contains "the build ran its tests, build-paths among them" "build-paths" \
        "$(grep -E '^ *[0-9]+/[0-9]+ .*build-paths +OK' "$work/build.log")"
expect_eq "the build's tests had no failure" "" "$(grep -E '^Fail: +[1-9]' "$work/build.log")"

# ---------------------------------------------------------------------------------------------------------
echo "# lintian"
# As a user, not root (lintian unpacks what it checks); every tag shown, overrides too.
lint_dir=$work/lint
install -d -m 0755 -o nobody "$lint_dir"
install -m 0644 -o nobody "$deb" "$lint_dir/"
runuser -u nobody -- env HOME="$lint_dir" lintian --display-info --pedantic --show-overrides \
        "$lint_dir/$(basename "$deb")" </dev/null >"$work/lintian.out" 2>&1
lint_status=$?
sed 's/^/# lintian: /' "$work/lintian.out"
expect_eq "lintian: no error and no warning" "" "$(grep -E '^[EW]: ' "$work/lintian.out")"
expect_eq "lintian ran (status 0)" 0 "$lint_status"

# ---------------------------------------------------------------------------------------------------------
echo "# what the .deb holds and depends on"
dpkg-deb -c "$deb" | awk '{ print $6 }' | sed 's|^\./|/|; s|/$||' | sed '/^$/d' | sort >"$work/contents"
expect_eq "nothing under /usr/local" "" "$(grep -E '^/usr/local(/|$)' "$work/contents")"
expect_eq "nothing under /etc (no active sudo rule, nothing of setup's)" "" \
        "$(grep -E '^/etc(/|$)' "$work/contents")"
depends=$(dpkg-deb -f "$deb" Depends)
echo "# Depends: $depends"
# [run] of .ci/packages: each package by name, or for a library the same library under this release's
# name (libssl3t64 for libssl3, libgit2-1.9 for libgit2-1.5), from ${shlibs:Depends}.
run_packages=$(sed -n '/^\[run\]/,/^\[/p' "$src/.ci/packages" | grep -v '^[#[]' | tr -s ' \n' '\n' |
        sed '/^$/d')
[ -n "$run_packages" ] || fail "no [run] packages read from .ci/packages"
dep_names=$(tr ',' '\n' <<<"$depends" | sed 's/^ *//; s/[ (].*//' | sed '/^$/d')
for alternatives in $run_packages; do
        # A|B: this release's name of the two.
        p=${alternatives%%|*}
        for a in ${alternatives//|/ }; do
                grep -qxF "$a" <<<"$dep_names" && p=$a
        done
        case $p in
        lib*) stem=$(sed -E 's/(-?[0-9][0-9.]*)$//' <<<"$p") ;;
        *) stem="" ;;
        esac
        if grep -qxF "$p" <<<"$dep_names"; then
                pass "Depends: $p"
        elif [ -n "$stem" ] && grep -qE "^$stem(-?[0-9][0-9.]*)?(t64)?\$" <<<"$dep_names"; then
                pass "Depends: $p, as $(grep -E "^$stem(-?[0-9][0-9.]*)?(t64)?\$" <<<"$dep_names" | head -n1)"
        else
                fail "Depends lacks $p (.ci/packages [run])"
        fi
done

# ---------------------------------------------------------------------------------------------------------
echo "# install"
on_exit "dpkg --purge $PKG"
if ! dpkg -i "$deb" </dev/null >"$work/install.log" 2>&1; then
        sed 's/^/# dpkg: /' "$work/install.log"
        echo "Bail out! dpkg -i failed"
        exit 1
fi
pass "dpkg -i"
dpkg -L "$PKG" | sed '/^\/\.$/d' | sort >"$work/listed"
expect_eq "dpkg -L lists what the .deb holds" "" \
        "$(comm -3 "$work/listed" "$work/contents")"
for f in "$CLIENT" "$HELPER" /usr/libexec/agentic-job-egress-acl; do
        expect_eq "$f: an executable of root's" "-rwxr-xr-x root root" "$(stat -c '%A %U %G' "$f" 2>&1)"
done
for f in man1/agentic-job.1 man8/agentic-job-helper.8 man8/agentic-job-egress-acl.8 man5/agentic-job.toml.5 \
        man5/agentic-job-policy.5 man7/agentic-job-probes.7 man5/agentic-job-profiles.5; do
        expect_eq "/usr/share/man/$f.gz" file "$([ -f "/usr/share/man/$f.gz" ] && echo file)"
done
for f in policy.toml squid/squid.conf.in squid/ERR_ACCESS_DENIED profiles/command.toml profiles/claude.toml \
        profiles/codex.toml sudoers.d/agentic-job; do
        expect_eq "$DATA/$f" "-rw-r--r-- root root" "$(stat -c '%A %U %G' "$DATA/$f" 2>&1)"
done
expect_eq "the copyright file" file "$([ -f "/usr/share/doc/$PKG/copyright" ] && echo file)"
# Every file meson installs is in the package (a manual page compressed): whatever the build adds, such
# as a completion, comes along.
builddir=$(find "$tree" -maxdepth 1 -type d -name 'obj-*' | head -n1)
meson introspect --installed "$builddir" |
        python3 -c 'import json, sys; print("\n".join(json.load(sys.stdin).values()))' | sort -u >"$work/meson-installed"
missing=""
while read -r f; do
        grep -qxF "$f" "$work/listed" || grep -qxF "$f.gz" "$work/listed" || missing+=" $f"
done <"$work/meson-installed"
expect_eq "each of the $(wc -l <"$work/meson-installed") files meson installs is in the package" "" "$missing"
# bash-completion is a build dependency, so the package always has the completion.
expect_contains "meson installs the bash completion" "/bash-completion/completions/agentic-job" \
        "$(cat "$work/meson-installed")"
expect_eq "the bash completion is installed" file \
        "$([ -f /usr/share/bash-completion/completions/agentic-job ] && echo file)"

echo "# the one helper path: client, sudo rule, manual pages"
expect_eq "the client calls $HELPER" "agentic-job: the helper is $HELPER, reached through sudo" \
        "$("$CLIENT" helper 2>&1)"
for page in /usr/share/man/man1/agentic-job.1.gz /usr/share/man/man8/agentic-job-helper.8.gz; do
        expect_contains "$(basename "$page" .gz) names $HELPER" "$HELPER helper" \
                "$(zcat "$page" | sed 's/\\-/-/g')"
done
# Each path the installed pages name under /usr/libexec or the package's data directory exists (NAME
# stands for any file name).
named=$(zcat /usr/share/man/man*/agentic-job*.gz | sed 's/\\-/-/g' | grep -ao '/usr/[^][:space:]"(),;\\]*' |
        sed 's/[.:]*$//' | grep -E "^(/usr/libexec/|$DATA(/|$))" | grep -v NAME | sort -u)
expect_lacks "the pages name no /usr/local path of the package" "/usr/local/libexec" \
        "$(zcat /usr/share/man/man*/agentic-job*.gz | sed 's/\\-/-/g')"
for p in $named; do
        expect_eq "a path the pages name exists: $p" yes "$([ -e "$p" ] && echo yes)"
done

# ---------------------------------------------------------------------------------------------------------
echo "# setup, with the egress proxy"
useradd --create-home --shell /bin/bash "$RUNNER"
printf '%s ALL=(ALL) NOPASSWD: ALL\n' "$RUNNER" >/etc/sudoers.d/runner
chmod 0440 /etc/sudoers.d/runner
RUNNER_HOME=$(getent passwd "$RUNNER" | cut -d: -f6)
rm -f /etc/resolv.conf
printf 'nameserver 203.0.113.53\noptions timeout:1 attempts:1\n' >/etc/resolv.conf
cat >"$work/config.toml" <<EOT
[sandbox]
user = "$SANDBOX"
runner-user = "$RUNNER"
groups = []

[sandbox.check]
control-url = "https://www.fake.test/"
fetch-repo = "https://www.fake.test/git/fixture.git"

[egress]
proxy = true
EOT
chmod 0644 "$work/config.toml"
on_exit "$CLIENT egress stop"
if ! agentic-job sandbox setup --config "$work/config.toml" </dev/null >"$work/setup.out" 2>&1; then
        sed 's/^/# setup: /' "$work/setup.out"
        echo "Bail out! setup failed"
        exit 1
fi
pass "agentic-job sandbox setup (the client found on PATH: $(command -v agentic-job))"
expect_eq "setup's sudo rule names the packaged helper in its four forms" 4 \
        "$(grep -c "^ *$HELPER helper " /etc/sudoers.d/zz-agentic-job)"
# squid starts one decision helper at once (children-startup=1): the package's.
acl_running() {
        local e
        for e in /proc/[0-9]*/exe; do readlink "$e" 2>/dev/null; done |
                grep -cx /usr/libexec/agentic-job-egress-acl
}
expect_eq "squid runs the packaged decision helper" yes "$([ "$(acl_running)" -gt 0 ] && echo yes)"

echo "# check and exec, as the runner"
RUNNER_TEMP=$RUNNER_HOME/temp
install -d -m 0700 -o "$RUNNER" -g "$RUNNER" "$RUNNER_TEMP"
as_runner() {
        runuser -u "$RUNNER" -- env -i PATH=/usr/bin:/bin HOME="$RUNNER_HOME" RUNNER_TEMP="$RUNNER_TEMP" \
                GITHUB_RUN_ID=4242 GITHUB_RUN_ATTEMPT=1 GITHUB_JOB=agent "$@"
}
as_runner agentic-job sandbox check </dev/null >"$work/check.out" 2>"$work/check.err"
status=$?
sed 's/^/# | /' "$work/check.out" "$work/check.err"
expect_eq "sandbox check passes as the runner: status 0" 0 "$status"
expect_eq "no probe failed" "" "$(grep '^FAIL' "$work/check.out")"
expect_contains "its probes ran" "state-write" "$(cat "$work/check.out")"
expect_eq "sandbox exec runs as the sandbox user" "$SANDBOX" \
        "$(as_runner agentic-job sandbox exec -- id -un </dev/null 2>&1)"
expect_eq "the runner lost general sudo" 1 "$(as_runner sudo -n true </dev/null >/dev/null 2>&1; echo $?)"

# ---------------------------------------------------------------------------------------------------------
echo "# purge"
# Which listed paths are directories, before they go.
while read -r p; do
        if [ -d "$p" ] && [ ! -L "$p" ]; then echo "$p"; fi
done <"$work/listed" >"$work/listed-dirs"
if dpkg --purge "$PKG" </dev/null >"$work/purge.log" 2>&1; then
        pass "dpkg --purge"
else
        sed 's/^/# dpkg: /' "$work/purge.log"
        fail "dpkg --purge"
fi
# The package's prerm stopped the proxy setup started: no squid of the proxy user, no decision helper of
# a removed package.
expect_contains "the prerm stopped the egress proxy" "egress proxy stopped" "$(cat "$work/purge.log")"
expect_eq "no decision helper runs" 0 "$(acl_running)"
expect_eq "no process of the proxy user runs" 0 "$(pgrep -c -u egress-proxy)"
expect_eq "the package is not installed" "" \
        "$(dpkg-query -W -f '${db:Status-Status}' "$PKG" 2>/dev/null | grep -v '^not-installed$')"
files=0
dirs=0
left=""
while read -r p; do
        if grep -qxF "$p" "$work/listed-dirs"; then
                dirs=$((dirs + 1))
                # A directory stays only while another package owns it (/usr, /usr/bin, /usr/libexec ...).
                [ -e "$p" ] && ! dpkg-query -S "$p" >/dev/null 2>&1 && left+=" $p/"
        else
                files=$((files + 1))
                { [ -e "$p" ] || [ -L "$p" ]; } && left+=" $p"
        fi
done <"$work/listed"
expect_eq "none of the $files files and $dirs directories the package listed remains (but shared ones)" "" "$left"
for p in "$CLIENT" "$HELPER" "$DATA" /usr/libexec/agentic-job-egress-acl "/usr/share/doc/$PKG"; do
        expect_absent "gone: $p" "$p"
done
