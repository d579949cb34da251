/* SPDX-License-Identifier: MIT */
/* /etc/environment without XDG_RUNTIME_DIR and ACTIONS_*: whole lines removed, every other byte kept, so
 * an administrator's file is changed only where it had to be. */
#include "environment-filter.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "macro.h"
#include "strv.h"

#define FORBIDDEN_PREFIX "ACTIONS_"
#define RUNTIME_DIR      "XDG_RUNTIME_DIR"
#define EXPORT           "export"

static bool is_blank(char c)
{
        return c == ' ' || c == '\t';
}

bool environment_name_removed(const char *name, size_t len)
{
        assert(name || len == 0);

        if (len == strlen(RUNTIME_DIR) && memcmp(name, RUNTIME_DIR, len) == 0)
                return true;
        return len >= strlen(FORBIDDEN_PREFIX) &&
               strncasecmp(name, FORBIDDEN_PREFIX, strlen(FORBIDDEN_PREFIX)) == 0;
}

/* The name that s[0..n) (a line, or a part of one between carriage returns) sets, if it sets any. */
static bool segment_sets(const char *s, size_t n, const char **ret_name, size_t *ret_len)
{
        size_t i = 0, start;

        while (i < n && is_blank(s[i]))
                i++;
        if (n - i > strlen(EXPORT) && memcmp(s + i, EXPORT, strlen(EXPORT)) == 0 &&
            is_blank(s[i + strlen(EXPORT)])) {
                i += strlen(EXPORT);
                while (i < n && is_blank(s[i]))
                        i++;
        }
        start = i;
        while (i < n && !is_blank(s[i]) && s[i] != '=')
                i++;
        if (i == start)
                return false;
        *ret_name = s + start;
        *ret_len = i - start;
        while (i < n && is_blank(s[i]))
                i++;
        return i < n && s[i] == '=';
}

/* The removed name that the line s[0..n) (without its '\n') sets, looking at each part between carriage
 * returns. */
static bool line_sets_removed(const char *s, size_t n, const char **ret_name, size_t *ret_len)
{
        for (size_t at = 0;;) {
                const char *cr = memchr(s + at, '\r', n - at);
                size_t part = cr ? (size_t)(cr - (s + at)) : n - at;

                if (segment_sets(s + at, part, ret_name, ret_len) &&
                    environment_name_removed(*ret_name, *ret_len))
                        return true;
                if (!cr)
                        return false;
                at += part + 1;
        }
}

/* Whether the line s[0..n) continues on the next one: a backslash at its end, before spaces, tabs and
 * carriage returns (a carriage return ends a line for systemd, so "\\\r" continues there). */
static bool line_continues(const char *s, size_t n)
{
        while (n > 0 && (is_blank(s[n - 1]) || s[n - 1] == '\r'))
                n--;
        return n > 0 && s[n - 1] == '\\';
}

static int removed_add(Strv *removed, const char *name, size_t len)
{
        for (size_t i = 0; i < removed->n; i++)
                if (strlen(removed->v[i]) == len && memcmp(removed->v[i], name, len) == 0)
                        return 0;
        return strv_push(removed, strndup(name, len));
}

int environment_filter(const char *data, size_t size, char **ret_text, size_t *ret_size, char ***ret_removed)
{
        _cleanup_(strv_clear) Strv removed = {};
        _cleanup_free_ char *text = NULL;
        bool continuing = false; /* the line before was removed and continues on this one */
        size_t out = 0;
        int r;

        assert(data || size == 0);
        assert(ret_text);
        assert(ret_size);
        assert(ret_removed);

        /* Never longer than the input. */
        text = malloc(size + 1);
        if (!text)
                return -ENOMEM;

        for (size_t at = 0; at < size;) {
                const char *line = data + at, *nl = memchr(line, '\n', size - at);
                size_t n = nl ? (size_t)(nl - line) : size - at, whole = n + (nl ? 1 : 0);
                const char *name;
                size_t len;

                at += whole;
                if (continuing) {
                        continuing = line_continues(line, n);
                        continue;
                }
                if (line_sets_removed(line, n, &name, &len)) {
                        r = removed_add(&removed, name, len);
                        if (r < 0)
                                return r;
                        continuing = line_continues(line, n);
                        continue;
                }
                memcpy(text + out, line, whole);
                out += whole;
        }
        text[out] = '\0';

        if (!removed.v) {
                removed.v = calloc(1, sizeof(char *));
                if (!removed.v)
                        return -ENOMEM;
        }
        *ret_text = TAKE_PTR(text);
        *ret_size = out;
        *ret_removed = TAKE_PTR(removed.v);
        return 0;
}
