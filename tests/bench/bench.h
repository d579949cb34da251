/* SPDX-License-Identifier: MIT */
/* What the C benchmarks share: a fatal error, a repeatable pseudo-random number and a monotonic clock.
 * Each benchmark is one file that defines BENCH_NAME (its program name) and BENCH_SEED (so that it makes
 * the same input in every run) before including this. */
#pragma once

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "macro.h"

_noreturn_ _printf_(1, 2) static void die(const char *fmt, ...)
{
        va_list ap;

        fputs(BENCH_NAME ": ", stderr);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
        exit(EXIT_FAILURE);
}

/* xorshift64*: a number below n, the same sequence in every run. */
static unsigned pick(unsigned n)
{
        static uint64_t rng = BENCH_SEED;

        rng ^= rng >> 12;
        rng ^= rng << 25;
        rng ^= rng >> 27;
        return (unsigned)((rng * 0x2545f4914f6cdd1dULL) >> 33) % n;
}

static double now_ns(void)
{
        struct timespec ts;

        if (clock_gettime(CLOCK_MONOTONIC, &ts) < 0)
                die("clock_gettime: %s", strerror(errno));
        return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}
