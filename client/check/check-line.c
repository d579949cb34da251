/* SPDX-License-Identifier: MIT */
/* The strict reader of the sandbox side's lines (check-line.h). jansson parses; every rule of the line's
 * shape is checked here, since json_unpack() would accept members it was not asked about. */
#include "check-line.h"

#include <assert.h>
#include <errno.h>
#include <jansson.h>
#include <string.h>

#include "macro.h"

#define MS_MAX 10000000

static const char *const status_names[] = {
        [CHECK_OK] = "ok",
        [CHECK_FAIL] = "FAIL",
        [CHECK_NOTE] = "note",
};

const char *check_status_to_string(CheckStatus s)
{
        assert((size_t)s < ELEMENTSOF(status_names));
        return status_names[s];
}

static bool name_expected(char *const *expected, const char *name)
{
        for (; expected && *expected; expected++)
                if (strcmp(*expected, name) == 0)
                        return true;
        return false;
}

int check_line_parse(const char *line, size_t n, char *const *expected, CheckLine *ret, AjError *reterr)
{
        json_auto_t *root = NULL;
        json_error_t jerr;
        bool have_name = false, have_result = false, have_detail = false, have_ms = false;
        const char *key;
        json_t *value;
        CheckLine l = {};

        assert(line || n == 0);
        assert(ret);

        if (n > CHECK_LINE_MAX)
                return aj_error(reterr, EINVAL, 0, 0, "a line longer than %d bytes", CHECK_LINE_MAX);
        if (n == 0 || line[0] != '{' || line[n - 1] != '}' || memchr(line, '\n', n))
                return aj_error(reterr, EINVAL, 0, 0, "not a result: a line that is not one JSON object");
        /* Duplicate members refused; no NUL in strings (JSON_ALLOW_NUL not given); nothing after the
         * object (JSON_DISABLE_EOF_CHECK not given). */
        root = json_loadb(line, n, JSON_REJECT_DUPLICATES, &jerr);
        if (!root)
                return aj_error(reterr, EINVAL, 0, 0, "not a result: %s", jerr.text);
        if (!json_is_object(root))
                return aj_error(reterr, EINVAL, 0, 0, "not a result: not a JSON object");

        json_object_foreach(root, key, value)
        {
                if (strcmp(key, "name") == 0) {
                        const char *s = json_string_value(value);

                        if (!json_is_string(value) || json_string_length(value) == 0 ||
                            json_string_length(value) >= CHECK_NAME_MAX)
                                return aj_error(reterr, EINVAL, 0, 0,
                                                "\"name\" is not a string of 1 to %d bytes",
                                                CHECK_NAME_MAX - 1);
                        if (!name_expected(expected, s))
                                return aj_error(reterr, EINVAL, 0, 0, "a result for a probe not asked for");
                        memcpy(l.name, s, json_string_length(value) + 1);
                        have_name = true;
                } else if (strcmp(key, "result") == 0) {
                        const char *s = json_string_value(value);

                        if (!s)
                                return aj_error(reterr, EINVAL, 0, 0, "\"result\" is not a string");
                        if (strcmp(s, "ok") == 0)
                                l.status = CHECK_OK;
                        else if (strcmp(s, "fail") == 0)
                                l.status = CHECK_FAIL;
                        else if (strcmp(s, "note") == 0)
                                l.status = CHECK_NOTE;
                        else
                                return aj_error(reterr, EINVAL, 0, 0,
                                                "\"result\" is not one of \"ok\", \"fail\", \"note\"");
                        have_result = true;
                } else if (strcmp(key, "detail") == 0) {
                        if (!json_is_string(value) || json_string_length(value) > CHECK_DETAIL_MAX)
                                return aj_error(reterr, EINVAL, 0, 0,
                                                "\"detail\" is not a string of at most %d bytes",
                                                CHECK_DETAIL_MAX);
                        memcpy(l.detail, json_string_value(value), json_string_length(value) + 1);
                        have_detail = true;
                } else if (strcmp(key, "ms") == 0) {
                        if (!json_is_integer(value) || json_integer_value(value) < 0 ||
                            json_integer_value(value) > MS_MAX)
                                return aj_error(reterr, EINVAL, 0, 0,
                                                "\"ms\" is not an integer from 0 to %d", MS_MAX);
                        l.ms = (unsigned)json_integer_value(value);
                        have_ms = true;
                } else
                        return aj_error(reterr, EINVAL, 0, 0, "an unknown member in a result");
        }
        if (!have_name || !have_result || !have_detail || !have_ms)
                return aj_error(reterr, EINVAL, 0, 0, "a result without %s",
                                !have_name     ? "\"name\""
                                : !have_result ? "\"result\""
                                : !have_detail ? "\"detail\""
                                               : "\"ms\"");
        *ret = l;
        return 0;
}

void check_stream_init(CheckStream *s, char *const *expected, bool *seen)
{
        assert(s);
        *s = (CheckStream){ .expected = expected, .seen = seen };
}

static int stream_line(CheckStream *s, CheckLineFn fn, void *userdata, AjError *reterr)
{
        CheckLine l;
        AjError inner = {};
        size_t i;
        int r;

        s->n_lines++;
        r = check_line_parse(s->buf, s->len, s->expected, &l, &inner);
        if (r < 0)
                return aj_error(reterr, -r, 0, 0, "line %zu: %s", s->n_lines, inner.message);
        for (i = 0; strcmp(s->expected[i], l.name) != 0; i++)
                ;
        if (s->seen[i])
                return aj_error(reterr, EINVAL, 0, 0, "line %zu: a second result for one probe", s->n_lines);
        s->seen[i] = true;
        if (fn)
                fn(&l, userdata);
        return 0;
}

int check_stream_feed(CheckStream *s, const char *data, size_t n, CheckLineFn fn, void *userdata,
                      AjError *reterr)
{
        assert(s);
        assert(data || n == 0);

        if (s->broken)
                return aj_error(reterr, EINVAL, 0, 0, "the stream was refused before");
        for (size_t i = 0; i < n; i++) {
                int r;

                if (data[i] != '\n') {
                        if (s->len >= CHECK_LINE_MAX) {
                                s->broken = true;
                                return aj_error(reterr, EINVAL, 0, 0, "line %zu: longer than %d bytes",
                                                s->n_lines + 1, CHECK_LINE_MAX);
                        }
                        s->buf[s->len++] = data[i];
                        continue;
                }
                s->buf[s->len] = '\0';
                r = stream_line(s, fn, userdata, reterr);
                s->len = 0;
                if (r < 0) {
                        s->broken = true;
                        return r;
                }
        }
        return 0;
}

int check_stream_end(CheckStream *s, AjError *reterr)
{
        assert(s);

        if (s->broken)
                return aj_error(reterr, EINVAL, 0, 0, "the stream was refused before");
        if (s->len > 0) {
                s->broken = true;
                return aj_error(reterr, EINVAL, 0, 0, "line %zu: unfinished (no newline)", s->n_lines + 1);
        }
        return 0;
}
