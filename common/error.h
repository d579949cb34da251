/* SPDX-License-Identifier: MIT */
/* A place for library code to say what was wrong, since library code does not print. */
#pragma once

#include <stdarg.h>

typedef struct AjError {
        unsigned line;   /* 1-based; 0 when the error is not about a place in a file */
        unsigned column; /* 1-based; 0 when unknown */
        char message[512];
} AjError;

/* Record a message (and a place, if line > 0) and return -err, so callers can `return aj_error(...)`.
 * err is a positive errno value. e may be NULL. */
int aj_error(AjError *e, int err, unsigned line, unsigned column, const char *fmt, ...)
        __attribute__((format(printf, 5, 6)));
