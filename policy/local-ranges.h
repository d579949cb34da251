/* SPDX-License-Identifier: MIT */
/* The addresses of this machine and its networks rather than of the internet: what the egress proxy may
 * not connect to, whatever name led there. nftables refuses them to the proxy's uid (nftables.c) and squid
 * refuses them by the address a name resolves to (squid.conf's local_dst), from this one list. */
#pragma once

#include <stdbool.h>
#include <stdio.h>

/* Writes the ranges of family (AF_INET or AF_INET6) as nftables and squid read them ("10.0.0.0/8"), sep
 * between two. IPv4: 0.0.0.0/8, 10/8, 100.64/10, 127/8, 169.254/16, 172.16/12, 192.0.0/24, 192.168/16,
 * 198.18/15, 224/3 and Azure's 168.63.129.16. IPv6: ::/96 (unspecified, loopback and the deprecated
 * IPv4-compatible addresses), 64:ff9b:1::/48 (RFC 8215's local-use translation), fc00::/7, fe80::/10,
 * fec0::/10, ff00::/8, each IPv4 range in NAT64's 64:ff9b::/96, and with mapped, ::ffff:0:0/96 (IPv4-mapped;
 * squid holds every IPv4 address in that form, so it must not have it). Documentation ranges are not among
 * them: they are not routed on the internet, and the test hosts' fake internet lives there. -ENOMEM when f
 * fails. */
int local_ranges_write(FILE *f, int family, const char *sep, bool mapped);

/* Whether address (a struct in_addr or in6_addr of family) is in one of the ranges above, but for the
 * IPv4-mapped and NAT64 ones. */
bool local_ranges_contain(int family, const void *address);
