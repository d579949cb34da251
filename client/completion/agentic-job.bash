# bash completion for agentic-job                                   -*- shell-script -*-
# SPDX-License-Identifier: MIT
#
# Installed as .../bash-completion/completions/agentic-job, which bash-completion loads the first time the
# command is completed. Only bash builtins (compgen, compopt), so it works with bash-completion 2.11 and
# 2.12 alike, and without it once sourced. The commands and options below are the client's own:
# tests/completion.sh completes every command and holds what is offered equal to `agentic-job
# --list-options`, which prints the tables the client's parsers look their arguments up in.

# The installed agent profiles, whose names `run --profile` takes (meson fills it in: PROFILE_DIR).
_agentic_job_profile_dir='@PROFILE_DIR@'

# The options of one command ("sandbox setup", "run"; "" for those taken instead of a command): NAME for a
# flag (or "--", before a command line), NAME=KIND for one that takes a value, KIND being file, dir,
# profile or value (nothing to offer); a trailing "+" for one that may be given more than once.
_agentic_job_options()
{
        case $1 in
        "") echo "--help --version" ;;
        "sandbox setup") echo "--config=file --helper=file --dry-run --help" ;;
        "sandbox check") echo "--record --unless-passed --json --walk --help" ;;
        "sandbox exec") echo "--chdir=dir --stdin=file --script=file --keep --raw -- --help" ;;
        "sandbox end") echo "--help" ;;
        "policy test")
                echo "--body --upgrade --host=value --sni=value --authority=value --policy=file --threats=file" \
                        "--reads=value --help"
                ;;
        run)
                echo "--repo=dir --commit=value --ref=value --base=value --task=file --out=dir --output=value+" \
                        "--patch --setup=value --timeout=value --max-file-bytes=value --max-total-bytes=value" \
                        "--max-files=value --profile=profile --token-stdin -- --help"
                ;;
        "egress start" | "egress stop") echo "--help" ;;
        *) return 1 ;;
        esac
}

# The second words of a command of two.
_agentic_job_subcommands()
{
        case $1 in
        sandbox) echo "setup check exec end" ;;
        policy) echo "test" ;;
        egress) echo "start stop" ;;
        *) return 1 ;;
        esac
}

# COMPREPLY from the words of $1 that start with $2.
_agentic_job_reply()
{
        mapfile -t COMPREPLY < <(compgen -W "$1" -- "$2")
}

_agentic_job_value()
{
        local kind=$1 cur=$2 f
        local -a names=()

        case $kind in
        file)
                compopt -o filenames 2>/dev/null || :
                mapfile -t COMPREPLY < <(compgen -f -- "$cur")
                ;;
        dir)
                compopt -o filenames 2>/dev/null || :
                mapfile -t COMPREPLY < <(compgen -d -- "$cur")
                ;;
        profile)
                for f in "$_agentic_job_profile_dir"/*.toml; do
                        [[ -f $f ]] || continue
                        f=${f##*/}
                        names+=("${f%.toml}")
                done
                _agentic_job_reply "${names[*]}" "$cur"
                ;;
        *) COMPREPLY=() ;;
        esac
}

_agentic_job()
{
        local cur=${COMP_WORDS[COMP_CWORD]-} cword=${COMP_CWORD-0}
        local cmd subs opts spec name kind i j w offer
        local -a used=()

        COMPREPLY=()
        if ((cword <= 1)); then
                _agentic_job_reply "sandbox policy run egress $(_agentic_job_options "")" "$cur"
                return 0
        fi
        cmd=${COMP_WORDS[1]-}
        i=2
        if subs=$(_agentic_job_subcommands "$cmd"); then
                if ((cword == 2)); then
                        _agentic_job_reply "$subs" "$cur"
                        return 0
                fi
                cmd+=" ${COMP_WORDS[2]-}"
                i=3
        fi
        opts=$(_agentic_job_options "$cmd") || return 0

        # The words before the one completed: options, their values, and from "--" on a command line.
        for ((; i < cword; i++)); do
                w=${COMP_WORDS[i]-}
                kind=
                for spec in $opts; do
                        name=${spec%%=*}
                        [[ $name == "$w" ]] || continue
                        used+=("$w")
                        if [[ $spec == *=* ]]; then
                                kind=${spec#*=}
                        fi
                        break
                done
                if [[ $w == -- && " $opts " == *" -- "* ]]; then
                        # The command line after "--": its first word a command, then that command's own
                        # completion where bash-completion is loaded, and files otherwise.
                        if ((i + 1 == cword)); then
                                mapfile -t COMPREPLY < <(compgen -c -- "$cur")
                        elif declare -F _comp_command_offset >/dev/null; then
                                _comp_command_offset $((i + 1))
                        elif declare -F _command_offset >/dev/null; then
                                _command_offset $((i + 1))
                        else
                                compopt -o filenames 2>/dev/null || :
                                mapfile -t COMPREPLY < <(compgen -f -- "$cur")
                        fi
                        return 0
                fi
                if [[ -n $kind ]]; then
                        if ((i + 1 == cword)); then
                                _agentic_job_value "${kind%+}" "$cur"
                                return 0
                        fi
                        ((i++))
                fi
        done

        # An option, but not one already given unless it may be repeated.
        offer=
        for spec in $opts; do
                name=${spec%%=*}
                if [[ $spec != *+ ]]; then
                        for j in "${used[@]}"; do
                                [[ $j == "$name" ]] && continue 2
                        done
                fi
                offer+=" $name"
        done
        _agentic_job_reply "$offer" "$cur"
        return 0
}

complete -F _agentic_job agentic-job
