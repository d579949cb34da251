/* SPDX-License-Identifier: MIT */
/* The runner's controls of the probes around the proxy (egress-tcp, egress-udp, egress-dns): the same
 * attempts, by the runner, which must work. And what the sandbox side needs for its own: control-url's
 * address as the runner resolved it, and the nameservers of /etc/resolv.conf. */
#pragma once

#include <netinet/in.h>

#include "check-report.h"
#include "config.h"

typedef struct EgressTargets {
        char addr[INET6_ADDRSTRLEN]; /* "" where control-url's host did not resolve */
        unsigned port;
        char addr6[INET6_ADDRSTRLEN]; /* its IPv6 address where the runner connects to it, else "" */
        char **nameservers;           /* NULL-terminated, owned */
        char front[256];        /* another name of control-url's certificate, for egress-fronting; else "" */
        char resolve_name[300]; /* a name for the sandbox side to resolve, where a resolver answers the
                                   runner; else "" */
} EgressTargets;

/* egress-tcp-control, egress-udp-control, egress-ipv6-control, egress-dns-control, egress-resolve-control
 * egress-fronting-control (notes without the proxy); *ret the
 * targets. -ENOMEM only: anything else is a result. */
int control_egress(Report *rep, const Config *c, EgressTargets *ret);

void egress_targets_done(EgressTargets *t);
