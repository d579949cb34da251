#!/usr/bin/env bash
# The package list's own test, run early by tests/run (and so also in the bare host of tests/host/run
# --bare). It fails, naming the first problem in one line, unless:
#   - README.md quotes .ci/packages whole (the fenced block after the marker comment), so they cannot drift;
#   - every program the product runs, by name or by path, is installed, and `dpkg -S` gives it to a package
#     of .ci/packages' [run] section (what the Debian package depends on, tests/e2e/package.sh checks), to
#     one such package's direct dependency, or to an Essential package (which every Debian system has);
#   - every program tests/run and the test scripts on this machine run is installed and comes from a
#     package of any section of .ci/packages, one's direct dependency, or an Essential package.
# The product's programs come from the code: every string literal passed to trusted_program_find() or
# setup's find_tool(), and every literal path of a program in bin or sbin, less the named exceptions
# below (each must still be in the code). The test
# scripts' programs are an explicit list, TEST_PROGRAMS; so that it cannot fall behind, every word in a
# command's place in those scripts that names a program on the PATH must be on it or on NOT_COMMANDS.
#
# usage: bash tests/packages.sh                (any user; dpkg-query and dpkg -S only read)
set -euo pipefail
cd "$(dirname "$0")/.."
# Programs come from packages: no /usr/local, no user's shims.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C

die() {
        echo "tests/packages.sh: $*" >&2
        exit 1
}

# ---- README.md quotes .ci/packages -------------------------------------------------------------------
marker='<!-- .ci/packages, quoted whole: tests/packages.sh checks that it is equal -->'
quoted=$(awk -v m="$marker" '
        $0 == m { found = 1; next }
        found == 1 && /^```/ { found = 2; next }
        found == 2 && /^```/ { exit }
        found == 2 { print }' README.md)
[ -n "$quoted" ] || die "README.md has no fenced block after the line '$marker'"
[ "$quoted" = "$(cat .ci/packages)" ] ||
        die "README.md's quote of .ci/packages differs from the file (first difference: $(diff <(echo "$quoted") .ci/packages | sed -n 2p))"

# Each alternative of A|B counts as listed: only the one this release has is installed.
mapfile -t listed < <(sed -e 's/#.*//' -e '/^\[.*\]$/d' .ci/packages | tr -s ' \t|' '\n' | sed '/^$/d')
[ ${#listed[@]} -gt 0 ] || die ".ci/packages names no package"
mapfile -t run_listed < <(sed -e 's/#.*//' .ci/packages | awk '/^\[/ { run = ($0 == "[run]"); next } run' |
        tr -s ' \t|' '\n' | sed '/^$/d')
[ ${#run_listed[@]} -gt 0 ] || die ".ci/packages has no [run] section"

# ---- the programs -------------------------------------------------------------------------------------
# Product: string literals in trusted_program_find(...) and find_tool(...) calls, up to the pointer
# argument that follows the name.
mapfile -t product < <(grep -ohE 'trusted_program_find\([^&]*|find_tool\("[^"]+"' \
        helper/*.c common/*.c client/*.c client/*/*.c policy/*.c policy/squid/*.c |
        grep -oE '"[^"]+"' | tr -d '"' | sort -u)
[ ${#product[@]} -ge 10 ] || die "found only ${#product[@]} programs the product looks up: has the code changed?"
# Programs the code names by absolute path in a bin or sbin directory (sudo, bubblewrap, the probes'
# curl and git, ...), and squid's certificate generator, which it finds among a list of paths.
mapfile -t product_paths < <(grep -ohE '"/(usr/)?s?bin/[a-z0-9._+-]+"' \
        helper/*.[ch] common/*.[ch] client/*.[ch] client/*/*.[ch] policy/*.[ch] policy/squid/*.[ch] |
        tr -d '"' | sort -u)
[ ${#product_paths[@]} -ge 10 ] || die "found only ${#product_paths[@]} program paths in the product: has the code changed?"
product+=("${product_paths[@]}")
PRODUCT_PATHS=(/usr/lib/squid/security_file_certgen)
# Looked up, and not on Debian 12 by design, or looked up only to be used where present.
declare -A EXCEPTIONS=(
        [run0]="systemd 256 or newer only; the helper uses it where systemd 257 or newer runs (trixie)"
        [/usr/bin/run0]="the same, by path: the check's run0 probes are notes where it is not"
        [rpm]="setup's fallback where dpkg-query is missing, which on Debian it is not"
        [/usr/bin/rpm]="the same, by path"
        [cargo]="the check's egress-cargo runs it where the sandbox user has it, a note where not: no dependency"
        [npm]="the check's egress-npm runs it where the sandbox user has it, a note where not: no dependency"
        [/usr/bin/atq]="the check's at probes: a note where at is not installed"
        [/usr/bin/crontab]="the check's cron probes: a note where cron is not installed"
        [/usr/bin/pkcheck]="the check's polkit probes: a note where polkit is not installed"
        [/usr/bin/pkexec]="the check's runner-pkexec: a note where it is not installed"
        [/usr/bin/podman]="the check's container probes: notes where rootless podman is not there"
        [/usr/bin/pasta]="userns-net's own network through pasta, where it is installed"
        [/usr/bin/slirp4netns]="egress-container-own-network through slirp4netns, where it is installed"
        [apparmor_parser]="setup's apparmor stage, only where kernel.apparmor_restrict_unprivileged_userns is 1 (Ubuntu), whose systems have it"
)
for name in "${!EXCEPTIONS[@]}"; do
        [[ " ${product[*]} " == *" $name "* ]] ||
                die "the exception '$name' is no longer looked up by the code: remove it from tests/packages.sh"
done

# What tests/run and the scripts it runs on this machine (and in the bare host) call. The end-to-end
# suites (tests/e2e/*.sh) and tests/bench/egress.sh run inside test hosts, whose packages
# tests/host/base.sh installs; they are not checked here.
TEST_SCRIPTS=(tests/run tests/packages.sh tests/integration/*.sh tests/host/run tests/host/base.sh
        tests/host/bare-base.sh tests/host/selftest.sh tests/host/gone.sh tests/host/fresh.sh tests/e2e/run
        tests/bench/run tests/policy/run-cases.sh tests/build-paths.sh .ci/run .ci/install)
TEST_PROGRAMS=(
        # build and lint (meson runs gcc, and clang for the fuzzers)
        meson ninja gcc clang pkg-config clang-format clang-tidy cppcheck valgrind
        # unit tests (tests/unit: nft -c, visudo -c, rm) and the benchmark's baseline (find)
        nft visudo rm find
        # integration tests and benchmarks: users, sudo, ACLs, the audit socket, kill by uid, IPC objects
        sudo runuser useradd userdel usermod groupadd groupdel getent setfacl socat setpriv setsid ps
        pkill pgrep timeout tty mkfifo truncate unshare ipcmk
        # run's integration test: its repository
        git
        # test hosts
        debootstrap systemd-nspawn ip nsenter openssl python3 flock findmnt mountpoint mount umount
        chroot systemd-run systemctl
        # this check
        dpkg-query dpkg diff
        # the rest of the scripts' plain tools (tar: meson dist's tarball, unpacked)
        awk sed grep cut tr sort head tail wc od cat cp mv ln ls mkdir rmdir mktemp chmod chown chgrp
        install touch stat readlink realpath basename dirname date seq sleep id env bash sh sha256sum du tar
        # lib.sh's image for the test hosts' containers: the libraries of curl
        ldd
)
# Words in a command's place that run no program: groups (a key in the configuration the fixture
# writes), wall (in a printf format), systemd (a package name on an array's continued line); and apt-get and
# apt-cache, which install the list, so cannot come from it.
NOT_COMMANDS=(groups systemd wall apt-get apt-cache)

# Every word in a command's place (after a line start, a pipe, a list operator, a subshell, group or
# command substitution, a keyword, or a wrapper's --; not an assignment, not an array's first word) that
# names a program on the PATH.
mapfile -t used < <(for f in "${TEST_SCRIPTS[@]}"; do sed -e 's/#.*//' -e 's/=(/= /g' "$f"; done |
        grep -ohP '(?:(?:^|[;&|(`]|\$\(|\bthen|\bdo|\belse|!|\bexec|\btimeout [0-9]+)[[:space:]]*|(?:--|\{)[[:space:]]+)\K[a-z][a-z0-9_.+-]*(?![=a-z0-9_.+-])' |
        sort -u)
declare -A known=()
for p in "${TEST_PROGRAMS[@]}" "${NOT_COMMANDS[@]}"; do known[$p]=1; done
for word in "${used[@]}"; do
        [ "$(type -t "$word")" = file ] || continue
        [ -n "${known[$word]:-}" ] ||
                die "the test scripts run '$word', which is not on TEST_PROGRAMS in tests/packages.sh"
done

# ---- each program's package ---------------------------------------------------------------------------
# Listed packages and their direct dependencies, installed or not: of every section (the tests' programs)
# and of [run] alone (the product's).
declare -A on_list=() via=() on_run=() via_run=()
for p in "${listed[@]}"; do on_list[$p]=1; done
for p in "${run_listed[@]}"; do on_run[$p]=1; done
while IFS=' ' read -r p deps; do
        for d in $(echo "$deps" | sed -e 's/([^)]*)//g' -e 's/|/,/g' | tr ',' '\n' | sed 's/:any$//'); do
                [ -n "${on_list[$d]:-}" ] || via[$d]=$p
                [ -z "${on_run[$p]:-}" ] || [ -n "${on_run[$d]:-}" ] || via_run[$d]=$p
        done
done < <(dpkg-query -W -f '${Package} ${Pre-Depends}, ${Depends}\n' "${listed[@]}" 2>/dev/null)

# owner PATH: the package that installed PATH. dpkg may know it below /usr or not (merged /usr), and an
# alternative's link (awk) is no package's: then the file it leads to.
owner() {
        local path out p
        for path in "$1" "$(realpath -e -- "$1")"; do
                for p in "$path" "${path#/usr}" "/usr$path"; do
                        [[ $p == /usr/usr/* ]] && continue
                        out=$(dpkg -S "$p" 2>/dev/null) || continue
                        # "pkg[:arch][, pkg...]: path"; a diversion line names no package on its own.
                        awk '!/^diversion by/ { sub(/: .*/, ""); sub(/,.*/, ""); sub(/:[a-z0-9]+$/, ""); print; exit }' <<<"$out"
                        return 0
                done
        done
        return 1
}

# check WHO WHAT [run]: WHO is a program name or an absolute path; with run, its package must be of [run].
checked=0
check() {
        local who=$1 what=$2 section=${3:-} path pkg
        if [[ $who == /* ]]; then
                path=$who
                [ -x "$path" ] || die "$path ($what) is not installed: is its package on .ci/packages, and has .ci/install run?"
        else
                path=$(command -v "$who") ||
                        die "$who ($what) is not installed: is its package on .ci/packages, and has .ci/install run?"
        fi
        pkg=$(owner "$path") || die "$who is $path ($what), which no package installed: dpkg -S knows nothing of it"
        if [ "$(dpkg-query -W -f '${Essential}' "$pkg" 2>/dev/null)" = yes ]; then
                :
        elif [ "$section" = run ]; then
                [ -n "${on_run[$pkg]:-}" ] || [ -n "${via_run[$pkg]:-}" ] ||
                        die "$who is $path ($what) from the package $pkg, which .ci/packages' [run] section (the Debian package's Depends) does not name"
        elif [ -z "${on_list[$pkg]:-}" ] && [ -z "${via[$pkg]:-}" ]; then
                die "$who is $path ($what) from the package $pkg, which .ci/packages does not name"
        fi
        checked=$((checked + 1))
}

for p in "${product[@]}"; do
        [ -n "${EXCEPTIONS[$p]:-}" ] && continue
        check "$p" "run by the product" run
done
for p in "${PRODUCT_PATHS[@]}"; do check "$p" "run by the product" run; done
for p in "${TEST_PROGRAMS[@]}"; do check "$p" "run by the tests"; done
echo "packages: README.md quotes .ci/packages; ${#product[@]} programs the product looks up or names by path (${#EXCEPTIONS[@]} named exceptions) and ${#PRODUCT_PATHS[@]} more: from [run]'s ${#run_listed[@]} packages, their dependencies or Essential ones; ${#TEST_PROGRAMS[@]} the tests run: from its ${#listed[@]} packages, their dependencies or Essential ones; $checked checked"
