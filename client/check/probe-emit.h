/* SPDX-License-Identifier: MIT */
/* The check's clock, and the sandbox side's one way to write: a result line (check-line.h), whole, from
 * any of its threads (run's token probes write theirs the same way). */
#pragma once

#include <stdarg.h>
#include <stdbool.h>

#include "macro.h"

/* CLOCK_MONOTONIC in milliseconds: when an attempt started. */
long long probe_now_ms(void);

/* One result line on standard output: name, result ("ok", "fail" or "note"), the milliseconds since
 * start, and the detail, escaped (check_escape()) so that it is ASCII and forges nothing. */
_printf_(4, 5) void probe_emit(const char *name, const char *result, long long start, const char *fmt, ...);
/* The same with the result "ok" or "fail"; returns ok. */
_printf_(4, 5) bool probe_emit_ok(const char *name, bool ok, long long start, const char *fmt, ...);
_printf_(4, 0) void probe_vemit(const char *name, const char *result, long long start, const char *fmt,
                                va_list ap);

/* Flushes standard output and keeps every thread from writing again: what the side does before _exit(). */
void probe_emit_end(void);
