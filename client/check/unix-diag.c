/* SPDX-License-Identifier: MIT */
#include "unix-diag.h"

#include <errno.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "macro.h"

#define DIAG_TCP_LISTEN 10
#define DIAG_TCP_CLOSE  7
#define DUMP_WAIT_MS    5000 /* the kernel answers at once; bounded all the same */

int unix_diag_parse(const void *payload, size_t len, UnixSocket *ret)
{
        const struct unix_diag_msg *m = payload;
        const struct rtattr *a;
        int left; /* signed, as the RTA_* macros count: a last attribute longer than what is left ends it */

        if (len < NLMSG_ALIGN(sizeof(*m)) || len > 65536 || m->udiag_family != AF_UNIX)
                return -EBADMSG;
        *ret = (UnixSocket){ .type = m->udiag_type, .state = m->udiag_state, .ino = m->udiag_ino };
        left = (int)(len - NLMSG_ALIGN(sizeof(*m)));
        a = (const struct rtattr *)(const void *)((const char *)payload + NLMSG_ALIGN(sizeof(*m)));
        for (; left > 0; a = RTA_NEXT(a, left)) {
                size_t n;

                if (!RTA_OK(a, left))
                        return -EBADMSG;
                n = RTA_PAYLOAD(a);
                switch (a->rta_type) {
                case UNIX_DIAG_NAME:
                        if (n == 0 || n > UNIX_DIAG_NAME_MAX)
                                return -EBADMSG;
                        memcpy(ret->name, RTA_DATA(a), n);
                        ret->name[n] = '\0';
                        /* A path as a string (the kernel may count its NUL); an abstract name whole. */
                        ret->name_len = ret->name[0] ? strlen(ret->name) : n;
                        break;
                case UNIX_DIAG_VFS: {
                        struct unix_diag_vfs v;

                        if (n < sizeof(v))
                                return -EBADMSG;
                        memcpy(&v, RTA_DATA(a), sizeof(v));
                        ret->has_vfs = true;
                        ret->vfs_ino = v.udiag_vfs_ino;
                        ret->vfs_dev = v.udiag_vfs_dev;
                        break;
                }
                case UNIX_DIAG_UID: {
                        uint32_t uid;

                        if (n < sizeof(uid))
                                return -EBADMSG;
                        memcpy(&uid, RTA_DATA(a), sizeof(uid));
                        ret->has_uid = true;
                        ret->uid = uid;
                        break;
                }
                default:
                        break;
                }
        }
        return 0;
}

bool unix_diag_accepts(const UnixSocket *s)
{
        if (s->name_len == 0)
                return false;
        if (s->type == SOCK_STREAM || s->type == SOCK_SEQPACKET)
                return s->state == DIAG_TCP_LISTEN;
        return s->type == SOCK_DGRAM && s->state == DIAG_TCP_CLOSE;
}

bool unix_diag_same_dev(dev_t st_dev, uint32_t dev)
{
        /* The kernel's dev_t: 12 bits of major above 20 of minor. */
        return major(st_dev) == (dev >> 20) && minor(st_dev) == (dev & 0xfffffU);
}

static int dump_request(int fd)
{
        struct {
                struct nlmsghdr h;
                struct unix_diag_req r;
        } req = {
                .h = { .nlmsg_len = sizeof(req),
                       .nlmsg_type = SOCK_DIAG_BY_FAMILY,
                       .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP,
                       .nlmsg_seq = 1 },
                .r = { .sdiag_family = AF_UNIX,
                       .udiag_states = (1U << DIAG_TCP_LISTEN) | (1U << DIAG_TCP_CLOSE),
                       .udiag_show = UDIAG_SHOW_NAME | UDIAG_SHOW_VFS | UDIAG_SHOW_UID },
        };
        struct sockaddr_nl nl = { .nl_family = AF_NETLINK };

        if (sendto(fd, &req, sizeof(req), 0, (struct sockaddr *)&nl, sizeof(nl)) != (ssize_t)sizeof(req))
                return errno ? -errno : -EIO;
        return 0;
}

int unix_diag_dump(size_t max, int (*fn)(const UnixSocket *s, void *userdata), void *userdata)
{
        _cleanup_close_ int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
        size_t seen = 0;
        long buf[8192 / sizeof(long)];
        int r;

        if (fd < 0)
                return -errno;
        r = dump_request(fd);
        if (r < 0)
                return r;
        for (;;) {
                struct pollfd p = { fd, POLLIN, 0 };
                ssize_t n;

                r = poll(&p, 1, DUMP_WAIT_MS);
                if (r < 0)
                        return -errno;
                if (r == 0)
                        return -ETIMEDOUT;
                n = recv(fd, buf, sizeof(buf), 0);
                if (n < 0)
                        return -errno;
                for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, n); h = NLMSG_NEXT(h, n)) {
                        UnixSocket s;

                        if (h->nlmsg_type == NLMSG_DONE)
                                return 0;
                        if (h->nlmsg_type == NLMSG_ERROR) {
                                const struct nlmsgerr *e = NLMSG_DATA(h);

                                return h->nlmsg_len >= NLMSG_LENGTH(sizeof(*e)) && e->error < 0 ? e->error
                                                                                                : -EBADMSG;
                        }
                        if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY)
                                return -EBADMSG;
                        r = unix_diag_parse(NLMSG_DATA(h), h->nlmsg_len - NLMSG_LENGTH(0), &s);
                        if (r < 0)
                                return r;
                        if (!unix_diag_accepts(&s))
                                continue;
                        if (++seen > max)
                                return -E2BIG;
                        r = fn(&s, userdata);
                        if (r < 0)
                                return r;
                }
        }
}
