/* SPDX-License-Identifier: MIT */
/* The sandbox side's requests of the egress proxy (each a note without the proxy). */
#pragma once

#include <stddef.h>

#include "check-inside.h"

/* egress-post: a POST to control-url, which the policy refuses (a note where it admits it). */
void probe_proxy_post(const InsideArgs *a);

/* egress-read: GET and HEAD of control-url, which the origin must answer. */
void probe_proxy_read(const InsideArgs *a);

/* egress-fronting: control-url's connection naming another host in its Host header and, for https, in its
 * TLS server name. */
void probe_proxy_fronting(const InsideArgs *a);

/* egress-proxy-metadata and egress-proxy-local: the metadata service, loopback and this machine's own
 * addresses, asked of the proxy. */
void probe_proxy_local(const InsideArgs *a);

/* a->planned[i] (egress-plan.h). */
void probe_proxy_planned(const InsideArgs *a, size_t i);
