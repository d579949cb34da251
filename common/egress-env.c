/* SPDX-License-Identifier: MIT */
#include "egress-env.h"

#include <stddef.h>

/* Both spellings: curl reads the lower-case ones (and ignores HTTP_PROXY for CGI safety), most other
 * tools read either. */
static const char *const proxy_on[] = {
        "HTTPS_PROXY=" EGRESS_PROXY_URL,
        "HTTP_PROXY=" EGRESS_PROXY_URL,
        "http_proxy=" EGRESS_PROXY_URL,
        "https_proxy=" EGRESS_PROXY_URL,
        NULL,
};
static const char *const proxy_off[] = { NULL };

const char *const *egress_env(bool proxy)
{
        return proxy ? proxy_on : proxy_off;
}
