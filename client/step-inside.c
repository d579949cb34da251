/* SPDX-License-Identifier: MIT */
/* agentic-job sandbox step-inside -- CMD...: the sandbox side of a script step (sandbox exec --script),
 * run by the helper's enter as the sandbox user. It reads the step's frame (step-frame.h) from its
 * standard input, then runs CMD with the script as its last argument, /dev/fd/N of a memfd of its own,
 * standard input /dev/null and the variables the frame carries. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client.h"
#include "macro.h"
#include "step-frame.h"
#include "strv.h"

/* Statuses of its own: the command's pass through. */
#define STEP_EXIT_FRAME 126 /* no frame, a bad one, or /dev/null not opened: the command did not start */
#define STEP_EXIT_EXEC  127 /* the command could not be executed */

int sandbox_step_inside_main(int argc, char **argv)
{
        _cleanup_strv_free_ char **env = NULL;
        _cleanup_free_ char **cmd = NULL;
        AjError e = { 0 };
        char script_arg[32];
        int script_fd = -EBADF, null_fd, r;

        if (argc < 3 || strcmp(argv[1], "--") != 0) {
                fputs("agentic-job sandbox step-inside: usage: sandbox step-inside -- CMD...\n", stderr);
                return STEP_EXIT_FRAME;
        }
        r = step_frame_read(STDIN_FILENO, &env, &script_fd, &e);
        if (r < 0) {
                fprintf(stderr, "agentic-job sandbox step-inside: %s\n", e.message);
                return STEP_EXIT_FRAME;
        }
        /* What the step reads from its standard input is nothing, never the rest of its script. */
        null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (null_fd < 0 || dup2(null_fd, STDIN_FILENO) < 0) {
                fprintf(stderr, "agentic-job sandbox step-inside: /dev/null: %s\n", strerror(errno));
                return STEP_EXIT_FRAME;
        }
        close(null_fd);
        /* environ keeps pointers into them: theirs from here on. */
        for (char **v = TAKE_PTR(env); *v; v++)
                if (putenv(*v) != 0) {
                        fprintf(stderr, "agentic-job sandbox step-inside: %s\n", strerror(errno));
                        return STEP_EXIT_FRAME;
                }
        cmd = calloc((size_t)argc, sizeof(char *));
        if (!cmd)
                return STEP_EXIT_FRAME;
        for (int i = 2; i < argc; i++)
                cmd[i - 2] = argv[i];
        (void)snprintf(script_arg, sizeof(script_arg), "/dev/fd/%d", script_fd);
        cmd[argc - 2] = script_arg;
        execvp(cmd[0], cmd);
        fprintf(stderr, "agentic-job sandbox step-inside: cannot execute %s: %s\n", cmd[0], strerror(errno));
        return STEP_EXIT_EXEC;
}
