/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>

/* Writes all n bytes of buf to fd, again after EINTR and short writes. 0, or -errno (-EIO when a write
 * makes no progress). */
int write_all(int fd, const void *buf, size_t n);
