/* SPDX-License-Identifier: MIT */
#include "proc.h"

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "macro.h"

static const char *find_field(const char *text, const char *name)
{
        size_t len = strlen(name);

        for (const char *p = text; p && *p;) {
                if (strncmp(p, name, len) == 0)
                        return p + len;
                p = strchr(p, '\n');
                if (p)
                        p++;
        }
        return NULL;
}

int proc_status_parse(const char *text, ProcStatus *ret)
{
        const char *p;
        ProcStatus s = { 0 };

        assert(text);
        assert(ret);

        p = find_field(text, "State:");
        if (!p)
                return -EINVAL;
        p += strspn(p, " \t");
        /* Upper case but for 't' (stopped by a tracer) and whatever letters later kernels add. */
        if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z')))
                return -EINVAL;
        s.state = *p;

        p = find_field(text, "Uid:");
        if (!p)
                return -EINVAL;
        for (int i = 0; i < 4; i++) {
                unsigned long v;
                char *end;

                p += strspn(p, " \t");
                if (*p < '0' || *p > '9')
                        return -EINVAL;
                errno = 0;
                v = strtoul(p, &end, 10);
                if (errno || v > (uid_t)-1)
                        return -EINVAL;
                s.uid[i] = (uid_t)v;
                p = end;
        }
        *ret = s;
        return 0;
}

/* status is a few kilobytes; anything larger is not a status file we understand. */
#define STATUS_MAX 16384

int proc_for_each(int (*fn)(pid_t pid, const ProcStatus *status, void *userdata), void *userdata)
{
        DIR *d;
        struct dirent *de;
        char buf[STATUS_MAX];
        int r = 0;

        d = opendir("/proc");
        if (!d)
                return -errno;
        while ((errno = 0, de = readdir(d))) {
                char path[64];
                _cleanup_close_ int fd = -EBADF;
                ProcStatus st;
                ssize_t n;
                char *end;
                long pid;

                if (de->d_name[0] < '1' || de->d_name[0] > '9')
                        continue;
                pid = strtol(de->d_name, &end, 10);
                if (*end || pid <= 0)
                        continue;
                (void)snprintf(path, sizeof(path), "%ld/status", pid);
                fd = openat(dirfd(d), path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
                if (fd < 0)
                        continue; /* it exited */
                n = read(fd, buf, sizeof(buf) - 1);
                if (n <= 0)
                        continue;
                buf[n] = '\0';
                if (proc_status_parse(buf, &st) < 0)
                        continue; /* it exited between open and read: the file reads empty */
                r = fn((pid_t)pid, &st, userdata);
                if (r < 0)
                        break;
        }
        if (r >= 0 && errno != 0)
                r = -errno;
        closedir(d);
        return r < 0 ? r : 0;
}
