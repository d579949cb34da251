/* SPDX-License-Identifier: MIT */
#include "egress-env.h"

#include <stddef.h>

/* Both spellings of the proxy variables: curl reads the lower-case ones (and ignores HTTP_PROXY for CGI
 * safety), most other tools read either. Loopback is exempt, because nftables lets the sandbox reach
 * loopback directly and the proxy itself lives there. The proxy ends TLS, so every client must trust its
 * authority: a bundle (system roots plus it) for the tools that take one file instead of the system store
 * (OpenSSL, curl, git, Python requests, pip, cargo), and the authority alone for Node, which adds it to
 * its built-in roots. NODE_USE_ENV_PROXY makes Node's own fetch honour the proxy variables (Node 24). */
static const char *const proxy_on[] = {
        "HTTPS_PROXY=" EGRESS_PROXY_URL,
        "HTTP_PROXY=" EGRESS_PROXY_URL,
        "http_proxy=" EGRESS_PROXY_URL,
        "https_proxy=" EGRESS_PROXY_URL,
        "NO_PROXY=localhost,127.0.0.1,::1",
        "no_proxy=localhost,127.0.0.1,::1",
        "SSL_CERT_FILE=" EGRESS_CA_BUNDLE,
        "CURL_CA_BUNDLE=" EGRESS_CA_BUNDLE,
        "GIT_SSL_CAINFO=" EGRESS_CA_BUNDLE,
        "REQUESTS_CA_BUNDLE=" EGRESS_CA_BUNDLE,
        "PIP_CERT=" EGRESS_CA_BUNDLE,
        "CARGO_HTTP_CAINFO=" EGRESS_CA_BUNDLE,
        "NODE_EXTRA_CA_CERTS=" EGRESS_CA_PATH,
        "NODE_USE_ENV_PROXY=1",
        NULL,
};
static const char *const proxy_off[] = { NULL };

const char *const *egress_env(bool proxy)
{
        return proxy ? proxy_on : proxy_off;
}
