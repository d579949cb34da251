/* SPDX-License-Identifier: MIT */
#include "acl-log.h"

#include <errno.h>
#include <sys/stat.h>

#include "write-all.h"

int acl_log_append(int fd, const char *line, size_t len, uint64_t max)
{
        struct stat st;

        if (len == 0)
                return 0;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (st.st_size < 0 || (uint64_t)st.st_size > max || len > max - (uint64_t)st.st_size)
                return -EFBIG;
        return write_all(fd, line, len);
}
