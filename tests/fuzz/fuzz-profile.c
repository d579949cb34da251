/* SPDX-License-Identifier: MIT */
/* profile_parse() on arbitrary bytes. A profile it accepts must expand with any plain places and render
 * every [json] file as JSON; one it refuses says why on one line. */
#include <errno.h>
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(x)                                                                                            \
        do {                                                                                                \
                if (!(x))                                                                                   \
                        __builtin_trap();                                                                   \
        } while (0)

static const ProfileVars vars = { "/h", "/t", "/w", "/k", "/f", "/p", "http://127.0.0.1:3129" };

static void check_words(char *const *words)
{
        for (char *const *w = words; w && *w; w++) {
                char *x = NULL;

                CHECK(profile_expand(*w, &vars, &x) == 0);
                CHECK(!strstr(x, "${"));
                free(x);
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        Profile *p = NULL;
        AjError e = {};
        int r = profile_parse("fuzz", (const char *)data, size, &p, &e);

        if (r < 0) {
                CHECK(r == -EINVAL || r == -ENOMEM || r == -EFBIG);
                CHECK(p == NULL);
                CHECK(e.message[0] != '\0' && !strchr(e.message, '\n'));
                return 0;
        }
        CHECK(p->description && p->command);
        CHECK(!p->login || p->login[0]);
        CHECK(p->token != PROFILE_TOKEN_NONE || (!p->login && !p->token_files));
        check_words(p->command);
        check_words(p->login);
        check_words(p->dirs);
        check_words(p->token_files);
        check_words(p->env);
        for (size_t i = 0; i < profile_json_count(p); i++) {
                char *name = NULL, *text = NULL;
                json_t *j;

                CHECK(profile_json_render(p, i, &vars, &name, &text) == 0);
                CHECK(!strchr(name, '/'));
                j = json_loads(text, 0, NULL);
                CHECK(j && json_is_object(j));
                json_decref(j);
                free(name);
                free(text);
        }
        profile_free(p);
        return 0;
}
