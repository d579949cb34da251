#!/usr/bin/env bash
# `agentic-job policy test` on every line of the shared corpus (cases.txt): its exit status and its
# printed verdict must be the line's, and an allow line's rule= its reason. Then its usage and
# configuration errors: status 2 and a message naming what was wrong. corpus_args is how a line becomes
# the command's arguments; the end-to-end test maps the same words to curl's options.
#
# usage: run-cases.sh CLIENT DIR     (DIR holds cases.txt, policy.toml and threats.txt)
set -u
client=$1
dir=$2
failures=0
passes=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

pass() {
        passes=$((passes + 1))
}

fail() {
        failures=$((failures + 1))
        printf 'not ok - %s\n' "$*"
}

# corpus_args WORD...: the words of a line after VERDICT, as policy test's arguments, in the array args;
# the expected rule, if any, in rule. Returns 1 for a word the format does not know.
corpus_args() {
        local word
        args=("$1" "$2")
        rule=
        shift 2
        for word in "$@"; do
                case $word in
                body) args+=(--body) ;;
                upgrade) args+=(--upgrade) ;;
                host=*) args+=(--host "${word#host=}") ;;
                sni=*) args+=(--sni "${word#sni=}") ;;
                authority=*) args+=(--authority "${word#authority=}") ;;
                rule=*) rule=${word#rule=} ;;
                *) return 1 ;;
                esac
        done
}

lineno=0
cases=0
while IFS= read -r line || [ -n "$line" ]; do
        lineno=$((lineno + 1))
        case $line in
        '' | '#'*) continue ;;
        esac
        read -r -a words <<<"$line"
        verdict=${words[0]}
        if ! corpus_args "${words[@]:1}"; then
                fail "cases.txt:$lineno: not VERDICT METHOD URL [FLAG...]"
                continue
        fi
        cases=$((cases + 1))
        out=$("$client" policy test "${args[@]}" --policy "$dir/policy.toml" --threats "$dir/threats.txt" 2>&1)
        status=$?
        case $verdict in
        allow) expected=0 ;;
        deny) expected=1 ;;
        *)
                fail "cases.txt:$lineno: verdict '$verdict'"
                continue
                ;;
        esac
        if [ "$status" -ne "$expected" ] || [ "${out%% *}" != "$verdict" ] || [ "$(printf '%s\n' "$out" | wc -l)" -ne 1 ]; then
                fail "cases.txt:$lineno: $line: status $status, '$out'"
        elif [ -n "$rule" ] && [ "$out" != "allow $rule" ]; then
                fail "cases.txt:$lineno: $line: '$out', expected 'allow $rule'"
        else
                pass
        fi
done <"$dir/cases.txt"
[ "$cases" -ge 60 ] || fail "only $cases cases in cases.txt"

# expect_usage WHAT MESSAGE ARG...: status 2 and a first line of standard error that contains MESSAGE.
expect_usage() {
        local what=$1 message=$2 err status
        shift 2
        err=$("$client" policy test "$@" 2>&1 >/dev/null)
        status=$?
        if [ "$status" -eq 2 ] && [[ "${err%%$'\n'*}" == *"$message"* ]]; then
                pass
        else
                fail "$what: status $status, '$err'"
        fi
}

good=(--policy "$dir/policy.toml" --threats "$dir/threats.txt")
expect_usage "no arguments" "agentic-job policy test: missing the method and the URL"
expect_usage "no URL" "agentic-job policy test: missing the URL" GET
expect_usage "a third word" "one request at a time, unexpected x" GET https://www.fake.test/ x "${good[@]}"
expect_usage "an unknown option" "unknown option --data" GET https://www.fake.test/ --data "${good[@]}"
expect_usage "an option twice" "given twice: --body" POST https://www.fake.test/ --body --body "${good[@]}"
expect_usage "an option twice" "given twice: --host" GET https://www.fake.test/ --host a --host b "${good[@]}"
expect_usage "an option without its value" "needs a value: --policy" GET https://www.fake.test/ --policy
expect_usage "not a URL" "www.fake.test/: not an http:// or https:// URL" GET www.fake.test/ "${good[@]}"
expect_usage "a bad host" "is not a valid host" GET 'https://a b/' "${good[@]}"
expect_usage "user information" "user information" GET https://u@www.fake.test/ "${good[@]}"
expect_usage "--sni with http" "--sni needs an https URL" GET http://www.fake.test/ --sni x "${good[@]}"
expect_usage "--authority with http" "--authority needs an https URL" GET http://www.fake.test/ \
        --authority x "${good[@]}"
expect_usage "a missing policy" "$tmp/none.toml: No such file or directory" GET https://www.fake.test/ \
        --policy "$tmp/none.toml" --threats "$dir/threats.txt"
expect_usage "a missing threat list" "$tmp/none.txt: No such file or directory" GET https://www.fake.test/ \
        --policy "$dir/policy.toml" --threats "$tmp/none.txt"
printf '[[write]]\nname = "r"\nwhy = "w"\nhosts = ["*.x"]\nmethods = ["POST"]\npaths = ["/"]\n' >"$tmp/bad.toml"
expect_usage "a bad policy" "$tmp/bad.toml:4:10: rule \"r\": hosts: \"*.x\" is refused" GET https://www.fake.test/ \
        --policy "$tmp/bad.toml"
printf 'ok.test\nnot ok\n' >"$tmp/bad.txt"
expect_usage "a bad threat list" "$tmp/bad.txt:2: \"not ok\" is not a host name" GET https://www.fake.test/ \
        --policy "$dir/policy.toml" --threats "$tmp/bad.txt"

# Options go anywhere after "policy test"; a CONNECT is decided alone.
out=$("$client" policy test --body --policy "$dir/policy.toml" POST --threats "$dir/threats.txt" \
        https://upload.fake.test/upload/x)
[ "$out" = "allow upload" ] && pass || fail "options before the words: '$out'"
out=$("$client" policy test CONNECT https://www.fake.test "${good[@]}")
[ "$out" = "allow tunnel" ] && pass || fail "CONNECT: '$out'"
out=$("$client" policy test GET https://www.fake.test/ --authority 'a b' "${good[@]}")
[ "$?" -eq 1 ] && [ "$out" = "deny malformed request: the URL's host a%20b is not a valid host name" ] && pass ||
        fail "a malformed --authority: '$out'"
out=$("$client" policy test CONNECT https://www.fake.test:8443 "${good[@]}")
[ "$?" -eq 1 ] && [ "$out" = "deny a tunnel (CONNECT) to port 8443: tunnels go to port 443 only" ] && pass ||
        fail "CONNECT to 8443: '$out'"

printf '%d passed, %d failed (%d corpus cases)\n' "$passes" "$failures" "$cases"
[ "$failures" -eq 0 ]
