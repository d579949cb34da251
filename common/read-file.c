/* SPDX-License-Identifier: MIT */
#include "read-file.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "macro.h"

int read_regular_fd(int fd, size_t max_size, char **ret_data, size_t *ret_size)
{
        _cleanup_free_ char *buf = NULL;
        struct stat st;
        size_t n = 0;

        assert(fd >= 0);
        assert(ret_data);
        assert(max_size < SIZE_MAX - 2);

        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -EBADFD;
        if ((uintmax_t)st.st_size > max_size)
                return -EFBIG;

        /* One byte more than the bound, so a file that grew past it after fstat() is caught. */
        buf = malloc(max_size + 2);
        if (!buf)
                return -ENOMEM;
        for (;;) {
                ssize_t k = read(fd, buf + n, max_size + 1 - n);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (k == 0)
                        break;
                n += (size_t)k;
                if (n > max_size)
                        return -EFBIG;
        }
        buf[n] = '\0';
        *ret_data = TAKE_PTR(buf);
        if (ret_size)
                *ret_size = n;
        return 0;
}

int read_regular_nofollow(int dirfd, const char *path, size_t max_size, char **ret_data, size_t *ret_size)
{
        _cleanup_close_ int fd = -EBADF;

        assert(path);

        fd = openat(dirfd, path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        return read_regular_fd(fd, max_size, ret_data, ret_size);
}

static const char *read_error_text(int err, size_t max_size, char *buf, size_t size)
{
        switch (err) {
        case ELOOP:
                return "is a link";
        case EBADFD:
                return "is not a regular file";
        case EFBIG:
                (void)snprintf(buf, size, "is larger than %zu bytes", max_size);
                return buf;
        default:
                return strerror(err);
        }
}

int read_file_for_parse(const char *path, size_t max_size, char **ret_data, size_t *ret_size,
                        AjError *reterr)
{
        int r;

        assert(path);
        r = read_regular_nofollow(AT_FDCWD, path, max_size, ret_data, ret_size);
        if (r < 0) {
                char text[64];
                return aj_error(reterr, -r, 0, 0, "%s: %s", path,
                                read_error_text(-r, max_size, text, sizeof(text)));
        }
        return 0;
}

int aj_error_in_file(AjError *reterr, int r, const char *path, const AjError *inner)
{
        assert(r < 0);
        if (inner->line > 0 && inner->column > 0)
                return aj_error(reterr, -r, inner->line, inner->column, "%s:%u:%u: %s", path, inner->line,
                                inner->column, inner->message);
        if (inner->line > 0)
                return aj_error(reterr, -r, inner->line, 0, "%s:%u: %s", path, inner->line, inner->message);
        return aj_error(reterr, -r, 0, 0, "%s: %s", path, inner->message);
}
