/* SPDX-License-Identifier: MIT */
/* nft_ruleset(): the full text for the proxy off and on, with and without subordinate ranges, with IPv4
 * and IPv6 resolvers; every refusal of its input; and, as root, each text checked by nft itself. */
#include <check.h>

#include "check-run.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>

#include "local-ranges.h"
#include "macro.h"
#include "nftables.h"
#include "run-tool.h"

/* The pieces every text shares, spelled out once; each test still compares the whole text. */
#define HEAD                                                                                                \
        "# agentic-job: what the sandbox uids and the egress proxy may reach. Written by\n"                 \
        "# `agentic-job sandbox setup` and loaded with `nft -f`; loading it again replaces the\n"           \
        "# table, which is declared first so that the delete finds it.\n"                                   \
        "table inet agentic_job\n"                                                                          \
        "delete table inet agentic_job\n"                                                                   \
        "\n"                                                                                                \
        "table inet agentic_job {\n"
#define SET(elements)                                                                                       \
        "\tset sandbox_uids {\n"                                                                            \
        "\t\ttype uid\n"                                                                                    \
        "\t\tflags interval\n"                                                                              \
        "\t\telements = { " elements " }\n"                                                                 \
        "\t}\n"
#define CHAINS                                                                                              \
        "\n"                                                                                                \
        "\t# Every refusal ends here: a reset for tcp, else \"administratively prohibited\", so\n"          \
        "\t# that the program fails at once. Never a drop, which would leave it waiting for a\n"            \
        "\t# timeout.\n"                                                                                    \
        "\tchain refuse {\n"                                                                                \
        "\t\tmeta l4proto tcp reject with tcp reset\n"                                                      \
        "\t\treject with icmpx type admin-prohibited\n"                                                     \
        "\t}\n"                                                                                             \
        "\n"                                                                                                \
        "\tchain output {\n"                                                                                \
        "\t\ttype filter hook output priority 0; policy accept;\n"                                          \
        "\n"                                                                                                \
        "\t\t# The cloud metadata service hands out the machine's credentials: never to the\n"              \
        "\t\t# sandbox, proxy or not.\n"                                                                    \
        "\t\tmeta skuid @sandbox_uids ip daddr 169.254.169.254 counter jump refuse\n"                       \
        "\t\tmeta skuid @sandbox_uids ip6 daddr fd00:ec2::254 counter jump refuse\n"
#define SANDBOX_PROXY                                                                                       \
        "\n"                                                                                                \
        "\t\t# The sandbox reaches the network through the proxy alone, and resolves no name\n"             \
        "\t\t# itself: DNS is refused wherever it goes, loopback's resolvers included.\n"                   \
        "\t\tmeta skuid @sandbox_uids meta l4proto { tcp, udp } th dport 53 counter jump refuse\n"          \
        "\t\tmeta skuid @sandbox_uids ip daddr 127.0.0.1 tcp dport 3128 accept\n"                           \
        "\t\tmeta skuid @sandbox_uids ip6 daddr ::1 tcp dport 3128 accept\n"                                \
        "\t\tmeta skuid @sandbox_uids counter jump refuse\n"
#define PROXY_HEAD                                                                                          \
        "\n"                                                                                                \
        "\t\t# The proxy: its answers; squid and its helpers, between ports the kernel hands\n"             \
        "\t\t# out on loopback; DNS to the configured resolvers alone (before the local\n"                  \
        "\t\t# ranges: a resolver may be local); nothing on this machine (any of its\n"                     \
        "\t\t# addresses) or its networks.\n"                                                               \
        "\t\tmeta skuid 998 ct state established,related accept\n"                                          \
        "\t\tmeta skuid 998 ip daddr 127.0.0.1 tcp sport 32768-60999 tcp dport 32768-60999 accept\n"        \
        "\t\tmeta skuid 998 ip6 daddr ::1 tcp sport 32768-60999 tcp dport 32768-60999 accept\n"
#define PROXY_TAIL                                                                                          \
        "\t\tmeta skuid 998 meta l4proto { tcp, udp } th dport 53 counter jump refuse\n"                    \
        "\t\tmeta skuid 998 fib daddr type local counter jump refuse\n"                                     \
        "\t\tmeta skuid 998 ip daddr { 0.0.0.0/8, 10.0.0.0/8, 100.64.0.0/10, 127.0.0.0/8, "                 \
        "169.254.0.0/16, 172.16.0.0/12, 192.0.0.0/24, 192.168.0.0/16, 198.18.0.0/15, 224.0.0.0/3, "         \
        "168.63.129.16 } counter jump refuse\n"                                                             \
        "\t\tmeta skuid 998 ip6 daddr { ::/96, 64:ff9b:1::/48, fc00::/7, fe80::/10, fec0::/10, ff00::/8, "  \
        "::ffff:0:0/96, "                                                                                   \
        "64:ff9b::/104, 64:ff9b::a00:0/104, 64:ff9b::6440:0/106, 64:ff9b::7f00:0/104, "                     \
        "64:ff9b::a9fe:0/112, 64:ff9b::ac10:0/108, 64:ff9b::c000:0/120, 64:ff9b::c0a8:0/112, "              \
        "64:ff9b::c612:0/111, 64:ff9b::e000:0/99, 64:ff9b::a83f:8110 } counter jump refuse\n"
#define END                                                                                                 \
        "\t}\n"                                                                                             \
        "}\n"

static const char *const nft_paths[] = { "/usr/sbin/nft", "/sbin/nft", "/usr/bin/nft", NULL };

static const UidRange one_range[] = { { 100000, 65536 } };
static char *const resolver_ipv4[] = { "10.0.0.2", NULL };

/* The text for in, compared whole with expected, then (as root) checked by `nft -c -f`. */
static void assert_ruleset(const NftInput *in, const char *expected)
{
        _cleanup_free_ char *text = NULL;
        AjError e = {};
        int r;

        r = nft_ruleset(in, &text, &e);
        ck_assert_msg(r == 0, "refused: %s", e.message);
        ck_assert_str_eq(text, expected);

        if (tool_check_runs("nft -c", tool_find(nft_paths)))
                ck_assert_int_eq(tool_run_on_text(tool_find(nft_paths),
                                                  (const char *const[]){ "-c", "-f", NULL }, text),
                                 0);
}

START_TEST(test_no_proxy_no_ranges)
{
        /* Without the proxy the resolvers and the proxy's uid are not read, so they may be anything. */
        assert_ruleset(&(NftInput){ .sandbox_uid = 1001, .proxy = false, .proxy_uid = 0 },
                       HEAD SET("1001") CHAINS END);
}
END_TEST

START_TEST(test_no_proxy_ranges)
{
        assert_ruleset(&(NftInput){ .sandbox_uid = 1001, .ranges = one_range, .n_ranges = 1 },
                       HEAD SET("1001, 100000-165535") CHAINS END);
}
END_TEST

START_TEST(test_ranges_merged)
{
        /* Out of order, overlapping, touching, one of a single uid, and the sandbox uid inside one: nft
         * refuses overlapping intervals, so they are merged. */
        static const UidRange ranges[] = {
                { 300000, 10 }, { 100000, 65536 }, { 165536, 100 },
                { 100500, 10 }, { 400000, 1 },     { 300005, 10 },
        };

        assert_ruleset(&(NftInput){ .sandbox_uid = 1001, .ranges = ranges, .n_ranges = ELEMENTSOF(ranges) },
                       HEAD SET("1001, 100000-165635, 300000-300014, 400000") CHAINS END);
        assert_ruleset(
                &(NftInput){ .sandbox_uid = 165636, .ranges = ranges, .n_ranges = ELEMENTSOF(ranges) },
                HEAD SET("100000-165636, 300000-300014, 400000") CHAINS END);
}
END_TEST

START_TEST(test_proxy_no_ranges)
{
        assert_ruleset(&(NftInput){ .sandbox_uid = 1001,
                                    .proxy = true,
                                    .proxy_uid = 998,
                                    .proxy_port = 3128,
                                    .helper_ports = { 32768, 60999 },
                                    .resolvers = resolver_ipv4 },
                       HEAD SET("1001") CHAINS SANDBOX_PROXY PROXY_HEAD
                       "\t\tmeta skuid 998 ip daddr 10.0.0.2 meta l4proto { tcp, udp } th dport 53 "
                       "accept\n" PROXY_TAIL END);
}
END_TEST

START_TEST(test_proxy_ranges)
{
        assert_ruleset(&(NftInput){ .sandbox_uid = 1001,
                                    .ranges = one_range,
                                    .n_ranges = 1,
                                    .proxy = true,
                                    .proxy_uid = 998,
                                    .proxy_port = 3128,
                                    .helper_ports = { 32768, 60999 },
                                    .resolvers = resolver_ipv4 },
                       HEAD SET("1001, 100000-165535") CHAINS SANDBOX_PROXY PROXY_HEAD
                       "\t\tmeta skuid 998 ip daddr 10.0.0.2 meta l4proto { tcp, udp } th dport 53 "
                       "accept\n" PROXY_TAIL END);
}
END_TEST

START_TEST(test_proxy_ipv6_resolvers)
{
        /* systemd-resolved's stub on loopback, an IPv6 resolver in two spellings (written once, in
         * canonical form), a link-local IPv4 one. */
        static char *const resolvers[] = {
                "127.0.0.53", "2001:DB8:0:0::53", "2001:db8::53", "169.254.169.253", "fd00:ec2::253", NULL,
        };

        assert_ruleset(
                &(NftInput){ .sandbox_uid = 1001,
                             .ranges = one_range,
                             .n_ranges = 1,
                             .proxy = true,
                             .proxy_uid = 998,
                             .proxy_port = 3128,
                             .helper_ports = { 32768, 60999 },
                             .resolvers = resolvers },
                HEAD SET("1001, 100000-165535") CHAINS SANDBOX_PROXY PROXY_HEAD
                "\t\tmeta skuid 998 ip daddr 127.0.0.53 meta l4proto { tcp, udp } th dport 53 accept\n"
                "\t\tmeta skuid 998 ip6 daddr 2001:db8::53 meta l4proto { tcp, udp } th dport 53 accept\n"
                "\t\tmeta skuid 998 ip daddr 169.254.169.253 meta l4proto { tcp, udp } th dport 53 "
                "accept\n"
                "\t\tmeta skuid 998 ip6 daddr fd00:ec2::253 meta l4proto { tcp, udp } th dport 53 "
                "accept\n" PROXY_TAIL END);
}
END_TEST

START_TEST(test_proxy_port)
{
        /* The port is the caller's (EGRESS_LISTEN_PORT); only it changes. */
        _cleanup_free_ char *text = NULL;

        ck_assert_int_eq(nft_ruleset(&(NftInput){ .sandbox_uid = 1001,
                                                  .proxy = true,
                                                  .proxy_uid = 998,
                                                  .proxy_port = 8080,
                                                  .helper_ports = { 32768, 60999 },
                                                  .resolvers = resolver_ipv4 },
                                     &text, NULL),
                         0);
        ck_assert_ptr_nonnull(
                strstr(text, "\t\tmeta skuid @sandbox_uids ip daddr 127.0.0.1 tcp dport 8080 accept\n"
                             "\t\tmeta skuid @sandbox_uids ip6 daddr ::1 tcp dport 8080 accept\n"));
        ck_assert_ptr_null(strstr(text, "3128"));
}
END_TEST

START_TEST(test_nft_check_control)
{
        /* The control: nft -c does refuse a broken ruleset, so its passes above mean something. */
        if (tool_check_runs("nft -c control", tool_find(nft_paths)))
                ck_assert_int_ne(tool_run_on_text(tool_find(nft_paths),
                                                  (const char *const[]){ "-c", "-f", NULL },
                                                  HEAD SET("1001-1000") CHAINS END),
                                 0);
}
END_TEST

/* ---- Refused ---- */

static UidRange many_ranges[NFT_MAX_RANGES + 1];
static char *many_resolvers[NFT_MAX_RESOLVERS + 2];

static void make_many(void)
{
        for (size_t i = 0; i < ELEMENTSOF(many_ranges); i++)
                many_ranges[i] = (UidRange){ (uid_t)(100000 + 1000 * i), 10 };
        for (size_t i = 0; i < NFT_MAX_RESOLVERS + 1; i++)
                ck_assert_int_ge(asprintf(&many_resolvers[i], "10.0.0.%zu", i + 1), 0);
        many_resolvers[NFT_MAX_RESOLVERS + 1] = NULL;
}

static void free_many(void)
{
        for (size_t i = 0; many_resolvers[i]; i++)
                free(many_resolvers[i]);
        memset(many_resolvers, 0, sizeof(many_resolvers));
}

/* The proxy on, everything valid but what the test changes. */
/* clang-format 14 and 19 lay out this macro differently: kept as written. */
/* clang-format off */
#define PROXY(uid, port, list) \
        { .sandbox_uid = 1001, .proxy = true, .proxy_uid = (uid), .proxy_port = (port), \
          .helper_ports = { 32768, 60999 }, .resolvers = (list) }
/* clang-format on */
#define PROXY_RESOLVERS(...) PROXY(998, 3128, ((char *const[]){ __VA_ARGS__, NULL }))

static const struct {
        NftInput in;
        const char *message;
} refusals[] = {
        { { .sandbox_uid = 0 }, "sandbox uid 0 is not a user's uid" },
        { { .sandbox_uid = (uid_t)-1 }, "sandbox uid 4294967295 is not a user's uid" },
        { { .sandbox_uid = 1001, .ranges = (const UidRange[]){ { 100000, 0 } }, .n_ranges = 1 },
          "subordinate uid range 100000:0 is empty, starts below 65536 or reaches uid 4294967295" },
        { { .sandbox_uid = 1001, .ranges = (const UidRange[]){ { 1000, 65536 } }, .n_ranges = 1 },
          "subordinate uid range 1000:65536 is empty, starts below 65536 or reaches uid 4294967295" },
        { { .sandbox_uid = 1001, .ranges = (const UidRange[]){ { 65535, 10 } }, .n_ranges = 1 },
          "subordinate uid range 65535:10 is empty, starts below 65536 or reaches uid 4294967295" },
        { { .sandbox_uid = 1001, .ranges = (const UidRange[]){ { 4294901760u, 65536 } }, .n_ranges = 1 },
          "subordinate uid range 4294901760:65536 is empty, starts below 65536 or reaches uid 4294967295" },
        { { .sandbox_uid = 1001, .ranges = many_ranges, .n_ranges = NFT_MAX_RANGES + 1 },
          "more than 64 subordinate uid ranges" },
        { PROXY(0, 3128, resolver_ipv4), "proxy uid 0 is not a user's uid" },
        { PROXY((uid_t)-1, 3128, resolver_ipv4), "proxy uid 4294967295 is not a user's uid" },
        { PROXY(1001, 3128, resolver_ipv4), "proxy uid 1001 is one of the sandbox's" },
        { { .sandbox_uid = 1001,
            .ranges = one_range,
            .n_ranges = 1,
            .proxy = true,
            .proxy_uid = 165535,
            .proxy_port = 3128,
            .helper_ports = { 32768, 60999 },
            .resolvers = resolver_ipv4 },
          "proxy uid 165535 is one of the sandbox's" },
        { PROXY(998, 0, resolver_ipv4), "proxy port 0 is not a port" },
/* clang-format 14 and 19 lay out this macro differently: kept as written. */
/* clang-format off */
#define HELPERS(a, b) \
        { .sandbox_uid = 1001, .proxy = true, .proxy_uid = 998, .proxy_port = 3128, \
          .helper_ports = { (a), (b) }, .resolvers = resolver_ipv4 }
        /* clang-format on */
        { HELPERS(0, 0), "helper ports 0-0 are not a range of unprivileged ports without the proxy port" },
        { HELPERS(1000, 2000),
          "helper ports 1000-2000 are not a range of unprivileged ports without the proxy port" },
        { HELPERS(3000, 4000),
          "helper ports 3000-4000 are not a range of unprivileged ports without the proxy port" },
        { HELPERS(40000, 30000),
          "helper ports 40000-30000 are not a range of unprivileged ports without the proxy port" },
        { HELPERS(32768, 65536),
          "helper ports 32768-65536 are not a range of unprivileged ports without the proxy port" },
        { PROXY(998, 65536, resolver_ipv4), "proxy port 65536 is not a port" },
        { PROXY(998, 3128, NULL), "no resolver: the proxy could not resolve a name" },
        { PROXY(998, 3128, ((char *const[]){ NULL })), "no resolver: the proxy could not resolve a name" },
        { PROXY_RESOLVERS("dns.example"), "resolver \"dns.example\" is not a literal IP address" },
        { PROXY_RESOLVERS("127.1"), "resolver \"127.1\" is not a literal IP address" },
        { PROXY_RESOLVERS(" 10.0.0.2"), "resolver \" 10.0.0.2\" is not a literal IP address" },
        { PROXY_RESOLVERS("10.0.0.2 } accept"),
          "resolver \"10.0.0.2 } accept\" is not a literal IP address" },
        { PROXY_RESOLVERS("fe80::1%eth0"), "resolver \"fe80::1%eth0\" is not a literal IP address" },
        { PROXY_RESOLVERS(""), "resolver \"\" is not a literal IP address" },
        { PROXY_RESOLVERS("10.0.0.2\n"), "resolver \"10.0.0.2\\n\" is not a literal IP address" },
        { PROXY_RESOLVERS("::ffff:10.0.0.2"),
          "resolver \"::ffff:10.0.0.2\" is IPv4-mapped: give the IPv4 address" },
        { PROXY(998, 3128, many_resolvers), "more than 16 resolvers" },
};

START_TEST(test_refusals)
{
        char *text = (char *)"untouched";
        AjError e = {};
        int r;

        make_many();
        r = nft_ruleset(&refusals[_i].in, &text, &e);
        free_many();
        ck_assert_int_eq(r, -EINVAL);
        ck_assert_str_eq(e.message, refusals[_i].message);
        ck_assert_str_eq(text, "untouched");
}
END_TEST

/* The ranges squid is given besides them: the machine's own addresses, less those already inside. */
START_TEST(test_local_ranges_contain)
{
        static const struct {
                const char *address;
                bool local;
        } cases[] = {
                { "127.0.0.1", true },
                { "10.1.2.3", true },
                { "169.254.169.254", true },
                { "172.31.255.255", true },
                { "172.32.0.0", false },
                { "100.127.0.1", true },
                { "100.128.0.1", false },
                { "168.63.129.16", true },
                { "168.63.129.17", false },
                { "198.51.100.2", false },
                { "203.0.113.10", false },
                { "8.8.8.8", false },
                { "239.1.1.1", true },
                { "::1", true },
                { "::", true },
                { "::127.0.0.1", true },
                { "fe80::1", true },
                { "fd00:ec2::254", true },
                { "2001:db8::1", false },
                { "ff02::1", true },
                { "febf::1", true },
                { "2a00:1450::1", false },
                { "::1:0:0:1", false },
                /* RFC 8215's local-use translation prefix, whole, and its neighbours. */
                { "64:ff9b:1::1", true },
                { "64:ff9b:1:ffff::1", true },
                { "64:ff9b:2::1", false },
                { "64:ff9b:0:1::1", false },
                { "fc00::1", true },
                { "fbff::1", false },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                unsigned char a[16];
                int family = strchr(cases[i].address, ':') ? AF_INET6 : AF_INET;

                ck_assert_int_eq(inet_pton(family, cases[i].address, a), 1);
                ck_assert_msg(local_ranges_contain(family, a) == cases[i].local, "%s", cases[i].address);
        }
}
END_TEST

static Suite *nftables_suite(void)
{
        Suite *s = suite_create("nftables");
        TCase *text = tcase_create("text"), *refused = tcase_create("refused");

        /* nft -c runs in some of these: give it time under valgrind. */
        tcase_set_timeout(text, 60);
        tcase_add_test(text, test_no_proxy_no_ranges);
        tcase_add_test(text, test_no_proxy_ranges);
        tcase_add_test(text, test_ranges_merged);
        tcase_add_test(text, test_proxy_no_ranges);
        tcase_add_test(text, test_proxy_ranges);
        tcase_add_test(text, test_proxy_ipv6_resolvers);
        tcase_add_test(text, test_proxy_port);
        tcase_add_test(text, test_nft_check_control);
        tcase_add_test(text, test_local_ranges_contain);
        suite_add_tcase(s, text);
        tcase_add_loop_test(refused, test_refusals, 0, (int)ELEMENTSOF(refusals));
        suite_add_tcase(s, refused);
        return s;
}

int main(void)
{
        return check_run(nftables_suite());
}
