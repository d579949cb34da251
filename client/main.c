/* SPDX-License-Identifier: MIT */
/* agentic-job: the unprivileged client. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "build-config.h"
#include "check-inside.h"
#include "cli.h"
#include "client.h"
#include "egress-proxy.h"
#include "macro.h"
#include "probe-decoy.h"
#include "run-inside.h"

typedef struct Command {
        const char *words[2];               /* { "sandbox", "setup" }, or { "run", NULL } */
        int (*main)(int argc, char **argv); /* argv[0] is the command's last word */
        const CliOption *options;           /* its options' table, or NULL when it takes none */
        /* Its usage after "agentic-job ", continued lines indented to stand under it; NULL for a hidden
         * one, which is run by the client itself through helper enter: not in the usage nor the list. */
        const char *synopsis;
} Command;

/* The commands: what main() dispatches, what --help and COMMAND --help print and what --list-options
 * prints are this one table. */
static const Command commands[] = {
        { { "sandbox", "setup" },
          sandbox_setup_main,
          sandbox_setup_options,
          "sandbox setup --config FILE [--helper FILE] [--dry-run]" },
        { { "sandbox", "check" },
          sandbox_check_main,
          sandbox_check_options,
          "sandbox check [--record | --unless-passed] [--json] [--walk]" },
        /* The sandbox side of the check, run by the check through helper enter. */
        { { "sandbox", "probe-inside" }, sandbox_probe_inside_main, NULL, NULL },
        { { "sandbox", "decoy" }, sandbox_decoy_main, NULL, NULL },
        { { "sandbox", "exec" },
          sandbox_exec_main,
          sandbox_exec_options,
          "sandbox exec [--chdir DIR] [--stdin FILE | --script FILE] [--keep] [--raw] -- CMD..." },
        /* The sandbox side of a script step (sandbox exec --script), through helper enter. */
        { { "sandbox", "step-inside" }, sandbox_step_inside_main, NULL, NULL },
        { { "sandbox", "end" }, sandbox_end_main, NULL, "sandbox end" },
        { { "policy", "test" },
          policy_test_main,
          policy_test_options,
          "policy test METHOD URL [--body] [--upgrade] [--host HEADER] [--sni NAME]\n"
          "                               [--authority HOST[:PORT]] [--policy FILE] [--threats FILE]\n"
          "                               [--reads any|listed]" },
        { { "run", NULL },
          run_main,
          run_options,
          "run --repo URL|PATH (--commit SHA | --ref REF) --base BRANCH --task FILE\n"
          "                       --out DIR (--output NAME)... [--patch] [--setup CMD] [--timeout S]\n"
          "                       [--max-file-bytes N] [--max-total-bytes N] [--max-files N]\n"
          "                       [--profile NAME] [--token-stdin] [-- WORDS...]" },
        /* The sandbox side of run, run by run through helper enter. */
        { { "run-inside", NULL }, run_inside_main, NULL, NULL },
        { { "egress", "start" }, egress_main, NULL, "egress start|stop" },
        { { "egress", "stop" }, egress_main, NULL, "egress start|stop" },
};

/* Every visible command's synopsis once (egress start and stop share theirs), then the options alone. */
static void usage(FILE *f)
{
        const char *last = NULL, *lead = "usage: ";

        for (size_t i = 0; i < ELEMENTSOF(commands); i++) {
                const char *s = commands[i].synopsis;

                if (!s || (last && strcmp(s, last) == 0))
                        continue;
                fprintf(f, "%sagentic-job %s\n", lead, s);
                lead = "       ";
                last = s;
        }
        fputs("       agentic-job --help | --version\n"
              "See agentic-job(1).\n",
              f);
}

typedef enum MainOption { MAIN_HELP, MAIN_VERSION } MainOption;

/* The options taken alone, instead of a command. */
static const CliOption main_options[] = {
        { "--help", MAIN_HELP, CLI_FLAG, false },
        { "--version", MAIN_VERSION, CLI_FLAG, false },
        {},
};

static void list_option_table(const CliOption *options)
{
        static const char *const kinds[] = {
                [CLI_FLAG] = "",    [CLI_WORD] = "=value",      [CLI_FILE] = "=file",
                [CLI_DIR] = "=dir", [CLI_PROFILE] = "=profile", [CLI_COMMAND] = "",
        };

        for (const CliOption *o = options; o && o->name; o++)
                printf(" %s%s%s", o->name, kinds[o->value], o->repeat ? "+" : "");
}

/* `agentic-job --list-options` (hidden): one line per command, "agentic-job WORDS OPTION...", and one line
 * "agentic-job OPTION..." for the options taken alone. An option is NAME (a flag, or "--" before a command
 * line), or NAME=KIND, KIND one of value, file, dir, profile, for one that takes a value; a trailing "+"
 * marks one that may be given more than once. tests/completion.sh reads it. */
static int list_options(void)
{
        fputs("agentic-job", stdout);
        list_option_table(main_options);
        putchar('\n');
        for (size_t i = 0; i < ELEMENTSOF(commands); i++) {
                const Command *c = &commands[i];

                if (!c->synopsis)
                        continue;
                printf("agentic-job %s%s%s", c->words[0], c->words[1] ? " " : "",
                       c->words[1] ? c->words[1] : "");
                list_option_table(c->options);
                /* Every command takes it, alone: main() answers it. */
                fputs(" --help\n", stdout);
        }
        if (fflush(stdout) != 0 || ferror(stdout)) {
                fputs("agentic-job: cannot write the list\n", stderr);
                return CLIENT_EXIT_USAGE;
        }
        return 0;
}

static size_t command_words(const Command *c)
{
        return c->words[1] ? 2 : 1;
}

/* "unknown sandbox command: WORD (there are: setup, check, exec)" when family has commands; false if not. */
static bool unknown_in_family(const char *family, const char *word)
{
        const char *sep = "";
        size_t n = 0;

        for (size_t i = 0; i < ELEMENTSOF(commands); i++)
                n += commands[i].synopsis && commands[i].words[1] &&
                     strcmp(commands[i].words[0], family) == 0;
        if (n == 0)
                return false;
        fprintf(stderr, "agentic-job: unknown %s command: %s (there %s: ", family, word ? word : "(none)",
                n == 1 ? "is" : "are");
        for (size_t i = 0; i < ELEMENTSOF(commands); i++)
                if (commands[i].synopsis && commands[i].words[1] &&
                    strcmp(commands[i].words[0], family) == 0) {
                        fprintf(stderr, "%s%s", sep, commands[i].words[1]);
                        sep = ", ";
                }
        fputs(")\n", stderr);
        return true;
}

int main(int argc, char **argv)
{
        const CliOption *o = argc == 2 ? cli_option_find(main_options, argv[1]) : NULL;

        if (o)
                switch ((MainOption)o->id) {
                case MAIN_HELP:
                        usage(stdout);
                        return 0;
                case MAIN_VERSION:
                        printf("agentic-job %s\n", PACKAGE_VERSION);
                        return 0;
                }
        if (argc == 2 && strcmp(argv[1], "--list-options") == 0)
                return list_options();
        for (size_t i = 0; i < ELEMENTSOF(commands); i++) {
                const Command *c = &commands[i];
                size_t n = command_words(c);

                if ((size_t)argc <= n || strcmp(argv[1], c->words[0]) != 0 ||
                    (n == 2 && strcmp(argv[2], c->words[1]) != 0))
                        continue;
                /* COMMAND --help, alone: its usage, whatever the command would check first. */
                if (c->synopsis && (size_t)argc == n + 2 && strcmp(argv[n + 1], "--help") == 0) {
                        printf("usage: agentic-job %s\nSee agentic-job(1).\n", c->synopsis);
                        return 0;
                }
                return c->main(argc - (int)n, argv + n);
        }
        if (argc >= 2 && strcmp(argv[1], "helper") == 0) {
                fprintf(stderr, "agentic-job: the helper is %s, reached through sudo\n", HELPER_PATH);
                return CLIENT_EXIT_USAGE;
        }
        if (argc < 2)
                fputs("agentic-job: missing command\n", stderr);
        else if (!unknown_in_family(argv[1], argc < 3 ? NULL : argv[2]))
                fprintf(stderr, "agentic-job: unknown command: %s\n", argv[1]);
        usage(stderr);
        return CLIENT_EXIT_USAGE;
}
