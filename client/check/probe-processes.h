/* SPDX-License-Identifier: MIT */
/* The sandbox side's probes of the runner's processes and of the environments it can read. */
#pragma once

#include "check-inside.h"

/* environ-runner, proc-mem, ptrace-runner, signal-runner, tiocsti: against a->decoy. */
void probe_runner_processes(const InsideArgs *a);

/* env-job-variables, environ-sandbox-control, environ-canary, environ-job-variables, and oidc-value:NAME
 * for each of a->secrets. */
void probe_environments(const InsideArgs *a);
