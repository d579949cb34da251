/* SPDX-License-Identifier: MIT */
/* What enter hands to systemd: the run0 or systemd-run command line. Kept apart from the code that acts,
 * so it is unit-tested. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helper.h"
#include "macro.h"
#include "strv.h"

int enter_line_build(EnterLine line, const char *program, const char *env_program, const char *user,
                     const char *dir, char *const *env, char *const *argv, char ***ret_argv)
{
        Strv s = { 0 };
        int r = 0;

        if (!argv || !argv[0])
                return -EINVAL;

        r = strv_push(&s, strdup(program));
        if (line == LINE_RUN0) {
                /* run0 (systemd 257+): --pipe passes our streams, CollectMode stops a failed command from
                 * leaving a failed unit behind. */
                r = r < 0 ? r : strv_push(&s, strdup("--pipe"));
                r = r < 0 ? r : strv_push(&s, strdup("--no-ask-password"));
                r = r < 0 ? r : strv_push(&s, strdup("--shell-prompt-prefix="));
                r = r < 0 ? r : strv_pushf(&s, "--user=%s", user);
                r = r < 0 ? r : strv_push(&s, strdup("--property=CollectMode=inactive-or-failed"));
                r = r < 0 ? r : strv_pushf(&s, "--chdir=%s", dir);
        } else {
                /* A transient service with a PAM session, as run0 makes it, for systemd without run0. */
                r = r < 0 ? r : strv_push(&s, strdup("--quiet"));
                r = r < 0 ? r : strv_push(&s, strdup("--pipe"));
                r = r < 0 ? r : strv_push(&s, strdup("--wait"));
                r = r < 0 ? r : strv_push(&s, strdup("--collect"));
                r = r < 0 ? r : strv_push(&s, strdup("--service-type=exec"));
                r = r < 0 ? r : strv_pushf(&s, "--uid=%s", user);
                r = r < 0 ? r : strv_push(&s, strdup("--property=PAMName=login"));
                r = r < 0 ? r : strv_pushf(&s, "--working-directory=%s", dir);
        }
        for (char *const *e = env; r >= 0 && e && *e; e++)
                r = strv_pushf(&s, "--setenv=%s", *e);
        r = r < 0 ? r : strv_push(&s, strdup("--"));
        if (line == LINE_RUN0) {
                /* run0 sets SUDO_USER, SUDO_UID and SUDO_GID (of root, here): none of it is the sandbox's.
                 * env would read an argv[0] holding '=' as a variable and one starting '-' as an option, so
                 * those are refused. */
                if (strchr(argv[0], '=') || argv[0][0] == '-')
                        r = r < 0 ? r : -EINVAL;
                r = r < 0 ? r : strv_push(&s, strdup(env_program));
                r = r < 0 ? r : strv_push(&s, strdup("-u"));
                r = r < 0 ? r : strv_push(&s, strdup("SUDO_USER"));
                r = r < 0 ? r : strv_push(&s, strdup("-u"));
                r = r < 0 ? r : strv_push(&s, strdup("SUDO_UID"));
                r = r < 0 ? r : strv_push(&s, strdup("-u"));
                r = r < 0 ? r : strv_push(&s, strdup("SUDO_GID"));
                r = r < 0 ? r : strv_push(&s, strdup("--"));
        }
        for (char *const *a = argv; r >= 0 && *a; a++)
                r = strv_push(&s, strdup(*a));
        if (r < 0) {
                strv_clear(&s);
                return r;
        }
        *ret_argv = s.v;
        return 0;
}
