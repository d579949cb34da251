/* SPDX-License-Identifier: MIT */
/* The variables that point the sandbox's tools at the egress proxy and make them trust its certificate
 * authority: one function, so the helper's enter and everything else that starts sandbox commands agree. */
#pragma once

#include <stdbool.h>

#define EGRESS_PROXY_URL "http://127.0.0.1:3128"
/* What `agentic-job egress start` publishes: the proxy's certificate authority alone, and the system's
 * roots with it appended. */
#define EGRESS_CA_DIR    "/etc/egress-proxy"
#define EGRESS_CA_PATH   EGRESS_CA_DIR "/ca.pem"
#define EGRESS_CA_BUNDLE EGRESS_CA_DIR "/ca-bundle.pem"

/* A NULL-terminated vector of "NAME=VALUE" (static strings; do not free) to add when the proxy is on:
 * the proxy variables, the loopback exemptions and the CA variables; an empty vector when it is off. */
const char *const *egress_env(bool proxy);
