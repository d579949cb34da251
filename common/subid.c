/* SPDX-License-Identifier: MIT */
#include "subid.h"

#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "parse.h"
#include "read-file.h"

#include <fcntl.h>

/* A uid: decimal, and not (uid_t)-1, which means "no uid". */
static int parse_id(const char *s, size_t len, uid_t *ret)
{
        uint64_t v;
        int r = parse_decimal(s, len, UINT32_MAX - 1, &v);

        if (r < 0)
                return -EINVAL;
        *ret = (uid_t)v;
        return 0;
}

int subid_parse(const char *text, const char *user, uid_t uid, UidRange ret_ranges[SUBID_MAX_RANGES],
                size_t *ret_n)
{
        char uidstr[16];
        size_t n = 0;

        assert(text);
        assert(user);
        assert(ret_n);

        (void)snprintf(uidstr, sizeof(uidstr), "%u", (unsigned)uid);
        for (const char *line = text; *line;) {
                const char *end = strchrnul(line, '\n'), *c1, *c2;
                uid_t start, count;
                size_t namelen;

                c1 = memchr(line, ':', (size_t)(end - line));
                c2 = c1 ? memchr(c1 + 1, ':', (size_t)(end - c1 - 1)) : NULL;
                /* The name field ends at the first ':', or the line holds nothing else. */
                namelen = c1 ? (size_t)(c1 - line) : (size_t)(end - line);
                if ((namelen == strlen(user) && memcmp(line, user, namelen) == 0) ||
                    (namelen == strlen(uidstr) && memcmp(line, uidstr, namelen) == 0)) {
                        if (!c1 || !c2 || parse_id(c1 + 1, (size_t)(c2 - c1 - 1), &start) < 0 ||
                            parse_id(c2 + 1, (size_t)(end - c2 - 1), &count) < 0 || count == 0 ||
                            (uint64_t)start + count > UINT32_MAX)
                                return -EINVAL;
                        if (n >= SUBID_MAX_RANGES)
                                return -EINVAL;
                        ret_ranges[n++] = (UidRange){ .start = start, .count = count };
                }
                line = *end ? end + 1 : end;
        }
        *ret_n = n;
        return 0;
}

int subid_load(const char *path, const char *user, uid_t uid, UidRange ret_ranges[SUBID_MAX_RANGES],
               size_t *ret_n)
{
        _cleanup_free_ char *text = NULL;
        int r;

        r = read_regular_nofollow(AT_FDCWD, path, SUBID_MAX_SIZE, &text, NULL);
        if (r == -ENOENT) {
                *ret_n = 0;
                return 0;
        }
        if (r < 0)
                return r;
        return subid_parse(text, user, uid, ret_ranges, ret_n);
}

uint64_t subid_next_free(const char *text)
{
        uint64_t next = SUBID_ALLOC_FLOOR;

        assert(text);
        for (const char *line = text; *line;) {
                const char *end = strchrnul(line, '\n');
                const char *c1 = memchr(line, ':', (size_t)(end - line));
                const char *c2 = c1 ? memchr(c1 + 1, ':', (size_t)(end - c1 - 1)) : NULL;
                uint64_t start, count;

                /* Every line that reads as a range counts, whoever's: a new range must not overlap any. */
                if (c2 && parse_decimal(c1 + 1, (size_t)(c2 - c1 - 1), UINT32_MAX, &start) >= 0 &&
                    parse_decimal(c2 + 1, (size_t)(end - c2 - 1), UINT32_MAX, &count) >= 0 &&
                    start + count > next)
                        next = start + count;
                line = *end ? end + 1 : end;
        }
        /* Whole blocks, as useradd hands them out. */
        return (next + SUBID_ALLOC_COUNT - 1) / SUBID_ALLOC_COUNT * SUBID_ALLOC_COUNT;
}
