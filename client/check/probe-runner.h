/* SPDX-License-Identifier: MIT */
/* The locked runner ([sandbox] lock-runner = true): what setup's lock stage proved, proved again by the
 * check, as the runner itself: sudo gives it the helper's operations and nothing else, and run0, pkexec and
 * su give it nothing. */
#pragma once

#include <errno.h>

#include "check-report.h"
#include "config.h"

#include <stdbool.h>
#include <sys/types.h>

/* runner-sudo-control, runner-sudo, runner-sudo-list, runner-run0, runner-pkexec; notes when lock-runner
 * is false. */
void probe_runner_lock(Report *rep, const Config *c);

/* runner-su in the background: su spends a second (PAM's delay after a failed authentication) before it
 * refuses, so it runs while the rest of the check does. */
typedef struct RunnerSu {
        pid_t pid; /* 0: not started (no lock, no su) */
        int out;
        long long start;
        bool locked;
} RunnerSu;

/* clang-format 14 and 19 lay out this macro differently: kept as written. */
/* clang-format off */
#define RUNNER_SU_NULL { .pid = 0, .out = -EBADF }
/* clang-format on */

/* Starts it where lock-runner is true and su is installed. -errno. */
int probe_runner_su_start(const Config *c, RunnerSu *ret);
/* Waits for it and reports runner-su (a note where it was not started). */
void probe_runner_su_finish(Report *rep, RunnerSu *s);
/* Kills and reaps it if it still runs. */
void probe_runner_su_stop(RunnerSu *s);
