/* SPDX-License-Identifier: MIT */
/* Setup's one pass over the root filesystem: remove world-write (o+w) where nothing needs it, and list
 * the programs that run as root (setuid root) or with a group's rights (setgid, root-owned) for the
 * package-ownership check that follows. Everything is done relative to directory descriptors, never by
 * path, and a symbolic link is never followed. Library code: it prints nothing, it reports through a
 * callback and counters. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "mountinfo.h"

/* Where a file another user may write is one root may run or trust: programs, configuration, the state
 * of services, spools that daemons read, root's home. */
#define HARDEN_WALK_ROOT_TREES "/etc", "/usr", "/opt", "/var/lib", "/var/spool", "/srv", "/root", "/boot"

/* Each level of depth holds one directory descriptor open; the default soft RLIMIT_NOFILE of 1024 leaves
 * room for this and the caller's own. */
#define HARDEN_WALK_DEPTH_DEFAULT 256
#define HARDEN_WALK_THREADS_MAX   8

typedef enum HardenWalkEvent {
        /* A file or directory with o+w (a directory without the sticky bit) outside the excluded trees.
         * error 0: o+w was removed, or would be (dry run); else the chmod failed (EROFS, ...). A sticky
         * bit does not exempt anything but a directory: it protects no file's contents. */
        HARDEN_WALK_WORLD_WRITABLE,
        HARDEN_WALK_SETUID_ROOT, /* a regular file owned by root with the setuid bit (temporary trees too) */
        HARDEN_WALK_SETGID_ROOT, /* a regular file owned by root with the setgid bit */
        /* A directory not entered: a pruned mount, or (without cross_devices) a mount of another device,
         * whose root was still checked for o+w as GNU find -xdev checks it. error is 0. */
        HARDEN_WALK_MOUNT_SKIPPED,
        HARDEN_WALK_TOO_DEEP, /* a directory below max_depth: checked itself, not entered. error is 0 */
        HARDEN_WALK_ERROR,    /* a path that could not be read or opened; error says why */
        /* With report_writable: a file or directory the walking process may write (faccessat(2) with
         * AT_EACCESS: its uid, its groups, ACL entries, a read-only mount) without o+w (all may write
         * that: HARDEN_WALK_WORLD_WRITABLE's, which decides about sticky directories). error is 0. */
        HARDEN_WALK_WRITABLE,
        /* With report_owned: a file or directory (not a link) owned by owned_uid, which may make it writable
         * whatever its mode, or of group owned_gid with the group's write bit. error is 0. */
        HARDEN_WALK_OWNED,
} HardenWalkEvent;

/* path is the full path (the root's path joined with the names below it), valid during the call only.
 * st is what the walk acted on (NULL for some errors). error is a positive errno or 0. A negative
 * return stops the walk and harden_walk() returns it. With more than one thread, calls come from any of
 * the walk's threads but never two at once (a lock is held), in no particular order. */
typedef int (*HardenWalkCallback)(HardenWalkEvent event, const char *path, const struct stat *st, int error,
                                  void *userdata);

typedef struct HardenWalkOptions {
        bool dry_run;       /* report only, change nothing */
        bool cross_devices; /* enter mounts of other devices too (not pruned ones); default: like -xdev */
        unsigned max_depth; /* 0: HARDEN_WALK_DEPTH_DEFAULT; the root is depth 0 */
        /* 0: one per online CPU, at most HARDEN_WALK_THREADS_MAX. The walk is bound by system calls (a
         * stat per name), which run in parallel on separate directories. */
        unsigned threads;
        /* Full paths (as the walk reports them, e.g. "/tmp" under the root "/") of trees whose files keep
         * o+w; they are still walked for setuid and setgid programs. NULL-terminated, or NULL. */
        const char *const *write_excluded;
        /* The mount table with mountinfo_prune_decide() applied, or NULL: pruned mounts are not entered,
         * pseudo ones recognised by device number (before they are opened: an automount point is never
         * triggered), read-only nosuid ones by mount id (statx STATX_MNT_ID), or by mount point where the
         * kernel gives no mount id. */
        const MountInfo *mounts;
        bool report_writable; /* report HARDEN_WALK_WRITABLE: one faccessat(2) more per name */
        bool report_owned;    /* report HARDEN_WALK_OWNED for owned_uid and owned_gid */
        uid_t owned_uid;
        gid_t owned_gid;
        HardenWalkCallback callback; /* may be NULL: the counters only */
        void *userdata;
} HardenWalkOptions;

typedef struct HardenWalkStats {
        uint64_t directories;    /* entered */
        uint64_t entries;        /* names read, links included */
        uint64_t world_writable; /* found (dry run) or changed */
        uint64_t writable;       /* HARDEN_WALK_WRITABLE */
        uint64_t owned;          /* HARDEN_WALK_OWNED */
        uint64_t setuid_root, setgid_root;
        uint64_t mounts_skipped; /* HARDEN_WALK_MOUNT_SKIPPED */
        uint64_t too_deep;
        uint64_t vanished; /* ENOENT, or replaced between stat and open: a race, walk continued */
        uint64_t denied;   /* EACCES or EPERM, walk continued */
        uint64_t errors;   /* other failures, failed chmods included, walk continued */
} HardenWalkStats;

/* Walks the tree at root (an absolute path of a directory, not a link). Returns 0 when the whole tree was
 * walked, even if some paths failed (they are in the counters and were reported), or a negative errno:
 * the root could not be opened, memory ran out, or the callback's own negative return. ret_stats (may be
 * NULL) is filled in either case. */
int harden_walk(const char *root, const HardenWalkOptions *opts, HardenWalkStats *ret_stats);

const char *harden_walk_event_to_string(HardenWalkEvent event);
