/* SPDX-License-Identifier: MIT */
/* The check's results: printed as they arrive ("ok [name] ...", "FAIL [name] ...", "note [name] ..."),
 * counted, and at the end a last line, the failed names on standard error, the JSON document (--json,
 * instead of the lines) and the Markdown table appended to $GITHUB_STEP_SUMMARY. */
#pragma once

#include <stdbool.h>

#include "check-line.h"
#include "macro.h"

typedef struct Report Report;

Report *report_new(bool json);
void report_free(Report *r);
static inline void report_freep(Report **r)
{
        report_free(*r);
}

/* from_sandbox: the detail came from the sandbox side (it is escaped like everything printed). */
void report_add(Report *r, const char *name, CheckStatus status, long long ms, const char *detail,
                bool from_sandbox);
_printf_(6, 7) void report_addf(Report *r, const char *name, CheckStatus status, long long ms,
                                bool from_sandbox, const char *fmt, ...);
unsigned report_failed(const Report *r);
/* Prints the end, writes the summary; returns the exit status: 0 nothing failed, 1 otherwise. */
int report_finish(Report *r);
