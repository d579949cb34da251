/* SPDX-License-Identifier: MIT */
#include "ptrace-scope.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "read-file.h"

int ptrace_scope_read(const char *path, unsigned *ret_scope)
{
        _cleanup_free_ char *data = NULL;
        size_t size = 0;
        int r;

        r = read_regular_nofollow(AT_FDCWD, path, 16, &data, &size);
        if (r < 0)
                return r;
        /* The kernel writes "N\n"; a value it does not write is no answer. */
        if (size != 2 || data[0] < '0' || data[0] > '3' || data[1] != '\n')
                return -EINVAL;
        *ret_scope = (unsigned)(data[0] - '0');
        return 0;
}
