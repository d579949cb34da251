/* SPDX-License-Identifier: MIT */
/* A function run as the first process of a PID namespace of its own, so that nothing it starts outlives
 * it: when that process ends, the kernel kills every process left in the namespace and reaps them before
 * its parent learns of the end. What run-inside clone-agent makes the clone in, the one step that parses
 * untrusted bytes (the repository) before the agent's own confinement. */
#pragma once

/* Forks a child that makes a user namespace (the caller's uid and gid mapped to themselves, nothing else)
 * and a PID namespace in it, and runs fn(userdata) as that namespace's first process, standard input from
 * /dev/null, standard output and error the caller's. Returns, once every process of the namespace is gone,
 * 0 with *ret_status fn's return (0 to 125), or 128+N for signal N, or 126 where the namespaces could not
 * be made (the child says why on standard error); -errno where the child could not be started or waited
 * for. */
int run_in_pid_namespace(int (*fn)(void *userdata), void *userdata, int *ret_status);
