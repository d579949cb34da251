/* SPDX-License-Identifier: MIT */
/* The output of the sandbox (the setup command's and the agent's) on its way to the job's log: passed
 * through, but unable to issue a GitHub Actions workflow command. The runner ends a line at "\r", "\n" or
 * "\r\n", trims every Unicode white space from its start, and takes "::" there as a command, and "##["
 * anywhere. The filter's line ends at "\r", "\n", "\v" or "\f"; at its start it passes over every byte that
 * is not printable ASCII (every white space of Unicode, and anything the runner's UTF-8 decoder might make
 * one, is such bytes), and a "::" that follows becomes ": :"; "##[" becomes "## [" wherever it stands.
 *
 * Written a line at a time (a long one in parts of at most OUTPUT_HOLD bytes), and safe where standard
 * output and error are merged into one pipe: every write starts where a line may start, and none ends in
 * what the other stream's next write could complete ('#', or ':' at a line's start); the last line is
 * ended with "\n" if the stream did not end it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#define OUTPUT_HOLD 4096

typedef struct OutputFilter {
        char buf[OUTPUT_HOLD + 3]; /* filtered, not yet written */
        size_t len;
        bool mid_line;   /* zero: at a line's start, nothing since but bytes the runner may trim */
        bool colon;      /* the last byte was a ':' at a line's start */
        unsigned hashes; /* how many '#' end what was filtered (at most 2) */
} OutputFilter;

typedef int (*OutputWriteFn)(const char *data, size_t n, void *userdata);

/* Feeds n bytes; writes through fn the lines that ended. 0, or fn's error. */
int output_filter_feed(OutputFilter *f, const char *data, size_t n, OutputWriteFn fn, void *userdata);
/* Writes what is held, ended with "\n" if it is an unended line (the stream ended). */
int output_filter_flush(OutputFilter *f, OutputWriteFn fn, void *userdata);
