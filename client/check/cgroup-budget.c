/* SPDX-License-Identifier: MIT */
#include "cgroup-budget.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup.h"
#include "macro.h"
#include "parse.h"
#include "read-file.h"

/* v1 reports "no limit" as the page counter's maximum rounded to pages: anything past 2^62 is none. */
#define V1_UNLIMITED_FROM (UINT64_C(1) << 62)

static bool has_controller(const char *list, size_t len, const char *name)
{
        size_t n = strlen(name);

        for (const char *p = list, *end = list + len; p < end;) {
                const char *comma = memchr(p, ',', (size_t)(end - p));
                size_t l = comma ? (size_t)(comma - p) : (size_t)(end - p);

                if (l == n && memcmp(p, name, n) == 0)
                        return true;
                p += l + 1;
        }
        return false;
}

int cgroup_path_parse(const char *text, bool v1, char **ret_path)
{
        assert(text);
        assert(ret_path);

        for (const char *line = text; *line;) {
                const char *end = strchrnul(line, '\n');
                const char *c1 = memchr(line, ':', (size_t)(end - line));
                const char *c2 = c1 ? memchr(c1 + 1, ':', (size_t)(end - c1 - 1)) : NULL;

                if (end == line) {
                        line = *end ? end + 1 : end;
                        continue;
                }
                if (!c2 || c2 + 1 >= end || c2[1] != '/')
                        return -EBADMSG;
                if (v1 ? has_controller(c1 + 1, (size_t)(c2 - c1 - 1), "memory")
                       : (c1 - line == 1 && line[0] == '0' && c2 == c1 + 1)) {
                        char *path = strndup(c2 + 1, (size_t)(end - c2 - 1));

                        if (!path)
                                return -ENOMEM;
                        *ret_path = path;
                        return 0;
                }
                line = *end ? end + 1 : end;
        }
        return -ENOENT;
}

/* The limit in one cgroup's file: CGROUP_UNLIMITED for none, -ENOENT where the file is not there. */
static int read_limit(int root_fd, const char *dir, bool v1, uint64_t *ret)
{
        _cleanup_free_ char *file = NULL, *text = NULL;
        uint64_t v;
        size_t n;
        int r;

        if (asprintf(&file, "%s/%s", dir, v1 ? "memory.limit_in_bytes" : "memory.max") < 0)
                return -ENOMEM;
        r = read_regular_nofollow(root_fd, file, 64, &text, &n);
        if (r < 0)
                return r;
        while (n > 0 && text[n - 1] == '\n')
                text[--n] = '\0';
        if (!v1 && strcmp(text, "max") == 0) {
                *ret = CGROUP_UNLIMITED;
                return 0;
        }
        r = parse_decimal(text, n, UINT64_MAX - 1, &v);
        if (r < 0)
                return -EBADMSG;
        *ret = v1 && v >= V1_UNLIMITED_FROM ? CGROUP_UNLIMITED : v;
        return 0;
}

size_t cgroup_own_prefix(const char *path, unsigned uid)
{
        char slice[32];

        (void)snprintf(slice, sizeof(slice), "user-%u.slice", uid);
        for (const char *p = path; *p;) {
                const char *end = strchrnul(p + 1, '/');
                size_t n = (size_t)(end - p - 1);

                if (p[0] == '/' &&
                    ((n == strlen(slice) && memcmp(p + 1, slice, n) == 0) ||
                     (n == strlen(CGROUP_ENTER_PARENT) && memcmp(p + 1, CGROUP_ENTER_PARENT, n) == 0)))
                        return (size_t)(end - path);
                p = end;
        }
        return 0;
}

int cgroup_memory_budget(int root_fd, const char *path, size_t top_len, bool v1, uint64_t *ret_limit,
                         char **ret_where)
{
        _cleanup_free_ char *dir = NULL, *where = NULL;
        uint64_t best = CGROUP_UNLIMITED;
        bool seen = false;

        assert(path);
        assert(ret_limit);
        assert(ret_where);

        if (path[0] != '/' || strstr(path, "/../") || strstr(path, "/./") || top_len < 2 ||
            top_len > strlen(path) || (path[top_len] != '\0' && path[top_len] != '/'))
                return -EINVAL;
        /* Relative to root_fd: "./a/b", then "./a", down to the top. */
        if (asprintf(&dir, ".%s", path) < 0)
                return -ENOMEM;
        for (size_t len = strlen(dir); len > 1 && dir[len - 1] == '/';)
                dir[--len] = '\0';
        /* Upwards, so that of equal limits the one over more of the sandbox is named. */
        for (size_t len = strlen(dir); len >= top_len + 1; len = (size_t)(strrchr(dir, '/') - dir)) {
                uint64_t v;
                int r;

                dir[len] = '\0';
                r = read_limit(root_fd, dir, v1, &v);
                if (r == -ENOENT)
                        continue;
                if (r < 0)
                        return r;
                seen = true;
                if (v != CGROUP_UNLIMITED && v <= best) {
                        best = v;
                        free(where);
                        if (!(where = strdup(dir + 1)))
                                return -ENOMEM;
                }
        }
        if (!seen)
                return -ENOENT;
        *ret_limit = best;
        *ret_where = TAKE_PTR(where);
        return 0;
}
