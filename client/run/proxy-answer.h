/* SPDX-License-Identifier: MIT */
/* What the egress proxy answers a GET, asked again with libcurl where a client's own error does not say:
 * libgit2 reports squid's refusal of a clone as "unexpected http status code: 503", with nothing of
 * X-Squid-Error (the name does not resolve, the origin refused the connection). The key probes ask it
 * the same way. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

typedef struct ProxyAnswer {
        long status;
        char denied[256];      /* X-Egress-Denied: why the policy or a rule of squid's refused it */
        char squid_error[128]; /* X-Squid-Error: the answer is squid's own (a refusal, or no origin) */
} ProxyAnswer;

/* GET url through proxy (an http:// URL), TLS checked against ca_file (NULL: the system's roots), with one
 * extra header line (NULL: none); at most timeout_s seconds, no redirect followed, the body discarded.
 * 0 with *ret filled, or -EIO with curl's reason in why. */
int proxy_answer_get(const char *url, const char *proxy, const char *ca_file, const char *header,
                     long timeout_s, ProxyAnswer *ret, char *why, size_t why_size);

/* squid's own error in words, where the answer is one that the policy did not make: "squid's
 * ERR_DNS_FAIL: the name does not resolve". false, with buf empty, for an origin's answer or the
 * policy's refusal (X-Egress-Denied, which the egress log has). */
bool proxy_answer_squid_reason(const ProxyAnswer *a, char *buf, size_t size);
