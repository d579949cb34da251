/* SPDX-License-Identifier: MIT */
/* The client's options, one table per command: its parser looks every argument up in it (what is not
 * there is refused as unknown) and switches on the entry's id, and `agentic-job --list-options` (hidden,
 * main.c) prints the same tables, which tests/completion.sh holds the bash completion equal to. */
#pragma once

#include <stdbool.h>
#include <string.h>

typedef enum CliValue {
        CLI_FLAG,    /* takes no value */
        CLI_WORD,    /* takes a value that completion cannot offer */
        CLI_FILE,    /* takes a file */
        CLI_DIR,     /* takes a directory */
        CLI_PROFILE, /* takes the name of an installed agent profile */
        CLI_COMMAND, /* "--": the words after it are a command line */
} CliValue;

typedef struct CliOption {
        const char *name; /* "--repo"; NULL ends the table */
        int id;           /* the parser's own enum value, which it switches on */
        CliValue value;
        bool repeat; /* may be given more than once */
} CliOption;

/* The tables, each next to its parser. */
extern const CliOption sandbox_setup_options[];
extern const CliOption sandbox_check_options[];
extern const CliOption sandbox_exec_options[];
extern const CliOption policy_test_options[];
extern const CliOption run_options[];

/* The entry of options named arg, or NULL. */
static inline const CliOption *cli_option_find(const CliOption *options, const char *arg)
{
        for (const CliOption *o = options; o->name; o++)
                if (strcmp(o->name, arg) == 0)
                        return o;
        return NULL;
}
