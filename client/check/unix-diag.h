/* SPDX-License-Identifier: MIT */
/* The unix sockets of this network namespace as the kernel knows them (sock_diag, NETLINK_SOCK_DIAG),
 * not as /proc/net/unix prints their names: the name a socket was bound with says nothing of where its
 * file is now (renamed, hard-linked elsewhere and unlinked, bound by a relative name), and an abstract
 * name may hold NULs that the text cannot show. The inode of the file a socket is bound to
 * (UNIX_DIAG_VFS) is what a probe can look for; its owner (UNIX_DIAG_UID) says whether it is another
 * user's. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define UNIX_DIAG_NAME_MAX 108 /* sun_path's size */

typedef struct UnixSocket {
        unsigned type;    /* SOCK_STREAM, SOCK_SEQPACKET or SOCK_DGRAM */
        unsigned state;   /* the kernel's TCP_* state: 10 listening, 7 an unconnected datagram socket */
        uint32_t ino;     /* the socket's own inode number */
        bool has_vfs;     /* bound to a file: vfs_ino and vfs_dev say which */
        uint32_t vfs_ino; /* the file's inode number */
        uint32_t vfs_dev; /* its device, in the kernel's encoding (unix_diag_same_dev() compares) */
        bool has_uid;     /* the kernel said whose it is (UNIX_DIAG_UID, Linux 5.3 and later) */
        uint32_t uid;     /* the uid that made it, as this user namespace sees it */
        size_t name_len;  /* 0: not bound; a path's without its NUL, an abstract name's whole */
        char name[UNIX_DIAG_NAME_MAX + 1]; /* as bound, NUL-terminated: an abstract one starts with '\0' */
} UnixSocket;

/* One answer of a dump (the payload of a SOCK_DIAG_BY_FAMILY message, len bytes): 0 and *ret, or
 * -EBADMSG where it is not a well-formed unix_diag_msg with its attributes. */
int unix_diag_parse(const void *payload, size_t len, UnixSocket *ret);

/* Whether a socket accepts a connection or a datagram from another process: a listening stream or
 * seqpacket socket, or a datagram socket connected to no peer; and it has a name to be reached by. */
bool unix_diag_accepts(const UnixSocket *s);

/* Calls fn for every unix socket of this network namespace that unix_diag_accepts(), at most max; fn's
 * negative return stops the dump and is returned. 0, -E2BIG past max, or -errno. */
int unix_diag_dump(size_t max, int (*fn)(const UnixSocket *s, void *userdata), void *userdata);

/* Whether st_dev (stat(2)'s) is the device dev that sock_diag reports (the kernel's own dev_t). */
bool unix_diag_same_dev(dev_t st_dev, uint32_t dev);
