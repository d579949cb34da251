/* SPDX-License-Identifier: MIT */
#include "egress-attempt.h"

#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include "macro.h"

int egress_sockaddr(const char *ip, unsigned port, struct sockaddr_storage *ret, socklen_t *ret_len)
{
        struct sockaddr_in *in4 = (struct sockaddr_in *)ret;
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ret;

        if (port == 0 || port > 65535)
                return -EINVAL;
        memset(ret, 0, sizeof(*ret));
        if (inet_pton(AF_INET, ip, &in4->sin_addr) == 1) {
                in4->sin_family = AF_INET;
                in4->sin_port = htons((uint16_t)port);
                *ret_len = sizeof(*in4);
                return 0;
        }
        if (inet_pton(AF_INET6, ip, &in6->sin6_addr) == 1) {
                in6->sin6_family = AF_INET6;
                in6->sin6_port = htons((uint16_t)port);
                *ret_len = sizeof(*in6);
                return 0;
        }
        return -EINVAL;
}

int egress_try_tcp(const struct sockaddr *sa, socklen_t len)
{
        _cleanup_close_ int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        struct pollfd p;
        int err = 0, r;
        socklen_t el = sizeof(err);

        if (fd < 0)
                return -errno;
        if (connect(fd, sa, len) == 0)
                return 0;
        if (errno != EINPROGRESS)
                return -errno;
        p = (struct pollfd){ fd, POLLOUT, 0 };
        do
                r = poll(&p, 1, EGRESS_TRY_MS);
        while (r < 0 && errno == EINTR);
        if (r < 0)
                return -errno;
        if (r == 0)
                return -ETIMEDOUT;
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) < 0)
                return -errno;
        return -err;
}

int egress_try_udp(const struct sockaddr *sa, socklen_t len, const void *data, size_t n)
{
        _cleanup_close_ int fd = socket(sa->sa_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);

        if (fd < 0)
                return -errno;
        if (sendto(fd, data, n, 0, sa, len) < 0)
                return -errno;
        return 0;
}

size_t egress_dns_query(unsigned char *buf, size_t size)
{
        /* id, flags (recursion desired), one question, no other records */
        static const unsigned char header[] = { 0x61, 0x6a, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0 };
        size_t n = sizeof(header);
        const char *label = EGRESS_DNS_NAME;

        assert(size >= 64);
        memcpy(buf, header, n);
        while (*label) {
                size_t l = strcspn(label, ".");

                buf[n++] = (unsigned char)l;
                memcpy(buf + n, label, l);
                n += l;
                label += l + (label[l] == '.');
        }
        buf[n++] = 0;
        buf[n++] = 0; /* type A */
        buf[n++] = 1;
        buf[n++] = 0; /* class IN */
        buf[n++] = 1;
        return n;
}
