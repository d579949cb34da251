#!/usr/bin/env bash
# One build setting for the helper's path, and the paths under the prefix: the option helper_path, what
# the client was compiled with (build-config.h, which tests/integration/fixture.sh reads too, and what the
# client itself says), the built manual pages (made from man/*.in), and the sudo rule template. The pages
# may name a libexec path only if it is the helper, its directory or the egress proxy's decision helper,
# and a path of the package's data only if it is under the data directory the client was compiled with;
# the sudo rule the helper's page quotes is the template's, which names the helper only as @HELPER@ (that
# setup's rule is the template filled in is tests/unit/test-setup-text.c's part).
#
# usage: build-paths.sh BUILD CLIENT HELPER_PATH_OPTION SUDOERS_TEMPLATE MANPAGE...
set -u
# Bytes, not characters: the pages hold UTF-8, and grep -a reads them as text whatever the locale.
export LC_ALL=C
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/integration/lib.sh
. "$here/integration/lib.sh"

build=${1:?usage: build-paths.sh BUILD CLIENT HELPER_PATH_OPTION SUDOERS_TEMPLATE MANPAGE...}
client=${2:?}
option=${3:?}
template=${4:?}
shift 4
[ $# -gt 0 ] || { echo "Bail out! no manual page given"; exit 1; }
tmp=$(mktemp -d)
on_exit "rm -rf $tmp"

# What the programs were compiled with.
helper=$(build_define "$build/build-config.h" HELPER_PATH)
profiles=$(build_define "$build/build-config.h" PROFILE_DIR)
acl=$(build_define "$build/policy/squid/egress-paths.h" EGRESS_ACL_PATH)
squid_data=$(build_define "$build/policy/squid/egress-paths.h" EGRESS_SQUID_DATA_DIR)
policy=$(build_define "$build/policy/squid/egress-paths.h" SHIPPED_POLICY_PATH)
data=${policy%/*}
expect_eq "build-config.h's HELPER_PATH is the option helper_path" "$option" "$helper"
"$client" helper >/dev/null 2>"$tmp/err"
expect_eq "the client names that helper" "agentic-job: the helper is $option, reached through sudo" \
        "$(cat "$tmp/err")"
for p in "$profiles" "$squid_data"; do
        expect_eq "the client's $p is under its data directory $data" "$data/" "${p%/*}/"
done

# The pages as text: roff's escaped hyphen and backslash as the characters they print.
plain() { sed -e 's/\\-/-/g' -e 's/\\e/\\/g' "$1"; }
# The absolute paths a page names, one a line: each runs up to a space, a quote, a comma, a semicolon, a
# bracket or a roff escape, less a full stop or colon that ends it.
paths_of() { plain "$1" | grep -ao '/[^][:space:]"(),;\\]*' | sed 's/[.:]*$//' | sort -u; }
man1=''
man8=''
for page in "$@"; do
        name=$(basename "$page")
        case $name in
        agentic-job.1) man1=$page ;;
        agentic-job-helper.8) man8=$page ;;
        esac
        plain "$page" >"$tmp/page"
        left=$(grep -ao '@[A-Za-z0-9_-]*@' "$tmp/page" | grep -vxE '@(HELPER|RUNNER|SANDBOX)@' | sort -u |
                tr '\n' ' ')
        expect_eq "$name: no placeholder of its template is left" "" "$left"
        paths_of "$page" >"$tmp/paths"
        n=0
        while read -r path; do
                n=$((n + 1))
                case $path in
                "$helper" | "${helper%/*}" | "$acl") ;;
                *libexec*) fail "$name names a libexec path that is not the build's: $path" ;;
                */share/agentic-job | */share/agentic-job/*)
                        case $path in
                        "$data" | "$policy" | "$profiles" | "$profiles"/* | "$squid_data" | \
                                "$squid_data"/* | "$data/sudoers.d/agentic-job") ;;
                        *) fail "$name names a data path that is not the build's: $path" ;;
                        esac
                        ;;
                esac
        done <"$tmp/paths"
        if [ "$n" -gt 0 ]; then pass "$name: its $n paths checked"; else fail "$name names no path at all"; fi
done
if [ -z "$man1" ] || [ -z "$man8" ]; then
        fail "agentic-job.1 or agentic-job-helper.8 was not given"
        exit 1
fi
for page in "$man1" "$man8"; do
        expect_eq "$(basename "$page") names the helper" yes \
                "$(paths_of "$page" | grep -qxF "$helper" && echo yes || echo no)"
done

# The template names the helper only as @HELPER@, in its four forms; the helper's page quotes its rule
# (what follows the template's comment and first blank line, less the rule's own comment) exactly.
expect_eq "the template names no libexec path" "" "$(grep -o '/[^ ]*libexec[^ ]*' "$template")"
expect_eq "the template names the helper as @HELPER@ in its four forms" 4 \
        "$(grep -c '^ *@HELPER@ helper ' "$template")"
sed '1,/^$/d' "$template" | grep -v '^#' >"$tmp/rule"
plain "$man8" | sed -n '/^filled in:$/,/^\.fi$/p' | sed '1,/^\.nf$/d; /^\.fi$/d' >"$tmp/quoted"
if [ ! -s "$tmp/rule" ] || [ ! -s "$tmp/quoted" ]; then
        fail "no rule in the template or in $man8"
elif diff "$tmp/rule" "$tmp/quoted" >"$tmp/diff"; then
        pass "agentic-job-helper(8) quotes the template's rule exactly"
else
        fail "agentic-job-helper(8) quotes another rule than the template's:"
        sed 's/^/# /' "$tmp/diff"
fi
