/* SPDX-License-Identifier: MIT */
/* Where the unified (v2) cgroup hierarchy is mounted, and the cgroups the helper makes under it for the
 * commands it enters directly (without systemd). */
#pragma once

#include <stddef.h>

/* The directory under the cgroup2 mount that holds one cgroup per directly entered command. */
#define CGROUP_ENTER_PARENT "agentic-job"

/* Finds the first cgroup2 mount in mountinfo text (the format of /proc/self/mountinfo). -ENOENT when
 * there is none. The mount point is unescaped (\040 and friends). */
int cgroup2_mount_parse(const char *mountinfo, char **ret_path);
/* The same, reading /proc/self/mountinfo. */
int cgroup2_mount_find(char **ret_path);
