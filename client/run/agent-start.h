/* SPDX-License-Identifier: MIT */
/* The agent's start, as the runner learns it: the sandbox side finds the agent's program as execvp(3)
 * would and, only then, writes AGENT_STARTED_LINE as the first bytes of the agent's standard output and
 * execs it. The runner takes that line out of the output; a phase that ends without it never started the
 * agent (run's status 4, not 1). The line goes out before any of the agent's code runs, so an agent cannot
 * take it back: what it does after can make it a failed agent, never one that did not start. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#define AGENT_STARTED_LINE "agentic-job: the agent starts\n"

/* The first executable regular file named name (itself where it has a '/') in path's directories
 * (path NULL: "/bin:/usr/bin", execvp's default; an empty entry: the working directory): 0 with *ret
 * (to free); -ENOENT where there is none; -ENOMEM. */
int agent_program_find(const char *name, const char *path, char **ret);

/* The runner's reading of the agent's standard output for that line. */
typedef struct AgentStartReader {
        size_t matched; /* bytes of the line seen so far */
        bool started;   /* the whole line came */
        bool other;     /* something else came first: the output is passed as it is */
} AgentStartReader;

/* Feeds n bytes of the agent's standard output: how many of them, from the start, are the line's (to be
 * dropped); the rest are output. *ret_replay: how many bytes of the line, taken by earlier feeds, turned
 * out to be output after all (to be printed first: AGENT_STARTED_LINE's first *ret_replay bytes). */
size_t agent_start_feed(AgentStartReader *s, const char *data, size_t n, size_t *ret_replay);

/* The output ended: how many bytes of the line the reader still holds, which were output after all
 * (AGENT_STARTED_LINE's first ones, to be printed); it then counts as something else having come. */
size_t agent_start_end(AgentStartReader *s);
