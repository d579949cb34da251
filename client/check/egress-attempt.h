/* SPDX-License-Identifier: MIT */
/* The network attempts that go around the egress proxy: a TCP connection, a datagram, a DNS query. The
 * sandbox side makes each where it must fail, the runner side the same where it must work (its control),
 * with this same code. */
#pragma once

#include <stddef.h>
#include <sys/socket.h>

#define EGRESS_TRY_MS   2000 /* one connection */
#define EGRESS_DNS_NAME "agentic-job-check.invalid"

/* ip (IPv4 or IPv6, literal) and port as a socket address. -EINVAL. */
int egress_sockaddr(const char *ip, unsigned port, struct sockaddr_storage *ret, socklen_t *ret_len);

/* A TCP connection within EGRESS_TRY_MS: 0, or -errno (-ETIMEDOUT with no answer). */
int egress_try_tcp(const struct sockaddr *sa, socklen_t len);

/* One datagram: 0 when the kernel sent it, -errno when it refused (-EPERM: a rule). */
int egress_try_udp(const struct sockaddr *sa, socklen_t len, const void *data, size_t n);

/* A DNS query (type A) for EGRESS_DNS_NAME, which a resolver can only answer with NXDOMAIN, in buf (at
 * least 64 bytes); its length. */
size_t egress_dns_query(unsigned char *buf, size_t size);
