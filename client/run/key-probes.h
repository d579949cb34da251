/* SPDX-License-Identifier: MIT */
/* run's key probes (agentic-job-probes(7)): where the key broker holds the model's key, the sandbox user,
 * before the agent starts, looks for the key everywhere it can read. It is never given the key: only its
 * print (key-print.h). The control makes a decoy of the key's length and its print with the key's base,
 * plants it in a file and in a process's command line of its own, and must find both (that the runner's
 * print is the key's is what the removal tests show: the key planted, the probe fails). Each result is
 * one line of the check's form, after the token probes'. The last two ask the egress proxy to take the
 * placeholder elsewhere than the broker: it must refuse (its rule for the placeholder is there), while the
 * same request with a string one digit short passes (the control). */
#pragma once

#include <stddef.h>

#include "key-print.h"

/* The probes' names, in the order they run (NULL-terminated). */
extern const char *const key_probe_names[];

typedef struct KeyProbeInput {
        const KeyPrint *key;     /* the model's key, by its print */
        const char *placeholder; /* the run's placeholder, which the agent holds */
        const char *control_url; /* [sandbox.check] control-url: a read the policy allows */
        const char *home;        /* the sandbox user's home: where the decoy's file is put */
        char *const *roots;      /* the places searched for files, NULL-terminated */
        const char *workspace;   /* left out: cloned before, and larger than any bound (node_modules) */
} KeyProbeInput;

/* Runs the probes; returns how many failed. */
int key_probes_run(const KeyProbeInput *in);
