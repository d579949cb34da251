#!/usr/bin/env bash
# Inside a test host (tests/host/run): the fake internet is reachable by name over HTTPS with the
# certificate authority the host was given, the metadata stand-in answers at 169.254.169.254, and the
# host's only way out is the fake internet, which routes nowhere further. Every address is checked with
# `ip route get` before anything is sent to it.
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../integration/lib.sh
. "$here/../integration/lib.sh"

echo "# release ${AJH_RELEASE:-?}"

# send_ok ADDR: the address leaves through eth0 towards the fake internet's router, or the test stops.
route_to_fake() {
        local r
        r=$(ip route get "$1" 2>&1)
        case $r in
        *" via 198.51.100.1 dev eth0 "*) return 0 ;;
        esac
        fail "$1 would not go to the fake internet ($r); nothing sent"
        return 1
}

links=$(ip -o link show | awk -F': ' '{ sub(/@.*/, "", $2); print $2 }' | sort | tr '\n' ' ')
expect_eq "the host has only a loopback and one link, to the fake internet" "eth0 lo " "$links"
expect_eq "the host's one route out is the fake internet's router" \
        "default via 198.51.100.1 dev eth0" "$(ip route show default | sed 's/ *$//')"

for name in www.fake.test upload.fake.test other.fake.test; do
        addr=$(getent hosts "$name" | awk '{ print $1 }')
        case $addr in
        203.0.113.* | 198.51.100.*) pass "$name resolves to a documentation address ($addr)" ;;
        *) fail "$name resolves to '$addr'" ;;
        esac
done
if getent hosts deb.debian.org >/dev/null; then
        fail "a name outside the fake internet resolves"
else
        pass "a name outside the fake internet does not resolve"
fi

if route_to_fake 203.0.113.10; then
        out=$(curl -sS --max-time 10 https://www.fake.test/hello 2>&1)
        expect_contains "HTTPS by name, certificate checked against the host's trust store" \
                '"server": "www.fake.test", "address": "203.0.113.10", "tls": true, "method": "GET", "host": "www.fake.test", "path": "/hello"' "$out"
        out=$(curl -sS --max-time 10 http://www.fake.test/plain 2>&1)
        expect_contains "plain HTTP by name" '"tls": false' "$out"
        # The same request with a trust store that lacks the test CA must fail: the check above is real.
        curl -sS --max-time 10 --cacert /usr/share/ca-certificates/mozilla/ISRG_Root_X1.crt \
                --capath /nonexistent https://www.fake.test/ >/dev/null 2>&1
        expect_eq "without the test CA the certificate is refused (curl status 60)" 60 "$?"
        out=$(setpriv --reuid=65534 --regid=65534 --clear-groups curl -sS --max-time 10 \
                https://upload.fake.test/ -d 'x=1' 2>&1)
        expect_contains "an unprivileged user reaches a second server by name, POST" \
                '"server": "upload.fake.test", "address": "203.0.113.20", "tls": true, "method": "POST"' "$out"
        out=$(curl -sS --max-time 10 https://www.fake.test/_ajh/requests 2>&1)
        expect_contains "the fake server records what reached it" '"path": "/hello"' "$out"
fi

if route_to_fake 169.254.169.254; then
        out=$(curl -sS --max-time 10 http://169.254.169.254/computeMetadata/v1/ 2>&1)
        expect_contains "the metadata stand-in answers inside the fake internet" \
                '"server": "metadata", "address": "169.254.169.254"' "$out"
fi

# A documentation address the fake internet does not hold: the fake internet is an end host, not a
# router (forwarding off, no route beyond its own link), so what is sent there goes nowhere.
if route_to_fake 198.51.100.99; then
        out=$(curl -sS --connect-timeout 2 --max-time 3 http://198.51.100.99/ 2>&1)
        st=$?
        case $st in
        7 | 28) pass "an address outside the fake internet gets no answer (curl status $st)" ;;
        *) fail "curl to an unserved address ended with status $st: $out" ;;
        esac
fi
