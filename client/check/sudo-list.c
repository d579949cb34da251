/* SPDX-License-Identifier: MIT */
#include "sudo-list.h"

#include <stdio.h>
#include <string.h>

static const char *skip_blanks(const char *s)
{
        while (*s == ' ' || *s == '\t')
                s++;
        return s;
}

/* Every command of a rule line, "(root) NOPASSWD: A, B, C", is the helper's: "HELPER helper ...". */
static bool helper_rule_line(const char *line, size_t n, const char *helper)
{
        const char *colon, *end = line + n, *c;
        size_t h = strlen(helper);

        if (strncmp(line, "(root)", 6) != 0)
                return false;
        colon = memchr(line, ':', n);
        if (!colon)
                return false;
        for (c = colon + 1; c < end;) {
                const char *comma = memchr(c, ',', (size_t)(end - c));
                const char *stop = comma ? comma : end;

                c = skip_blanks(c);
                if ((size_t)(stop - c) < h + 8 || strncmp(c, helper, h) != 0 ||
                    strncmp(c + h, " helper ", 8) != 0)
                        return false;
                c = comma ? comma + 1 : end;
        }
        return true;
}

bool runner_sudo_list_locked(const char *out, const char *helper, char *why, size_t size)
{
        const char *rules = strstr(out, "may run the following commands");
        const char *deny = NULL;

        if (!rules) {
                (void)snprintf(why, size, "sudo -l lists no rule of the runner's");
                return false;
        }
        /* The last deny of everything; what follows it is all that is left. */
        for (const char *l = rules; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
                const char *t = skip_blanks(l);

                if (strncmp(t, "(ALL : ALL) !ALL", 16) == 0 && (t[16] == '\n' || t[16] == '\0'))
                        deny = t;
        }
        if (!deny) {
                (void)snprintf(why, size, "no rule \"(ALL : ALL) !ALL\" takes the runner's other rights");
                return false;
        }
        for (const char *l = strchr(deny, '\n'); l;) {
                const char *t = skip_blanks(l + 1);
                size_t n = strcspn(t, "\n");

                if (n == 0)
                        break; /* the listing's end (a blank line before another section, or the end) */
                if (!helper_rule_line(t, n, helper)) {
                        (void)snprintf(why, size, "after the lock's deny, sudo still grants: %.*s",
                                       (int)(n < 200 ? n : 200), t);
                        return false;
                }
                l = t[n] ? t + n : NULL;
        }
        return true;
}
