/* SPDX-License-Identifier: MIT */
/* The mount table as /proc/self/mountinfo reports it, and which mounts a walk over the root filesystem
 * need not enter (setup's world-write and setuid pass). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Bounds: /proc/self/mountinfo is read whole, and a host with thousands of container mounts is still far
 * below both. Anything larger is refused (-EFBIG), not cut short: a partial table could hide a mount. */
#define MOUNTINFO_SIZE_MAX    (16 * 1024 * 1024)
#define MOUNTINFO_ENTRIES_MAX 100000

typedef enum MountPrune {
        MOUNT_PRUNE_NONE,      /* walked */
        MOUNT_PRUNE_PSEUDO,    /* a kernel or pseudo filesystem (proc, sysfs, cgroup2, ...) */
        MOUNT_PRUNE_RO_NOSUID, /* read-only and nosuid, and no walked writable mount at or below it */
} MountPrune;

typedef struct MountInfoEntry {
        unsigned id, parent_id; /* the mount ids; statx()'s stx_mnt_id (STATX_MNT_ID) is the same number */
        dev_t dev;              /* st_dev of files on this mount */
        char *root;             /* what of the filesystem is mounted here: "/", a bind mount's directory,
                                 * or for nsfs the namespace ("net:[4026532281]") */
        char *mount_point;      /* absolute, octal escapes decoded */
        char *fstype;           /* "ext4", "fuse.sshfs", ... decoded */
        char *source;           /* decoded; "none" and the like are what the kernel says */
        char *mount_options;    /* per-mount options as reported, escapes kept ("rw,nosuid,relatime") */
        char *super_options;    /* the filesystem's own options as reported, escapes kept */
        bool read_only;         /* "ro" in either option list */
        bool nosuid;            /* "nosuid" in either option list */
        MountPrune prune;       /* set by mountinfo_prune_decide() */
} MountInfoEntry;

typedef struct MountInfo {
        MountInfoEntry *entries; /* in the kernel's order (parents before children, later mounts after) */
        size_t n;
} MountInfo;

/* Parses mountinfo text of size bytes (NUL bytes are refused). Every line must be well formed: -EINVAL
 * otherwise, since a mount the parser skipped could be one the walk must not enter. -EFBIG beyond the
 * bounds above, -ENOMEM. Escapes: the kernel writes space, tab, newline and backslash as a backslash and
 * three octal digits; anything else after a backslash, or an escape decoding to NUL, is -EINVAL. The
 * prune field is MOUNT_PRUNE_NONE until mountinfo_prune_decide(). */
int mountinfo_parse(const char *text, size_t size, MountInfo *ret);

/* Reads and parses /proc/self/mountinfo. */
int mountinfo_read(MountInfo *ret);

void mountinfo_done(MountInfo *m);

/* Whether fstype names a filesystem the walk never enters: kernel interfaces whose modes are the kernel's
 * (proc, sysfs, cgroup, ...), device node trees, automount points (entering one would trigger it). */
bool mountinfo_fstype_pseudo(const char *fstype);

/* Sets each entry's prune field: MOUNT_PRUNE_PSEUDO for mountinfo_fstype_pseudo() types, else
 * MOUNT_PRUNE_RO_NOSUID for a mount that is read-only and nosuid where no mount at or below its mount
 * point (the same path stacked, or a path under it) is writable and not itself pseudo: nothing on it can
 * lose o+w (read-only) or run setuid (nosuid), and the walk never needs to pass through it. -ENOMEM. */
int mountinfo_prune_decide(MountInfo *m);

/* "pseudo", "ro,nosuid" or "none". */
const char *mount_prune_to_string(MountPrune p);
