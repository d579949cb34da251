/* SPDX-License-Identifier: MIT */
/* The sandbox side's search of an environment block (what another process of the sandbox user put in
 * its environment: untrusted) on arbitrary bytes, and the reader of the runner's --secret text on the
 * same bytes. The scan must stay within the block (a copy of exactly its size, for ASan) and keep its
 * list of names within its bound; a secret it accepts must have a name and a size within theirs. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "environ-scan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(x)                                                                                            \
        do {                                                                                                \
                if (!(x))                                                                                   \
                        __builtin_trap();                                                                   \
        } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        EnvironSecret sec[2];
        EnvironScan s = { .canary = "c0ffeec0ffeec0ffeec0ffeec0ffee00", .entry = "HOME=/home/s" };
        char *copy = malloc(size + 1), *block = malloc(size ? size : 1);

        CHECK(copy && block);
        memcpy(block, data, size);
        {
                char arg[ENVIRON_SECRET_ARG_MAX];

                CHECK(environ_secret_format("S", "s3cr3t", arg, sizeof(arg)) == 0);
                CHECK(environ_secret_parse(arg, &sec[0]) == 0);
                CHECK(environ_secret_format("T", "=", arg, sizeof(arg)) == 0);
                CHECK(environ_secret_parse(arg, &sec[1]) == 0);
        }
        s.secrets = sec;
        s.n_secrets = 2;
        environ_scan_block(&s, block, size);
        CHECK(strlen(s.job_names) < sizeof(s.job_names));
        CHECK(s.job_found == (s.job_names[0] != '\0'));

        memcpy(copy, data, size);
        copy[size] = '\0';
        if (environ_secret_parse(copy, &sec[0]) == 0) {
                CHECK(sec[0].size >= 1 && sec[0].size <= ENVIRON_SECRET_MAX);
                CHECK(strlen(sec[0].name) >= 1 && strlen(sec[0].name) <= ENVIRON_NAME_MAX);
                CHECK(strlen(copy) ==
                      strlen(sec[0].name) + 1 + strcspn(copy + strlen(sec[0].name) + 1, ":") + 65);
        }
        free(copy);
        free(block);
        return 0;
}
