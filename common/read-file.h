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
