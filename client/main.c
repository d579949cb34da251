/* SPDX-License-Identifier: MIT */
/* agentic-job: the unprivileged client. */
#include <stdio.h>
#include <string.h>

#include "build-config.h"
#include "check-inside.h"
#include "client.h"
#include "egress-proxy.h"
#include "run-inside.h"

static void usage(FILE *f)
{
        fputs("usage: agentic-job sandbox setup --config FILE [--helper FILE] [--dry-run]\n"
              "       agentic-job sandbox check [--record | --unless-passed] [--json]\n"
              "       agentic-job sandbox exec [--chdir DIR] [--stdin FILE] -- CMD...\n"
              "       agentic-job policy test METHOD URL [--body] [--upgrade] [--host HEADER] [--sni NAME]\n"
              "                               [--authority HOST[:PORT]] [--policy FILE] [--threats FILE]\n"
              "       agentic-job run --repo URL|PATH (--commit SHA | --ref REF) --base BRANCH --task FILE\n"
              "                       --out DIR (--output NAME)... [--patch] [--setup CMD] [--timeout S]\n"
              "                       [--max-file-bytes N] [--max-total-bytes N] [--max-files N]\n"
              "                       [--profile NAME] [--token-stdin] [-- WORDS...]\n"
              "       agentic-job egress start|stop\n"
              "       agentic-job --help | --version\n"
              "See agentic-job(1).\n",
              f);
}

int main(int argc, char **argv)
{
        if (argc == 2 && strcmp(argv[1], "--help") == 0) {
                usage(stdout);
                return 0;
        }
        if (argc == 2 && strcmp(argv[1], "--version") == 0) {
                printf("agentic-job %s\n", PACKAGE_VERSION);
                return 0;
        }
        if (argc >= 3 && strcmp(argv[1], "sandbox") == 0 && strcmp(argv[2], "setup") == 0)
                return sandbox_setup_main(argc - 2, argv + 2);
        if (argc >= 3 && strcmp(argv[1], "sandbox") == 0 && strcmp(argv[2], "check") == 0)
                return sandbox_check_main(argc - 2, argv + 2);
        /* The sandbox side of the check, run by the check through helper enter (not in the usage). */
        if (argc >= 3 && strcmp(argv[1], "sandbox") == 0 && strcmp(argv[2], "probe-inside") == 0)
                return sandbox_probe_inside_main(argc - 2, argv + 2);
        if (argc >= 3 && strcmp(argv[1], "sandbox") == 0 && strcmp(argv[2], "exec") == 0)
                return sandbox_exec_main(argc - 2, argv + 2);
        if (argc >= 3 && strcmp(argv[1], "policy") == 0 && strcmp(argv[2], "test") == 0)
                return policy_test_main(argc - 2, argv + 2);
        if (argc >= 2 && strcmp(argv[1], "run") == 0)
                return run_main(argc - 1, argv + 1);
        /* The sandbox side of run, run by run through helper enter (not in the usage). */
        if (argc >= 2 && strcmp(argv[1], "run-inside") == 0)
                return run_inside_main(argc - 1, argv + 1);
        if (argc >= 2 && strcmp(argv[1], "egress") == 0)
                return egress_main(argc - 1, argv + 1);
        if (argc >= 2 && strcmp(argv[1], "helper") == 0) {
                fprintf(stderr, "agentic-job: the helper is %s, reached through sudo\n", HELPER_PATH);
                return CLIENT_EXIT_USAGE;
        }
        if (argc < 2)
                fputs("agentic-job: missing command\n", stderr);
        else if (strcmp(argv[1], "sandbox") == 0)
                fprintf(stderr, "agentic-job: unknown sandbox command: %s (there are: setup, check, exec)\n",
                        argc < 3 ? "(none)" : argv[2]);
        else if (strcmp(argv[1], "policy") == 0)
                fprintf(stderr, "agentic-job: unknown policy command: %s (there is: test)\n",
                        argc < 3 ? "(none)" : argv[2]);
        else
                fprintf(stderr, "agentic-job: unknown command: %s\n", argv[1]);
        usage(stderr);
        return CLIENT_EXIT_USAGE;
}
