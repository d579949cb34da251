/* SPDX-License-Identifier: MIT */
/* The egress log's cap ([egress] log-max-bytes): a line that would take the log past it is not written,
 * and the request it records is refused, as any request that cannot be logged is. */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* Appends the len bytes of line to the log at fd (opened O_APPEND) unless the log, as fstat() sees it now,
 * would then pass max bytes. 0 when written (or len is 0), -EFBIG when the log is full, another -errno.
 * squid runs up to children-max helpers side by side on one file, each checking before its write: the cap
 * can be passed by one line of each. */
int acl_log_append(int fd, const char *line, size_t len, uint64_t max);
