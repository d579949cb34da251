/* SPDX-License-Identifier: MIT */
/* The variables that point the sandbox's tools at the egress proxy: one function, so the helper's enter
 * and everything else that starts sandbox commands agree. */
#pragma once

#include <stdbool.h>

#define EGRESS_PROXY_URL "http://127.0.0.1:3128"

/* A NULL-terminated vector of "NAME=VALUE" (static strings; do not free) to add when the proxy is on;
 * an empty vector when it is off. */
const char *const *egress_env(bool proxy);
