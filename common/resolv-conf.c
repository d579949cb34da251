/* SPDX-License-Identifier: MIT */
/* resolv.conf's nameserver lines, strictly: setup writes a firewall rule per address, so anything that is
 * not plainly one literal address is an error rather than a guess. */
#include "resolv-conf.h"

#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "strv.h"

#define KEYWORD "nameserver"
/* The longest IPv6 text inet_pton() reads ("ffff:...:255.255.255.255") fits in INET6_ADDRSTRLEN. */
#define ADDRESS_MAX INET6_ADDRSTRLEN
#define NOT_LITERAL "nameserver address is not a literal IP address (dotted-quad IPv4 or IPv6)"

static bool is_blank(char c)
{
        return c == ' ' || c == '\t';
}

/* The word of line[0..n) at or after *pos (after spaces and tabs); *pos moves past it. */
static void next_word(const char *line, size_t n, size_t *pos, const char **ret_word, size_t *ret_len)
{
        size_t i = *pos, start;

        while (i < n && is_blank(line[i]))
                i++;
        start = i;
        while (i < n && !is_blank(line[i]))
                i++;
        *ret_word = line + start;
        *ret_len = i - start;
        *pos = i;
}

/* The address word in canonical form, or an error naming the line. */
static int parse_address(const char *word, size_t len, unsigned line, char ret[static ADDRESS_MAX],
                         AjError *reterr)
{
        char text[ADDRESS_MAX];
        struct in_addr a4;
        struct in6_addr a6;

        if (len == 0)
                return aj_error(reterr, EINVAL, line, 0, "nameserver without an address");
        if (memchr(word, '\0', len))
                return aj_error(reterr, EINVAL, line, 0, "nameserver address contains a NUL byte");
        if (memchr(word, '\r', len))
                return aj_error(reterr, EINVAL, line, 0, "nameserver line contains a carriage return");
        if (memchr(word, '%', len))
                return aj_error(reterr, EINVAL, line, 0,
                                "nameserver address has a %%scope (a link-local resolver cannot be "
                                "allowed by address alone)");
        if (len >= sizeof(text))
                return aj_error(reterr, EINVAL, line, 0, NOT_LITERAL);
        memcpy(text, word, len);
        text[len] = '\0';

        if (inet_pton(AF_INET, text, &a4) == 1) {
                if (!inet_ntop(AF_INET, &a4, ret, ADDRESS_MAX))
                        return -errno;
                return 0;
        }
        if (inet_pton(AF_INET6, text, &a6) == 1) {
                if (IN6_IS_ADDR_V4MAPPED(&a6))
                        return aj_error(reterr, EINVAL, line, 0,
                                        "nameserver address is IPv4-mapped IPv6 (write the IPv4 address)");
                if (!inet_ntop(AF_INET6, &a6, ret, ADDRESS_MAX))
                        return -errno;
                return 0;
        }
        return aj_error(reterr, EINVAL, line, 0, NOT_LITERAL);
}

static bool strv_has(char *const *v, const char *s)
{
        for (; v && *v; v++)
                if (strcmp(*v, s) == 0)
                        return true;
        return false;
}

int resolv_conf_parse(const char *data, size_t size, char ***ret_nameservers, AjError *reterr)
{
        _cleanup_(strv_clear) Strv out = {};
        size_t n_lines = 0;
        unsigned line = 0;
        int r;

        assert(data || size == 0);
        assert(ret_nameservers);

        for (size_t at = 0; at < size;) {
                const char *start = data + at, *nl = memchr(start, '\n', size - at);
                size_t n = nl ? (size_t)(nl - start) : size - at, pos = 0, len;
                char address[ADDRESS_MAX];
                const char *word;

                at += n + (nl ? 1 : 0);
                line++;

                next_word(start, n, &pos, &word, &len);
                /* A comment (first word beginning '#' or ';') never equals the keyword. */
                if (len != strlen(KEYWORD) || memcmp(word, KEYWORD, len) != 0)
                        continue;

                next_word(start, n, &pos, &word, &len);
                r = parse_address(word, len, line, address, reterr);
                if (r < 0)
                        return r;
                next_word(start, n, &pos, &word, &len);
                if (len > 0)
                        return aj_error(reterr, EINVAL, line, 0,
                                        "nameserver line has more than one word after the keyword "
                                        "(a second address, a comment or a carriage return)");
                if (++n_lines > RESOLV_CONF_MAX_NAMESERVERS)
                        return aj_error(reterr, EINVAL, line, 0, "more than %d nameserver lines",
                                        RESOLV_CONF_MAX_NAMESERVERS);
                if (strv_has(out.v, address))
                        continue;
                r = strv_push(&out, strdup(address));
                if (r < 0)
                        return aj_error(reterr, ENOMEM, 0, 0, "out of memory");
        }

        if (!out.v) {
                out.v = calloc(1, sizeof(char *));
                if (!out.v)
                        return aj_error(reterr, ENOMEM, 0, 0, "out of memory");
        }
        *ret_nameservers = TAKE_PTR(out.v);
        return 0;
}
