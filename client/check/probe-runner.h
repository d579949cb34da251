/* SPDX-License-Identifier: MIT */
/* The locked runner ([sandbox] lock-runner = true): what setup's lock stage proved, proved again by the
 * check, as the runner itself: sudo gives it the helper's operations and nothing else, and run0, pkexec and
 * su give it nothing. */
#pragma once

#include "check-report.h"
#include "config.h"

/* runner-sudo-control, runner-sudo, runner-sudo-list, runner-run0, runner-pkexec, runner-su; notes when
 * lock-runner is false. */
void probe_runner_lock(Report *rep, const Config *c);
