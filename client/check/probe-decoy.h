/* SPDX-License-Identifier: MIT */
/* The runner's decoy: a process of the runner's that the sandbox side aims at (its environment, memory,
 * ptrace, signals, terminal), and the runner's own controls against it. It is this binary again
 * (`agentic-job sandbox decoy`, not in the usage), with a random canary as its only environment and a
 * pseudo-terminal of the check's as its controlling terminal; it dies with the check. */
#pragma once

#include <sys/types.h>

#include "check-report.h"

#define DECOY_CANARY_VAR "AGENTIC_JOB_CHECK_CANARY"

typedef struct Decoy {
        pid_t pid;    /* 0: none */
        int master;   /* the pseudo-terminal's master, held while the decoy lives */
        char tty[32]; /* its slave, the decoy's controlling terminal */
        char canary[33];
} Decoy;

/* clang-format 14 and 19 lay out this macro differently: kept as written. */
/* clang-format off */
#define DECOY_NULL { .pid = 0, .master = -EBADF }
/* clang-format on */

/* Starts the decoy and waits until it runs the new program. -errno. */
int decoy_start(Decoy *ret);

/* Kills and reaps it, closes the master. */
void decoy_stop(Decoy *d);

/* environ-runner-control, proc-mem-control, ptrace-runner-control, signal-runner-control (first: the
 * decoy lived through the sandbox side) and tiocsti-control. */
void control_decoy(Report *rep, const Decoy *d);

/* agentic-job sandbox decoy: waits to be killed, at most 10 minutes; ends with its parent. */
int sandbox_decoy_main(int argc, char **argv);
