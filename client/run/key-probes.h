/* SPDX-License-Identifier: MIT */
/* run's key probes (agentic-job-probes(7)): where the key broker holds the model's key, the sandbox user,
 * before the agent starts, looks for the key everywhere it can read. It is never given the key: only its
 * print (key-print.h). The control makes a decoy of the key's length and its print with the key's base,
 * plants it in a file and in a process's command line of its own, and must find both (that the runner's
 * print is the key's is what the removal tests show: the key planted, the probe fails). Each result is
 * one line of the check's form, after the token probes'. */
#pragma once

#include <stddef.h>

#include "key-print.h"

/* The probes' names, in the order they run (NULL-terminated). */
extern const char *const key_probe_names[];

typedef struct KeyProbeInput {
        const KeyPrint *key;   /* the model's key, by its print */
        const char *home;      /* the sandbox user's home: where the decoy's file is put */
        char *const *roots;    /* the places searched for files, NULL-terminated */
        const char *workspace; /* left out: cloned before, and larger than any bound (node_modules) */
} KeyProbeInput;

/* Runs the three probes; returns how many failed. */
int key_probes_run(const KeyProbeInput *in);
