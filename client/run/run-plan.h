/* SPDX-License-Identifier: MIT */
/* What `agentic-job run` was asked to do, every input checked before anything is created: the plan. */
#pragma once

#include <stdbool.h>

#include "config.h"
#include "error.h"

#define RUN_TASK_MAX      (1024 * 1024) /* bytes of the task file */
#define RUN_OUTPUTS_MAX   256           /* named outputs */
#define RUN_AGENT_ARGS    1024          /* words of the agent's command line */
#define RUN_COMMIT_HEXLEN 40

typedef struct RunPlan {
        const char *repo;    /* an https:// URL (no credentials in it), or an absolute local path */
        const char *commit;  /* 40 lowercase hex digits, or NULL when ref is given */
        const char *ref;     /* a ref resolved once, by the clone, to a commit; or NULL */
        const char *base;    /* the base branch: trusted paths come from its commit */
        const char *task;    /* the task file, the runner's, read by run */
        const char *out_dir; /* must not exist; created 0700 */
        const char *setup;   /* the repository's setup command (sh -c), or NULL */
        char **outputs;      /* NULL-terminated relative paths in the clone; owned by the plan */
        bool patch;          /* a patch of the workspace against the commit is one of the outputs */
        char **agent;        /* the caller's words after "--" (points into argv; empty without "--") */
        const char *profile; /* --profile, or NULL (run takes [run] profile) */
        bool token_stdin;    /* --token-stdin: the run token comes on standard input */
        unsigned timeout;    /* seconds of the setup and the agent together */
        unsigned long long max_file_bytes, max_total_bytes;
        unsigned max_files;
} RunPlan;

/* Parses `run`'s arguments (argv[0] is "run"). The limits start at the configuration's [run] values (c)
 * and the options override them. -EINVAL with a one-line message naming the argument in *reterr. */
int run_plan_parse(int argc, char **argv, const Config *c, RunPlan *ret, AjError *reterr);

void run_plan_done(RunPlan *p);

/* The rules, exported for the tests. */
bool run_commit_valid(const char *s); /* 40 lowercase hex digits */
bool run_repo_valid(const char *s);   /* https://HOST[:PORT]/PATH without user info, or /PLAIN/PATH */
bool run_branch_valid(const char *s); /* a valid refs/heads/ name, not starting "-" */
bool run_ref_valid(const char *s);    /* a branch name or a full refs/ name, not starting "-" */
bool run_output_valid(const char *s); /* plain relative, not inside .git */
