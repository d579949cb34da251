/* SPDX-License-Identifier: MIT */
/* The sandbox side of `run` (run-inside.c) and what both sides agree on. */
#pragma once

/* The run's directory, in the sandbox user's home: RUN_DIR_PREFIX and 16 hex digits; inside it the clone
 * (RUN_WORKSPACE), home/, tmp/ and the task. */
#define RUN_DIR_PREFIX "agentic-job-run-"
#define RUN_WORKSPACE  "workspace"

/* The output directory: the named outputs under RUN_WORKSPACE/ as they were in the clone (the exporter
 * names them relative to the run's directory, so none can collide with the run's own files), the patch,
 * the egress log of the run, summary.json and summary.md. */
#define RUN_PATCH_NAME  "patch.diff"
#define RUN_EGRESS_NAME "egress.jsonl"

int run_inside_main(int argc, char **argv);
