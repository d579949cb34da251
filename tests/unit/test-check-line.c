/* SPDX-License-Identifier: MIT */
/* The strict reader of the sandbox side's result lines, the stream around it, and the escaping of the
 * sandbox side's text on the runner's output. */
#include <check.h>

#include "check-run.h"
#include <errno.h>
#include <string.h>

#include "check-line.h"
#include "check-text.h"
#include "macro.h"

static char *const expected[] = { (char *)"sudo", (char *)"groups", (char *)"private-dir:/home/runner",
                                  NULL };

static int parse(const char *s, CheckLine *l)
{
        AjError e = {};
        return check_line_parse(s, strlen(s), expected, l, &e);
}

START_TEST(test_accepted)
{
        CheckLine l;

        ck_assert_int_eq(parse("{\"name\":\"sudo\",\"result\":\"ok\",\"detail\":\"refused\",\"ms\":12}", &l),
                         0);
        ck_assert_str_eq(l.name, "sudo");
        ck_assert_int_eq(l.status, CHECK_OK);
        ck_assert_str_eq(l.detail, "refused");
        ck_assert_uint_eq(l.ms, 12);
        /* Any order, spaces between tokens, the other results. */
        ck_assert_int_eq(
                parse("{ \"ms\" : 0, \"detail\": \"\", \"result\": \"fail\", \"name\": \"groups\" }", &l),
                0);
        ck_assert_int_eq(l.status, CHECK_FAIL);
        ck_assert_int_eq(parse("{\"name\":\"private-dir:/home/"
                               "runner\",\"result\":\"note\",\"detail\":\"x\",\"ms\":10000000}",
                               &l),
                         0);
        ck_assert_int_eq(l.status, CHECK_NOTE);
        ck_assert_str_eq(check_status_to_string(CHECK_FAIL), "FAIL");
}
END_TEST

static const char *const refused[] = {
        "",
        " ",
        "[]",
        "\"sudo\"",
        "null",
        " {\"name\":\"sudo\",\"result\":\"ok\",\"detail\":\"\",\"ms\":1}",
        "{\"name\":\"sudo\",\"result\":\"ok\",\"detail\":\"\",\"ms\":1} x",
        "{\"name\":\"sudo\",\"result\":\"ok\",\"detail\":\"\",\"ms\":1}{}",
        "{\"name\":\"sudo\",\"result\":\"ok\",\"detail\":\"\"}",
        "{\"name\":\"sudo\",\"result\":\"ok\",\"ms\":1}",
        "{\"name\":\"sudo\",\"detail\":\"\",\"ms\":1}",
        "{\"result\":\"ok\",\"detail\":\"\",\"ms\":1}",
        "{\"name\":\"sudo\",\"result\":\"ok\",\"detail\":\"\",\"ms\":1,\"extra\":1}",
        "{\"name\":\"sudo\",\"name\":\"sudo\",\"result\":\"ok\",\"detail\":\"\",\"ms\":1}",
        "{\"name\":\"sudo\",\"result\":\"OK\",\"detail\":\"\",\"ms\":1}",
        "{\"name\":\"sudo\",\"result\":\"passed\",\"detail\":\"\",\"ms\":1}",
        "{\"name\":\"sudo\",\"result\":true,\"detail\":\"\",\"ms\":1}",
        "{\"name\":1,\"result\":\"ok\",\"detail\":\"\",\"ms\":1}",
        "{\"name\":\"\",\"result\":\"ok\",\"detail\":\"\",\"ms\":1}",
        "{\"name\":\"other\",\"result\":\"ok\",\"detail\":\"\",\"ms\":1}",
        "{\"name\":\"private-dir:/home\",\"result\":\"ok\",\"detail\":\"\",\"ms\":1}",
        "{\"name\":\"sudo\",\"result\":\"ok\",\"detail\":null,\"ms\":1}",
        "{\"name\":\"sudo\",\"result\":\"ok\",\"detail\":\"a\\u0000b\",\"ms\":1}",
        "{\"name\":\"sudo\",\"result\":\"ok\",\"detail\":\"\",\"ms\":-1}",
        "{\"name\":\"sudo\",\"result\":\"ok\",\"detail\":\"\",\"ms\":1.5}",
        "{\"name\":\"sudo\",\"result\":\"ok\",\"detail\":\"\",\"ms\":10000001}",
        "{\"name\":\"sudo\",\"result\":\"ok\",\"detail\":\"\",\"ms\":\"1\"}",
        "{\"name\":\"sudo\",\"result\":\"ok\",\"detail\":\"\",\"ms\":1",
        "ok [sudo] refused",
};

START_TEST(test_refused)
{
        CheckLine l;

        ck_assert_msg(parse(refused[_i], &l) == -EINVAL, "accepted: %s", refused[_i]);
}
END_TEST

START_TEST(test_bounds)
{
        char line[CHECK_LINE_MAX + 64];
        CheckLine l;
        AjError e = {};
        int n;

        /* A detail of the largest size in a line within the bound; one byte more is refused. */
        n = snprintf(line, sizeof(line), "{\"name\":\"sudo\",\"result\":\"ok\",\"ms\":1,\"detail\":\"%*s\"}",
                     CHECK_DETAIL_MAX, "");
        ck_assert_int_eq(check_line_parse(line, (size_t)n, expected, &l, &e), 0);
        ck_assert_uint_eq(strlen(l.detail), CHECK_DETAIL_MAX);
        n = snprintf(line, sizeof(line), "{\"name\":\"sudo\",\"result\":\"ok\",\"ms\":1,\"detail\":\"%*s\"}",
                     CHECK_DETAIL_MAX + 1, "");
        ck_assert_int_eq(check_line_parse(line, (size_t)n, expected, &l, &e), -EINVAL);
        memset(line, ' ', sizeof(line));
        line[0] = '{';
        ck_assert_int_eq(check_line_parse(line, CHECK_LINE_MAX + 1, expected, &l, &e), -EINVAL);
        ck_assert(strstr(e.message, "longer than"));
}
END_TEST

typedef struct Seen {
        unsigned n;
        char last[CHECK_NAME_MAX];
} Seen;

static void count(const CheckLine *l, void *userdata)
{
        Seen *s = userdata;

        s->n++;
        memcpy(s->last, l->name, sizeof(s->last));
}

static const char two[] = "{\"name\":\"sudo\",\"result\":\"ok\",\"detail\":\"a\",\"ms\":1}\n"
                          "{\"name\":\"groups\",\"result\":\"fail\",\"detail\":\"b\",\"ms\":2}\n";

START_TEST(test_stream_pieces)
{
        bool seen[3] = {};
        CheckStream s;
        Seen got = {};
        AjError e = {};

        check_stream_init(&s, expected, seen);
        /* One byte at a time: the lines arrive whole all the same. */
        for (size_t i = 0; i < strlen(two); i++)
                ck_assert_int_eq(check_stream_feed(&s, two + i, 1, count, &got, &e), 0);
        ck_assert_int_eq(check_stream_end(&s, &e), 0);
        ck_assert_uint_eq(got.n, 2);
        ck_assert_str_eq(got.last, "groups");
        ck_assert(seen[0] && seen[1] && !seen[2]);
}
END_TEST

START_TEST(test_stream_duplicate)
{
        bool seen[3] = {};
        CheckStream s;
        Seen got = {};
        AjError e = {};
        static const char dup[] = "{\"name\":\"sudo\",\"result\":\"ok\",\"detail\":\"a\",\"ms\":1}\n"
                                  "{\"name\":\"sudo\",\"result\":\"fail\",\"detail\":\"a\",\"ms\":1}\n";

        check_stream_init(&s, expected, seen);
        ck_assert_int_eq(check_stream_feed(&s, dup, strlen(dup), count, &got, &e), -EINVAL);
        ck_assert_str_eq(e.message, "line 2: a second result for one probe");
        ck_assert_uint_eq(got.n, 1);
        /* Broken for good. */
        ck_assert_int_eq(check_stream_feed(&s, two, strlen(two), count, &got, &e), -EINVAL);
        ck_assert_int_eq(check_stream_end(&s, &e), -EINVAL);
        ck_assert_uint_eq(got.n, 1);
}
END_TEST

START_TEST(test_stream_garbage)
{
        static const char *const inputs[] = {
                "{\"name\":\"sudo\",\"result\":\"ok\",\"detail\":\"a\",\"ms\":1}\n\n",
                "ok [sudo] forged\n",
                "{\"name\":\"sudo\",\"result\":\"ok\",\"detail\":\"a\",\"ms\":1}\r\n",
                "{\"name\":\"sudo\",\"result\":\"ok\",\"detail\":\"a\",\"ms\":1}\n\0\n",
        };
        static const size_t sizes[] = { 0, 0, 0, 53 };

        for (size_t i = 0; i < ELEMENTSOF(inputs); i++) {
                bool seen[3] = {};
                CheckStream s;
                AjError e = {};
                size_t n = sizes[i] ? sizes[i] : strlen(inputs[i]);

                check_stream_init(&s, expected, seen);
                ck_assert_msg(check_stream_feed(&s, inputs[i], n, NULL, NULL, &e) == -EINVAL, "case %zu", i);
        }
}
END_TEST

START_TEST(test_stream_unfinished_and_long)
{
        char big[CHECK_LINE_MAX + 2];
        bool seen[3] = {};
        CheckStream s;
        AjError e = {};

        check_stream_init(&s, expected, seen);
        ck_assert_int_eq(check_stream_feed(&s, two, strlen(two) - 1, NULL, NULL, &e), 0);
        ck_assert_int_eq(check_stream_end(&s, &e), -EINVAL);
        ck_assert_str_eq(e.message, "line 2: unfinished (no newline)");

        memset(big, 'x', sizeof(big));
        check_stream_init(&s, expected, (bool[3]){});
        ck_assert_int_eq(check_stream_feed(&s, big, sizeof(big), NULL, NULL, &e), -EINVAL);
        ck_assert(strstr(e.message, "longer than"));
}
END_TEST

START_TEST(test_escape)
{
        static const struct {
                const char *in, *out;
        } cases[] = {
                { "plain text: fine", "plain text: fine" },
                { "a\nok [sudo] forged", "a\\x0aok [sudo] forged" },
                { "::error::x", ":\\x3aerror:\\x3ax" },
                { "##[group]x", "#\\x23[group]x" },
                { "a\\b", "a\\\\b" },
                { "\x1b[31m", "\\x1b[31m" },
                { "caf\xc3\xa9", "caf\\xc3\\xa9" },
                { "a|b", "a\\x7cb" },
                { ":::", ":\\x3a\\x3a" },
        };
        char buf[256];

        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                ck_assert_str_eq(check_escape(cases[i].in, buf, sizeof(buf)), cases[i].out);
        /* Cut with "...", never past the buffer. */
        ck_assert_str_eq(check_escape("\n\n\n\n\n\n", buf, 16), "\\x0a\\x0a\\x0a...");
        ck_assert_str_eq(check_escape("abcdefghijklmnopqrstuvwxyz", buf, 16), "abcdefghijkl...");
}
END_TEST

static Suite *check_line_suite(void)
{
        Suite *s = suite_create("check-line");
        TCase *tc = tcase_create("lines");

        tcase_add_test(tc, test_accepted);
        tcase_add_loop_test(tc, test_refused, 0, (int)ELEMENTSOF(refused));
        tcase_add_test(tc, test_bounds);
        tcase_add_test(tc, test_stream_pieces);
        tcase_add_test(tc, test_stream_duplicate);
        tcase_add_test(tc, test_stream_garbage);
        tcase_add_test(tc, test_stream_unfinished_and_long);
        tcase_add_test(tc, test_escape);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return check_run(check_line_suite());
}
