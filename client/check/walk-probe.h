/* SPDX-License-Identifier: MIT */
/* The check's walk (sandbox check --walk): setup's own walk of the root filesystem, report-only, as the
 * user who makes it (the sandbox user for world-writable and setuid-unowned, the runner for
 * runner-world-write), and the same walk of a directory the check planted, its control. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "check-line.h"
#include "harden-walk.h"

#define WALK_PROBE_MAX_SETUID 256
/* Where a file the sandbox user may write is one root may run or trust (harden-walk.h). */
#define WALK_PROBE_ROOT_TREES HARDEN_WALK_ROOT_TREES

typedef struct WalkFound {
        uint64_t world_writable; /* found, the walker's own files and directories left out */
        char world_writable_names[CHECK_DETAIL_MAX / 2]; /* the first ones, space-separated, "..." past it */
        /* What the walker may write other than by o+w (its uid, its groups, ACL entries), in the trees
         * whose files root runs or reads (WALK_PROBE_ROOT_TREES; everywhere for walk_probe_dir()). */
        uint64_t writable;
        char writable_names[CHECK_DETAIL_MAX / 2];
        char *setuid[WALK_PROBE_MAX_SETUID]; /* the set-uid and set-gid programs of root's, owned */
        size_t n_setuid;
        bool setuid_truncated;
        uint64_t directories, denied;
        int error; /* 0, or the -errno that stopped a walk */
} WalkFound;

/* Walks "/" (and /tmp and /var/tmp where they are filesystems of their own, for set-id programs alone) as
 * setup does, changing nothing; world-writable entries owned by uid are left out. With writable, what the
 * walker may write otherwise in WALK_PROBE_ROOT_TREES is found too. */
void walk_probe_root(uid_t uid, bool writable, WalkFound *ret);

/* Walks dir alone, every entry counted (nothing excluded). */
void walk_probe_dir(const char *dir, WalkFound *ret);

/* Whether path is among the names found (as a whole name): the world-writable ones, or (writable) the
 * others the walker may write. */
bool walk_found_names(const WalkFound *f, const char *path);
bool walk_found_writable(const WalkFound *f, const char *path);

void walk_found_done(WalkFound *f);
