/* SPDX-License-Identifier: MIT */
#include "sandbox-env.h"

#include <errno.h>
#include <strings.h>

#include "egress-env.h"
#include "strv.h"

int sandbox_env_build(const Config *c, const struct passwd *pw, char ***ret_env)
{
        Strv s = { 0 };
        int r = 0;

        r = strv_pushf(&s, "PATH=%s", SANDBOX_PATH);
        r = r < 0 ? r : strv_pushf(&s, "LANG=%s", SANDBOX_LANG);
        r = r < 0 ? r : strv_pushf(&s, "HOME=%s", pw->pw_dir);
        r = r < 0 ? r : strv_pushf(&s, "USER=%s", pw->pw_name);
        r = r < 0 ? r : strv_pushf(&s, "LOGNAME=%s", pw->pw_name);
        r = r < 0 ? r
                  : strv_pushf(&s, "SHELL=%s", pw->pw_shell && pw->pw_shell[0] ? pw->pw_shell : "/bin/sh");
        for (const char *const *e = egress_env(c->egress_proxy); r >= 0 && *e; e++)
                r = strv_env_set(&s, *e);
        for (char **e = c->env; r >= 0 && e && *e; e++)
                r = strv_env_set(&s, *e);
        for (size_t i = 0; r >= 0 && i < s.n; i++)
                if (strncasecmp(s.v[i], "ACTIONS_", 8) == 0)
                        r = -EPERM;
        if (r < 0) {
                strv_clear(&s);
                return r;
        }
        *ret_env = s.v;
        return 0;
}
