/* SPDX-License-Identifier: MIT */
/* agentic-job sandbox end
 * The sandbox user's end in this job: every process of it ended, through the helper's kill-user, then what
 * runs left in its home removed, as the sandbox user (run-inside dispose-left). What a workflow's last step
 * (`if: always()`) runs: the runner's own clean-up of orphans finds processes by a variable of the job's
 * environment, which none of the sandbox user's has, and a run the runner's SIGKILL ended left its
 * directory, the model's token in it, where a later step of the sandbox user's could read it. */
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build-config.h"
#include "check-record.h"
#include "client.h"
#include "config.h"
#include "helper-call.h"
#include "macro.h"
#include "spawn.h"

#define DISPOSE_LEFT_MS 600000 /* the removal of what runs left: any depth, any size */

static const char *const prog = "agentic-job sandbox end";

int sandbox_end_main(int argc, char **argv)
{
        _cleanup_(config_freep) Config *config = NULL;
        _cleanup_free_ char *home = NULL;
        char *args[] = { (char *)"run-inside", (char *)"dispose-left", NULL };
        char line[256] = "", out[256], err[512];
        Entered e = { .pidfd = -EBADF, .in_fd = -EBADF, .out_fd = -EBADF, .err_fd = -EBADF };
        struct passwd *pw;
        AjError ae = { 0 };
        int r;

        if (argc > 1) {
                fprintf(stderr, "%s: unexpected argument: %s\nusage: agentic-job sandbox end\n", prog,
                        argv[1]);
                return CLIENT_EXIT_USAGE;
        }
        r = config_load(CONFIG_PATH, &config, &ae);
        if (r < 0) {
                fprintf(stderr, "%s: %s\n", prog, ae.message);
                return CLIENT_EXIT_USAGE;
        }
        pw = getpwnam(config->sandbox_user);
        if (!pw) {
                fprintf(stderr, "%s: sandbox user %s does not exist\n", prog, config->sandbox_user);
                return CLIENT_EXIT_USAGE;
        }
        home = strdup(pw->pw_dir);
        if (!home)
                return CLIENT_EXIT_USAGE;
        /* A pass record says nothing entered the sandbox user since the check; the removal below does. */
        r = record_remove(getenv("RUNNER_TEMP"));
        if (r < 0) {
                fprintf(stderr, "%s: cannot remove $RUNNER_TEMP/" RECORD_NAME ": %s\n", prog, strerror(-r));
                return CLIENT_EXIT_USAGE;
        }

        r = helper_kill_user(line, sizeof(line));
        if (r < 0) {
                fprintf(stderr, "%s: cannot run sudo: %s\n", prog, strerror(-r));
                return CLIENT_EXIT_USAGE;
        }
        if (r != 0) {
                fprintf(stderr, "%s: helper kill-user failed (status %d): %s\n", prog, r, line);
                return r;
        }
        printf("%s\n", line);

        /* Nothing of the sandbox user runs now to write back into what is removed. */
        r = helper_enter_self(home, args, &e);
        if (r < 0) {
                fprintf(stderr, "%s: cannot run sudo: %s\n", prog, strerror(-r));
                return CLIENT_EXIT_USAGE;
        }
        r = entered_collect(&e, DISPOSE_LEFT_MS, out, sizeof(out), err, sizeof(err));
        if (r < 0) {
                fprintf(stderr, "%s: the removal of what runs left: %s\n", prog, strerror(-r));
                return CLIENT_EXIT_REMOVAL;
        }
        if (r != 0 || strncmp(out, "disposed ", 9) != 0) {
                char first[256];

                spawn_first_line(err, strlen(err), first, sizeof(first));
                fprintf(stderr, "%s: the removal of what runs left failed (status %d): %s\n", prog, r,
                        first);
                return r >= 120 && r <= 127 ? r : CLIENT_EXIT_REMOVAL;
        }
        printf("removed the directories of %u runs that could not remove their own\n",
               (unsigned)strtoul(out + 9, NULL, 10));
        return 0;
}
