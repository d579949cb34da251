/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>

/* Exit statuses of the client's own failures (a command's status passes through sandbox exec). */
#define CLIENT_EXIT_USAGE   2
#define CLIENT_EXIT_REMOVAL 3 /* sandbox end: what runs left could not be removed */

int sandbox_exec_main(int argc, char **argv);
int sandbox_end_main(int argc, char **argv);
int sandbox_step_inside_main(int argc, char **argv);
int sandbox_setup_main(int argc, char **argv);
int policy_test_main(int argc, char **argv);
int sandbox_check_main(int argc, char **argv);
int run_main(int argc, char **argv);

/* Runs argv (argv[0] an absolute path) with an environment of env, its standard streams connected to
 * socket pairs that are pumped from in_fd and to standard output and error; with filter, through the
 * filter that leaves a line no GitHub Actions workflow command (run-output.h), each last line ended.
 * Returns the child's exit status (128+N for signal N) or -errno. */
int spawn_pumped(char *const *argv, char *const *env, int in_fd, bool filter, int *ret_status);

/* The first of SIGINT, SIGTERM, SIGHUP that spawn_pumped() received (and forwarded), or 0. */
int pump_cancel_signal(void);
