/* SPDX-License-Identifier: MIT */
#include "cgroup.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "read-file.h"

/* mountinfo escapes space, tab, newline and backslash as three octal digits. */
static char *unescape(const char *s, size_t len)
{
        char *out = malloc(len + 1), *o = out;

        if (!out)
                return NULL;
        for (size_t i = 0; i < len; i++) {
                if (s[i] == '\\' && i + 3 < len + 1 && s[i + 1] >= '0' && s[i + 1] <= '3' &&
                    s[i + 2] >= '0' && s[i + 2] <= '7' && s[i + 3] >= '0' && s[i + 3] <= '7') {
                        *o++ = (char)((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
                        i += 3;
                } else
                        *o++ = s[i];
        }
        *o = '\0';
        return out;
}

int cgroup2_mount_parse(const char *mountinfo, char **ret_path)
{
        assert(mountinfo);
        assert(ret_path);

        for (const char *line = mountinfo; *line;) {
                const char *end = strchrnul(line, '\n'), *p = line, *mnt = NULL, *sep;
                size_t mntlen = 0;

                /* Fields: id parent major:minor root mount-point options [optional...] - fstype ... */
                for (int field = 0; field < 5 && p < end; field++) {
                        const char *sp = memchr(p, ' ', (size_t)(end - p));
                        if (!sp)
                                break;
                        if (field == 4) {
                                mnt = p;
                                mntlen = (size_t)(sp - p);
                        }
                        p = sp + 1;
                }
                sep = mnt ? strstr(p, " - ") : NULL;
                if (sep && sep < end && strncmp(sep + 3, "cgroup2 ", 8) == 0) {
                        char *path = unescape(mnt, mntlen);
                        if (!path)
                                return -ENOMEM;
                        *ret_path = path;
                        return 0;
                }
                line = *end ? end + 1 : end;
        }
        return -ENOENT;
}

int cgroup2_mount_find(char **ret_path)
{
        _cleanup_free_ char *text = NULL;
        int r;

        r = read_regular_nofollow(AT_FDCWD, "/proc/self/mountinfo", 4 * 1024 * 1024, &text, NULL);
        if (r < 0)
                return r;
        return cgroup2_mount_parse(text, ret_path);
}
