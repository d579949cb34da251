/* SPDX-License-Identifier: MIT */
/* agentic-job policy test METHOD URL [--body] [--upgrade] [--host HEADER] [--sni NAME]
 *                                    [--authority HOST[:PORT]] [--policy FILE] [--threats FILE]
 *                                    [--reads any|listed]
 * What the egress proxy would decide for one request, by the code the proxy runs: for operators, and for
 * the check, which asks it about each probe's requests. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "client.h"
#include "config.h"
#include "egress-policy.h"
#include "macro.h"

#define POLICY_TEST_EXIT_ALLOW 0
#define POLICY_TEST_EXIT_DENY  1

#define USAGE                                                                                               \
        "usage: agentic-job policy test METHOD URL [--body] [--upgrade] [--host HEADER] [--sni NAME]\n"     \
        "                               [--authority HOST[:PORT]] [--policy FILE] [--threats FILE]\n"       \
        "                               [--reads any|listed]\n"

static int usage_error(const char *what, const char *arg)
{
        fprintf(stderr, "agentic-job policy test: %s%s\n", what, arg);
        fputs(USAGE, stderr);
        return CLIENT_EXIT_USAGE;
}

static int fail(const char *message)
{
        fprintf(stderr, "agentic-job policy test: %s\n", message);
        return CLIENT_EXIT_USAGE;
}

typedef enum PolicyTestOption {
        POLICY_TEST_BODY,
        POLICY_TEST_UPGRADE,
        POLICY_TEST_HOST,
        POLICY_TEST_SNI,
        POLICY_TEST_AUTHORITY,
        POLICY_TEST_POLICY,
        POLICY_TEST_THREATS,
        POLICY_TEST_READS,
} PolicyTestOption;

const CliOption policy_test_options[] = {
        { "--body", POLICY_TEST_BODY, CLI_FLAG, false },
        { "--upgrade", POLICY_TEST_UPGRADE, CLI_FLAG, false },
        { "--host", POLICY_TEST_HOST, CLI_WORD, false },
        { "--sni", POLICY_TEST_SNI, CLI_WORD, false },
        { "--authority", POLICY_TEST_AUTHORITY, CLI_WORD, false },
        { "--policy", POLICY_TEST_POLICY, CLI_FILE, false },
        { "--threats", POLICY_TEST_THREATS, CLI_FILE, false },
        { "--reads", POLICY_TEST_READS, CLI_WORD, false },
        {},
};

typedef struct Options {
        const char *method, *url, *host, *sni, *authority, *policy, *threats, *reads;
        bool body, upgrade;
} Options;

static int parse_options(int argc, char **argv, Options *o)
{
        const char *positional[2] = {};
        size_t n_positional = 0;

        for (int i = 1; i < argc; i++) {
                const char *a = argv[i];
                const CliOption *opt = cli_option_find(policy_test_options, a);
                const char **slot = NULL;
                bool *flag = NULL;

                if (opt) {
                        switch ((PolicyTestOption)opt->id) {
                        case POLICY_TEST_BODY:
                                flag = &o->body;
                                break;
                        case POLICY_TEST_UPGRADE:
                                flag = &o->upgrade;
                                break;
                        case POLICY_TEST_HOST:
                                slot = &o->host;
                                break;
                        case POLICY_TEST_SNI:
                                slot = &o->sni;
                                break;
                        case POLICY_TEST_AUTHORITY:
                                slot = &o->authority;
                                break;
                        case POLICY_TEST_POLICY:
                                slot = &o->policy;
                                break;
                        case POLICY_TEST_THREATS:
                                slot = &o->threats;
                                break;
                        case POLICY_TEST_READS:
                                slot = &o->reads;
                                break;
                        }
                }
                if (flag) {
                        if (*flag)
                                return usage_error("given twice: ", a);
                        *flag = true;
                } else if (slot) {
                        if (*slot)
                                return usage_error("given twice: ", a);
                        if (i + 1 >= argc)
                                return usage_error("needs a value: ", a);
                        *slot = argv[++i];
                } else if (a[0] == '-' && a[1] != '\0')
                        return usage_error("unknown option ", a);
                else if (n_positional >= ELEMENTSOF(positional))
                        return usage_error("one request at a time, unexpected ", a);
                else
                        positional[n_positional++] = a;
        }
        if (n_positional < 2)
                return usage_error(n_positional == 0 ? "missing the method and the URL" : "missing the URL",
                                   "");
        o->method = positional[0];
        o->url = positional[1];
        return 0;
}

int policy_test_main(int argc, char **argv)
{
        _cleanup_(egress_policy_freep) EgressPolicy *policy = NULL;
        _cleanup_(egress_threats_freep) EgressThreats *threats = NULL;
        _cleanup_(egress_url_done) EgressUrl url = {};
        EgressDecision d;
        Options o = {};
        AjError e = {};
        int r;

        r = parse_options(argc, argv, &o);
        if (r != 0)
                return r;
        r = egress_url_parse(o.url, &url, &e);
        if (r < 0)
                return fail(e.message);
        if (o.sni && !url.https)
                return usage_error("--sni needs an https URL: plain HTTP has no TLS server name", "");
        if (o.reads && strcmp(o.reads, "any") != 0 && strcmp(o.reads, "listed") != 0)
                return usage_error("--reads takes \"any\" or \"listed\", not ", o.reads);
        if (o.authority && !url.https)
                return usage_error("--authority needs an https URL: a plain HTTP request goes where its URL "
                                   "names",
                                   "");

        r = egress_policy_load(o.policy ? o.policy : EGRESS_POLICY_PATH, &policy, &e);
        if (r < 0)
                return fail(e.message);
        /* Without --reads, the proxy's mode where it is set up: the configuration's [egress] reads. */
        if (o.reads)
                policy->reads_listed = strcmp(o.reads, "listed") == 0;
        else if (access(CONFIG_PATH, F_OK) == 0) {
                _cleanup_(config_freep) Config *config = NULL;

                r = config_load_trusted(CONFIG_PATH, &config, NULL, NULL, &e);
                if (r < 0)
                        return fail(e.message);
                policy->reads_listed = config->egress_reads_listed;
        }
        /* Without --threats, the proxy's list where it is installed; the proxy runs without one otherwise.
         */
        r = egress_threats_load(o.threats ? o.threats : EGRESS_THREATS_PATH, &threats, &e);
        if (r < 0 && !(r == -ENOENT && !o.threats))
                return fail(e.message);

        egress_decide_client(policy, threats,
                             &(EgressClientRequest){
                                     .method = o.method,
                                     .url = &url,
                                     .authority = o.authority,
                                     .host_header = o.host,
                                     .sni = o.sni,
                                     .has_body = o.body,
                                     .upgrade = o.upgrade,
                             },
                             &d);
        printf("%s %s\n", egress_verdict_to_string(d.verdict), d.reason);
        if (fflush(stdout) != 0 || ferror(stdout))
                return fail("cannot write the decision");
        return d.verdict == EGRESS_ALLOW ? POLICY_TEST_EXIT_ALLOW : POLICY_TEST_EXIT_DENY;
}
