/* SPDX-License-Identifier: MIT */
/* Lines of /proc/net/tcp and /proc/net/tcp6, as the local TCP probe needs them: listeners only (unix
 * sockets are listed by sock_diag: unix-diag.h). The kernel writes these files, but a parser of text is kept
 * strict all the same. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ProcNetTcp {
        unsigned char addr[16]; /* 4 bytes for IPv4; in network order */
        unsigned port;
} ProcNetTcp;

/* One line of /proc/net/tcp (ipv6 false) or tcp6 (true): 1 and *ret for a socket in state LISTEN (0A),
 * 0 for any other state or the header line, -EINVAL for a line of another shape. */
int procnet_tcp_line(const char *line, bool ipv6, ProcNetTcp *ret);
