/* SPDX-License-Identifier: MIT */
/* run's plan on arbitrary arguments: the input's NUL-separated words are run's argv. A plan it accepts must
 * obey every rule, checked again here, and each output must stay a valid name for the export's frames
 * once under the workspace: the plan and the export's path rules cannot drift apart. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "export-frame.h"
#include "run-inside.h"
#include "run-plan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(x)                                                                                            \
        do {                                                                                                \
                if (!(x))                                                                                   \
                        __builtin_trap();                                                                   \
        } while (0)

#define WORDS_MAX 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static Config *config;
        char *argv[WORDS_MAX + 2] = { (char *)"run" }, *copy;
        int argc = 1;
        RunPlan p = {};
        AjError e = {};

        if (!config) {
                CHECK(config_parse("", 0, &config, &e) == 0);
        }
        if (size > 16384)
                return 0;
        copy = malloc(size + 1);
        CHECK(copy);
        memcpy(copy, data, size);
        copy[size] = '\0';
        for (size_t i = 0; i <= size && argc <= WORDS_MAX; argc++) {
                argv[argc] = copy + i;
                i += strlen(copy + i) + 1;
        }
        argv[argc] = NULL;

        if (run_plan_parse(argc, argv, config, &p, &e) == 0) {
                CHECK(run_repo_valid(p.repo));
                CHECK((p.commit && run_commit_valid(p.commit) && !p.ref) ||
                      (p.ref && run_ref_valid(p.ref) && !p.commit));
                CHECK(run_branch_valid(p.base));
                CHECK(path_is_plain_absolute(p.task) && path_is_plain_absolute(p.out_dir));
                for (const char *c = p.out_dir; *c; c++)
                        CHECK((unsigned char)*c >= ' ' && *c != 0x7f);
                /* Without "--", no command: the profile's own runs (run checks that it has one). */
                CHECK(p.agent && (!p.agent[0] || p.agent[0][0] != '\0'));
                CHECK(p.timeout >= 1 && p.max_files >= 1 && p.max_file_bytes >= 1);
                CHECK(p.max_file_bytes <= p.max_total_bytes);
                CHECK(p.patch || p.outputs[0]);
                for (char **o = p.outputs; *o; o++) {
                        char name[EXPORT_NAME_MAX + 1];
                        int n = snprintf(name, sizeof(name), RUN_WORKSPACE "/%s", *o);

                        CHECK(run_output_valid(*o));
                        CHECK(n > 0 && (size_t)n < sizeof(name) && export_name_valid(name, (size_t)n));
                        for (char **q = o + 1; *q; q++)
                                CHECK(strcmp(*o, *q) != 0);
                }
                run_plan_done(&p);
        } else
                CHECK(e.message[0] != '\0' && !strchr(e.message, '\n'));
        free(copy);
        return 0;
}
