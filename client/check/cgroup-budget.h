/* SPDX-License-Identifier: MIT */
/* The memory budget the kernel enforces on a process: the smallest memory limit of its cgroup and the
 * cgroups above it, as /proc/PID/cgroup and the mounted hierarchies tell. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CGROUP_UNLIMITED UINT64_MAX

/* The cgroup path of the memory controller's hierarchy in /proc/PID/cgroup text: the "0::" line's
 * (cgroup v2) when v1 is false, else the line whose controllers include "memory" (cgroup v1). -ENOENT
 * when there is no such line, -EBADMSG when a line is malformed. */
int cgroup_path_parse(const char *text, bool v1, char **ret_path);

/* The sandbox's own part of path: up to and including its first component named user-UID.slice (the
 * sessions' slice) or CGROUP_ENTER_PARENT (the direct backend's). Its length, or 0 where there is none. A
 * limit above it would bound the runner as well, and keeps nothing for it. */
size_t cgroup_own_prefix(const char *path, unsigned uid);

/* Walks path (absolute within the hierarchy whose root root_fd is) and every cgroup above it up to and
 * including its first top_len bytes (a whole component), reading memory.max (v2) or
 * memory.limit_in_bytes (v1), and returns the smallest limit and the cgroup that sets it (*ret_where,
 * NULL when none does); *ret_limit is CGROUP_UNLIMITED when no cgroup has one ("max", or v1's
 * page-counter maximum). -ENOENT when no cgroup of the walk has the file: no memory controller enforces
 * anything there. */
int cgroup_memory_budget(int root_fd, const char *path, size_t top_len, bool v1, uint64_t *ret_limit,
                         char **ret_where);
