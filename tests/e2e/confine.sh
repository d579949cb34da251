#!/usr/bin/env bash
# run's inner confinement end to end, inside a booted test host (tests/host/run), after the project's own
# `sandbox setup` with the egress proxy: an agent (a test program, no model) tries, from inside bubblewrap,
# everything the inner layer must stop, and what the tools it needs must still do. The same agent is then
# run with `[run] confine = "none"` as the control: what the inner layer alone stops must work there, or
# the refusals above prove nothing. Then the preflight: socat missing stops the run with status 4 before
# anything is made.
#
# The host is thrown away after the run: this suite installs the project and changes the host for good.
#
# usage: bash tests/host/run --release trixie|bookworm tests/e2e/confine.sh
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/integration/lib.sh
. "$here/../integration/lib.sh"

require_test_host tests/e2e/confine.sh
build=${AJH_BUILD:-/build}
CLIENT=/usr/local/bin/agentic-job
RUNNER=runner
SANDBOX=runner-sandbox
REPO=/srv/ajt-repo
AGENT=/opt/ajt/attempts.sh
work=$(mktemp -d /tmp/ajt-confine.XXXXXX)
chmod 0755 "$work"
on_exit "rm -rf $work"

echo "# ${AJH_RELEASE:-unknown release}: $(systemctl --version | head -n1); $(bwrap --version); $(socat -V | sed -n 2p)"
ninja -C "$build" install >"$work/install.log" 2>&1 || { cat "$work/install.log"; echo "Bail out! install"; exit 1; }
useradd --create-home --shell /bin/bash "$RUNNER"
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
if ! "$CLIENT" sandbox setup --config "$work/config.toml" </dev/null >"$work/setup.out" 2>&1; then
        sed 's/^/# setup: /' "$work/setup.out"
        echo "Bail out! setup failed"
        exit 1
fi
pass "sandbox setup"
SANDBOX_HOME=$(getent passwd "$SANDBOX" | cut -d: -f6)
SANDBOX_UID=$(id -u "$SANDBOX")
RUNNER_TEMP=$RUNNER_HOME/temp
install -d -m 0700 -o "$RUNNER" -g "$RUNNER" "$RUNNER_TEMP"

# What the inner layer must keep from the agent, beyond what setup already closes: the runner's unix
# sockets (a 0666 one in /tmp, one in /run), an abstract one, and a sibling workspace of the sandbox user's
# own with a secret in it. Each server answers "reached" to whoever connects.
RUN_SOCK_DIR=/run/ajt-runner
install -d -m 0755 -o "$RUNNER" "$RUN_SOCK_DIR"
start_server() { # ADDRESS: socat as the runner, its pid recorded for the cleanup
        runuser -u "$RUNNER" -- socat "$1",fork SYSTEM:'echo reached' </dev/null >/dev/null 2>&1 &
        on_exit "kill $!"
}
start_server UNIX-LISTEN:/tmp/ajt-runner.sock,mode=666
start_server UNIX-LISTEN:$RUN_SOCK_DIR/runner.sock,mode=666
start_server ABSTRACT-LISTEN:ajt-runner-abstract
start_server TCP4-LISTEN:18080,bind=127.0.0.1,reuseaddr
start_server TCP6-LISTEN:18081,bind=[::1],reuseaddr
for _ in $(seq 100); do [ -S /tmp/ajt-runner.sock ] && [ -S $RUN_SOCK_DIR/runner.sock ] && break; sleep 0.05; done
install -d -m 0700 -o "$SANDBOX" -g "$SANDBOX" "$SANDBOX_HOME/sibling-workspace"
echo "sibling-secret-$RANDOM$RANDOM" >"$SANDBOX_HOME/sibling-workspace/secret"
chown "$SANDBOX:$SANDBOX" "$SANDBOX_HOME/sibling-workspace/secret"
chmod 0600 "$SANDBOX_HOME/sibling-workspace/secret"
echo "runner-secret" >"$RUNNER_HOME/secret"
chown "$RUNNER:$RUNNER" "$RUNNER_HOME/secret"
chmod 0600 "$RUNNER_HOME/secret"

# A repository with one commit.
git_q() { git -c init.defaultBranch=main -c user.name=t -c user.email=t@t.test "$@" >/dev/null 2>&1; }
install -d -m 0755 "$REPO"
git_q -C "$REPO" init
echo hello >"$REPO/README"
git_q -C "$REPO" add -A
git_q -C "$REPO" commit -m base
COMMIT=$(git -C "$REPO" rev-parse HEAD)
chmod -R a+rX "$REPO"

# The agent: each attempt one line "NAME: worked|refused (detail)" in out/attempts.txt.
install -d -m 0755 /opt/ajt
cat >"$AGENT" <<'EOT'
#!/bin/bash
exec 2>&1
mkdir -p out
note() { echo "$1: $2" >>out/attempts.txt; }
try() { # NAME COMMAND...: worked when the command succeeds
        local name=$1
        shift
        if "$@" >/dev/null 2>&1; then note "$name" worked; else note "$name" refused; fi
}
reach() { # ADDRESS: socat's answer is the server's "reached"
        [ "$(timeout 5 socat -u "$1" - 2>/dev/null)" = reached ]
}
try host-tcp4 reach TCP4:127.0.0.1:18080
try host-tcp6 reach TCP6:[::1]:18081
try host-abstract reach ABSTRACT-CONNECT:ajt-runner-abstract
try runner-socket-tmp reach UNIX-CONNECT:/tmp/ajt-runner.sock
try runner-socket-run reach UNIX-CONNECT:/run/ajt-runner/runner.sock
try user-manager systemd-run --user --quiet true
try sibling-workspace cat "$SANDBOX_HOME_PATH/sibling-workspace/secret"
try runner-secret cat "$RUNNER_SECRET_PATH"
try write-sandbox-home touch "$SANDBOX_HOME_PATH/ajt-written"
try write-run touch /run/ajt-written
try write-srv touch /srv/ajt-written
try unshare-user unshare -r true
# TIOCSTI on standard input (/dev/null): the filter's EPERM, or the kernel's ENOTTY without it.
tiocsti=$(perl -e 'my $c = "x"; ioctl(STDIN, 0x5412, $c) or print $!+0' </dev/null)
note tiocsti "errno $tiocsti"
# keyctl(KEYCTL_GET_KEYRING_ID, KEY_SPEC_PROCESS_KEYRING): x86-64's call number 250.
keyctl=$(perl -e '$r = syscall(250, 0, -2, 0); print $r < 0 ? $!+0 : 0')
note keyctl "errno $keyctl"
try metadata-direct curl -s -f -m 5 --noproxy '*' http://169.254.169.254/
try egress-direct curl -s -f -m 5 --noproxy '*' https://www.fake.test/
# What must work.
socat TCP4-LISTEN:8080,bind=127.0.0.1,reuseaddr,fork SYSTEM:'echo reached' </dev/null >/dev/null 2>&1 &
socat TCP6-LISTEN:8081,bind=[::1],reuseaddr,fork SYSTEM:'echo reached' </dev/null >/dev/null 2>&1 &
sleep 0.3
try own-server-tcp4 reach TCP4:127.0.0.1:8080
try own-server-tcp6 reach TCP6:[::1]:8081
try proxy-read curl -s -f -m 10 https://www.fake.test/
post=$(curl -s -o /dev/null -w '%{http_code}' -m 10 -X POST -d x https://www.fake.test/p)
note proxy-post "status $post"
# Protocol 0: ls-remote is one GET of info/refs (version 2 posts its ls-refs, which needs a [[write]] rule).
try git-ls-remote git -c protocol.version=0 ls-remote https://www.fake.test/git/fixture.git
tmpfile=$(cd / && mktemp)
note temp-file "$tmpfile"
note temp-dir "$TMPDIR"
echo kept >/tmp/ajt-in-tmp
note proc "$(ls /proc | grep -c '^[0-9]*$') processes visible"
note nnp "$(grep NoNewPrivs /proc/self/status | tr -s '\t ' ' ')"
exit 0
EOT
chmod 0755 "$AGENT"
echo "Try everything." >"$work/task.md"
chmod 0644 "$work/task.md"

run_as_runner() { # OUT ARGS...
        local out=$1
        shift
        runuser -u "$RUNNER" -- env -i PATH=/usr/bin:/bin HOME="$RUNNER_HOME" RUNNER_TEMP="$RUNNER_TEMP" \
                "$CLIENT" run --repo "$REPO" --commit "$COMMIT" --base main --task "$work/task.md" \
                --out "$out" "$@" </dev/null >"$work/run.out" 2>"$work/run.err"
        status=$?
}
show() { sed 's/^/# | /' "$work/run.out" "$work/run.err"; }
attempt() { grep "^$1: " "$A" | head -n 1 | cut -d' ' -f2-; }
AGENT_ENV="SANDBOX_HOME_PATH=$SANDBOX_HOME RUNNER_SECRET_PATH=$RUNNER_HOME/secret"

# ---------------------------------------------------------------------------------------------------------
echo "# inside the confinement"
OUT=$RUNNER_HOME/confined
# shellcheck disable=SC2086
run_as_runner "$OUT" --output out/attempts.txt -- /usr/bin/env $AGENT_ENV "$AGENT"
show
expect_eq "the confined run: status 0" 0 "$status"
A=$OUT/workspace/out/attempts.txt
sed 's/^/# attempt: /' "$A" 2>/dev/null
for name in host-tcp4 host-tcp6 host-abstract runner-socket-tmp runner-socket-run user-manager \
        sibling-workspace runner-secret write-sandbox-home write-run write-srv unshare-user \
        metadata-direct egress-direct; do
        expect_eq "confined: $name is refused" refused "$(attempt "$name")"
done
expect_eq "confined: TIOCSTI is refused by the filter (EPERM)" "errno 1" "$(attempt tiocsti)"
# nspawn refuses the keyring calls itself (EPERM, seen in the control below): the filter's own refusal
# of keyctl, with its control, is test-confine's.
expect_eq "confined: keyctl is refused (EPERM)" "errno 1" "$(attempt keyctl)"
for name in own-server-tcp4 own-server-tcp6 proxy-read git-ls-remote; do
        expect_eq "confined: $name works" worked "$(attempt "$name")"
done
expect_eq "confined: a POST without a rule meets the proxy's 403" "status 403" "$(attempt proxy-post)"
tmpdir=$(attempt temp-dir)
expect_contains "confined: TMPDIR is in the run's directory" "$SANDBOX_HOME/agentic-job-run-" "$tmpdir"
expect_contains "confined: a temp file made after cd / stays there" "$tmpdir/tmp." "$(attempt temp-file)"
expect_eq "confined: the agent sees only its own processes" 1 \
        "$([ "$(attempt proc | cut -d' ' -f1)" -lt 20 ] && echo 1 || echo 0)"
expect_eq "confined: no_new_privs" "NoNewPrivs: 1" "$(attempt nnp)"
expect_absent "confined: nothing was written in the sandbox user's home" "$SANDBOX_HOME/ajt-written"
expect_absent "confined: nor in /run" /run/ajt-written
expect_absent "confined: /tmp inside was the run's, not the host's" /tmp/ajt-in-tmp
expect_contains "summary.json: the confinement" '"confine": "bubblewrap"' "$(cat "$OUT/summary.json" 2>&1)"
expect_eq "nothing of the sandbox user survived" 0 "$(pgrep -u "$SANDBOX_UID" | wc -l)"

# ---------------------------------------------------------------------------------------------------------
echo "# the control: the same agent with [run] confine = \"none\""
cp -p /etc/agentic-job/config.toml "$work/installed.toml"
on_exit "cp -p $work/installed.toml /etc/agentic-job/config.toml"
printf '\n[run]\nconfine = "none"\n' >>/etc/agentic-job/config.toml
OUT=$RUNNER_HOME/unconfined
# shellcheck disable=SC2086
run_as_runner "$OUT" --output out/attempts.txt -- /usr/bin/env $AGENT_ENV "$AGENT"
expect_eq "the unconfined run: status 0" 0 "$status"
A=$OUT/workspace/out/attempts.txt
sed 's/^/# attempt: /' "$A" 2>/dev/null
for name in host-abstract runner-socket-tmp runner-socket-run sibling-workspace write-sandbox-home unshare-user; do
        expect_eq "unconfined: $name works (only the inner layer stops it)" worked "$(attempt "$name")"
done
expect_eq "unconfined: TIOCSTI reaches the kernel (ENOTTY)" "errno 25" "$(attempt tiocsti)"
echo "# unconfined: keyctl gives $(attempt keyctl) (the test host's own filter, where it is 'errno 1')"
expect_contains "summary.json: the opt-out is recorded" '"confine": "none"' "$(cat "$OUT/summary.json" 2>&1)"
expect_contains "summary.md: and named" 'confinement | none: [run] confine' "$(cat "$OUT/summary.md" 2>&1)"
rm -f "$SANDBOX_HOME/ajt-written"
cp -p "$work/installed.toml" /etc/agentic-job/config.toml

# ---------------------------------------------------------------------------------------------------------
echo "# the preflight: socat missing"
mv /usr/bin/socat /usr/bin/socat.ajt-away
on_exit "mv /usr/bin/socat.ajt-away /usr/bin/socat"
OUT=$RUNNER_HOME/preflight
run_as_runner "$OUT" --patch -- /bin/true
show
mv /usr/bin/socat.ajt-away /usr/bin/socat
expect_eq "socat missing: status 4" 4 "$status"
expect_contains "... one line naming it" "the inner confinement cannot run: /usr/bin/socat: No such file or directory" \
        "$(cat "$work/run.err")"
expect_eq "... and no run directory was made" 0 \
        "$(find "$SANDBOX_HOME" -maxdepth 1 -name 'agentic-job-run-*' | wc -l)"
