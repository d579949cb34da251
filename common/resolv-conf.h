/* SPDX-License-Identifier: MIT */
/* /etc/resolv.conf's nameserver lines, for the egress proxy's DNS rule: the proxy's uid may reach port 53
 * on exactly these addresses, so each must be a literal address, never a name or anything to interpolate. */
#pragma once

#include <stddef.h>

#include "error.h"

#define RESOLV_CONF_PATH     "/etc/resolv.conf"
#define RESOLV_CONF_MAX_SIZE (64 * 1024)
/* glibc uses three; squid uses every line. More than this is not a resolver list but a mistake. */
#define RESOLV_CONF_MAX_NAMESERVERS 16

/* Parses resolv.conf text (size bytes; NULs allowed and refused only inside a nameserver line). A
 * nameserver line is one whose first word (after spaces or tabs) is "nameserver", as squid reads it
 * (glibc also wants it at the start of the line; the union of the two is what either resolver may use).
 * Its second word must be an IPv4 address in dotted-quad form or an IPv6 address, as inet_pton() reads
 * them, and nothing may follow it but spaces and tabs (no comment, no carriage return). Refused, with the
 * line number: a missing or malformed address, a host name, another inet_aton() spelling such as 127.1,
 * an IPv4-mapped IPv6 address (its packets are IPv4, so an ip6 rule would never match it: write the IPv4
 * address), an IPv6 address with a %scope (a link-local resolver: the proxy's uid is kept off link-local
 * addresses, and a rule cannot name the scope's interface without trusting its name), trailing words,
 * more than RESOLV_CONF_MAX_NAMESERVERS lines. Lines beginning with '#' or ';', and all other directives
 * (search, domain, options, sortlist, or "nameserver" in another case, which neither reader takes), are
 * ignored. Returns the addresses in order, each in inet_ntop()'s canonical form, duplicates removed, as a
 * NULL-terminated vector (empty when there is no nameserver line). -EINVAL with *reterr naming the line;
 * -ENOMEM. /etc/resolv.conf is often a link (systemd-resolved, resolvconf): the caller reads it following
 * the link, as the resolvers do. */
int resolv_conf_parse(const char *data, size_t size, char ***ret_nameservers, AjError *reterr);
