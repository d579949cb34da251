/* SPDX-License-Identifier: MIT */
/* What enter hands to systemd: the run0 or systemd-run command line. Kept apart from the code that acts,
 * so it is unit-tested. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helper.h"
#include "macro.h"
#include "strv.h"

/* The unit's main process: a shell that runs the command as its child and exits with its status, 128+N
 * for signal N. The service manager counts a main process killed by SIGHUP, SIGINT, SIGTERM or SIGPIPE as
 * a clean exit, after which run0 and systemd-run end with status 0, and any other signal as status 255.
 * The shell's own report of a signal ("Terminated") goes to /dev/null; the command gets the standard
 * error it was given, and no descriptor 3. */
#define WRAPPER_SCRIPT "exec 3>&2 2>/dev/null; (exec \"$@\" 2>&3 3>&-); exit $?"

/* The service manager expands $NAME and ${NAME} in a command line it is handed, and reads "$$" as "$"
 * (systemd.service(5)). systemd-run asks for that expansion by default (systemd-run(1),
 * --expand-environment, which appeared in 254); run0 turns it off. So for systemd-run every '$' after
 * "--" is doubled, and the command gets its words as they were given. */
static int push_word(Strv *s, const char *word, bool double_dollars)
{
        size_t n = 0;
        char *copy;

        for (const char *p = word; *p; p++)
                n += double_dollars && *p == '$' ? 2 : 1;
        copy = malloc(n + 1);
        if (!copy)
                return strv_push(s, NULL);
        n = 0;
        for (const char *p = word; *p; p++) {
                copy[n++] = *p;
                if (double_dollars && *p == '$')
                        copy[n++] = '$';
        }
        copy[n] = '\0';
        return strv_push(s, copy);
}

int enter_line_build(EnterLine line, const char *program, const char *sh_program, const char *env_program,
                     const char *user, const char *dir, unsigned long long tasks_max, char *const *env,
                     char *const *argv, char ***ret_argv)
{
        bool dd = line == LINE_SYSTEMD_RUN;
        Strv s = { 0 };
        int r = 0;

        if (!argv || !argv[0])
                return -EINVAL;
        /* env(1) would read an argv[0] holding '=' as a variable and one starting '-' as an option. */
        if (strchr(argv[0], '=') || argv[0][0] == '-')
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
        } else {
                /* A transient service with a PAM session, as run0 makes it, for systemd without run0.
                 * Type=simple, not exec: before systemd 256 the process that holds the PAM session kept
                 * the descriptor whose close tells the manager the exec happened, so a Type=exec service
                 * with PAMName= stayed "activating" until its start timeout ended it (90 s on 252). */
                r = r < 0 ? r : strv_push(&s, strdup("--quiet"));
                r = r < 0 ? r : strv_push(&s, strdup("--pipe"));
                r = r < 0 ? r : strv_push(&s, strdup("--wait"));
                r = r < 0 ? r : strv_push(&s, strdup("--collect"));
                r = r < 0 ? r : strv_push(&s, strdup("--service-type=simple"));
                r = r < 0 ? r : strv_pushf(&s, "--uid=%s", user);
                r = r < 0 ? r : strv_push(&s, strdup("--property=PAMName=login"));
        }
        /* What the direct backend makes sure of, which a service does not get by default: no capability
         * in any set (the inheritable set follows the bounding set), no_new_privs, SIGPIPE not ignored
         * (IgnoreSIGPIPE= defaults to yes), and a /proc that shows only the user's own processes (not
         * ProcSubset=pid as well: it hides /proc/meminfo, cpuinfo and sys, which builds read). */
        r = r < 0 ? r : strv_push(&s, strdup("--property=NoNewPrivileges=yes"));
        r = r < 0 ? r : strv_push(&s, strdup("--property=CapabilityBoundingSet="));
        r = r < 0 ? r : strv_push(&s, strdup("--property=IgnoreSIGPIPE=no"));
        r = r < 0 ? r : strv_push(&s, strdup("--property=ProtectProc=invisible"));
        /* No start or run-time limit of systemd's defaults (DefaultTimeoutStartSec= is 90 s): a step or an
         * agent runs for as long as its caller lets it. */
        r = r < 0 ? r : strv_push(&s, strdup("--property=TimeoutStartSec=infinity"));
        r = r < 0 ? r : strv_push(&s, strdup("--property=RuntimeMaxSec=infinity"));
        /* The OOM killer's first choice: set by the manager as root, which makes 1000 the floor too where
         * root has CAP_SYS_RESOURCE (lowering it needs that capability), and kept through the move into
         * the PAM session's scope. */
        r = r < 0 ? r : strv_push(&s, strdup("--property=OOMScoreAdjust=1000"));
        /* [sandbox] tasks-max: RLIMIT_NPROC, which the kernel counts over every task of the uid, so a fork
         * bomb stops there and leaves the runner's processes their pids. */
        r = r < 0 ? r : strv_pushf(&s, "--property=LimitNPROC=%llu", tasks_max);
        r = r < 0 ? r : strv_pushf(&s, line == LINE_RUN0 ? "--chdir=%s" : "--working-directory=%s", dir);
        for (char *const *e = env; r >= 0 && e && *e; e++)
                r = strv_pushf(&s, "--setenv=%s", *e);
        r = r < 0 ? r : strv_push(&s, strdup("--"));

        /* SH -c SCRIPT sh ENV [-u ...] -- ARGV: env(1) looks the command up on the sandbox PATH, as the
         * sandbox user, and ends with 127 or 126 where it cannot run it. run0 sets SUDO_USER, SUDO_UID and
         * SUDO_GID (of root, here): none of it is the sandbox's. */
        r = r < 0 ? r : push_word(&s, sh_program, dd);
        r = r < 0 ? r : strv_push(&s, strdup("-c"));
        r = r < 0 ? r : push_word(&s, WRAPPER_SCRIPT, dd);
        r = r < 0 ? r : strv_push(&s, strdup("sh"));
        r = r < 0 ? r : push_word(&s, env_program, dd);
        if (line == LINE_RUN0) {
                r = r < 0 ? r : strv_push(&s, strdup("-u"));
                r = r < 0 ? r : strv_push(&s, strdup("SUDO_USER"));
                r = r < 0 ? r : strv_push(&s, strdup("-u"));
                r = r < 0 ? r : strv_push(&s, strdup("SUDO_UID"));
                r = r < 0 ? r : strv_push(&s, strdup("-u"));
                r = r < 0 ? r : strv_push(&s, strdup("SUDO_GID"));
        }
        r = r < 0 ? r : strv_push(&s, strdup("--"));
        for (char *const *a = argv; r >= 0 && *a; a++)
                r = push_word(&s, *a, dd);
        if (r < 0) {
                strv_clear(&s);
                return r;
        }
        *ret_argv = s.v;
        return 0;
}
