/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>

#include "error.h"

/* Opens path (relative to dirfd, or AT_FDCWD) without following a link in its last component and without
 * blocking on a FIFO, refuses anything but a regular file, and reads it whole into a NUL-terminated
 * buffer. Returns 0, or -ELOOP (a link), -EBADFD (not a regular file), -EFBIG (larger than max_size, or
 * grew past it while being read), or another -errno. */
int read_regular_nofollow(int dirfd, const char *path, size_t max_size, char **ret_data, size_t *ret_size);

/* The same for a descriptor the caller opened; the descriptor's position moves. */
int read_regular_fd(int fd, size_t max_size, char **ret_data, size_t *ret_size);

/* read_regular_nofollow() of path for a loader: on failure *reterr says "PATH: is a link", "PATH: is not
 * a regular file", "PATH: is larger than MAX bytes" or "PATH: strerror". */
int read_file_for_parse(const char *path, size_t max_size, char **ret_data, size_t *ret_size,
                        AjError *reterr);

/* A parser's error (r < 0, *inner) restated as one about path: "PATH:LINE:COLUMN: message", without the
 * column when it is 0 and without the place when the line is 0. Returns r. */
int aj_error_in_file(AjError *reterr, int r, const char *path, const AjError *inner);
