/* SPDX-License-Identifier: MIT */
/* The agent's output on its way to the job's log: passed through, but unable to issue a GitHub Actions
 * workflow command. The runner takes "::" at the start of a line (after blanks) and "##[" anywhere as a
 * command; those become ": :" and "# #[". */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#define OUTPUT_HOLD 4096

typedef struct OutputFilter {
        char buf[OUTPUT_HOLD];
        size_t len;
        bool mid_line; /* buf does not start at the start of a line */
} OutputFilter;

typedef int (*OutputWriteFn)(const char *data, size_t n, void *userdata);

/* Feeds n bytes; writes through fn what is decided. A line is held until its end or OUTPUT_HOLD bytes. */
int output_filter_feed(OutputFilter *f, const char *data, size_t n, OutputWriteFn fn, void *userdata);
/* Writes what is held (the stream ended). */
int output_filter_flush(OutputFilter *f, OutputWriteFn fn, void *userdata);
