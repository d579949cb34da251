/* SPDX-License-Identifier: MIT */
/* run's token probes (agentic-job-probes(7)): once the run token is in place and before the agent starts,
 * the sandbox user looks for it everywhere it can read but where it is meant to be. Each result is one
 * JSON line on standard output, of the check's form (check-line.h), read strictly by the runner side. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "token-scan.h"

#define TOKEN_MAX 4096 /* bytes of the run token */
/* Fewer bytes than this are text the token probes would find anywhere ("k" in every file): a key that
 * short is no key of any provider, and the probes' passes would mean nothing. */
#define TOKEN_MIN             16
#define TOKEN_RUNNER_DIRS_MAX 4 /* the runner's places token-runner-file searches */

/* The probes' names, in the order they run (NULL-terminated): what the runner side expects. */
extern const char *const token_probe_names[];

typedef struct TokenProbeInput {
        const char *token;
        size_t token_size;
        char *const
                *holders; /* the files meant to hold the token: the token file, the profile's token-files */
        const char *workspace;    /* left out of token-files: cloned before the token existed */
        char *const *runner_dirs; /* the runner's home, RUNNER_TEMP, GITHUB_WORKSPACE (those that exist) */
        size_t n_runner_dirs;
        /* [sandbox.check] container-image where before-agent and containers are both true: the token's
         * container probes run on it; NULL: they are notes */
        const char *container_image;
} TokenProbeInput;

/* One search's result line: a failure where it failed, found secret ("the token") in a place or stopped
 * at a limit (an incomplete search proves nothing); else a pass naming where it looked and how much it
 * read. Returns the pass. */
bool token_scan_report(const char *name, long long start, int r, const TokenScan *s, const char *secret,
                       const char *where);

/* Runs every probe; returns how many failed (a note is no failure: only the container probes give one). */
int token_probes_run(const TokenProbeInput *in);
