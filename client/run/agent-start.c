/* SPDX-License-Identifier: MIT */
#include "agent-start.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool executable_file(const char *path)
{
        struct stat st;

        return stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
               faccessat(AT_FDCWD, path, X_OK, AT_EACCESS) == 0;
}

int agent_program_find(const char *name, const char *path, char **ret)
{
        assert(name && ret);

        if (!*name)
                return -ENOENT;
        if (strchr(name, '/')) {
                if (!executable_file(name))
                        return -ENOENT;
                *ret = strdup(name);
                return *ret ? 0 : -ENOMEM;
        }
        for (const char *p = path ? path : "/bin:/usr/bin";;) {
                size_t len = strcspn(p, ":");
                char *candidate = NULL;

                if (asprintf(&candidate, "%.*s%s%s", (int)len, p, len ? "/" : "", name) < 0)
                        return -ENOMEM;
                if (executable_file(candidate)) {
                        *ret = candidate;
                        return 0;
                }
                free(candidate);
                if (!p[len])
                        return -ENOENT;
                p += len + 1;
        }
}

size_t agent_start_feed(AgentStartReader *s, const char *data, size_t n, size_t *ret_replay)
{
        static const char line[] = AGENT_STARTED_LINE;
        size_t i = 0;

        assert(s && (data || n == 0) && ret_replay);
        *ret_replay = 0;
        while (!s->started && !s->other && i < n) {
                if (data[i] != line[s->matched]) {
                        /* Not the line: what earlier feeds took of it is output, and so is this feed
                         * from its start. */
                        *ret_replay = s->matched - i;
                        s->matched = 0;
                        s->other = true;
                        return 0;
                }
                i++;
                if (++s->matched == sizeof(line) - 1)
                        s->started = true;
        }
        return i;
}

size_t agent_start_end(AgentStartReader *s)
{
        size_t held;

        assert(s);
        if (s->started || s->other || s->matched == 0)
                return 0;
        held = s->matched;
        s->matched = 0;
        s->other = true;
        return held;
}
