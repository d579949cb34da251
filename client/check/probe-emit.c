/* SPDX-License-Identifier: MIT */
#include "probe-emit.h"

#include <jansson.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "check-line.h"
#include "check-text.h"

static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;

long long probe_now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

void probe_emit(const char *name, const char *result, long long start, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        probe_vemit(name, result, start, fmt, ap);
        va_end(ap);
}

bool probe_emit_ok(const char *name, bool ok, long long start, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        probe_vemit(name, ok ? "ok" : "fail", start, fmt, ap);
        va_end(ap);
        return ok;
}

void probe_vemit(const char *name, const char *result, long long start, const char *fmt, va_list ap)
{
        char raw[CHECK_DETAIL_MAX], detail[CHECK_DETAIL_MAX];
        json_t *o;
        char *s;

        (void)vsnprintf(raw, sizeof(raw), fmt, ap);
        check_escape(raw, detail, sizeof(detail));
        o = json_pack("{s:s, s:s, s:s, s:I}", "name", name, "result", result, "detail", detail, "ms",
                      (json_int_t)(probe_now_ms() - start));
        s = o ? json_dumps(o, JSON_COMPACT) : NULL;
        pthread_mutex_lock(&out_lock);
        if (s) {
                fputs(s, stdout);
                fputc('\n', stdout);
                fflush(stdout);
        }
        pthread_mutex_unlock(&out_lock);
        free(s);
        json_decref(o);
}

void probe_emit_end(void)
{
        pthread_mutex_lock(&out_lock);
        fflush(stdout);
}
