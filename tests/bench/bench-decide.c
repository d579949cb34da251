/* SPDX-License-Identifier: MIT */
/* bench-decide: the egress decision's throughput, in decisions per second, for the shipped policy alone
 * and with 1,000 generated [[write]] rules after its own, each without a threat list and with a generated
 * one of 300,000 names: the four side by side in the same run, interleaved in rounds, best of three.
 *
 * The requests are of five kinds, each timed alone and in a mix: reads; tunnels (CONNECT); writes a rule
 * allows; writes no rule allows, the worst case, for which every rule is scanned; requests whose Host
 * header or TLS server name names another host. Before anything is timed, each is checked to be decided
 * as its kind says, alike with and without the threat list.
 *
 * It reports ratios: (a) the 1,000-rule policy's throughput to the shipped policy's, (b) with the threat
 * list to without, and (c) given the egress proxy's added latency per request as tests/bench/egress.sh
 * measures it ("+MS ms"), one decision's cost as a fraction of it. Reports only; asserts nothing about
 * time.
 *
 * usage: bench-decide [--policy FILE] [--proxy-ms MS] [--round-ms MS] */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BENCH_NAME "bench-decide"
#define BENCH_SEED 0x2545f4914f6cdd1dULL /* the same names and requests in every run */
#include "bench.h"
#include "egress-policy.h"
#include "macro.h"
#include "read-file.h"

#ifndef SOURCE_ROOT
#error "SOURCE_ROOT must name the source tree"
#endif

#define EXTRA_RULES 1000
#define THREATS     300000
#define ROUNDS      3
#define SET_SIZE    1024 /* requests of each kind, and in the mix */
#define BATCH       64   /* decisions between two looks at the clock */

typedef enum Kind {
        KIND_READ,
        KIND_TUNNEL,
        KIND_WRITE_RULE,
        KIND_WRITE_NONE,
        KIND_FRONTED,
        KIND_MIX,
        KIND_MAX,
} Kind;

static const struct {
        const char *name;
        unsigned percent; /* of the mix */
} kinds[KIND_MAX] = {
        [KIND_READ] = { "read", 55 },
        [KIND_TUNNEL] = { "tunnel (CONNECT)", 25 },
        [KIND_WRITE_RULE] = { "write a rule allows", 10 },
        [KIND_WRITE_NONE] = { "write no rule allows", 5 },
        [KIND_FRONTED] = { "fronted", 5 },
        [KIND_MIX] = { "mix", 0 },
};

typedef enum Setup {
        SETUP_SHIPPED,
        SETUP_RULES,
        SETUP_SHIPPED_LIST,
        SETUP_RULES_LIST,
        SETUP_MAX,
} Setup;

static const char *const setup_names[SETUP_MAX] = { "shipped", "+1000 rules", "shipped+list", "+1000+list" };

/* What the requests point to, freed at the end. */
static char **pool;
static size_t pool_n, pool_allocated;

static volatile unsigned sink;

_printf_(1, 2) static char *str(const char *fmt, ...)
{
        va_list ap;
        char *s;
        int r;

        va_start(ap, fmt);
        r = vasprintf(&s, fmt, ap);
        va_end(ap);
        if (r < 0)
                die("out of memory");
        if (pool_n == pool_allocated) {
                size_t want = pool_allocated > 0 ? pool_allocated * 2 : 4096;
                char **grown = realloc(pool, want * sizeof(char *));

                if (!grown)
                        die("out of memory");
                pool = grown;
                pool_allocated = want;
        }
        pool[pool_n++] = s;
        return s;
}

static void pool_free(void)
{
        for (size_t i = 0; i < pool_n; i++)
                free(pool[i]);
        free(pool);
        pool = NULL;
        pool_n = pool_allocated = 0;
}

#define LABEL_MAX 16

/* A label of min to max (at most LABEL_MAX) lower-case letters and digits, starting with a letter. */
static const char *label_into(char buf[static LABEL_MAX + 1], unsigned min, unsigned max)
{
        static const char alnum[] = "abcdefghijklmnopqrstuvwxyz0123456789";
        unsigned n = min + pick(max - min + 1);

        buf[0] = (char)('a' + pick(26));
        for (unsigned i = 1; i < n; i++)
                buf[i] = alnum[pick(sizeof(alnum) - 1)];
        buf[n] = '\0';
        return buf;
}

/* The same, pooled. */
static const char *label(unsigned min, unsigned max)
{
        char buf[LABEL_MAX + 1];

        return str("%s", label_into(buf, min, max));
}

static const char *tld(void)
{
        static const char *const tlds[] = { "com", "net", "org", "io", "dev", "cloud", "de", "xyz" };

        return tlds[pick(ELEMENTSOF(tlds))];
}

/* ---- The generated policy ---- */

typedef struct GenRule {
        const char *hosts[3];
        const char *methods[3];
        const char *examples[4]; /* a path each glob matches */
        unsigned n_hosts, n_methods, n_paths;
} GenRule;

static GenRule rules[EXTRA_RULES];

/* One glob of the rule's j-th path, written to f, and a path it matches. */
static const char *gen_path(FILE *f, unsigned i, unsigned j)
{
        const char *a = label(3, 10), *b = label(3, 8);
        unsigned v = 1 + pick(9);

        switch (pick(6)) {
        case 0:
                fprintf(f, "\"/api/v%u/%s%u/*\"", v, a, j);
                return str("/api/v%u/%s%u/%s", v, a, j, label(1, 12));
        case 1:
                fprintf(f, "\"/%s%u/**/%s\"", a, j, b);
                return str("/%s%u/%s/%s/%s", a, j, label(1, 8), label(1, 8), b);
        case 2:
                fprintf(f, "\"/upload/%s%u/*.%s\"", a, j, b);
                return str("/upload/%s%u/%s.%s", a, j, label(1, 12), b);
        case 3:
                fprintf(f, "\"/repos/*/*/%s%u/**\"", a, j);
                return str("/repos/%s/%s/%s%u/%s/%u", label(2, 10), label(2, 10), a, j, label(2, 6), i);
        case 4:
                fprintf(f, "\"/%s%u/%s/%u\"", a, j, b, i);
                return str("/%s%u/%s/%u", a, j, b, i);
        default:
                fprintf(f, "\"/v%u/%s%u/**/items/*/%s\"", v, a, j, b);
                return str("/v%u/%s%u/x/y/z/items/%u/%s", v, a, j, pick(100000), b);
        }
}

/* The shipped policy's text followed by EXTRA_RULES rules, recorded in rules[]. */
static char *gen_policy(const char *shipped)
{
        static const char *const methods[] = { "POST", "PUT", "PATCH", "DELETE", "WEBSOCKET" };
        char *text = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&text, &size);

        if (!f)
                die("out of memory");
        fputs(shipped, f);
        for (unsigned i = 0; i < EXTRA_RULES; i++) {
                GenRule *r = &rules[i];
                unsigned first = pick(ELEMENTSOF(methods));

                fprintf(f,
                        "\n[[write]]\nname = \"local-%04u\"\nwhy = \"generated for the benchmark\"\nhosts = "
                        "[",
                        i);
                r->n_hosts = 1 + pick(3);
                for (unsigned j = 0; j < r->n_hosts; j++) {
                        if (i % 10 == 9)
                                r->hosts[j] = str("10.%u.%u.%u", i >> 8, i & 255, j + 1);
                        else
                                r->hosts[j] = str("%s-%u-%u.%s.%s", label(3, 10), i, j, label(3, 12), tld());
                        fprintf(f, "%s\"%s\"", j ? ", " : "", r->hosts[j]);
                }
                fputs("]\nmethods = [", f);
                r->n_methods = 1 + pick(3);
                for (unsigned j = 0; j < r->n_methods; j++) {
                        r->methods[j] = methods[(first + j) % ELEMENTSOF(methods)];
                        fprintf(f, "%s\"%s\"", j ? ", " : "", r->methods[j]);
                }
                fputs("]\npaths = [", f);
                r->n_paths = 1 + pick(4);
                for (unsigned j = 0; j < r->n_paths; j++) {
                        fputs(j ? ", " : "", f);
                        r->examples[j] = gen_path(f, i, j);
                }
                fputs("]\n", f);
        }
        if (fclose(f) != 0)
                die("out of memory");
        return text;
}

/* THREATS names, one a line, each different: a feed's mix of domains, subdomains and addresses. */
static char *gen_threats(size_t *ret_size)
{
        char *text = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&text, &size);

        if (!f)
                die("out of memory");
        fputs("# generated for the benchmark\n", f);
        for (unsigned i = 0; i < THREATS; i++) {
                char a[LABEL_MAX + 1], b[LABEL_MAX + 1];
                unsigned form = pick(10);

                if (form == 0)
                        fprintf(f, "203.%u.%u.%u\n", i >> 16, (i >> 8) & 255, i & 255);
                else if (form < 4)
                        fprintf(f, "%s.%s%u.%s\n", label_into(a, 2, 12), label_into(b, 4, 10), i, tld());
                else
                        fprintf(f, "%s%u.%s\n", label_into(a, 4, 12), i, tld());
        }
        if (fclose(f) != 0)
                die("out of memory");
        *ret_size = size;
        return text;
}

/* ---- The requests ---- */

static EgressRequest sets[KIND_MAX][SET_SIZE];

/* A host a read or a tunnel goes to: a package archive, a shipped rule's host, a generated rule's, or
 * anywhere else. */
static const char *some_host(void)
{
        static const char *const known[] = {
                "deb.debian.org",
                "security.debian.org",
                "pypi.org",
                "files.pythonhosted.org",
                "index.crates.io",
                "static.crates.io",
                "proxy.golang.org",
                "sum.golang.org",
                "registry.npmjs.org",
                "github.com",
                "codeload.github.com",
                "objects.githubusercontent.com",
                "gitlab.com",
                "nodejs.org",
                "dl-cdn.alpinelinux.org",
        };
        const GenRule *r;

        switch (pick(4)) {
        case 0:
        case 1:
                return known[pick(ELEMENTSOF(known))];
        case 2:
                r = &rules[pick(EXTRA_RULES)];
                return r->hosts[pick(r->n_hosts)];
        default:
                return str("%s.%s.%s.%s", label(2, 8), label(3, 10), label(3, 10), tld());
        }
}

static EgressRequest bumped(const char *method, const char *host, const char *path, bool body)
{
        /* An https request inside a bumped tunnel carries the server name; a plain one has none. */
        bool https = pick(10) < 7;

        return (EgressRequest){ .method = method,
                                .host = host,
                                .host_header = host,
                                .sni = https ? host : NULL,
                                .path = path,
                                .has_body = body,
                                .port = https ? 443 : 80 };
}

static void gen_requests(void)
{
        static const char *const reads[] = { "GET", "GET", "GET", "GET", "GET", "GET", "HEAD", "OPTIONS" };
        static const char *const writes[] = { "POST", "PUT", "PATCH", "DELETE" };
        static const char *const git_hosts[] = { "github.com", "gitlab.com", "codeberg.org",
                                                 "git.kernel.org" };

        for (size_t i = 0; i < SET_SIZE; i++) {
                const char *host = some_host();
                const GenRule *r = &rules[pick(EXTRA_RULES)];
                unsigned p = pick(r->n_paths);
                const char *m = r->methods[pick(r->n_methods)];

                sets[KIND_READ][i] = bumped(reads[pick(ELEMENTSOF(reads))], host,
                                            str("/%s/%s/%s-%u.%u.tar.gz%s", label(2, 8), label(2, 12),
                                                label(2, 12), pick(10), pick(100), pick(4) ? "" : "?x=1"),
                                            false);

                host = some_host();
                sets[KIND_TUNNEL][i] = (EgressRequest){
                        .method = "CONNECT", .host = host, .host_header = str("%s:443", host), .port = 443
                };

                if (pick(5) == 0) {
                        host = git_hosts[pick(ELEMENTSOF(git_hosts))];
                        sets[KIND_WRITE_RULE][i] =
                                bumped("POST", host,
                                       str("/%s/%s.git/git-upload-pack", label(2, 10), label(2, 14)), true);
                } else {
                        host = r->hosts[pick(r->n_hosts)];
                        sets[KIND_WRITE_RULE][i] = bumped(strcmp(m, "WEBSOCKET") == 0 ? "GET" : m, host,
                                                          r->examples[p], strcmp(m, "WEBSOCKET") != 0);
                        sets[KIND_WRITE_RULE][i].upgrade = strcmp(m, "WEBSOCKET") == 0;
                }

                /* Half to a host no rule names, half to a rule's host on a path none of its globs takes:
                 * either way every rule is tried. */
                r = &rules[pick(EXTRA_RULES)];
                host = pick(2) ? some_host() : r->hosts[pick(r->n_hosts)];
                sets[KIND_WRITE_NONE][i] =
                        bumped(writes[pick(ELEMENTSOF(writes))], host,
                               str("/not-allowed/%s/%s", label(2, 10), label(2, 10)), true);

                host = some_host();
                sets[KIND_FRONTED][i] = bumped("GET", host, "/", false);
                if (pick(2))
                        sets[KIND_FRONTED][i].host_header = str("fronted.%s.%s", label(3, 10), tld());
                else
                        sets[KIND_FRONTED][i].sni = str("fronted.%s.%s", label(3, 10), tld());
        }
        for (size_t i = 0; i < SET_SIZE; i++) {
                unsigned w = pick(100);
                Kind k = KIND_READ;

                while (w >= kinds[k].percent) {
                        w -= kinds[k].percent;
                        k++;
                }
                sets[KIND_MIX][i] = sets[k][pick(SET_SIZE)];
        }
}

/* Whether d is what a request of kind k comes to under the 1,000-rule policy. */
static bool as_expected(Kind k, const EgressDecision *d)
{
        switch (k) {
        case KIND_READ:
                return d->verdict == EGRESS_ALLOW && strcmp(d->reason, "read") == 0;
        case KIND_TUNNEL:
                return d->verdict == EGRESS_ALLOW && strcmp(d->reason, "tunnel") == 0;
        case KIND_WRITE_RULE:
                return d->verdict == EGRESS_ALLOW && d->rule;
        case KIND_WRITE_NONE:
                return d->verdict == EGRESS_DENY && strstr(d->reason, "not in the write allowlist");
        case KIND_FRONTED:
                return d->verdict == EGRESS_DENY && strstr(d->reason, "domain fronting");
        default:
                return true;
        }
}

/* Each request decided as its kind says under the 1,000-rule policy, and alike with the list, under
 * either policy: no request is on it, so that the list costs its lookups and nothing else. */
static void check_requests(const EgressPolicy *shipped, const EgressPolicy *extended,
                           const EgressThreats *threats)
{
        for (Kind k = 0; k < KIND_MAX; k++)
                for (size_t i = 0; i < SET_SIZE; i++) {
                        const EgressRequest *q = &sets[k][i];
                        const EgressPolicy *const both[] = { shipped, extended };
                        EgressDecision d, listed;

                        egress_decide(extended, NULL, q, &d);
                        if (!as_expected(k, &d))
                                die("%s %s%s: %s %s, not as a %s", q->method, q->host,
                                    q->path ? q->path : "", egress_verdict_to_string(d.verdict), d.reason,
                                    kinds[k].name);
                        for (size_t j = 0; j < ELEMENTSOF(both); j++) {
                                egress_decide(both[j], NULL, q, &d);
                                egress_decide(both[j], threats, q, &listed);
                                if (d.verdict != listed.verdict || strcmp(d.reason, listed.reason) != 0)
                                        die("%s %s: the generated threat list refuses it: %s", q->method,
                                            q->host, listed.reason);
                        }
                }
}

/* ---- Timing ---- */

/* Decisions per second over set, for at least round_ns. */
static double measure(const EgressPolicy *policy, const EgressThreats *threats, const EgressRequest *set,
                      double round_ns)
{
        double t0 = now_ns(), elapsed;
        uint64_t count = 0;
        unsigned allowed = 0;
        size_t i = 0;

        do {
                for (unsigned b = 0; b < BATCH; b++) {
                        EgressDecision d;

                        egress_decide(policy, threats, &set[i], &d);
                        allowed += d.verdict == EGRESS_ALLOW;
                        i = i + 1 == SET_SIZE ? 0 : i + 1;
                }
                count += BATCH;
                elapsed = now_ns() - t0;
        } while (elapsed < round_ns);
        sink += allowed;
        return (double)count / elapsed * 1e9;
}

static double parse_double(const char *s, const char *what)
{
        char *end;
        double v;

        errno = 0;
        v = strtod(s, &end);
        if (errno != 0 || end == s || *end != '\0' || !(v > 0))
                die("%s: not a positive number: %s", what, s);
        return v;
}

int main(int argc, char **argv)
{
        _cleanup_(egress_policy_freep) EgressPolicy *shipped = NULL, *extended = NULL;
        _cleanup_(egress_threats_freep) EgressThreats *threats = NULL;
        _cleanup_free_ char *data = NULL, *policy_text = NULL, *threats_text = NULL;
        const char *policy_path = SOURCE_ROOT "/policy/policy.toml";
        double proxy_ms = 0, round_ms = 100, best[SETUP_MAX][KIND_MAX] = {}, t0, parse_ms;
        const EgressPolicy *policies[SETUP_MAX];
        const EgressThreats *lists[SETUP_MAX];
        size_t size, threats_size;
        AjError e = {};
        int r;

        for (int i = 1; i < argc; i += 2) {
                if (i + 1 >= argc)
                        die("usage: bench-decide [--policy FILE] [--proxy-ms MS] [--round-ms MS]");
                if (strcmp(argv[i], "--policy") == 0)
                        policy_path = argv[i + 1];
                else if (strcmp(argv[i], "--proxy-ms") == 0)
                        proxy_ms = parse_double(argv[i + 1], "--proxy-ms");
                else if (strcmp(argv[i], "--round-ms") == 0)
                        round_ms = parse_double(argv[i + 1], "--round-ms");
                else
                        die("usage: bench-decide [--policy FILE] [--proxy-ms MS] [--round-ms MS]; not "
                            "understood: %s",
                            argv[i]);
        }

        r = read_regular_nofollow(AT_FDCWD, policy_path, EGRESS_POLICY_MAX_SIZE, &data, &size);
        if (r < 0)
                die("%s: %s", policy_path, strerror(-r));
        if (egress_policy_parse(data, size, &shipped, &e) < 0)
                die("%s: %s", policy_path, e.message);
        threats_text = gen_threats(&threats_size);
        t0 = now_ns();
        if (egress_threats_parse(threats_text, threats_size, &threats, &e) < 0)
                die("the generated threat list: %s", e.message);
        parse_ms = (now_ns() - t0) / 1e6;
        if (threats->n != THREATS)
                die("the generated threat list has %zu names", threats->n);
        policy_text = gen_policy(data);
        if (egress_policy_parse(policy_text, strlen(policy_text), &extended, &e) < 0)
                die("the generated policy: %s", e.message);
        gen_requests();

        check_requests(shipped, extended, threats);
        policies[SETUP_SHIPPED] = policies[SETUP_SHIPPED_LIST] = shipped;
        policies[SETUP_RULES] = policies[SETUP_RULES_LIST] = extended;
        lists[SETUP_SHIPPED] = lists[SETUP_RULES] = NULL;
        lists[SETUP_SHIPPED_LIST] = lists[SETUP_RULES_LIST] = threats;

        for (unsigned round = 0; round < ROUNDS; round++)
                for (Kind k = 0; k < KIND_MAX; k++)
                        for (Setup s = 0; s < SETUP_MAX; s++) {
                                double v = measure(policies[s], lists[s], sets[k], round_ms * 1e6);

                                if (v > best[s][k])
                                        best[s][k] = v;
                        }

        printf("# egress_decide(): decisions per second, best of %d interleaved rounds of %.0f ms each\n",
               ROUNDS, round_ms);
        printf("# policies: shipped (%zu rules), +1000 rules (%zu); list: %zu generated names (parsed in "
               "%.1f ms)\n",
               shipped->n_rules, extended->n_rules, threats->n, parse_ms);
        printf("# mix:");
        for (Kind k = 0; k < KIND_MIX; k++)
                printf(" %u%% %s%s", kinds[k].percent, kinds[k].name, k + 1 < KIND_MIX ? "," : "\n");
        printf("# (a): +1000 rules / shipped, without the list; (b): with the list / without, +1000 "
               "rules\n");
        printf("%-22s", "kind");
        for (Setup s = 0; s < SETUP_MAX; s++)
                printf(" %13s", setup_names[s]);
        printf("  %9s  %9s\n", "(a)", "(b)");
        for (Kind k = 0; k < KIND_MAX; k++) {
                printf("%-22s", kinds[k].name);
                for (Setup s = 0; s < SETUP_MAX; s++)
                        printf(" %13.0f", best[s][k]);
                printf("  %9.3f  %9.3f\n", best[SETUP_RULES][k] / best[SETUP_SHIPPED][k],
                       best[SETUP_RULES_LIST][k] / best[SETUP_RULES][k]);
        }
        printf("(a) ratio +1000 rules / shipped, mix: %.3f without the list, %.3f with it; worst kind "
               "(write "
               "no rule allows): %.3f, %.3f\n",
               best[SETUP_RULES][KIND_MIX] / best[SETUP_SHIPPED][KIND_MIX],
               best[SETUP_RULES_LIST][KIND_MIX] / best[SETUP_SHIPPED_LIST][KIND_MIX],
               best[SETUP_RULES][KIND_WRITE_NONE] / best[SETUP_SHIPPED][KIND_WRITE_NONE],
               best[SETUP_RULES_LIST][KIND_WRITE_NONE] / best[SETUP_SHIPPED_LIST][KIND_WRITE_NONE]);
        printf("(b) ratio with the %zu-name list / without, mix: %.3f for the shipped policy, %.3f with "
               "+1000 "
               "rules\n",
               threats->n, best[SETUP_SHIPPED_LIST][KIND_MIX] / best[SETUP_SHIPPED][KIND_MIX],
               best[SETUP_RULES_LIST][KIND_MIX] / best[SETUP_RULES][KIND_MIX]);
        {
                double mix_us = 1e6 / best[SETUP_RULES_LIST][KIND_MIX],
                       worst_us = 1e6 / best[SETUP_RULES_LIST][KIND_WRITE_NONE];

                printf("cost of one decision, +1000 rules and the list: mix %.3f us, worst kind %.3f us\n",
                       mix_us, worst_us);
                if (proxy_ms > 0)
                        printf("(c) one decision / the proxy's added %.3f ms per request: mix %.4f%%, worst "
                               "kind %.4f%% (an HTTPS request takes two: the CONNECT and the request in "
                               "it)\n",
                               proxy_ms, mix_us / (proxy_ms * 1e3) * 100, worst_us / (proxy_ms * 1e3) * 100);
                else
                        printf("(c) not given: --proxy-ms MS, the \"+MS ms\" tests/bench/egress.sh "
                               "reports\n");
        }
        pool_free();
        return 0;
}
