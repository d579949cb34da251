#!/usr/bin/env bash
# The bash completion against the client's own list of its commands and options (`agentic-job
# --list-options`, printed from the tables its parsers look their arguments up in), so that neither can
# change without the other. Completing, as bash does (COMP_WORDS, COMP_CWORD, the function that
# `complete -p agentic-job` names):
#   - the first word offers exactly the list's commands and the options taken alone, the second word of a
#     command of two exactly that family's commands;
#   - after every command, exactly its options (none for egress start|stop), nothing the list lacks;
#   - after a flag, the options again, without that flag; after an option that takes a value, what its kind
#     names (files, directories, the profiles' names, or nothing), and after that value the options again,
#     without that option unless it may be repeated; after "--", commands;
# once in a plain bash and once with bash-completion loaded as an interactive shell has it. And every
# command and option of the list is in the usage.
#
# usage: completion.sh CLIENT COMPLETION PROFILE_DIR PROFILES
#        (the built client and completion script; the profile directory the build installs to, which the
#        script must name; a directory of *.toml profiles to offer in this test)
set -u
client=$1
script=$2
profile_dir=$3
profiles=$4
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

# sorted WORD...: the words, one a line, sorted, without repeats; sorted_lines the same of its input.
sorted() {
        [ $# -eq 0 ] || printf '%s\n' "$@" | sorted_lines
}

sorted_lines() {
        grep -v '^$' | LC_ALL=C sort -u
}

# expect_eq WHAT EXPECTED GOT: two lists of lines.
expect_eq() {
        if [ "$2" = "$3" ]; then
                pass
        else
                fail "$1: expected [$(echo "$2" | tr '\n' ' ')] got [$(echo "$3" | tr '\n' ' ')]"
        fi
}

list=$("$client" --list-options) || {
        echo "not ok - agentic-job --list-options failed"
        exit 1
}
usage=$("$client" --help)

# The list: lines "agentic-job WORD... OPTION...", options starting with "-", the first line's words none.
commands=()    # "sandbox setup", "run", ...
alone="(alone)"        # the key of the options taken alone, instead of a command
declare -A options=() # command (or $alone) -> its options, as the list prints them
while read -r prog rest; do
        if [ "$prog" != agentic-job ]; then
                fail "list: a line not for agentic-job: $prog $rest"
                continue
        fi
        words=
        opts=
        for w in $rest; do
                case $w in
                -*) opts+=" $w" ;;
                *) words+="${words:+ }$w" ;;
                esac
        done
        if [ -n "$words" ]; then
                commands+=("$words")
        fi
        options[${words:-$alone}]=${opts# }
done <<<"$list"
if [ "${#commands[@]}" -lt 5 ] || [ -z "${options[$alone]-}" ]; then
        fail "list: too short to be the client's: $list"
fi

# Every command and option of the list is in the usage: a command's words on one line after
# "agentic-job", an option as a word of its own.
in_usage() {
        local before="(^|[][ (|"$'\n'"])" after="(\$|[][ )|"$'\n'"])"
        [[ $usage =~ ${before}"$1"${after} ]]
}
# expect WHAT COMMAND...: passes if COMMAND does.
expect() {
        local what=$1
        shift
        if "$@"; then
                pass
        else
                fail "$what"
        fi
}
read -r -a specs <<<"${options[$alone]}"
for spec in "${specs[@]}"; do
        expect "usage: no ${spec%%=*}" in_usage "${spec%%=*}"
done
for c in "${commands[@]}"; do
        if [[ $c == *" "* ]]; then
                pattern="agentic-job ${c%% *} (.*[ |])?${c#* }( |\||\$)"
        else
                pattern="agentic-job $c( |\$)"
        fi
        expect "usage: no command $c" grep -qE "$pattern" <<<"$usage"
        read -r -a specs <<<"${options[$c]}"
        for spec in "${specs[@]}"; do
                expect "usage: $c has no ${spec%%=*}" in_usage "${spec%%=*}"
        done
done

# Every command takes --help alone: its own usage, the first line naming it, status 0, nothing on standard
# error, whatever the command would check first (run and check refuse root, setup wants it).
for c in "${commands[@]}"; do
        # shellcheck disable=SC2086 # the command's words
        got=$("$client" $c --help 2>"$tmp/help.err")
        status=$?
        expect "$c --help: status 0 ($status)" [ "$status" = 0 ]
        expect "$c --help: nothing on standard error ($(head -c 200 "$tmp/help.err"))" [ ! -s "$tmp/help.err" ]
        expect "$c --help: its usage ($(head -n1 <<<"$got"))" grep -qE "^usage: agentic-job ${c%% *}( |\$)" <<<"$got"
        if [[ $c == *" "* ]]; then
                expect "$c --help: its usage names ${c#* }" grep -qE "^usage: agentic-job ${c%% *} (.*[ |])?${c#* }( |\||\$)" <<<"$got"
        fi
done

# names COMMAND: the names of its options, one a line, sorted.
names() {
        local -a specs
        read -r -a specs <<<"${options[$1]}"
        sorted "${specs[@]%%=*}"
}

mkdir "$tmp/cwd" "$tmp/cwd/a-dir"
: >"$tmp/cwd/a-file"

# check_all SHELL [BASH_COMPLETION]: the checks, in a plain bash or with bash-completion's main script
# sourced first (run_checks runs them in a subshell each time).
check_all() {
        local shell=$1 fn c spec name kind others expected w
        local -a first=() second=()

        if [ $# -ge 2 ]; then
                set +u # bash-completion's own code is not written for -u
                # shellcheck source=/dev/null
                . "$2"
                set -u
        fi
        # shellcheck source=/dev/null
        . "$script"
        if [ "$_agentic_job_profile_dir" != "$profile_dir" ]; then
                fail "$shell: the completion offers the profiles of '$_agentic_job_profile_dir', not of '$profile_dir'"
        fi
        _agentic_job_profile_dir=$profiles
        fn=$(complete -p agentic-job 2>/dev/null | sed -n 's/.*-F \([^ ]*\) .*/\1/p')
        if [ -z "$fn" ]; then
                fail "$shell: no completion function registered for agentic-job"
                return "$failures"
        fi

        # try_complete WORD...: what completing the last word after "agentic-job WORD..." offers, in $got.
        try_complete() {
                COMP_WORDS=(agentic-job "$@")
                COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
                COMP_LINE="${COMP_WORDS[*]}"
                COMP_POINT=${#COMP_LINE}
                COMPREPLY=()
                "$fn" agentic-job "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}" 2>/dev/null
                got=$(sorted "${COMPREPLY[@]}")
        }

        # The commands' words.
        for c in "${commands[@]}"; do
                first+=("${c%% *}")
                if [[ $c == *" "* ]]; then
                        second+=("$c")
                fi
        done
        expected=$( (
                names "$alone"
                sorted "${first[@]}"
        ) | sorted_lines)
        try_complete ""
        expect_eq "$shell: the first word" "$expected" "$got"
        expected=$(names "$alone")
        try_complete -
        expect_eq "$shell: the options taken alone" "$expected" "$got"
        for c in "${second[@]}"; do
                local family=${c%% *} w
                local -a subs=()
                for w in "${second[@]}"; do
                        if [ "${w%% *}" = "$family" ]; then
                                subs+=("${w#* }")
                        fi
                done
                try_complete "$family" ""
                expect_eq "$shell: the commands of $family" "$(sorted "${subs[@]}")" "$got"
        done

        # Each command's options, and what follows each.
        for c in "${commands[@]}"; do
                local -a cw specs
                read -r -a cw <<<"$c"
                read -r -a specs <<<"${options[$c]}"
                expected=$(names "$c")
                try_complete "${cw[@]}" ""
                expect_eq "$shell: $c" "$expected" "$got"
                try_complete "${cw[@]}" -
                expect_eq "$shell: $c -" "$expected" "$got"
                for spec in "${specs[@]}"; do
                        name=${spec%%=*}
                        kind=
                        if [[ $spec == *=* ]]; then
                                kind=${spec#*=}
                        fi
                        # The options offered after this one (and its value): all but it, unless repeatable.
                        others=$(for w in "${specs[@]}"; do
                                if [ "${w%%=*}" != "$name" ] || [[ $w == *+ ]]; then
                                        echo "${w%%=*}"
                                fi
                        done | sorted_lines)
                        if [ "$name" = -- ]; then
                                try_complete "${cw[@]}" -- bas
                                expect "$shell: $c -- bas: no command bash in [$got]" grep -qx bash <<<"$got"
                                continue
                        fi
                        if [ -z "$kind" ]; then
                                try_complete "${cw[@]}" "$name" -
                                expect_eq "$shell: $c $name (a flag) then" "$others" "$got"
                                continue
                        fi
                        case ${kind%+} in
                        file) expected=$(sorted a-dir a-file) ;;
                        dir) expected=a-dir ;;
                        profile) expected=$(for f in "$profiles"/*.toml; do basename "$f" .toml; done | sorted_lines) ;;
                        value) expected= ;;
                        *)
                                fail "$shell: $c $name: a kind of value the test does not know: $kind"
                                continue
                                ;;
                        esac
                        cd "$tmp/cwd" || return
                        try_complete "${cw[@]}" "$name" ""
                        cd - >/dev/null || return
                        expect_eq "$shell: $c $name (a $kind)" "$expected" "$got"
                        try_complete "${cw[@]}" "$name" x -
                        expect_eq "$shell: $c $name VALUE then" "$others" "$got"
                done
        done
}

# run_checks SHELL [BASH_COMPLETION]: check_all in a subshell, then its counts are ours.
run_checks() {
        local p f
        : >"$tmp/counts"
        (
                check_all "$@"
                echo "$passes $failures" >"$tmp/counts"
        )
        # The subshell's counts started at ours.
        if read -r p f <"$tmp/counts"; then
                passes=$p
                failures=$f
        else
                fail "$1: the checks did not finish"
        fi
}

run_checks "plain bash"
if [ -f /usr/share/bash-completion/bash_completion ]; then
        run_checks "with bash-completion" /usr/share/bash-completion/bash_completion
else
        echo "# bash-completion is not installed: checked in a plain bash only"
fi

printf '%d passed, %d failed\n' "$passes" "$failures"
[ "$failures" -eq 0 ]
