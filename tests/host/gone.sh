# check_runs_gone LOG COUNT: the proof of teardown, for tests that use tests/host/run. LOG holds the
# harness's lines (its standard error) of every run the test made; COUNT runs must have booted, and of
# none of them may a directory, network namespace, cgroup, mount or process remain. Source it after
# tests/integration/lib.sh.
cgroup_roots() { findmnt -rn -t cgroup2,cgroup -o TARGET; }

check_runs_gone() {
        local log=$1 count=$2 cache=${AJH_CACHE:-/var/cache/agentic-job-test}
        local ids namespaces left="" id r ns p
        ids=$(sed -n 's/^# host: \([0-9a-f]\{6\}\): .*/\1/p' "$log" | sort -u)
        namespaces=$(sed -n 's/^# host: [0-9a-f]\{6\}: init is pid [0-9]* in \(pid:\[[0-9]*\]\)$/\1/p' "$log")
        expect_eq "$count runs were made, each booted once" "$count $count" \
                "$(echo "$ids" | wc -w) $(echo "$namespaces" | wc -w)"
        # A namespace's inode number is reused once it is freed: one may stand for several runs.
        namespaces=$(echo "$namespaces" | sort -u)
        for id in $ids; do
                [ -e "$cache/run/$id" ] && left+=" directory of $id;"
                ip netns list | grep -q "^ajh-$id-" && left+=" network namespace of $id;"
                for r in $(cgroup_roots); do
                        [ -e "$r/ajh-$id" ] && left+=" cgroup $r/ajh-$id;"
                done
                grep -qF " $cache/run/$id/" /proc/self/mountinfo && left+=" mount of $id;"
                # Bracketed, so that grep does not find its own command line.
                grep -lzs -e "ajh-test-[${id:0:1}]${id:1}" -e "/run/[${id:0:1}]${id:1}/" \
                        /proc/[0-9]*/cmdline >/dev/null && left+=" process naming $id;"
        done
        for ns in $namespaces; do
                for p in /proc/[0-9]*/ns/pid; do
                        [ "$(readlink "$p" 2>/dev/null)" = "$ns" ] && left+=" process ${p#/proc/} in $ns;" && break
                done
        done
        expect_eq "no directory, network namespace, cgroup, mount or process of any run remains" "" "$left"
}
