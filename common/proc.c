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

        /* Optional: the parent, as this pid namespace sees it (0: none in it). */
        s.ppid = -1;
        p = find_field(text, "PPid:");
        if (p) {
                long v;
                char *end;

                p += strspn(p, " \t");
                errno = 0;
                v = strtol(p, &end, 10);
                if (end != p && !errno && v >= 0 && v <= 1L << 22)
                        s.ppid = (pid_t)v;
        }

        /* Optional: where it is missing the threads are looked at one by one. */
        p = find_field(text, "Threads:");
        if (p) {
                unsigned long v;
                char *end;

                p += strspn(p, " \t");
                errno = 0;
                v = strtoul(p, &end, 10);
                if (end != p && !errno && v <= 1UL << 22)
                        s.threads = (unsigned)v;
        }
        *ret = s;
        return 0;
}

/* status is a few kilobytes; anything larger is not a status file we understand. */
#define STATUS_MAX 16384

/* Reads dir_fd/path (a status file) into buf. 0 and the text; -ESRCH when the process or thread is gone
 * (the file is missing, or reads empty or with ESRCH once it exited); another -errno otherwise. */
static int status_read(int dir_fd, const char *path, char *buf, size_t size, ProcStatus *ret)
{
        _cleanup_close_ int fd = -EBADF;
        ssize_t n;

        fd = openat(dir_fd, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return errno == ENOENT || errno == ESRCH ? -ESRCH : -errno;
        n = read(fd, buf, size - 1);
        if (n < 0)
                return errno == ESRCH ? -ESRCH : -errno;
        if (n == 0)
                return -ESRCH;
        if ((size_t)n == size - 1)
                return -EFBIG;
        buf[n] = '\0';
        return proc_status_parse(buf, ret) < 0 ? -EBADMSG : 0;
}

int proc_status_read(pid_t pid, ProcStatus *ret)
{
        char path[64], buf[STATUS_MAX];

        (void)snprintf(path, sizeof(path), "/proc/%ld/status", (long)pid);
        return status_read(AT_FDCWD, path, buf, sizeof(buf), ret);
}

/* A directory stream of dir_fd/path, opened without following a link: 0, -ESRCH where it is gone
 * (a process that exited), another -errno otherwise. */
static int opendir_at(int dir_fd, const char *path, DIR **ret)
{
        int fd = openat(dir_fd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);

        if (fd < 0)
                return errno == ENOENT || errno == ESRCH ? -ESRCH : -errno;
        *ret = fdopendir(fd);
        if (!*ret) {
                int r = -errno;

                close(fd);
                return r;
        }
        return 0;
}

/* Whether a thread of pid other than a dead leader still runs: /proc/PID/task/TID/status of each. */
static int other_task_alive(int proc_fd, long pid, char *buf, size_t size, bool *ret)
{
        char path[64];
        struct dirent *de;
        DIR *d = NULL;
        int r;

        (void)snprintf(path, sizeof(path), "%ld/task", pid);
        r = opendir_at(proc_fd, path, &d);
        if (r < 0)
                return r;
        *ret = false;
        while ((errno = 0, de = readdir(d))) {
                ProcStatus t = { 0 };

                if (de->d_name[0] < '1' || de->d_name[0] > '9')
                        continue;
                (void)snprintf(path, sizeof(path), "%.32s/status", de->d_name);
                r = status_read(dirfd(d), path, buf, size, &t);
                if (r == -ESRCH) {
                        r = 0;
                        continue;
                }
                if (r < 0)
                        break;
                if (!proc_state_dead(t.state)) {
                        *ret = true;
                        break;
                }
        }
        if (r >= 0 && errno != 0)
                r = -errno;
        closedir(d);
        return r;
}

int proc_for_each_at(int proc_fd, ProcFn fn, void *userdata)
{
        DIR *d = NULL;
        struct dirent *de;
        char buf[STATUS_MAX];
        int r;

        r = opendir_at(proc_fd, ".", &d);
        if (r < 0)
                return r == -ESRCH ? -ENOENT : r;
        while ((errno = 0, de = readdir(d))) {
                char path[64];
                ProcStatus st = { 0 };
                char *end;
                long pid;

                if (de->d_name[0] < '1' || de->d_name[0] > '9')
                        continue;
                pid = strtol(de->d_name, &end, 10);
                if (*end || pid <= 0)
                        continue;
                (void)snprintf(path, sizeof(path), "%ld/status", pid);
                r = status_read(dirfd(d), path, buf, sizeof(buf), &st);
                if (r == -ESRCH) {
                        r = 0;
                        continue; /* it exited */
                }
                /* A dead leader counts itself in Threads: until it is reaped, so a count of one means
                 * no other thread; only a larger or missing count is worth the walk of its tasks. */
                if (r >= 0 && proc_state_dead(st.state) && st.threads != 1)
                        r = other_task_alive(dirfd(d), pid, buf, sizeof(buf), &st.other_task_alive);
                if (r == -ESRCH) {
                        r = 0;
                        continue; /* reaped while we looked */
                }
                if (r >= 0)
                        r = fn((pid_t)pid, &st, userdata);
                if (r < 0)
                        break;
        }
        if (r >= 0 && errno != 0)
                r = -errno;
        closedir(d);
        return r < 0 ? r : 0;
}

int proc_for_each(ProcFn fn, void *userdata)
{
        _cleanup_close_ int fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        if (fd < 0)
                return -errno;
        return proc_for_each_at(fd, fn, userdata);
}
