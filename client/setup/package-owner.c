/* SPDX-License-Identifier: MIT */
#include "package-owner.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "macro.h"
#include "setup-text.h"
#include "spawn.h"
#include "strv.h"

#define PACKAGE_QUERY_MAX (4 * 1024 * 1024)

/* The same path under the top-level link of a merged /usr (/bin -> usr/bin): dpkg's database may name
 * either. NULL when there is none. */
static char *merged_usr_alias(const char *path)
{
        char top[64], target[64], usr[80];
        const char *rest;
        ssize_t n;
        char *alias;

        if (strncmp(path, "/usr/", 5) != 0)
                return NULL;
        rest = strchr(path + 5, '/');
        if (!rest || (size_t)(rest - path - 4) >= sizeof(top))
                return NULL;
        (void)snprintf(top, sizeof(top), "%.*s", (int)(rest - path - 4), path + 4); /* "/bin" */
        n = readlink(top, target, sizeof(target) - 1);
        if (n <= 0)
                return NULL;
        target[n] = '\0';
        (void)snprintf(usr, sizeof(usr), "/usr%s", top);
        if (strcmp(target, usr) != 0 && strcmp(target, usr + 1) != 0)
                return NULL;
        return asprintf(&alias, "%s", path + 4) < 0 ? NULL : alias;
}

int package_owners(const char *dpkg_query, const char *rpm, char **programs, size_t n, bool *owned,
                   AjError *reterr)
{
        Strv argv = { 0 };
        _cleanup_free_ char *out = NULL;
        int r = 0, status;

        if (!dpkg_query) {
                for (size_t i = 0; i < n; i++) {
                        char *argv_rpm[] = { (char *)rpm, (char *)"-qf", (char *)"--", programs[i], NULL };

                        status = spawn_wait(argv_rpm, NULL, SPAWN_STDOUT, 0, NULL, NULL);
                        if (status < 0)
                                return aj_error(reterr, -status, 0, 0, "rpm: %s", strerror(-status));
                        owned[i] = status == 0;
                }
                return 0;
        }
        if ((r = strv_push(&argv, strdup(dpkg_query))) < 0 || (r = strv_push(&argv, strdup("-S"))) < 0 ||
            (r = strv_push(&argv, strdup("--"))) < 0)
                goto out;
        for (size_t i = 0; i < n; i++) {
                char *alias = merged_usr_alias(programs[i]);

                if (package_query_literal(programs[i]) && (r = strv_push(&argv, strdup(programs[i]))) < 0)
                        goto out;
                if (alias && package_query_literal(alias) && (r = strv_push(&argv, alias)) < 0)
                        goto out;
                if (alias && !package_query_literal(alias))
                        free(alias);
        }
        if (argv.n == 3)
                goto out; /* nothing to ask: all unowned */
        /* Status 1 means some path is not found: that is the answer, not a failure. */
        status = spawn_wait(argv.v, NULL, SPAWN_STDOUT, PACKAGE_QUERY_MAX, &out, NULL);
        if (status != 0 && status != 1) {
                r = aj_error(reterr, EIO, 0, 0, "dpkg-query -S failed (status %d)", status);
                goto out;
        }
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *alias = merged_usr_alias(programs[i]);

                owned[i] = package_query_literal(programs[i]) &&
                           (dpkg_query_lists(out, programs[i]) ||
                            (alias && package_query_literal(alias) && dpkg_query_lists(out, alias)));
        }
out:
        strv_clear(&argv);
        return r == -ENOMEM ? aj_error(reterr, ENOMEM, 0, 0, "out of memory") : r;
}
