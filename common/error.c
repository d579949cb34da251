/* SPDX-License-Identifier: MIT */
#include "error.h"

#include <stdio.h>

int aj_error(AjError *e, int err, unsigned line, unsigned column, const char *fmt, ...)
{
        if (e) {
                va_list ap;

                e->line = line;
                e->column = column;
                va_start(ap, fmt);
                (void)vsnprintf(e->message, sizeof(e->message), fmt, ap);
                va_end(ap);
        }
        return -err;
}
