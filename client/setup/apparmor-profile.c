/* SPDX-License-Identifier: MIT */
#include "apparmor-profile.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool plain_path(const char *p)
{
        if (p[0] != '/' || strstr(p, "//") || strstr(p, "/./") || strstr(p, "/../"))
                return false;
        for (; *p; p++)
                if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
                      strchr("/._+-", *p)))
                        return false;
        return true;
}

int apparmor_bwrap_profile(const char *program, char **ret)
{
        if (!plain_path(program) || strlen(program) > 1024)
                return -EINVAL;
        /* abi 4.0: the ABI that has the userns rule (AppArmor 4, Ubuntu 24.04's). */
        if (asprintf(ret,
                     "# Written by agentic-job sandbox setup: AppArmor restricts unprivileged user "
                     "namespaces\n"
                     "# here (kernel.apparmor_restrict_unprivileged_userns=1), and run's confinement is\n"
                     "# bubblewrap's. This program alone may make one; it is otherwise unconfined, as it "
                     "was.\n"
                     "abi <abi/4.0>,\n"
                     "include <tunables/global>\n"
                     "\n"
                     "profile " APPARMOR_PROFILE_NAME " %s flags=(unconfined) {\n"
                     "  userns,\n"
                     "}\n",
                     program) < 0)
                return -ENOMEM;
        return 0;
}

/* The next word of line [*p, end): skips blanks, sets *word and *len. */
static void next_word(const char **p, const char *end, const char **word, size_t *len)
{
        while (*p < end && (**p == ' ' || **p == '\t'))
                (*p)++;
        *word = *p;
        while (*p < end && **p != ' ' && **p != '\t')
                (*p)++;
        *len = (size_t)(*p - *word);
}

static bool word_is(const char *word, size_t len, const char *s)
{
        return len == strlen(s) && memcmp(word, s, len) == 0;
}

/* The word, less a '{' that ends it, is program. */
static bool attachment_is(const char *word, size_t len, const char *program)
{
        if (len > 0 && word[len - 1] == '{')
                len--;
        return word_is(word, len, program);
}

int apparmor_text_attaches(const char *data, size_t size, const char *program)
{
        const char *line = data, *end = data + size;

        while (line < end) {
                const char *eol = memchr(line, '\n', (size_t)(end - line)), *p = line, *w;
                size_t n;

                if (!eol)
                        eol = end;
                /* A profile's head, which opens its block: "profile NAME ATTACHMENT ... {", "profile
                 * PATH {" (the name attaches) or "PATH ... {". A rule naming the program ends with ','. */
                const char *last = eol;

                while (last > line && (last[-1] == ' ' || last[-1] == '\t' || last[-1] == '\r'))
                        last--;
                if (memchr(line, '{', (size_t)(eol - line)) && !(last > line && last[-1] == ',')) {
                        next_word(&p, eol, &w, &n);
                        if (word_is(w, n, "profile")) {
                                next_word(&p, eol, &w, &n);
                                if (attachment_is(w, n, program))
                                        return 1;
                                next_word(&p, eol, &w, &n);
                        }
                        if (attachment_is(w, n, program))
                                return 1;
                }
                line = eol + 1;
        }
        return 0;
}
