/* SPDX-License-Identifier: MIT */
/* agentic-job sandbox kill-user
 * Every process of the sandbox user ended, through the helper's kill-user: what a workflow's last step
 * (`if: always()`) runs, so that a step the runner cancelled or killed leaves nothing of the sandbox user
 * running into the job's later steps. The runner's own clean-up of orphans finds processes by a variable of
 * the job's environment, which none of the sandbox user's has. */
#include <stdio.h>
#include <string.h>

#include "client.h"
#include "helper-call.h"

int sandbox_kill_user_main(int argc, char **argv)
{
        char line[256] = "";
        int r;

        if (argc > 1) {
                fprintf(stderr,
                        "agentic-job sandbox kill-user: unexpected argument: %s\n"
                        "usage: agentic-job sandbox kill-user\n",
                        argv[1]);
                return CLIENT_EXIT_USAGE;
        }
        r = helper_kill_user(line, sizeof(line));
        if (r < 0) {
                fprintf(stderr, "agentic-job sandbox kill-user: cannot run sudo: %s\n", strerror(-r));
                return CLIENT_EXIT_USAGE;
        }
        if (r != 0) {
                fprintf(stderr, "agentic-job sandbox kill-user: helper kill-user failed (status %d): %s\n",
                        r, line);
                return r;
        }
        printf("%s\n", line);
        return 0;
}
