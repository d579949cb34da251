/* SPDX-License-Identifier: MIT */
/* agentic-job egress start|stop: the egress proxy's start and stop, as root, until setup does it. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "client.h"
#include "config.h"
#include "egress-proxy.h"
#include "macro.h"

#define EGRESS_EXIT_REFUSED 3 /* refused before any change */
#define EGRESS_EXIT_FAILED  4 /* failed after a change (start), or could not stop */

/* [egress] log-max-bytes and reads of the configuration, where there is one; the defaults where there is
 * none yet (egress start before setup). */
static int egress_settings(uint64_t *ret_log_max, bool *ret_reads_listed, AjError *reterr)
{
        _cleanup_(config_freep) Config *config = NULL;
        int r;

        if (access(CONFIG_PATH, F_OK) < 0 && errno == ENOENT) {
                *ret_log_max = EGRESS_LOG_MAX_BYTES_DEFAULT;
                *ret_reads_listed = false;
                return 0;
        }
        r = config_load(CONFIG_PATH, &config, reterr);
        if (r < 0)
                return r;
        *ret_log_max = config->egress_log_max_bytes;
        *ret_reads_listed = config->egress_reads_listed;
        return 0;
}

int egress_main(int argc, char **argv)
{
        AjError e = { 0 };
        bool done;
        int r;

        if (argc > 1) {
                fprintf(stderr,
                        "agentic-job egress %s: unexpected argument: %s\nusage: agentic-job egress "
                        "start|stop\n",
                        argv[0], argv[1]);
                return CLIENT_EXIT_USAGE;
        }
        if (strcmp(argv[0], "start") == 0) {
                uint64_t log_max;
                bool reads_listed;

                r = egress_settings(&log_max, &reads_listed, &e);
                if (r < 0) {
                        fprintf(stderr, "agentic-job egress start: %s (nothing was changed)\n", e.message);
                        return EGRESS_EXIT_REFUSED;
                }
                r = egress_proxy_start(log_max, reads_listed, &done, &e);
                if (r < 0) {
                        fprintf(stderr, "agentic-job egress start: %s%s\n", e.message,
                                done ? "" : " (nothing was changed)");
                        return done ? EGRESS_EXIT_FAILED : EGRESS_EXIT_REFUSED;
                }
                puts("egress proxy listening on 127.0.0.1:3128");
                return 0;
        }
        if (strcmp(argv[0], "stop") == 0) {
                r = egress_proxy_stop(&done, &e);
                if (r < 0) {
                        fprintf(stderr, "agentic-job egress stop: %s\n", e.message);
                        return r == -EPERM ? EGRESS_EXIT_REFUSED : EGRESS_EXIT_FAILED;
                }
                puts(done ? "egress proxy stopped" : "egress proxy was not running");
                return 0;
        }
        fprintf(stderr, "agentic-job egress: unknown command: %s\nusage: agentic-job egress start|stop\n",
                argv[0]);
        return CLIENT_EXIT_USAGE;
}
