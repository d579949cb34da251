/* SPDX-License-Identifier: MIT */
/* The pass record, $RUNNER_TEMP/agentic-job-sandbox-checked (seed 003): written by `check --record` only
 * when nothing failed; removed by every check before anything else and by `sandbox exec` before anything
 * enters the sandbox user; taken by `check --unless-passed` only from a regular file of the runner's own
 * uid, in a directory of its own that no one else can write, opened without following a link. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#define RECORD_NAME     "agentic-job-sandbox-checked"
#define RECORD_MAX_SIZE 4096
#define RECORD_FIELD    128

typedef struct Record {
        char run_id[RECORD_FIELD];  /* GITHUB_RUN_ID */
        char attempt[RECORD_FIELD]; /* GITHUB_RUN_ATTEMPT */
        char job[RECORD_FIELD];     /* GITHUB_JOB */
        char version[RECORD_FIELD]; /* the binary's version */
        char binary[RECORD_FIELD];  /* SHA-256 of the binary's bytes (/proc/self/exe), hex */
        char config[RECORD_FIELD];  /* SHA-256 of the installed configuration's bytes */
        char policy[RECORD_FIELD];  /* SHA-256 of the installed policy's bytes, "none" without the proxy */
} Record;

/* The record's text and its strict reader: exactly the lines record_format() writes, in its order, each
 * value of printable ASCII without space. -EINVAL otherwise. */
int record_format(const Record *r, char *buf, size_t size);
int record_parse(const char *data, size_t n, Record *ret);

/* Whether a taken record is this job's, attempt's, binary's, configuration's and policy's; if not, why
 * (one line in why). A record outside a GitHub Actions job (no run id) never matches. */
bool record_matches(const Record *taken, const Record *self, char *why, size_t size);

/* This run as a record: the GITHUB_* variables, the version, the three fingerprints (policy_data NULL:
 * "none"). -errno. */
int record_self(const char *config_data, size_t config_size, const char *policy_data, size_t policy_size,
                Record *ret);

typedef struct RecordTaken {
        bool found; /* a record that passed the file rules and parsed */
        Record record;
        char note[256]; /* why a record that was there was not taken; empty otherwise */
} RecordTaken;

/* Reads (where the rules allow) and removes the record in dir (NULL or empty: no RUNNER_TEMP, nothing to
 * do). Returns 0, or -errno when a record is there and could not be removed. */
int record_take(const char *dir, RecordTaken *ret);

/* Removes the record in dir, if any: 0 or -errno (a missing one is 0). */
int record_remove(const char *dir);

/* Writes self as the record in dir, exclusively, mode 0600. *why says what was done or why not: -errno
 * or -EINVAL (not in a job, no RUNNER_TEMP, a directory others can write). */
int record_write(const char *dir, const Record *self, char *why, size_t size);
