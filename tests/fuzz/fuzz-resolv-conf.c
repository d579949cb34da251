/* SPDX-License-Identifier: MIT */
/* resolv_conf_parse() on arbitrary bytes. Every address it returns must be one a firewall rule can name
 * as written: a literal address in canonical form, never IPv4-mapped, never twice. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "resolv-conf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(x)                                                                                            \
        do {                                                                                                \
                if (!(x))                                                                                   \
                        __builtin_trap();                                                                   \
        } while (0)

static void check_address(const char *s)
{
        char canonical[INET6_ADDRSTRLEN];
        struct in6_addr a6;
        struct in_addr a4;

        if (inet_pton(AF_INET, s, &a4) == 1) {
                CHECK(inet_ntop(AF_INET, &a4, canonical, sizeof(canonical)));
        } else {
                CHECK(inet_pton(AF_INET6, s, &a6) == 1);
                CHECK(!IN6_IS_ADDR_V4MAPPED(&a6));
                CHECK(inet_ntop(AF_INET6, &a6, canonical, sizeof(canonical)));
        }
        CHECK(strcmp(s, canonical) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char **v = NULL;
        AjError e = {};
        size_t n;
        int r;

        r = resolv_conf_parse((const char *)data, size, &v, &e);
        if (r < 0) {
                CHECK(r == -EINVAL || r == -ENOMEM);
                CHECK(v == NULL);
                CHECK(r != -EINVAL || e.line > 0);
                CHECK(e.message[0] != '\0' && !strchr(e.message, '\n'));
                return 0;
        }
        CHECK(v);
        n = strv_length(v);
        CHECK(n <= RESOLV_CONF_MAX_NAMESERVERS);
        for (size_t i = 0; i < n; i++) {
                check_address(v[i]);
                for (size_t j = 0; j < i; j++)
                        CHECK(strcmp(v[i], v[j]) != 0);
        }
        strv_free(v);
        return 0;
}
