/* SPDX-License-Identifier: MIT */
/* config_parse() on arbitrary bytes. A configuration it accepts must obey every rule: the checks below
 * repeat them, so a value that slipped past the parser is a crash. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(x)                                                                                            \
        do {                                                                                                \
                if (!(x))                                                                                   \
                        __builtin_trap();                                                                   \
        } while (0)

static void check_config(const Config *c)
{
        CHECK(user_name_valid(c->sandbox_user) && strcmp(c->sandbox_user, "root") != 0);
        CHECK(c->sandbox_groups);
        for (char **g = c->sandbox_groups; *g; g++) {
                CHECK(group_name_valid(*g) && !group_is_root_equivalent(*g));
                for (char **h = c->sandbox_groups; h < g; h++)
                        CHECK(strcmp(*g, *h) != 0);
        }
        if (c->runner_user)
                CHECK(user_name_valid(c->runner_user) && strcmp(c->runner_user, "root") != 0 &&
                      strcmp(c->runner_user, c->sandbox_user) != 0);
        CHECK(c->private_dirs);
        for (char **p = c->private_dirs; *p; p++)
                CHECK(path_is_plain_absolute(*p) && strcmp(*p, "/") != 0);
        CHECK(c->stop_services);
        for (char **u = c->stop_services; *u; u++)
                CHECK(unit_name_valid(*u));
        CHECK(c->env);
        for (char **e = c->env; *e; e++) {
                const char *eq = strchr(*e, '=');
                char name[256];
                size_t n;

                CHECK(eq);
                n = (size_t)(eq - *e);
                if (n < sizeof(name)) {
                        memcpy(name, *e, n);
                        name[n] = '\0';
                        CHECK(env_name_valid(name));
                }
                CHECK(env_value_valid(eq + 1));
                if (e > c->env) /* sorted by name, names unique */
                        CHECK(strncmp(e[-1], *e, n) != 0 || e[-1][n] != '=');
        }
        CHECK(enter_backend_to_string(c->enter) != NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        Config *c = NULL;
        AjError e = {};
        int r;

        r = config_parse((const char *)data, size, &c, &e);
        if (r < 0) {
                CHECK(r == -EINVAL || r == -ENOMEM || r == -EFBIG);
                CHECK(c == NULL);
                CHECK(e.message[0] != '\0' && !strchr(e.message, '\n'));
                return 0;
        }
        check_config(c);
        config_free(c);
        return 0;
}
