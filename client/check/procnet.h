/* SPDX-License-Identifier: MIT */
/* Lines of /proc/net/tcp, /proc/net/tcp6 and /proc/net/unix, as the local probes need them: listeners
 * only. The kernel writes these files, but a parser of text is kept strict all the same. */
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

typedef struct ProcNetUnix {
        char name[256]; /* the abstract name, without its leading '@' */
} ProcNetUnix;

/* One line of /proc/net/unix: 1 and *ret for a listening (__SO_ACCEPTCON) stream or seqpacket socket
 * with an abstract name, 0 for any other socket or the header line, -EINVAL for a line of another
 * shape. */
int procnet_unix_line(const char *line, ProcNetUnix *ret);

typedef struct ProcNetUnixPath {
        char path[256]; /* as it was bound: the kernel writes it unescaped, so it is the rest of the line */
        int type;       /* SOCK_STREAM, SOCK_SEQPACKET or SOCK_DGRAM */
} ProcNetUnixPath;

/* One line of /proc/net/unix: 1 and *ret for a socket bound to a path that accepts a connect: a
 * listening (__SO_ACCEPTCON) stream or seqpacket socket, or a datagram socket; 0 for any other socket or
 * the header line, -EINVAL for a line of another shape (a path cut by a newline makes one). */
int procnet_unix_path_line(const char *line, ProcNetUnixPath *ret);
