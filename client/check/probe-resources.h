/* SPDX-License-Identifier: MIT */
/* The sandbox side's probes of its resources: whether the OOM killer takes it before the runner, and
 * the bounds on its tasks and on its memory as a whole. */
#pragma once

#include "check-inside.h"

/* resources-control, oom-score, tasks-budget (against a->tasks_max where given), memory-budget. */
void probe_resources(const InsideArgs *a);
