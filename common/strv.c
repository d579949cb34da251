/* SPDX-License-Identifier: MIT */
#include "strv.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"

int strv_push(Strv *s, char *owned)
{
        if (!owned)
                return -ENOMEM;
        if (s->n + 2 > s->allocated) {
                size_t a = s->allocated ? s->allocated * 2 : 16;
                char **v = realloc(s->v, a * sizeof(char *));
                if (!v) {
                        free(owned);
                        return -ENOMEM;
                }
                s->v = v;
                s->allocated = a;
        }
        s->v[s->n++] = owned;
        s->v[s->n] = NULL;
        return 0;
}

int strv_pushf(Strv *s, const char *fmt, ...)
{
        va_list ap;
        char *p;
        int k;

        va_start(ap, fmt);
        k = vasprintf(&p, fmt, ap);
        va_end(ap);
        return strv_push(s, k < 0 ? NULL : p);
}

int strv_env_set(Strv *s, const char *entry)
{
        size_t nl = strcspn(entry, "=");

        for (size_t i = 0; i < s->n; i++)
                if (strncmp(s->v[i], entry, nl) == 0 && s->v[i][nl] == '=') {
                        char *d = strdup(entry);
                        if (!d)
                                return -ENOMEM;
                        free(s->v[i]);
                        s->v[i] = d;
                        return 0;
                }
        return strv_push(s, strdup(entry));
}

void strv_clear(Strv *s)
{
        strv_free(s->v);
        *s = (Strv){ 0 };
}
