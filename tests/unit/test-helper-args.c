/* SPDX-License-Identifier: MIT */
/* helper_args_parse() and enter_dir_check(): the helper's command line, one exact form per operation. */
#include <check.h>

#include "check-run.h"
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helper.h"
#include "macro.h"

#define MAX_ARGS 12

typedef struct ArgsCase {
        const char *argv[MAX_ARGS]; /* argv[0] included; NULL-terminated */
        int r;                      /* 0 or -EINVAL */
        HelperOp op;                /* when accepted */
        const char *chdir;          /* enter */
        unsigned n_command;         /* enter: the words after "--" */
        uint64_t from;              /* proxy-log */
        bool from_end;              /* proxy-log --from end */
        const char *message;        /* when refused: a substring of the message */
} ArgsCase;

#define P "agentic-job"
#define H P, "helper"

#define OK_PING        .r = 0, .op = OP_PING
#define OK_KILL        .r = 0, .op = OP_KILL_USER
#define OK_FROM(n)     .r = 0, .op = OP_PROXY_LOG, .from = (n)
#define OK_FROM_END    .r = 0, .op = OP_PROXY_LOG, .from_end = true
#define OK_ENTER(d, n) .r = 0, .op = OP_ENTER, .chdir = (d), .n_command = (n)
#define BAD(m)         .r = -EINVAL, .message = (m)

#define USAGE       "usage: agentic-job helper OP"
#define MISSING_OP  "missing operation"
#define UNKNOWN(op) "unknown operation '" op "'"
#define NO_ARGS(op) op " takes no arguments"
#define LOG_USAGE   "usage: proxy-log --from N"
#define NOT_OFFSET  "is not a byte offset (0 to 9223372036854775807)"
#define ENTER_USAGE "usage: enter --chdir DIR -- ARGV..."
#define EMPTY_CMD   "enter: the command is empty"

static const ArgsCase cases[] = {
        /* Accepted, one form per operation. */
        { { H, "ping", NULL }, OK_PING },
        { { H, "kill-user", NULL }, OK_KILL },
        { { H, "proxy-log", "--from", "0", NULL }, OK_FROM(0) },
        { { H, "proxy-log", "--from", "1", NULL }, OK_FROM(1) },
        { { H, "proxy-log", "--from", "10", NULL }, OK_FROM(10) },
        { { H, "proxy-log", "--from", "123456789012", NULL }, OK_FROM(123456789012ull) },
        { { H, "proxy-log", "--from", "9223372036854775807", NULL }, OK_FROM(INT64_MAX) },
        { { H, "proxy-log", "--from", "end", NULL }, OK_FROM_END },
        { { H, "enter", "--chdir", "/home/sb", "--", "true", NULL }, OK_ENTER("/home/sb", 1) },
        { { H, "enter", "--chdir", "/home/sb/w", "--", "sh", "-c", "echo hi", NULL },
          OK_ENTER("/home/sb/w", 3) },
        /* After "--" everything is the command's, options and "--" included. */
        { { H, "enter", "--chdir", "/home/sb", "--", "ls", "--", "--chdir", "/", NULL },
          OK_ENTER("/home/sb", 4) },
        { { H, "enter", "--chdir", "/home/sb", "--", "printf", "", NULL }, OK_ENTER("/home/sb", 2) },
        { { H, "enter", "--chdir", "/home/sb", "--", "A=B", NULL }, OK_ENTER("/home/sb", 1) },
        /* The directory is enter_dir_check()'s business, not the parser's. */
        { { H, "enter", "--chdir", "", "--", "true", NULL }, OK_ENTER("", 1) },
        { { H, "enter", "--chdir", "relative", "--", "true", NULL }, OK_ENTER("relative", 1) },

        /* Refused: not "helper". */
        { { P, NULL }, BAD(USAGE) },
        { { P, "ping", NULL }, BAD(USAGE) },
        { { P, "Helper", "ping", NULL }, BAD(USAGE) },
        { { P, "helper ", "ping", NULL }, BAD(USAGE) },
        { { P, "--helper", "ping", NULL }, BAD(USAGE) },
        { { P, "", "helper", "ping", NULL }, BAD(USAGE) },
        { { P, "ping", "helper", NULL }, BAD(USAGE) },
        /* Missing or unknown operation. */
        { { H, NULL }, BAD(MISSING_OP) },
        { { H, "pong", NULL }, BAD(UNKNOWN("pong")) },
        { { H, "PING", NULL }, BAD(UNKNOWN("PING")) },
        { { H, "ping ", NULL }, BAD(UNKNOWN("ping ")) },
        { { H, "", NULL }, BAD(UNKNOWN("")) },
        { { H, "kill_user", NULL }, BAD(UNKNOWN("kill_user")) },
        { { H, "--chdir", "/home/sb", "enter", "--", "true", NULL }, BAD(UNKNOWN("--chdir")) },
        { { H, "helper", "ping", NULL }, BAD(UNKNOWN("helper")) },
        /* Extra arguments. */
        { { H, "ping", "extra", NULL }, BAD(NO_ARGS("ping")) },
        { { H, "ping", "", NULL }, BAD(NO_ARGS("ping")) },
        { { H, "kill-user", "extra", NULL }, BAD(NO_ARGS("kill-user")) },
        { { H, "kill-user", "--user", "runner-sandbox", NULL }, BAD(NO_ARGS("kill-user")) },
        /* proxy-log. */
        { { H, "proxy-log", NULL }, BAD(LOG_USAGE) },
        { { H, "proxy-log", "5", NULL }, BAD(LOG_USAGE) },
        { { H, "proxy-log", "--from", NULL }, BAD(LOG_USAGE) },
        { { H, "proxy-log", "--frm", "5", NULL }, BAD(LOG_USAGE) },
        { { H, "proxy-log", "--from=5", NULL }, BAD(LOG_USAGE) },
        { { H, "proxy-log", "5", "--from", NULL }, BAD(LOG_USAGE) },
        { { H, "proxy-log", "--from", "5", "extra", NULL }, BAD(LOG_USAGE) },
        { { H, "proxy-log", "--from", "5", "--from", "6", NULL }, BAD(LOG_USAGE) },
        { { H, "proxy-log", "--from", "", NULL }, BAD(NOT_OFFSET) },
        { { H, "proxy-log", "--from", "abc", NULL }, BAD("'abc' " NOT_OFFSET) },
        { { H, "proxy-log", "--from", "5x", NULL }, BAD(NOT_OFFSET) },
        { { H, "proxy-log", "--from", "0x10", NULL }, BAD(NOT_OFFSET) },
        { { H, "proxy-log", "--from", "1e3", NULL }, BAD(NOT_OFFSET) },
        { { H, "proxy-log", "--from", "007", NULL }, BAD("'007' " NOT_OFFSET) },
        { { H, "proxy-log", "--from", "00", NULL }, BAD(NOT_OFFSET) },
        { { H, "proxy-log", "--from", "01", NULL }, BAD(NOT_OFFSET) },
        { { H, "proxy-log", "--from", "+1", NULL }, BAD(NOT_OFFSET) },
        { { H, "proxy-log", "--from", "-1", NULL }, BAD(NOT_OFFSET) },
        { { H, "proxy-log", "--from", "-0", NULL }, BAD(NOT_OFFSET) },
        { { H, "proxy-log", "--from", " 1", NULL }, BAD(NOT_OFFSET) },
        { { H, "proxy-log", "--from", "1 ", NULL }, BAD(NOT_OFFSET) },
        { { H, "proxy-log", "--from", "1\n", NULL }, BAD(NOT_OFFSET) },
        { { H, "proxy-log", "--from", "9223372036854775808", NULL }, BAD(NOT_OFFSET) },  /* 2^63 */
        { { H, "proxy-log", "--from", "9223372036854775817", NULL }, BAD(NOT_OFFSET) },  /* 2^63+9 */
        { { H, "proxy-log", "--from", "18446744073709551615", NULL }, BAD(NOT_OFFSET) }, /* 2^64-1 */
        { { H, "proxy-log", "--from", "18446744073709551616", NULL }, BAD(NOT_OFFSET) }, /* 2^64 */
        { { H, "proxy-log", "--from", "92233720368547758070", NULL }, BAD(NOT_OFFSET) }, /* (2^63-1)*10 */
        { { H, "proxy-log", "--from", "99999999999999999999999", NULL }, BAD(NOT_OFFSET) },
        { { H, "proxy-log", "--from", "End", NULL }, BAD(NOT_OFFSET) },
        { { H, "proxy-log", "--from", "end ", NULL }, BAD(NOT_OFFSET) },
        { { H, "proxy-log", "--from", "ends", NULL }, BAD(NOT_OFFSET) },
        { { H, "proxy-log", "--from", "end", "5", NULL }, BAD(LOG_USAGE) },
        /* enter. */
        { { H, "enter", NULL }, BAD(ENTER_USAGE) },
        { { H, "enter", "--chdir", "/home/sb", NULL }, BAD(ENTER_USAGE) },
        { { H, "enter", "--chdir", "/home/sb", "--", NULL }, BAD(ENTER_USAGE) },
        { { H, "enter", "--", "true", NULL }, BAD(ENTER_USAGE) },
        { { H, "enter", "--", "/home/sb", "--", "true", NULL }, BAD(ENTER_USAGE) },
        { { H, "enter", "--chdir", "/home/sb", "true", NULL }, BAD(ENTER_USAGE) },
        { { H, "enter", "--chdir", "/home/sb", "true", "false", NULL }, BAD(ENTER_USAGE) },
        { { H, "enter", "--chdir=/home/sb", "--", "true", NULL }, BAD(ENTER_USAGE) },
        { { H, "enter", "--dir", "/home/sb", "--", "true", NULL }, BAD(ENTER_USAGE) },
        { { H, "enter", "--chdir", "/home/sb", "-", "true", NULL }, BAD(ENTER_USAGE) },
        /* Reordered: --chdir after "--", or the command first. */
        { { H, "enter", "--", "true", "--chdir", "/home/sb", NULL }, BAD(ENTER_USAGE) },
        { { H, "enter", "true", "--chdir", "/home/sb", "--", NULL }, BAD(ENTER_USAGE) },
        { { H, "enter", "--", "--chdir", "/home/sb", "true", NULL }, BAD(ENTER_USAGE) },
        /* An empty command. */
        { { H, "enter", "--chdir", "/home/sb", "--", "", NULL }, BAD(EMPTY_CMD) },
        { { H, "enter", "--chdir", "/home/sb", "--", "", "arg", NULL }, BAD(EMPTY_CMD) },
};

static int argv_count(const char *const *argv)
{
        int n = 0;

        while (argv[n])
                n++;
        return n;
}

static char *describe(const char *const *argv, char *buf, size_t size)
{
        size_t off = 0;

        buf[0] = '\0';
        for (int i = 0; argv[i] && off < size; i++)
                off += (size_t)snprintf(buf + off, size - off, "%s\"%s\"", i ? " " : "", argv[i]);
        return buf;
}

START_TEST(test_args_table)
{
        const ArgsCase *c = &cases[_i];
        char **argv = (char **)c->argv;
        int argc = argv_count(c->argv);
        HelperArgs a;
        AjError e = { 0 };
        char what[512];
        int r;

        ck_assert_int_lt(argc, MAX_ARGS);
        memset(&a, 0x5a, sizeof(a));
        r = helper_args_parse(argc, argv, &a, &e);
        describe(c->argv, what, sizeof(what));
        ck_assert_msg(r == c->r, "%s: returned %d, expected %d (message: %s)", what, r, c->r, e.message);
        if (c->r < 0) {
                ck_assert_msg(strstr(e.message, c->message), "%s: message \"%s\" lacks \"%s\"", what,
                              e.message, c->message);
                ck_assert_uint_eq(e.line, 0);
                return;
        }
        ck_assert_msg(a.op == c->op, "%s: op %d, expected %d", what, (int)a.op, (int)c->op);
        switch (c->op) {
        case OP_PING:
        case OP_KILL_USER:
                break;
        case OP_PROXY_LOG:
                ck_assert_msg(a.from == c->from, "%s: from %llu, expected %llu", what,
                              (unsigned long long)a.from, (unsigned long long)c->from);
                ck_assert_msg(a.from_end == c->from_end, "%s: from_end %d, expected %d", what, a.from_end,
                              c->from_end);
                break;
        case OP_ENTER:
                ck_assert_str_eq(a.chdir, c->chdir);
                /* The command is the caller's own vector, from after "--" to its end. */
                ck_assert_ptr_eq(a.chdir, argv[4]);
                ck_assert_ptr_eq(a.argv, argv + 6);
                ck_assert_uint_eq(strv_length(a.argv), c->n_command);
                break;
        }
}
END_TEST

START_TEST(test_args_argc_zero)
{
        char *argv[] = { NULL };
        HelperArgs a;
        AjError e = { 0 };

        ck_assert_int_eq(helper_args_parse(0, argv, &a, &e), -EINVAL);
        ck_assert_ptr_nonnull(strstr(e.message, USAGE));
}
END_TEST

START_TEST(test_args_null_error)
{
        /* The error record is optional. */
        char *argv[] = { (char *)P, (char *)"helper", (char *)"nope", NULL };
        HelperArgs a;

        ck_assert_int_eq(helper_args_parse(3, argv, &a, NULL), -EINVAL);
}
END_TEST

START_TEST(test_args_unknown_op_truncated)
{
        char op[300];
        char *argv[] = { (char *)P, (char *)"helper", op, NULL };
        HelperArgs a;
        AjError e = { 0 };
        const char *q;

        memset(op, 'x', sizeof(op) - 1);
        op[sizeof(op) - 1] = '\0';
        ck_assert_int_eq(helper_args_parse(3, argv, &a, &e), -EINVAL);
        q = strchr(e.message, '\'');
        ck_assert_ptr_nonnull(q);
        /* At most 64 bytes of the caller's text are quoted back. */
        ck_assert_uint_eq(strspn(q + 1, "x"), 64);
        ck_assert_int_eq(q[65], '\'');
}
END_TEST

START_TEST(test_op_names)
{
        ck_assert_str_eq(helper_op_name(OP_PING), "ping");
        ck_assert_str_eq(helper_op_name(OP_ENTER), "enter");
        ck_assert_str_eq(helper_op_name(OP_KILL_USER), "kill-user");
        ck_assert_str_eq(helper_op_name(OP_PROXY_LOG), "proxy-log");
}
END_TEST

/* ---- enter_dir_check() ---- */

#define HOME "/home/sb"

#define NOT_ABSOLUTE "not an absolute path"
#define NOT_PLAIN    "not plainly spelled"
#define CONTROL      "path holds a control character"
#define TOO_LONG     "path too long"
#define NOT_UNDER    "not under the sandbox home " HOME

typedef struct DirCase {
        const char *dir;
        const char *message; /* NULL: accepted */
} DirCase;

static const DirCase dir_cases[] = {
        { "/home/sb", NULL },
        { "/home/sb/", NULL },
        { "/home/sb/a", NULL },
        { "/home/sb/a/b", NULL },
        { "/home/sb/a/b/", NULL },
        { "/home/sb/.hidden", NULL },
        { "/home/sb/...", NULL },
        { "/home/sb/a..b", NULL },
        { "/home/sb/a.", NULL },
        { "/home/sb/..a", NULL },
        { "/home/sb/a b", NULL },
        { "/home/sb/\xc3\xa9t\xc3\xa9", NULL },

        { "/home/sbx", NOT_UNDER },
        { "/home/sbx/a", NOT_UNDER },
        { "/home/s", NOT_UNDER },
        { "/home", NOT_UNDER },
        { "/home/", NOT_UNDER },
        { "/", NOT_UNDER },
        { "/etc", NOT_UNDER },
        { "/root/home/sb", NOT_UNDER },
        { "/HOME/SB", NOT_UNDER },

        { "home/sb", NOT_ABSOLUTE },
        { "", NOT_ABSOLUTE },
        { "./home/sb", NOT_ABSOLUTE },
        { "~/a", NOT_ABSOLUTE },

        { "/home/sb/../x", NOT_PLAIN },
        { "/home/sb/..", NOT_PLAIN },
        { "/home/sb/../sb", NOT_PLAIN },
        { "/home/sb/a/../..", NOT_PLAIN },
        { "/home/sb/./a", NOT_PLAIN },
        { "/home/sb/.", NOT_PLAIN },
        { "/home/sb/./", NOT_PLAIN },
        { "/home/./sb", NOT_PLAIN },
        { "/home//sb", NOT_PLAIN },
        { "//home/sb", NOT_PLAIN },
        { "/home/sb//a", NOT_PLAIN },
        { "/home/sb/a//", NOT_PLAIN },
        { "/home/sb//", NOT_PLAIN },
        { "//", NOT_PLAIN },

        { "/home/sb/a\nb", CONTROL },
        { "/home/sb/\t", CONTROL },
        { "/home/sb/\x1b[0m", CONTROL },
        { "/home/sb/\x7f", CONTROL },
        { "/home/sb/\r", CONTROL },
        { "/home/sb\x01", CONTROL },
};

START_TEST(test_dir_table)
{
        const DirCase *c = &dir_cases[_i];
        AjError e = { 0 };
        int r = enter_dir_check(HOME, c->dir, &e);

        if (!c->message) {
                ck_assert_msg(r == 0, "\"%s\" refused: %s", c->dir, e.message);
                return;
        }
        ck_assert_msg(r == -EINVAL, "\"%s\": returned %d, expected -EINVAL", c->dir, r);
        ck_assert_msg(strstr(e.message, c->message), "\"%s\": message \"%s\" lacks \"%s\"", c->dir,
                      e.message, c->message);
}
END_TEST

START_TEST(test_dir_long)
{
        char dir[PATH_MAX + 16];
        AjError e = { 0 };
        size_t n;

        /* PATH_MAX - 1 bytes, in components of 100: accepted. */
        n = strlen(HOME);
        memcpy(dir, HOME, n);
        while (n < PATH_MAX - 1) {
                dir[n++] = '/';
                for (size_t k = 0; k < 100 && n < PATH_MAX - 1; k++)
                        dir[n++] = 'a';
        }
        if (dir[n - 1] == '/')
                dir[n - 1] = 'a';
        dir[n] = '\0';
        ck_assert_uint_eq(strlen(dir), PATH_MAX - 1);
        ck_assert_msg(enter_dir_check(HOME, dir, &e) == 0, "refused: %s", e.message);

        /* PATH_MAX bytes: refused. */
        dir[n++] = 'a';
        dir[n] = '\0';
        ck_assert_uint_eq(strlen(dir), PATH_MAX);
        ck_assert_int_eq(enter_dir_check(HOME, dir, &e), -EINVAL);
        ck_assert_ptr_nonnull(strstr(e.message, TOO_LONG));
}
END_TEST

START_TEST(test_dir_long_message_bounded)
{
        /* A refused long path is quoted back shortened, not in full. */
        char dir[3000];
        AjError e = { 0 };

        memcpy(dir, "/etc/", 5);
        memset(dir + 5, 'a', sizeof(dir) - 6);
        dir[sizeof(dir) - 1] = '\0';
        ck_assert_int_eq(enter_dir_check(HOME, dir, &e), -EINVAL);
        ck_assert_ptr_nonnull(strstr(e.message, "not under the sandbox home"));
        ck_assert_uint_lt(strlen(e.message), sizeof(e.message) - 1);
}
END_TEST

START_TEST(test_dir_home_spelling)
{
        AjError e = { 0 };

        /* A home with a trailing slash is the same home. */
        ck_assert_int_eq(enter_dir_check("/home/sb/", "/home/sb", &e), 0);
        ck_assert_int_eq(enter_dir_check("/home/sb/", "/home/sb/a", &e), 0);
        ck_assert_int_eq(enter_dir_check("/home/sb/", "/home/sbx", &e), -EINVAL);
        /* "/" as home would put everything under it: nothing is. */
        ck_assert_int_eq(enter_dir_check("/", "/", &e), -EINVAL);
        ck_assert_int_eq(enter_dir_check("/", "/home/sb", &e), -EINVAL);
        ck_assert_ptr_nonnull(strstr(e.message, "not under the sandbox home"));
        ck_assert_int_eq(enter_dir_check("", "/home/sb", &e), -EINVAL);
        ck_assert_int_eq(enter_dir_check("//", "/home/sb", &e), -EINVAL);
        /* The error record is optional. */
        ck_assert_int_eq(enter_dir_check(HOME, "/etc", NULL), -EINVAL);
        ck_assert_int_eq(enter_dir_check(HOME, HOME, NULL), 0);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("helper-args");
        TCase *tc = tcase_create("helper_args_parse");

        tcase_add_loop_test(tc, test_args_table, 0, (int)ELEMENTSOF(cases));
        tcase_add_test(tc, test_args_argc_zero);
        tcase_add_test(tc, test_args_null_error);
        tcase_add_test(tc, test_args_unknown_op_truncated);
        tcase_add_test(tc, test_op_names);
        suite_add_tcase(s, tc);

        tc = tcase_create("enter_dir_check");
        tcase_add_loop_test(tc, test_dir_table, 0, (int)ELEMENTSOF(dir_cases));
        tcase_add_test(tc, test_dir_long);
        tcase_add_test(tc, test_dir_long_message_bounded);
        tcase_add_test(tc, test_dir_home_spelling);
        suite_add_tcase(s, tc);

        return check_run(s);
}
