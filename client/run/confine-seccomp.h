/* SPDX-License-Identifier: MIT */
/* The seccomp filter of run's inner confinement, built with libseccomp and handed to bubblewrap
 * (--seccomp FD), which applies it to every process of the confinement. Default allow: it takes away only
 * what a CI agent never needs and what would undo the confinement or reach past it (the list, and why, in
 * agentic-job(1)). Every refusal is an errno, never a kill. */
#pragma once

/* The filter as classic BPF in a sealed memfd (close-on-exec, at offset 0): *ret_fd. -errno. */
int confine_seccomp_fd(int *ret_fd);
