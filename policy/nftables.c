/* SPDX-License-Identifier: MIT */
/* The nftables ruleset: every input checked first (nothing from outside reaches the text unchecked: the
 * uids are numbers, each resolver is rewritten from its parsed address), then the text written in one
 * pass. */
#include "nftables.h"

#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "local-ranges.h"
#include "macro.h"
#include "toml.h"

/* clang-format 14 and 19 lay out this macro differently: kept as written. */
/* clang-format off */
#define UID_INVALID ((uid_t)-1)
/* clang-format on */

/* s escaped for a one-line message (see toml_escape()), in a buffer that lives until the end of the
 * enclosing block. */
#define QUOTE_MAX 96
#define QUOTE(s)  toml_escape((s), (char[QUOTE_MAX]){ 0 }, QUOTE_MAX)

static const char ruleset_head[] =
        "# agentic-job: what the sandbox uids and the egress proxy may reach. Written by\n"
        "# `agentic-job sandbox setup` and loaded with `nft -f`; loading it again replaces the\n"
        "# table, which is declared first so that the delete finds it.\n"
        "table inet " NFT_TABLE "\n"
        "delete table inet " NFT_TABLE "\n"
        "\n"
        "table inet " NFT_TABLE " {\n";

static const char ruleset_chains[] =
        "\n"
        "\t# Every refusal ends here: a reset for tcp, else \"administratively prohibited\", so\n"
        "\t# that the program fails at once. Never a drop, which would leave it waiting for a\n"
        "\t# timeout.\n"
        "\tchain refuse {\n"
        "\t\tmeta l4proto tcp reject with tcp reset\n"
        "\t\treject with icmpx type admin-prohibited\n"
        "\t}\n"
        "\n"
        "\tchain output {\n"
        "\t\ttype filter hook output priority 0; policy accept;\n"
        "\n"
        "\t\t# The cloud metadata service hands out the machine's credentials: never to the\n"
        "\t\t# sandbox, proxy or not.\n"
        "\t\tmeta skuid @sandbox_uids ip daddr 169.254.169.254 counter jump refuse\n"
        "\t\tmeta skuid @sandbox_uids ip6 daddr fd00:ec2::254 counter jump refuse\n";

typedef struct Interval {
        uint64_t first, last;
} Interval;

static int interval_compare(const void *a, const void *b)
{
        const Interval *x = a, *y = b;

        return x->first < y->first ? -1 : x->first > y->first;
}

static bool uid_valid(uid_t u)
{
        return u != 0 && u != UID_INVALID;
}

/* The sandbox uid and the ranges, sorted, with those that overlap or touch merged: nftables refuses
 * overlapping intervals in a set. *ret_n is at least 1. */
static int sandbox_intervals(const NftInput *in, Interval ret[static NFT_MAX_RANGES + 1], size_t *ret_n,
                             AjError *reterr)
{
        size_t n = 0;

        if (!uid_valid(in->sandbox_uid))
                return aj_error(reterr, EINVAL, 0, 0, "sandbox uid %u is not a user's uid",
                                (unsigned)in->sandbox_uid);
        if (in->n_ranges > NFT_MAX_RANGES)
                return aj_error(reterr, EINVAL, 0, 0, "more than %d subordinate uid ranges", NFT_MAX_RANGES);
        assert(in->ranges || in->n_ranges == 0);

        ret[n++] = (Interval){ in->sandbox_uid, in->sandbox_uid };
        for (size_t i = 0; i < in->n_ranges; i++) {
                uint64_t first = in->ranges[i].start, count = in->ranges[i].count;

                /* Below SUBID_LOWEST live root, system users and ordinary users: the helper's kill-user
                 * refuses such a range too. */
                if (count == 0 || first < SUBID_LOWEST || first + count - 1 >= UID_INVALID)
                        return aj_error(reterr, EINVAL, 0, 0,
                                        "subordinate uid range %u:%u is empty, starts below %d or reaches "
                                        "uid %u",
                                        (unsigned)in->ranges[i].start, (unsigned)in->ranges[i].count,
                                        SUBID_LOWEST, (unsigned)UID_INVALID);
                ret[n++] = (Interval){ first, first + count - 1 };
        }

        qsort(ret, n, sizeof(ret[0]), interval_compare);
        size_t m = 0;
        for (size_t i = 1; i < n; i++)
                if (ret[i].first <= ret[m].last + 1) {
                        if (ret[i].last > ret[m].last)
                                ret[m].last = ret[i].last;
                } else
                        ret[++m] = ret[i];
        *ret_n = m + 1;
        return 0;
}

typedef struct Resolver {
        int family;
        char text[INET6_ADDRSTRLEN];
} Resolver;

/* Each resolver parsed and written again in canonical form, duplicates dropped. */
static int parse_resolvers(char *const *resolvers, Resolver ret[static NFT_MAX_RESOLVERS], size_t *ret_n,
                           AjError *reterr)
{
        size_t n = 0;

        for (size_t i = 0; resolvers && resolvers[i]; i++) {
                const char *s = resolvers[i];
                unsigned char a[sizeof(struct in6_addr)];
                Resolver r = {};
                bool seen = false;

                if (i >= NFT_MAX_RESOLVERS)
                        return aj_error(reterr, EINVAL, 0, 0, "more than %d resolvers", NFT_MAX_RESOLVERS);
                if (inet_pton(AF_INET, s, a) == 1)
                        r.family = AF_INET;
                else if (inet_pton(AF_INET6, s, a) == 1) {
                        if (IN6_IS_ADDR_V4MAPPED((const struct in6_addr *)a))
                                return aj_error(reterr, EINVAL, 0, 0,
                                                "resolver \"%s\" is IPv4-mapped: give the IPv4 address",
                                                QUOTE(s));
                        r.family = AF_INET6;
                } else
                        return aj_error(reterr, EINVAL, 0, 0, "resolver \"%s\" is not a literal IP address",
                                        QUOTE(s));
                if (!inet_ntop(r.family, a, r.text, sizeof(r.text)))
                        return -errno;

                for (size_t j = 0; j < n; j++)
                        if (strcmp(ret[j].text, r.text) == 0)
                                seen = true;
                if (!seen)
                        ret[n++] = r;
        }
        if (n == 0)
                return aj_error(reterr, EINVAL, 0, 0, "no resolver: the proxy could not resolve a name");
        *ret_n = n;
        return 0;
}

static void write_set(FILE *f, const Interval *iv, size_t n)
{
        fputs("\tset sandbox_uids {\n"
              "\t\ttype uid\n"
              "\t\tflags interval\n"
              "\t\telements = { ",
              f);
        for (size_t i = 0; i < n; i++) {
                fprintf(f, "%s%" PRIu64, i > 0 ? ", " : "", iv[i].first);
                if (iv[i].last != iv[i].first)
                        fprintf(f, "-%" PRIu64, iv[i].last);
        }
        fputs(" }\n"
              "\t}\n",
              f);
}

static void write_sandbox_proxy_rules(FILE *f, unsigned port)
{
        fprintf(f,
                "\n"
                "\t\t# The sandbox reaches the network through the proxy alone, and resolves no name\n"
                "\t\t# itself: DNS is refused wherever it goes, loopback's resolvers included.\n"
                "\t\tmeta skuid @sandbox_uids meta l4proto { tcp, udp } th dport 53 counter jump refuse\n"
                "\t\tmeta skuid @sandbox_uids ip daddr 127.0.0.1 tcp dport %u accept\n"
                "\t\tmeta skuid @sandbox_uids ip6 daddr ::1 tcp dport %u accept\n"
                "\t\tmeta skuid @sandbox_uids counter jump refuse\n",
                port, port);
}

static void write_proxy_rules(FILE *f, uid_t proxy_uid, const unsigned helper_ports[2],
                              const Resolver *resolvers, size_t n)
{
        unsigned u = (unsigned)proxy_uid, lo = helper_ports[0], hi = helper_ports[1];

        fprintf(f,
                "\n"
                "\t\t# The proxy: its answers; squid and its helpers, between ports the kernel hands\n"
                "\t\t# out on loopback; DNS to the configured resolvers alone (before the local\n"
                "\t\t# ranges: a resolver may be local); nothing on this machine (any of its\n"
                "\t\t# addresses) or its networks.\n"
                "\t\tmeta skuid %u ct state established,related accept\n"
                "\t\tmeta skuid %u ip daddr 127.0.0.1 tcp sport %u-%u tcp dport %u-%u accept\n"
                "\t\tmeta skuid %u ip6 daddr ::1 tcp sport %u-%u tcp dport %u-%u accept\n",
                u, u, lo, hi, lo, hi, u, lo, hi, lo, hi);
        for (size_t i = 0; i < n; i++)
                fprintf(f, "\t\tmeta skuid %u %s daddr %s meta l4proto { tcp, udp } th dport 53 accept\n", u,
                        resolvers[i].family == AF_INET ? "ip" : "ip6", resolvers[i].text);
        /* Every address of this machine, whatever range it is in (a public or global IPv6 one of a
         * runner among them): a service bound to all addresses answers on each. */
        fprintf(f,
                "\t\tmeta skuid %u meta l4proto { tcp, udp } th dport 53 counter jump refuse\n"
                "\t\tmeta skuid %u fib daddr type local counter jump refuse\n"
                "\t\tmeta skuid %u ip daddr { ",
                u, u, u);
        (void)local_ranges_write(f, AF_INET, ", ", true);
        fprintf(f, " } counter jump refuse\n\t\tmeta skuid %u ip6 daddr { ", u);
        (void)local_ranges_write(f, AF_INET6, ", ", true);
        fputs(" } counter jump refuse\n", f);
}

int nft_ruleset(const NftInput *in, char **ret_text, AjError *reterr)
{
        Interval intervals[NFT_MAX_RANGES + 1];
        Resolver resolvers[NFT_MAX_RESOLVERS];
        size_t n_intervals = 0, n_resolvers = 0, size = 0;
        _cleanup_free_ char *text = NULL;
        FILE *f;
        int r;

        assert(in);
        assert(ret_text);

        r = sandbox_intervals(in, intervals, &n_intervals, reterr);
        if (r < 0)
                return r;
        if (in->proxy) {
                if (!uid_valid(in->proxy_uid))
                        return aj_error(reterr, EINVAL, 0, 0, "proxy uid %u is not a user's uid",
                                        (unsigned)in->proxy_uid);
                for (size_t i = 0; i < n_intervals; i++)
                        if (in->proxy_uid >= intervals[i].first && in->proxy_uid <= intervals[i].last)
                                return aj_error(reterr, EINVAL, 0, 0, "proxy uid %u is one of the sandbox's",
                                                (unsigned)in->proxy_uid);
                if (in->proxy_port == 0 || in->proxy_port > 65535)
                        return aj_error(reterr, EINVAL, 0, 0, "proxy port %u is not a port", in->proxy_port);
                if (in->helper_ports[0] < 1024 || in->helper_ports[0] > in->helper_ports[1] ||
                    in->helper_ports[1] > 65535 ||
                    (in->proxy_port >= in->helper_ports[0] && in->proxy_port <= in->helper_ports[1]))
                        return aj_error(
                                reterr, EINVAL, 0, 0,
                                "helper ports %u-%u are not a range of unprivileged ports without the "
                                "proxy port",
                                in->helper_ports[0], in->helper_ports[1]);
                r = parse_resolvers(in->resolvers, resolvers, &n_resolvers, reterr);
                if (r < 0)
                        return r;
        }

        f = open_memstream(&text, &size);
        if (!f)
                return aj_error(reterr, ENOMEM, 0, 0, "out of memory");

        fputs(ruleset_head, f);
        write_set(f, intervals, n_intervals);
        fputs(ruleset_chains, f);
        if (in->proxy) {
                write_sandbox_proxy_rules(f, in->proxy_port);
                write_proxy_rules(f, in->proxy_uid, in->helper_ports, resolvers, n_resolvers);
        }
        fputs("\t}\n"
              "}\n",
              f);

        /* A memory stream fails only for want of memory; the text is complete only after fclose(). */
        r = ferror(f);
        if (fclose(f) != 0 || r)
                return aj_error(reterr, ENOMEM, 0, 0, "out of memory");
        *ret_text = TAKE_PTR(text);
        return 0;
}
