/* SPDX-License-Identifier: MIT */
/* The sandbox side's results, one JSON object a line, read strictly by the runner side: nothing the
 * sandbox side writes is believed beyond lines of exactly this form.
 *
 *   {"name":"sudo","result":"ok","detail":"sudo -n true refused (status 1)","ms":12}
 *
 * Exactly those four members, each once and of its type; result "ok", "fail" or "note"; name one the
 * runner expects, at most once; detail at most CHECK_DETAIL_MAX bytes, no NUL; ms from 0 to 10^7; the line
 * at most CHECK_LINE_MAX bytes before its newline. Anything else fails the whole stream. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "error.h"

#define CHECK_LINE_MAX   4096
#define CHECK_NAME_MAX   256
#define CHECK_DETAIL_MAX 1024

typedef enum CheckStatus {
        CHECK_OK,
        CHECK_FAIL,
        CHECK_NOTE,
} CheckStatus;

typedef struct CheckLine {
        char name[CHECK_NAME_MAX];
        CheckStatus status;
        char detail[CHECK_DETAIL_MAX + 1];
        unsigned ms;
} CheckLine;

/* Parses one line (without its newline). expected: the names the runner waits for (NULL-terminated);
 * a name not among them is refused. Duplicates are the stream's business. -EINVAL with *reterr. */
int check_line_parse(const char *line, size_t n, char *const *expected, CheckLine *ret, AjError *reterr);

/* A stream of lines arriving in pieces. */
typedef struct CheckStream {
        char *const *expected; /* NULL-terminated */
        bool *seen;            /* one per expected name */
        char buf[CHECK_LINE_MAX + 1];
        size_t len;
        size_t n_lines;
        bool broken; /* an error was returned: every later call fails too */
} CheckStream;

typedef void (*CheckLineFn)(const CheckLine *line, void *userdata);

/* seen: an array of strv_length(expected) bools, zeroed, that outlives the stream. */
void check_stream_init(CheckStream *s, char *const *expected, bool *seen);
/* Feeds n bytes; calls fn for each complete line. -EINVAL (with *reterr naming the line's number) at
 * the first line that is not a result, a name given twice, or a line over the bound. */
int check_stream_feed(CheckStream *s, const char *data, size_t n, CheckLineFn fn, void *userdata,
                      AjError *reterr);
/* At the end of the stream: -EINVAL if a line was left unfinished. */
int check_stream_end(CheckStream *s, AjError *reterr);

const char *check_status_to_string(CheckStatus s); /* "ok", "FAIL", "note" */
