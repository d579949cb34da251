/* SPDX-License-Identifier: MIT */
/* The probes of `agentic-job sandbox check`: each an attempt by the sandbox user that must fail, or a
 * control, the same attempt where it must work. agentic-job-probes(7) lists them; their names are stable
 * (tests and users match on them). A name ending ':' takes a parameter: "private-dir:/home/runner". */
#pragma once

#include <stdbool.h>
#include <stddef.h>

typedef enum ProbeSide {
        PROBE_RUNNER,  /* made by the runner's user, in the check itself */
        PROBE_SANDBOX, /* made by the sandbox user, in `agentic-job sandbox probe-inside` */
} ProbeSide;

typedef struct ProbeDef {
        const char *name;
        const char *group; /* privilege, processes, files, services, ... */
        ProbeSide side;
        const char *tries;   /* what is attempted */
        const char *control; /* the name of its control; NULL for a control */
        const char *stops;   /* what stops it; NULL for a control */
} ProbeDef;

extern const ProbeDef probe_table[];
extern const size_t probe_table_size;

/* The entry for name (a parametrized name matches its "prefix:" entry); NULL if none. */
const ProbeDef *probe_lookup(const char *name);

/* Whether some entry is of group. */
bool probe_group_known(const char *group);

/* What the probes need to know, given to the sandbox side on its command line. */
#define PROBE_ABSTRACT_PREFIX "agentic-job-check-"
/* What the datagrams of local-udp and its control carry; the runner's socket echoes it. */
#define PROBE_UDP_PAYLOAD "agentic-job-local-udp"
