/* SPDX-License-Identifier: MIT */
/* What a run did, phase by phase, kept for summary.json and summary.md in the output directory (and the
 * job's step summary). */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "run-plan.h"
#include "secret-scan.h"

#define SUMMARY_PHASES_MAX 16
#define SUMMARY_TEXT_MAX   512
#define SUMMARY_DENIED_MAX 100

typedef struct SummaryPhase {
        const char *name;
        double seconds;
        bool ok;
        char detail[SUMMARY_TEXT_MAX];
} SummaryPhase;

typedef struct SummaryExport {
        char *name;
        const char *outcome; /* "exported", "refused", "missing" */
        uint64_t bytes;
        char reason[SUMMARY_TEXT_MAX];
} SummaryExport;

typedef struct SummaryDenied {
        char *method, *host, *path, *reason;
} SummaryDenied;

typedef struct Summary {
        const RunPlan *plan;
        const SecretSet *secrets; /* redacted from every text the setters take (may be NULL) */
        const char *confine;      /* [run] confine: "bubblewrap", or "none" where the caller opted out */
        const char *profile;      /* the agent profile's name */
        const char *token;        /* how the agent got the run token: "none", "file", or "broker" (never the
                                     token) */
        bool broker_reported;     /* the broker said what it did */
        unsigned api_forwarded, api_refused; /* the broker's requests: forwarded with the key, refused */
        unsigned api_over, api_max;          /* of the refused, over [run] max-requests (api_max; 0: none) */
        unsigned long long api_input_tokens, api_output_tokens; /* what the API's answers said they used */
        bool api_priced;                /* [run.prices] has entries: the cost is counted */
        uint64_t api_spent, api_budget; /* picodollars: what the answers cost, [run] budget (0: none) */
        unsigned api_over_budget;       /* of the refused, over the budget */
        unsigned api_unpriced;          /* forwarded, at a cost not known */
        char commit[41], base_commit[41];
        bool fetched_by_id;
        unsigned trusted_replaced, trusted_removed;
        SummaryPhase phases[SUMMARY_PHASES_MAX];
        size_t n_phases;
        SummaryExport *exports;
        size_t n_exports;
        unsigned egress_requests, egress_denied;
        SummaryDenied denied[SUMMARY_DENIED_MAX];
        size_t n_denied;
        bool egress_logged;
        int exit_status;
        const char *result; /* one word: "succeeded", "agent-failed", "cancelled", ... */
} Summary;

SummaryPhase *summary_phase(Summary *s, const char *name, double seconds, bool ok, const char *fmt, ...)
        __attribute__((format(printf, 5, 6)));
int summary_add_export(Summary *s, const char *name, const char *outcome, uint64_t bytes,
                       const char *reason);
/* Reads the egress log of this run (JSON lines; malformed ones are counted as requests and skipped). */
void summary_read_egress(Summary *s, const char *data, size_t size);
void summary_done(Summary *s);

/* Writes summary.json and summary.md (exclusive create) in dir_fd, both or neither; the Markdown also to md
 * (may be NULL), whose failure goes to *ret_md_error (0 or -errno) and not to the return. */
int summary_write(const Summary *s, int dir_fd, FILE *md, int *ret_md_error);
