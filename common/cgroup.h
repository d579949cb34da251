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

/* Makes a new cgroup CGROUP_ENTER_PARENT/enter-PID-N under the cgroup2 mount and returns its path and a
 * directory descriptor of it (for clone3()'s CLONE_INTO_CGROUP). -ENOENT when there is no cgroup2
 * mount. */
int cgroup_enter_create(char **ret_path, int *ret_fd);

/* Every enter cgroup: all its processes killed in one write to cgroup.kill (Linux 5.14), and the number
 * of them that still hold a process (cgroup.events says "populated 1": a process is still being killed,
 * or the write could not be made) in *ret_populated. 0 with none counted where there is no cgroup2 or no
 * enter cgroup; -errno where they cannot be listed or their state read, so a caller never takes what it
 * could not look at for empty. */
int cgroup_enter_kill_all(unsigned *ret_populated);
/* Removes every empty enter cgroup (the kernel refuses the rest). */
void cgroup_enter_remove_all(void);
