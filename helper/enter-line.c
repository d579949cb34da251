/* SPDX-License-Identifier: MIT */
/* What enter hands to systemd: the run0 or systemd-run command line, and the environment every backend
 * gives the sandbox command. Kept apart from the code that acts, so both are unit-tested. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "egress-env.h"
#include "helper.h"
#include "macro.h"

typedef struct Strv {
        char **v;
        size_t n, allocated;
} Strv;

static int strv_push(Strv *s, char *owned)
{
        if (!owned)
                return -ENOMEM;
        if (s->n + 2 > s->allocated) {
                size_t a = s->allocated ? s->allocated * 2 : 16;
                char **v = realloc(s->v, a * sizeof(char *));
                if (!v) {
                        free(owned);
                        return -ENOMEM;
                }
                s->v = v;
                s->allocated = a;
        }
        s->v[s->n++] = owned;
        s->v[s->n] = NULL;
        return 0;
}

static int strv_pushf(Strv *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int strv_pushf(Strv *s, const char *fmt, ...)
{
        va_list ap;
        char *p;
        int k;

        va_start(ap, fmt);
        k = vasprintf(&p, fmt, ap);
        va_end(ap);
        return strv_push(s, k < 0 ? NULL : p);
}

/* Sets NAME=VALUE in s, replacing an entry of the same name: later sources override earlier ones. */
static int env_set(Strv *s, const char *entry)
{
        size_t nl = strcspn(entry, "=");

        for (size_t i = 0; i < s->n; i++)
                if (strncmp(s->v[i], entry, nl) == 0 && s->v[i][nl] == '=') {
                        char *d = strdup(entry);
                        if (!d)
                                return -ENOMEM;
                        free(s->v[i]);
                        s->v[i] = d;
                        return 0;
                }
        return strv_push(s, strdup(entry));
}

int enter_env_build(const Config *c, const struct passwd *pw, char ***ret_env)
{
        Strv s = { 0 };
        int r = 0;

        r = r < 0 ? r : strv_pushf(&s, "PATH=%s", SANDBOX_PATH);
        r = r < 0 ? r : strv_pushf(&s, "LANG=%s", SANDBOX_LANG);
        r = r < 0 ? r : strv_pushf(&s, "HOME=%s", pw->pw_dir);
        r = r < 0 ? r : strv_pushf(&s, "USER=%s", pw->pw_name);
        r = r < 0 ? r : strv_pushf(&s, "LOGNAME=%s", pw->pw_name);
        r = r < 0 ? r : strv_pushf(&s, "SHELL=%s", pw->pw_shell && pw->pw_shell[0] ? pw->pw_shell : "/bin/sh");
        for (const char *const *e = egress_env(c->egress_proxy); r >= 0 && *e; e++)
                r = env_set(&s, *e);
        for (char **e = c->env; r >= 0 && e && *e; e++)
                r = env_set(&s, *e);
        /* The configuration refused these names already; refuse again where they would cross. */
        for (size_t i = 0; r >= 0 && i < s.n; i++)
                if (strncmp(s.v[i], "ACTIONS_", 8) == 0)
                        r = -EPERM;
        if (r < 0) {
                strv_free(s.v);
                return r;
        }
        *ret_env = s.v;
        return 0;
}

int enter_line_build(EnterLine line, const char *program, const char *env_program, const char *user,
                     const char *dir, char *const *env, char *const *argv, char ***ret_argv)
{
        Strv s = { 0 };
        int r = 0;

        if (!argv || !argv[0])
                return -EINVAL;

        r = r < 0 ? r : strv_push(&s, strdup(program));
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
                r = r < 0 ? r : strv_push(&s, strdup("--property=CollectMode=inactive-or-failed"));
                r = r < 0 ? r : strv_pushf(&s, "--working-directory=%s", dir);
        }
        for (char *const *e = env; r >= 0 && e && *e; e++)
                r = strv_pushf(&s, "--setenv=%s", *e);
        r = r < 0 ? r : strv_push(&s, strdup("--"));
        if (line == LINE_RUN0) {
                /* run0 sets SUDO_USER, SUDO_UID and SUDO_GID (of root, here): none of it is the sandbox's.
                 * An argv[0] holding '=' would be read by env as a variable, so it is refused. */
                if (strchr(argv[0], '='))
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
                strv_free(s.v);
                return r;
        }
        *ret_argv = s.v;
        return 0;
}
