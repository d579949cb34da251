#!/usr/bin/env bash
# Appends a Markdown file to the step's summary, $GITHUB_STEP_SUMMARY, and keeps that file under the
# runner's limit (1 MiB per step: past it the runner drops the step's whole summary with an error). What
# would not fit under LIMIT bytes, counting what the file already holds, is cut at the end of a line and a
# note says how much was shown and where the rest is. Used by the steps of action/action.yml and
# action/run/action.yml; it reads no input of the action.
#
# usage: bash append-summary.sh FILE [WHERE-THE-REST-IS]
set -euo pipefail

LIMIT=1000000 # bytes; 1 MiB is 1048576: the margin is for the runner's own accounting
NOTE_ROOM=512 # bytes kept for the note

src=${1:?usage: append-summary.sh FILE [WHERE-THE-REST-IS]}
rest=${2:-"the step's log"}
dest=${GITHUB_STEP_SUMMARY:-}
if [ -z "$dest" ]; then
        echo "append-summary: GITHUB_STEP_SUMMARY is not set; nothing appended"
        exit 0
fi
if [ ! -f "$src" ]; then
        echo "append-summary: $src does not exist; nothing appended"
        exit 0
fi
have=0
[ -e "$dest" ] && have=$(wc -c <"$dest")
size=$(wc -c <"$src")
room=$((LIMIT - have))
if [ "$size" -le "$room" ]; then
        cat -- "$src" >>"$dest"
        exit 0
fi
if [ "$room" -le "$NOTE_ROOM" ]; then
        echo "append-summary: the step summary holds $have bytes already; $size bytes of $src not appended (see $rest)"
        exit 0
fi
# The last line kept whole: a line cut in the middle could end inside a multi-byte character.
head -c "$((room - NOTE_ROOM))" -- "$src" | sed '$d' >>"$dest"
shown=$(($(wc -c <"$dest") - have))
printf '\n\n> **Truncated:** the step summary is limited to 1 MiB; the first %d of %d bytes are shown here, the rest is in %s.\n' \
        "$shown" "$size" "$rest" >>"$dest"
echo "append-summary: $size bytes did not fit in the step summary; $shown shown, the rest is in $rest"
