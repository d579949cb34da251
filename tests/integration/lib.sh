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

# expect_contains WHAT NEEDLE HAYSTACK: where it fails, a haystack longer than the failure's line shows is
# shown whole after it (its first 80 lines), so that a rare failure says what it met.
expect_contains() {
        case "$3" in
        *"$2"*) pass "$1" ;;
        *)
                fail "$1: expected to contain '$2', got '${3:0:400}'"
                [ "${#3}" -le 400 ] || printf '%s\n' "$3" | head -n 80 | sed 's/^/# | /'
                ;;
        esac
}

# expect_lacks WHAT NEEDLE HAYSTACK
expect_lacks() {
        case "$3" in
        *"$2"*) fail "$1: expected not to contain '$2', got '${3:0:400}'" ;;
        *) pass "$1" ;;
        esac
}

expect_absent() {
        if [ -e "$2" ] || [ -L "$2" ]; then fail "$1: $2 exists"; else pass "$1"; fi
}

# build_define HEADER NAME: the quoted value of a #define the build wrote (BUILD/build-config.h's
# HELPER_PATH, PROFILE_DIR; BUILD/policy/squid/egress-paths.h's paths): what the programs were compiled
# with. Prints nothing, and returns 1, when the header has no such string.
build_define() {
        local value
        value=$(sed -n "s/^#define $2 \"\\(.*\\)\"\$/\\1/p" "$1" 2>/dev/null)
        [ -n "$value" ] || return 1
        printf '%s\n' "$value"
}

# require_test_host SCRIPT: stop unless this is root in a disposable test host (tests/host/run sets
# AJH_ID, and systemd runs there): what follows changes the machine for good.
require_test_host() {
        if [ ! -d /run/systemd/system ] || [ "$(id -u)" -ne 0 ] || [ -z "${AJH_ID:-}" ]; then
                echo "Bail out! needs root in a disposable test host (bash tests/host/run ... $1)"
                trap - EXIT
                exit 1
        fi
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
        # An EXIT trap's last status is not the script's: only an explicit exit changes it.
        [ "$failures" -eq 0 ] || exit 1
        [ "$passes" -gt 0 ] || {
                printf 'not ok - no check ran\n'
                exit 1
        }
}
trap finish EXIT
trap 'exit 130' INT TERM

# Kills every process of a uid by having a process of that uid signal everything it may (never by name).
# bash's kill, not util-linux's: /usr/bin/kill of Debian 13 (2.41) refuses "-KILL -1" ("failed to parse
# argument") and both releases' refuse "-s KILL -- -1", each killing nothing, which 2>/dev/null hid.
kill_uid() {
        local uid=$1 n
        for n in 1 2 3 4 5 6 7 8 9 10; do
                setpriv --reuid="$uid" --regid=65534 --clear-groups --inh-caps=-all \
                        --bounding-set=-all /bin/bash -c 'kill -s KILL -1' 2>/dev/null || true
                live_of_uid "$uid" >/dev/null || return 0
                sleep 0.1
        done
        return 1
}

# Prints the pids whose real, effective or saved uid is in [lo, hi] and which still run: a process lives
# while any of its threads is not a zombie (a main thread that called pthread_exit() shows State: Z while
# its process goes on). Status 1 when there are none. One pass of one awk over every thread's status file
# (each starts with its Name: line).
live_in_range() {
        cat /proc/[0-9]*/task/[0-9]*/status 2>/dev/null | awk -v lo="$1" -v hi="$2" '
                /^Name:/ { state = ""; pid = "" }
                /^State:/ { state = $2 }
                /^Tgid:/ { pid = $2 }
                /^Uid:/ {
                        if (state == "Z" || state == "X" || pid == "" || (pid in seen)) next
                        for (i = 2; i <= 4; i++)
                                if ($i + 0 >= lo + 0 && $i + 0 <= hi + 0) { print pid; seen[pid] = 1; found = 1; break }
                }
                END { exit found ? 0 : 1 }'
}

live_of_uid() {
        live_in_range "$1" "$1"
}

# left_of_uid UID: how many live processes UID still has once it has none, or after 10 s.
left_of_uid() {
        local left=x
        for _ in $(seq 200); do
                left=$(live_of_uid "$1" | wc -l)
                [ "$left" = 0 ] && break
                sleep 0.05
        done
        echo "$left"
}

# podman_without_subids USER WORK: rootless podman for USER as a test host can give it. USER's subordinate
# ids taken away (restored at exit): with them, podman cannot start under the helper's no_new_privs;
# without, it maps USER's one uid itself. Then what podman needs in a test host and a real machine does
# not: the host's home is on overlayfs (no native overlay: vfs), and systemd-nspawn refuses keyctl(2) and
# keeps /proc/sys read-only (no session keyring, no default sysctls). In root's files, /etc/containers
# (restored at exit), since the check's podman reads no file of USER's. Files saved in WORK.
podman_without_subids() {
        local user=$1 work=$2 f
        cp -p /etc/subuid "$work/subuid.saved"
        cp -p /etc/subgid "$work/subgid.saved"
        on_exit "cp -p $work/subuid.saved /etc/subuid; cp -p $work/subgid.saved /etc/subgid"
        sed -i "/^$user:/d" /etc/subuid /etc/subgid
        install -d -m 0755 /etc/containers
        for f in storage.conf containers.conf; do
                if [ -e "/etc/containers/$f" ]; then
                        cp -p "/etc/containers/$f" "$work/$f.saved"
                        on_exit "cp -p $work/$f.saved /etc/containers/$f"
                else
                        on_exit "rm -f /etc/containers/$f"
                fi
        done
        printf '[storage]\ndriver = "vfs"\n' >/etc/containers/storage.conf
        printf '[containers]\nkeyring = false\ndefault_sysctls = []\n' >/etc/containers/containers.conf
        chmod 0644 /etc/containers/storage.conf /etc/containers/containers.conf
}

# curl_image_archive WORK RUN...: the curl image (curl_image_tar) as a docker-archive of root's alone,
# /var/lib/ajt-images/curl.tar (removed at exit), made by the sandbox user's rootless podman (imported,
# saved, then taken out of its store again), through RUN... (a command that runs its arguments as the
# sandbox user, in a step: sandbox exec); CURL_IMAGE, the container-image value that names it (a
# variable, not output: on_exit must run in the caller's shell). The check pulls its image into a store
# of its own, and takes an archive only where root alone may write it.
curl_image_archive() {
        local work=$1
        shift
        CURL_IMAGE=
        curl_image_tar "$work"
        install -d -m 0777 "$work/archive"
        "$@" sh -c 'cd / && podman import -q "$1" localhost/ajt-check-curl:1 >/dev/null &&
                 podman save -q --format docker-archive -o "$2/curl.tar" localhost/ajt-check-curl:1 &&
                 podman rmi localhost/ajt-check-curl:1 >/dev/null' sh "$work/rootfs.tar" "$work/archive" \
                </dev/null >"$work/archive.out" 2>&1 || { sed 's/^/# | /' "$work/archive.out" >&2; return 1; }
        install -d -m 0755 /var/lib/ajt-images
        on_exit "rm -rf /var/lib/ajt-images"
        install -m 0644 -o root -g root "$work/archive/curl.tar" /var/lib/ajt-images/curl.tar
        rm -rf "$work/archive"
        CURL_IMAGE=docker-archive:/var/lib/ajt-images/curl.tar
}

# curl_image_tar WORK: WORK/rootfs.tar, an image's root filesystem made here without a registry: busybox's
# sh, true and cat, the host's curl and its libraries, the host's /etc/os-release. Readable by all.
curl_image_tar() {
        local rootfs=$1/rootfs
        mkdir -p "$rootfs/bin" "$rootfs/tmp" "$rootfs/etc"
        cp /bin/busybox "$rootfs/bin/busybox"
        for t in sh true cat; do ln -s busybox "$rootfs/bin/$t"; done
        for f in /usr/bin/curl $(ldd /usr/bin/curl | grep -o '/[^ ]*'); do cp --parents -L "$f" "$rootfs/"; done
        cp -L /etc/os-release "$rootfs/etc/os-release"
        tar -C "$rootfs" -cf "$1/rootfs.tar" .
        chmod 0644 "$1/rootfs.tar"
}

# WALL_US, a script for bash -c: bash -c "$WALL_US" OUT COMMAND... runs COMMAND, its output and errors
# to OUT, and prints its wall time in microseconds, taken in that shell (bash's EPOCHREALTIME, no process
# around the command). Run through what becomes the runner (runuser), so that becoming it, which a job
# step does not pay, is not counted. Fails where COMMAND fails.
# shellcheck disable=SC2016
WALL_US='b=${EPOCHREALTIME/./}; "$@" >"$0" 2>&1 || exit 1; e=${EPOCHREALTIME/./}; echo $((e - b))'
