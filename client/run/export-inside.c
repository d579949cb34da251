/* SPDX-License-Identifier: MIT */
/* The export's sender (export-inside.h). Each output is opened with openat2() so that no component of its
 * path may be a link or a mount point, and only a regular file with one name is read: a second hard link
 * may be a file outside the workspace that the sandbox user could only read. */
#include "export-inside.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/openat2.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "macro.h"

static const char *open_error_text(int err)
{
        switch (err) {
        case ELOOP:
                return "a link in its path";
        case EXDEV:
                return "its path crosses a mount point";
        case ENOENT:
                return "missing";
        case ENOTDIR:
                return "a component of its path is not a directory";
        case ENXIO:
                return "not a regular file: a socket or a device";
        default:
                return strerror(err);
        }
}

static const char *type_text(mode_t mode)
{
        switch (mode & S_IFMT) {
        case S_IFDIR:
                return "not a regular file: a directory";
        case S_IFIFO:
                return "not a regular file: a FIFO";
        case S_IFSOCK:
                return "not a regular file: a socket";
        case S_IFCHR:
        case S_IFBLK:
                return "not a regular file: a device";
        default:
                return "not a regular file";
        }
}

static int send_file(int workdir_fd, const char *name, uint64_t max_bytes, int out_fd, char *buf)
{
        struct open_how how = {
                .flags = O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC,
                .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV,
        };
        _cleanup_close_ int fd = -EBADF;
        char reason[EXPORT_REASON_MAX + 1];
        /* One byte past the limit, so that a file that grew since fstat() reaches the receiver as too
         * large, and never more: a sparse file may be far larger than its blocks. */
        uint64_t cap = max_bytes == UINT64_MAX ? max_bytes : max_bytes + 1, sent = 0;
        struct stat st;
        int r;

        fd = (int)syscall(SYS_openat2, workdir_fd, name, &how, sizeof(how));
        if (fd < 0) {
                if (errno == ENOSYS)
                        return -ENOSYS;
                return export_write_refusal(out_fd, name, open_error_text(errno), false);
        }
        if (fstat(fd, &st) < 0)
                return export_write_refusal(out_fd, name, strerror(errno), false);
        if (!S_ISREG(st.st_mode))
                return export_write_refusal(out_fd, name, type_text(st.st_mode), false);
        if (st.st_nlink != 1) {
                (void)snprintf(reason, sizeof(reason), "a file with %ju hard links", (uintmax_t)st.st_nlink);
                return export_write_refusal(out_fd, name, reason, false);
        }
        if ((uint64_t)st.st_size > max_bytes) {
                (void)snprintf(reason, sizeof(reason), "larger than the per-file limit of %" PRIu64 " bytes",
                               max_bytes);
                return export_write_refusal(out_fd, name, reason, true);
        }

        r = export_write_file_begin(out_fd, name);
        if (r < 0)
                return r;
        while (sent < cap) {
                size_t want = cap - sent < EXPORT_CHUNK_MAX ? (size_t)(cap - sent) : EXPORT_CHUNK_MAX;
                ssize_t k = read(fd, buf, want);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return -errno;
                if (k == 0)
                        break;
                r = export_write_data(out_fd, buf, (size_t)k);
                if (r < 0)
                        return r;
                sent += (uint64_t)k;
        }
        return export_write_file_end(out_fd);
}

int export_send(int workdir_fd, char *const *names, const ExportLimits *limits, int out_fd)
{
        _cleanup_free_ char *buf = NULL;
        int r;

        assert(workdir_fd >= 0);
        assert(limits);
        assert(out_fd >= 0);

        r = export_names_check(names);
        if (r < 0)
                return r;
        buf = malloc(EXPORT_CHUNK_MAX);
        if (!buf)
                return -ENOMEM;
        for (size_t i = 0; names && names[i]; i++) {
                r = send_file(workdir_fd, names[i], limits->max_file_bytes, out_fd, buf);
                if (r < 0)
                        return r;
        }
        return 0;
}

int export_send_buffer(int out_fd, const char *name, const void *data, size_t size)
{
        int r;

        assert(name);
        assert(data || size == 0);

        r = export_write_file_begin(out_fd, name);
        if (r < 0)
                return r;
        r = export_write_data(out_fd, data, size);
        if (r < 0)
                return r;
        return export_write_file_end(out_fd);
}

int export_send_end(int out_fd)
{
        return export_write_stream_end(out_fd);
}

typedef struct Watch {
        int fd, status;
} Watch;

static void *watch_caller(void *userdata)
{
        Watch w = *(Watch *)userdata;

        free(userdata);
        for (;;) {
                struct pollfd p = { .fd = w.fd, .events = 0 };

                if (poll(&p, 1, -1) < 0 && errno != EINTR)
                        _exit(w.status);
                if (p.revents & (POLLHUP | POLLERR | POLLNVAL))
                        _exit(w.status);
        }
        return NULL;
}

int export_watch_caller(int fd, int status)
{
        pthread_attr_t attr;
        pthread_t thread;
        Watch *w;
        int r;

        assert(fd >= 0);

        w = malloc(sizeof(*w));
        if (!w)
                return -ENOMEM;
        *w = (Watch){ .fd = fd, .status = status };
        r = pthread_attr_init(&attr);
        if (r == 0) {
                r = pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
                if (r == 0)
                        r = pthread_create(&thread, &attr, watch_caller, w);
                (void)pthread_attr_destroy(&attr);
        }
        if (r != 0) {
                free(w);
                return -r;
        }
        return 0;
}
