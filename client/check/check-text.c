/* SPDX-License-Identifier: MIT */
#include "check-text.h"

#include <assert.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static bool must_escape(const char *s, size_t i)
{
        unsigned char c = (unsigned char)s[i];

        if (c < 0x20 || c >= 0x7f || c == '|')
                return true;
        /* "::" begins a workflow command, "##[" a log group or command of the older syntax. */
        if (i > 0 && (c == ':' || c == '#') && s[i - 1] == s[i])
                return true;
        return false;
}

const char *check_escape(const char *s, char *buf, size_t size)
{
        size_t o = 0;

        assert(s);
        assert(buf);
        assert(size >= 16);

        for (size_t i = 0; s[i]; i++) {
                char piece[8];
                size_t n;

                if (s[i] == '\\')
                        n = (size_t)snprintf(piece, sizeof(piece), "\\\\");
                else if (must_escape(s, i))
                        n = (size_t)snprintf(piece, sizeof(piece), "\\x%02x", (unsigned char)s[i]);
                else {
                        piece[0] = s[i];
                        piece[1] = '\0';
                        n = 1;
                }
                if (o + n + 4 > size) {
                        memcpy(buf + o, "...", 4);
                        return buf;
                }
                memcpy(buf + o, piece, n);
                o += n;
        }
        buf[o] = '\0';
        return buf;
}
