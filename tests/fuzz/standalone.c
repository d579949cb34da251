/* SPDX-License-Identifier: MIT */
/* Runs a fuzz harness once over every file of a corpus directory, so the seeds are a regression test in
 * every build (libFuzzer itself needs clang, and the build may use gcc). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "read-file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv)
{
        unsigned n = 0;

        for (int i = 1; i < argc; i++) {
                DIR *d = opendir(argv[i]);
                struct dirent *de;

                if (!d) {
                        fprintf(stderr, "%s: %s\n", argv[i], strerror(errno));
                        return 1;
                }
                while ((de = readdir(d))) {
                        char *data = NULL;
                        size_t size = 0;
                        int r;

                        if (de->d_name[0] == '.')
                                continue;
                        r = read_regular_nofollow(dirfd(d), de->d_name, 1024 * 1024, &data, &size);
                        if (r < 0) {
                                fprintf(stderr, "%s/%s: %s\n", argv[i], de->d_name, strerror(-r));
                                closedir(d);
                                return 1;
                        }
                        LLVMFuzzerTestOneInput((const uint8_t *)data, size);
                        free(data);
                        n++;
                }
                closedir(d);
        }
        printf("ran %u inputs\n", n);
        return n > 0 ? 0 : 1;
}
