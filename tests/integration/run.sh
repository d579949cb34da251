#!/usr/bin/env bash
# `agentic-job run` on this machine, as root, through real sudo and the helper's direct backend (no
# systemd as PID 1 here, as on the CI machine): a real git repository, an agent that does its job and
# leaves a daemon that ignores SIGTERM in a session of its own; the output exported, the daemon ended,
# the clone disposed of. The egress proxy is off (the fixture's configuration). Everything it creates is
# removed, also when it fails.
#
# usage: tests/integration/run.sh BUILD_DIR
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/integration/lib.sh
. "$here/lib.sh"

. "$here/fixture.sh"

RUNNER_HOME=$(getent passwd "$RUNNER" | cut -d: -f6)
repo=$(mktemp -d /tmp/ajt-run-repo.XXXXXX)
on_exit "rm -rf $repo"
git_q() { git -c init.defaultBranch=main -c user.name=t -c user.email=t@t.test "$@" >/dev/null 2>&1; }
git_q -C "$repo" init
mkdir -p "$repo/.claude"
echo base >"$repo/.claude/trusted"
echo one >"$repo/file"
git_q -C "$repo" add -A
git_q -C "$repo" commit -m base
git_q -C "$repo" checkout -b pr
echo pull-request >"$repo/.claude/trusted"
echo two >>"$repo/file"
git_q -C "$repo" add -A
git_q -C "$repo" commit -m pr
commit=$(git -C "$repo" rev-parse HEAD)
chmod -R a+rX "$repo"
chmod 0755 "$repo"

# Outside /tmp: the inner confinement hides the host's /tmp (the agent's is the run's own).
agent_dir=$(mktemp -d /opt/ajt-run-agent.XXXXXX)
chmod 0755 "$agent_dir"
on_exit "rm -rf $agent_dir"
agent=$agent_dir/agent.sh
cat >"$agent" <<'EOF'
#!/bin/bash
mkdir -p out
{ cat file; cat .claude/trusted; echo "home=$HOME"; } >out/result.txt
setsid bash -c 'trap "" TERM HUP; exec sleep 100000' </dev/null >/dev/null 2>&1 &
echo "::error::from the agent"
EOF
chmod 0755 "$agent"
task=$(mktemp /tmp/ajt-run-task.XXXXXX)
on_exit "rm -f $task"
echo "the task" >"$task"
chmod 0644 "$task"
out_dir=$RUNNER_HOME/run-out
on_exit "rm -rf $out_dir"

echo "# run, through the direct backend"
out=$(runuser -u "$RUNNER" -- env -i PATH=/usr/bin:/bin HOME="$RUNNER_HOME" "$CLIENT" run --repo "$repo" \
        --commit "$commit" --base main --task "$task" --out "$out_dir" --output out/result.txt --patch \
        -- "$agent" </dev/null 2>&1)
status=$?
expect_eq "run: status 0" 0 "$status"
[ "$status" = 0 ] || sed 's/^/# | /' <<<"$out"
result=$(cat "$out_dir/workspace/out/result.txt" 2>&1)
expect_eq "the output holds the commit's file and the base's trusted path" "one
two
base" "$(head -n 3 <<<"$result")"
expect_contains "HOME is in the run's directory" "home=$SB_HOME/agentic-job-run-" "$result"
patch=$(cat "$out_dir/patch.diff" 2>&1)
expect_contains "the patch holds the agent's new file" "+++ b/out/result.txt" "$patch"
expect_lacks "... and nothing of the trusted path" ".claude" "$patch"
expect_contains "the agent's workflow command defused" ": :error::from the agent" "$out"
# The daemon dies with the confinement's pid namespace, or at the latest with the sandbox user's end.
expect_contains "the agent ran inside bubblewrap" '"confine": "bubblewrap"' "$(cat "$out_dir/summary.json")"
expect_eq "no thread of the sandbox user is left" 0 "$(threads_left)"
expect_eq "the run's directory is gone" "" "$(find "$SB_HOME" -maxdepth 1 -name 'agentic-job-run-*')"
expect_contains "summary.json says it succeeded" '"result": "succeeded"' "$(cat "$out_dir/summary.json")"
expect_eq "the output directory is the runner's alone" "700 $RUNNER" "$(stat -c '%a %U' "$out_dir")"
expect_eq "without the proxy there is no egress log" "" "$(ls "$out_dir/egress.jsonl" 2>/dev/null)"

echo "# the repository's setup command, in the same boundary, before the agent"
setup_out=$RUNNER_HOME/run-setup
on_exit "rm -rf $setup_out $RUNNER_HOME/run-setup-fails"
out=$(runuser -u "$RUNNER" -- env -i PATH=/usr/bin:/bin HOME="$RUNNER_HOME" "$CLIENT" run --repo "$repo" \
        --commit "$commit" --base main --task "$task" --out "$setup_out" --output out/setup.txt \
        --setup 'mkdir -p out && { id -un; pwd; } >out/setup.txt' -- /bin/true </dev/null 2>&1)
status=$?
expect_eq "run with --setup: status 0" 0 "$status"
expect_eq "the setup command ran as the sandbox user, in the clone" "$SANDBOX
$SB_HOME/agentic-job-run-" "$(sed 's,^\(.*/agentic-job-run-\)[0-9a-f]*/workspace$,\1,' "$setup_out/workspace/out/setup.txt" 2>&1)"
out=$(runuser -u "$RUNNER" -- env -i PATH=/usr/bin:/bin HOME="$RUNNER_HOME" "$CLIENT" run --repo "$repo" \
        --commit "$commit" --base main --task "$task" --out "$RUNNER_HOME/run-setup-fails" --output out/agent.txt \
        --setup 'exit 3' -- sh -c 'mkdir -p out; echo ran >out/agent.txt' </dev/null 2>&1)
status=$?
expect_eq "a failing setup command: status 1" 1 "$status"
expect_contains "... named" "the setup command failed: exit status 3" "$out"
expect_contains "... and the agent did not run" '| ` out/agent.txt ` | refused | 0 | ` missing ` |' \
        "$(cat "$RUNNER_HOME/run-setup-fails/summary.md" 2>&1)"
expect_eq "no thread of the sandbox user is left" 0 "$(threads_left)"

echo "# a setup command that rewrites the trusted paths, and goes on rewriting them: the agent sees the base's"
on_exit "rm -rf $RUNNER_HOME/run-setup-rewrites"
rewrite='echo setup >.claude/trusted; echo x >.claude/added; setsid sh -c "while :; do echo daemon >.claude/trusted; sleep 0.01; done" </dev/null >/dev/null 2>&1 & sleep 0.3'
out=$(runuser -u "$RUNNER" -- env -i PATH=/usr/bin:/bin HOME="$RUNNER_HOME" "$CLIENT" run --repo "$repo" \
        --commit "$commit" --base main --task "$task" --out "$RUNNER_HOME/run-setup-rewrites" \
        --output out/trusted.txt --setup "$rewrite" \
        -- sh -c 'mkdir -p out; sleep 0.3; { cat .claude/trusted; ls -A .claude; } >out/trusted.txt' </dev/null 2>&1)
status=$?
expect_eq "run whose setup command rewrites the trusted paths: status 0" 0 "$status"
[ "$status" = 0 ] || sed 's/^/# | /' <<<"$out"
expect_eq "... the agent read the base's trusted path, and nothing added beside it" "base
trusted" "$(cat "$RUNNER_HOME/run-setup-rewrites/workspace/out/trusted.txt" 2>&1)"
expect_contains "... the setup command had its own phase" "setup: ok in" "$out"
expect_eq "no thread of the sandbox user is left" 0 "$(threads_left)"

echo "# the clone's bounds: a pull request that adds 512 MiB of zeros, a pack of half a megabyte (the review's
# was 1 GiB; half of it is twice the default bound, and half the time of the local packing)"
big=$(mktemp -d /tmp/ajt-run-big.XXXXXX)
on_exit "rm -rf $big"
git_q -C "$big" init
echo base >"$big/file"
git_q -C "$big" add -A
git_q -C "$big" commit -m base
git_q -C "$big" checkout -b pr
truncate -s 512M "$big/zeros"
git_q -C "$big" add zeros
git_q -C "$big" commit -m zeros
rm -f "$big/zeros"
big_commit=$(git -C "$big" rev-parse HEAD)
chmod -R a+rX "$big"
echo "# its objects: $(du -sk "$big/.git/objects" | cut -f1) KiB"
# run_big NAME [CONFIG LINES]: a run of the big commit with [run] CONFIG LINES; its output in $out, its
# status in $status, its time in $ms.
run_big() {
        local name=$1 start
        shift
        write_config <<<"$BASE_CONFIG
[run]
$*"
        on_exit "rm -rf $RUNNER_HOME/$name"
        start=$(date +%s%N)
        out=$(runuser -u "$RUNNER" -- env -i PATH=/usr/bin:/bin HOME="$RUNNER_HOME" "$CLIENT" run --repo "$big" \
                --commit "$big_commit" --base main --task "$task" --out "$RUNNER_HOME/$name" --patch \
                -- sh -c 'echo the agent ran; exit 9' </dev/null 2>&1)
        status=$?
        ms=$((($(date +%s%N) - start) / 1000000))
        echo "# $name: status $status in $ms ms"
}
run_big run-big-object
expect_eq "a file of 512 MiB in the commit: the run never started (status 4)" 4 "$status"
expect_contains "... refused by its size, before the checkout" \
        "zeros is 536870912 bytes, more than [run] clone-max-object-bytes (268435456)" "$out"
expect_lacks "... and the agent did not run" "the agent ran" "$out"
expect_eq "... the run's directory is gone" "" "$(find "$SB_HOME" -maxdepth 1 -name 'agentic-job-run-*')"
run_big run-big-checkout "clone-max-object-bytes = 2147483648
clone-max-checkout-bytes = 536870911"
expect_eq "the checkout over clone-max-checkout-bytes: status 4" 4 "$status"
expect_contains "... named" "the checkout is more than [run] clone-max-checkout-bytes (536870911) bytes, at zeros" "$out"
run_big run-big-memory "clone-max-object-bytes = 2147483648
clone-max-memory = 134217728"
sed -n 's/^/# | /; /clone-max-memory/p' <<<"$out"
expect_eq "the file allowed, the memory not: status 4" 4 "$status"
expect_contains "... libgit2 ran out of the clone's memory, and says which bound" \
        "(the clone's memory is at most [run] clone-max-memory, 134217728 bytes)" "$out"
run_big run-big-bytes "clone-max-bytes = 100000"
expect_eq "the transfer over clone-max-bytes: status 4" 4 "$status"
expect_contains "... cut there" "passed [run] clone-max-bytes (100000 bytes): cut there" "$out"
expect_eq "no thread of the sandbox user is left" 0 "$(threads_left)"
write_config <<<"$BASE_CONFIG"

# A full disk where the outputs go (a tmpfs of 1 MiB, filled): whatever could not be written is said, no
# summary is left cut, and the last line points at no file that is not there.
echo "# the output directory on a full disk"
full=$(mktemp -d "$RUNNER_HOME/run-full.XXXXXX")
on_exit "rmdir $full"
if mount -t tmpfs -o size=1m,mode=0755 ajt-full "$full"; then
        on_exit "umount $full"
        chown "$RUNNER" "$full"
        head -c 2M /dev/zero >"$full/fill" 2>/dev/null
        out=$(runuser -u "$RUNNER" -- env -i PATH=/usr/bin:/bin HOME="$RUNNER_HOME" "$CLIENT" run --repo "$repo" \
                --commit "$commit" --base main --task "$task" --out "$full/out" --output out/result.txt \
                -- "$agent" </dev/null 2>&1)
        status=$?
        sed 's/^/# | /' <<<"$(tail -n 4 <<<"$out")"
        expect_eq "a full disk: the run failed in its cleanup (status 2)" 2 "$status"
        expect_contains "... it says the summary could not be written" "cannot write the summary in $full/out: No space left on device" "$out"
        expect_contains "... and its last line points at no summary" "(exit 2); no summary" "$(tail -n 1 <<<"$out")"
        expect_eq "... no summary.json or summary.md is left, cut or whole" "" "$(ls "$full/out" | grep summary)"
        expect_eq "... no thread of the sandbox user is left" 0 "$(threads_left)"
else
        fail "cannot mount a tmpfs for the full disk"
fi

finish
