/* SPDX-License-Identifier: MIT */
/* What the sandbox side looks for in each environment it can read (its own, every /proc/PID/environ):
 * the check's canary, an entry it must find (the control), entries named ACTIONS_* (names only), and
 * values of the runner's that it is given only as their length and SHA-256, never as themselves. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#define ENVIRON_MAX_SECRETS    8
#define ENVIRON_SECRET_MAX     65536 /* the longest value searched for */
#define ENVIRON_NAME_MAX       64
#define ENVIRON_SECRET_ARG_MAX 160 /* "NAME=SIZE:SHA256" and its NUL */
#define ENVIRON_JOB_PREFIX     "ACTIONS_"
#define ENVIRON_JOB_NAMES_MAX  256

typedef struct EnvironSecret {
        char name[ENVIRON_NAME_MAX + 1]; /* the variable of the runner's it is the value of */
        size_t size;                     /* the value's length in bytes */
        unsigned char sha256[32];        /* and its digest */
} EnvironSecret;

typedef struct EnvironScan {
        const char *canary;           /* found anywhere in an entry; NULL: not looked for */
        const char *entry;            /* found as a whole entry ("HOME=/home/x"); NULL: not looked for */
        const EnvironSecret *secrets; /* found where a value starts or after a space, tab, ':', '=', */
        size_t n_secrets;             /* ',', ';' or a quote (at most ENVIRON_MAX_SECRETS) */
        bool canary_found, entry_found;
        bool secret_found[ENVIRON_MAX_SECRETS];
        char job_names[ENVIRON_JOB_NAMES_MAX]; /* the ACTIONS_* names found, each once, space-separated;
                                                  truncated with "..." */
        bool job_found;
} EnvironScan;

/* Looks through one environment block: n bytes of NUL-terminated entries (the last one may lack its NUL,
 * as a bounded read of /proc/PID/environ leaves it). Results accumulate in s. */
void environ_scan_block(EnvironScan *s, const char *block, size_t n);

/* "NAME=SIZE:SHA256" (SHA256 as 64 lowercase hex digits; NAME a shell variable name of at most
 * ENVIRON_NAME_MAX; SIZE 1 to ENVIRON_SECRET_MAX): what the runner side passes for one value. -EINVAL. */
int environ_secret_parse(const char *s, EnvironSecret *ret);

/* The same text for value, the value of name, in buf (ENVIRON_SECRET_ARG_MAX bytes). -EINVAL (a name or
 * value out of bounds), -ENOMEM (buf too small), -EIO (no digest). */
int environ_secret_format(const char *name, const char *value, char *buf, size_t size);
