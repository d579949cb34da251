/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>

/* Opens path (relative to dirfd, or AT_FDCWD) without following a link in its last component and without
 * blocking on a FIFO, refuses anything but a regular file, and reads it whole into a NUL-terminated
 * buffer. Returns 0, or -ELOOP (a link), -EBADFD (not a regular file), -EFBIG (larger than max_size, or
 * grew past it while being read), or another -errno. */
int read_regular_nofollow(int dirfd, const char *path, size_t max_size, char **ret_data, size_t *ret_size);

/* The same for a descriptor the caller opened; the descriptor's position moves. */
int read_regular_fd(int fd, size_t max_size, char **ret_data, size_t *ret_size);

/* What a failure of the two above means, for "PATH: TEXT" messages: "is a link", "is not a regular
 * file", "is larger than MAX bytes" (written into buf, size bytes), else strerror(err). err is positive. */
const char *read_error_text(int err, size_t max_size, char *buf, size_t size);
