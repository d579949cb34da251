/* SPDX-License-Identifier: MIT */
/* The nftables ruleset setup writes to /etc/agentic-job/rules.nft and loads with `nft -f`: what the
 * sandbox uids and the egress proxy's uid may reach. Text only; loading it is the caller's. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "error.h"
#include "subid.h"

#define NFT_RULES_PATH "/etc/agentic-job/rules.nft"
#define NFT_TABLE      "agentic_job" /* family inet */
/* Every subordinate range and the sandbox uid fit easily; a longer list is a mistake in the input. */
#define NFT_MAX_RANGES    SUBID_MAX_RANGES
#define NFT_MAX_RESOLVERS 16

typedef struct NftInput {
        uid_t sandbox_uid;      /* not 0 */
        const UidRange *ranges; /* the sandbox user's subordinate uids; n_ranges of them, may be 0 */
        size_t n_ranges;

        bool proxy;          /* [egress] proxy: the rest is read only when true */
        uid_t proxy_uid;     /* the proxy's user: not 0, not a sandbox uid */
        unsigned proxy_port; /* on loopback, 127.0.0.1 and ::1 */
        /* The ports the kernel hands out to a socket bound to port 0 (net.ipv4.ip_local_port_range):
         * squid talks to its decision helpers over loopback tcp between two such ports. */
        unsigned helper_ports[2];
        char *const *resolvers; /* NULL-terminated, at least one: literal IPv4 (dotted quad) or IPv6
                                 * addresses, as resolv_conf_parse() returns them */
} NftInput;

/* The ruleset, as text for `nft -f`. It declares table inet agentic_job, deletes it and declares it again
 * with its contents, so that loading it twice leaves one copy. Set sandbox_uids holds the sandbox uid and
 * every subordinate range (merged where they touch, since nftables refuses overlapping intervals). Chain
 * output, on the output hook, keyed on the sending socket's uid (meta skuid), in this order:
 *  - the sandbox uids never reach the cloud metadata service (169.254.169.254, fd00:ec2::254);
 *  - with the proxy, the sandbox uids: DNS (port 53, tcp or udp) refused wherever it goes, loopback
 *    resolvers included; tcp to the proxy port on 127.0.0.1 and ::1 accepted; everything else refused;
 *  - with the proxy, the proxy's uid: established and related traffic accepted (its answers to the
 *    sandbox among it); tcp on loopback from and to helper_ports accepted (squid and its helpers,
 *    which squid connects over loopback, and whose connections made before the rules were loaded
 *    conntrack does not know as established); DNS to each resolver accepted; any other DNS refused; every
 *    address of this machine (fib daddr type local) refused; the ranges of local_ranges_write() (private,
 *    loopback, link-local, shared (CGNAT), benchmarking, multicast, reserved and cloud-host addresses, also
 *    in their IPv4-mapped, IPv4-compatible and NAT64 forms; agentic-job(1) lists them) refused, so the
 *    proxy cannot be used to reach what the sandbox may not.
 * Everything refused is rejected (a tcp reset, else icmp administratively prohibited) and counted, never
 * dropped: a refused program fails at once instead of waiting for a timeout. Other users' traffic is not
 * touched.
 *
 * -EINVAL with *reterr for: a sandbox uid of 0 or (uid_t)-1; a range that is empty, wraps, or holds 0 or
 * (uid_t)-1; more than NFT_MAX_RANGES ranges; with the proxy, a proxy uid of 0 or (uid_t)-1 or one among
 * the sandbox uids, a port outside 1..65535, helper ports not 1024 <= first <= last <= 65535 or holding
 * the proxy port, no resolver, more than NFT_MAX_RESOLVERS, a resolver that is
 * not a literal address (inet_pton()), or an IPv4-mapped one (its packets are IPv4, so the rule would
 * never match). -ENOMEM. */
int nft_ruleset(const NftInput *in, char **ret_text, AjError *reterr);
