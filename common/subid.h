/* SPDX-License-Identifier: MIT */
/* Subordinate uid and gid ranges (/etc/subuid, /etc/subgid): the uids a user's rootless containers run
 * as, which the sandbox's rules and reaper must cover as if they were the user's own. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define SUBUID_PATH      "/etc/subuid"
#define SUBID_MAX_SIZE   (1024 * 1024)
#define SUBID_MAX_RANGES 64
/* Subordinate ranges start at or above this (useradd's default is 100000): below it live root, system
 * users, nobody and ordinary users, whose processes must never be taken for the sandbox's. */
#define SUBID_LOWEST 65536

typedef struct UidRange {
        uid_t start;
        uid_t count; /* at least 1 */
} UidRange;

/* The ranges text (subuid(5) format: "name-or-uid:start:count" per line, '#' comments) grants user (whose
 * uid is uid). Malformed lines of other users are ignored, as shadow-utils does; a malformed line of this
 * user, a range that wraps, or more than SUBID_MAX_RANGES ranges is -EINVAL. */
int subid_parse(const char *text, const char *user, uid_t uid, UidRange ret_ranges[SUBID_MAX_RANGES],
                size_t *ret_n);

/* Reads path (without following a link) and parses it. A missing file means no ranges. */
int subid_load(const char *path, const char *user, uid_t uid, UidRange ret_ranges[SUBID_MAX_RANGES],
               size_t *ret_n);

#define SUBGID_PATH       "/etc/subgid"
#define SUBID_ALLOC_FLOOR 100000 /* useradd's SUB_UID_MIN */
#define SUBID_ALLOC_COUNT 65536  /* useradd's SUB_UID_COUNT */

/* Where a new range of SUBID_ALLOC_COUNT ids may start so that it overlaps no range in text (subuid(5)
 * format, every user's lines, malformed ones skipped): past the end of the highest range, at least
 * SUBID_ALLOC_FLOOR, rounded up to a multiple of SUBID_ALLOC_COUNT. The caller checks that the range
 * fits below 2^32 - 1. */
uint64_t subid_next_free(const char *text);

static inline int uid_in_ranges(uid_t u, const UidRange *r, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (u >= r[i].start && u - r[i].start < r[i].count)
                        return 1;
        return 0;
}
