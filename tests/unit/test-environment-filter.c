/* SPDX-License-Identifier: MIT */
/* environment_filter(): /etc/environment without XDG_RUNTIME_DIR and ACTIONS_*, every other byte kept;
 * each case compares the whole text and the list of removed names. */
#include <check.h>

#include "check-run.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "environment-filter.h"
#include "macro.h"

static void assert_filter(const char *in, size_t in_size, const char *out, size_t out_size,
                          const char *const *removed, size_t n_removed)
{
        _cleanup_strv_free_ char **names = NULL;
        _cleanup_free_ char *text = NULL;
        size_t size = 0;

        ck_assert_int_eq(environment_filter(in, in_size, &text, &size, &names), 0);
        ck_assert_ptr_nonnull(text);
        ck_assert_uint_eq(size, out_size);
        ck_assert_msg(memcmp(text, out, out_size) == 0, "got \"%s\", expected \"%s\"", text, out);
        ck_assert_int_eq(text[size], '\0');
        ck_assert_ptr_nonnull(names);
        ck_assert_uint_eq(strv_length(names), n_removed);
        for (size_t i = 0; i < n_removed; i++)
                ck_assert_str_eq(names[i], removed[i]);
}

/* in and out are string literals; the names follow (none: nothing removed). */
#define ASSERT_FILTER(in, out, ...)                                                                         \
        assert_filter((in), sizeof(in) - 1, (out), sizeof(out) - 1, (const char *const[]){ __VA_ARGS__ },   \
                      ELEMENTSOF(((const char *const[]){ __VA_ARGS__ })) - 1)

START_TEST(test_runner_image)
{
        /* What a hosted runner's image holds, more or less. */
        ASSERT_FILTER("PATH=\"/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\"\n"
                      "XDG_RUNTIME_DIR=/run/user/1001\n"
                      "ACTIONS_RUNNER_ACTION_ARCHIVE_CACHE=/opt/actionarchivecache\n"
                      "DOTNET_MULTILEVEL_LOOKUP=0\n"
                      "ACTIONS_RUNTIME_TOKEN=\"secret\"\n",
                      "PATH=\"/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\"\n"
                      "DOTNET_MULTILEVEL_LOOKUP=0\n",
                      "XDG_RUNTIME_DIR", "ACTIONS_RUNNER_ACTION_ARCHIVE_CACHE", "ACTIONS_RUNTIME_TOKEN",
                      NULL);
}
END_TEST

START_TEST(test_nothing_to_remove)
{
        static const char text[] = "# comment: ACTIONS_X=1\n"
                                   "\n"
                                   "LANG=C.UTF-8\r\n"
                                   "  export  EDITOR='vi'  \n"
                                   "XDG_RUNTIME_DIRS=/x\n" /* another name */
                                   "xdg_runtime_dir=/x\n"  /* names are case-sensitive */
                                   "MY_ACTIONS_X=1\n"      /* ACTIONS_ only as a prefix */
                                   "ACTIONS=1\n"           /* no underscore */
                                   "ACTIONS_NOT_SET\n"     /* no '=': sets nothing */
                                   "exportACTIONS_X=1\n"   /* one name, "exportACTIONS_X" */
                                   "\"ACTIONS_X\"=1\n"     /* a quoted name sets nothing */
                                   "FOO=$ACTIONS_X\n"      /* a value, not a name */
                                   "# XDG_RUNTIME_DIR=/run/user/0";

        ASSERT_FILTER(text, text, NULL);
        ASSERT_FILTER("", "", NULL);
}
END_TEST

START_TEST(test_forms)
{
        /* export, blanks around everything, quotes, any case of ACTIONS_, an empty value. */
        ASSERT_FILTER("A=1\n"
                      "export XDG_RUNTIME_DIR=/run/user/1001\n"
                      "  export\tACTIONS_ID_TOKEN_REQUEST_URL = \"https://x\"\n"
                      "\tactions_cache_url='y'\n"
                      "Actions_Results_Url=\n"
                      "XDG_RUNTIME_DIR =/tmp\n"
                      "B=2\n",
                      "A=1\n"
                      "B=2\n",
                      "XDG_RUNTIME_DIR", "ACTIONS_ID_TOKEN_REQUEST_URL", "actions_cache_url",
                      "Actions_Results_Url", NULL);
}
END_TEST

START_TEST(test_crlf_and_no_final_newline)
{
        ASSERT_FILTER("A=1\r\nACTIONS_X=2\r\nB=3\r\nXDG_RUNTIME_DIR=/r", "A=1\r\nB=3\r\n", "ACTIONS_X",
                      "XDG_RUNTIME_DIR", NULL);
        ASSERT_FILTER("A=1\nACTIONS_X=2", "A=1\n", "ACTIONS_X", NULL);
        ASSERT_FILTER("ACTIONS_X=2", "", "ACTIONS_X", NULL);
        ASSERT_FILTER("A=1", "A=1", NULL);
}
END_TEST

START_TEST(test_duplicates_listed_once)
{
        ASSERT_FILTER("ACTIONS_X=1\nACTIONS_X=2\nexport ACTIONS_X=3\nactions_x=4\n", "", "ACTIONS_X",
                      "actions_x", NULL);
}
END_TEST

START_TEST(test_continuations)
{
        /* A removed line's backslash continuations go with it (a blank or carriage return after the
         * backslash still continues, as systemd reads it), so no piece of its value becomes a setting. */
        ASSERT_FILTER("A=1\n"
                      "ACTIONS_RUNTIME_TOKEN=abc\\\n"
                      "FOO=bar\\  \n"
                      "def\\\r\n"
                      "ghi\n"
                      "B=2\n",
                      "A=1\n"
                      "B=2\n",
                      "ACTIONS_RUNTIME_TOKEN", NULL);
        /* A kept line's continuation is kept as it is, but a continuation line that sets a removed name
         * is still removed: some reader may take it as a line of its own. */
        ASSERT_FILTER("A=1\\\n"
                      "more\n"
                      "B=2\\\n"
                      "ACTIONS_X=3\n"
                      "C=4\n",
                      "A=1\\\n"
                      "more\n"
                      "B=2\\\n"
                      "C=4\n",
                      "ACTIONS_X", NULL);
        /* A backslash at the very end of the file continues onto nothing. */
        ASSERT_FILTER("A=1\nACTIONS_X=1\\", "A=1\n", "ACTIONS_X", NULL);
        /* An escaped character inside the value is not a continuation. */
        ASSERT_FILTER("ACTIONS_X=a\\b\nB=2\n", "B=2\n", "ACTIONS_X", NULL);
}
END_TEST

START_TEST(test_lone_carriage_return)
{
        /* systemd ends a line at a lone carriage return: a part after one that sets a removed name takes
         * its whole line with it. */
        ASSERT_FILTER("A=1\rACTIONS_X=2\nB=3\n", "B=3\n", "ACTIONS_X", NULL);
        ASSERT_FILTER("A=1\r\rB=2\n", "A=1\r\rB=2\n", NULL);
}
END_TEST

START_TEST(test_nul_bytes)
{
        /* Any bytes: a NUL in a kept line is kept; one in a removed line goes with it. */
        static const char in[] = "A=\0x\nACTIONS_X=\0\nB=2";
        static const char out[] = "A=\0x\nB=2";

        ASSERT_FILTER(in, out, "ACTIONS_X", NULL);
}
END_TEST

START_TEST(test_name_rule)
{
        ck_assert(environment_name_removed("XDG_RUNTIME_DIR", 15));
        ck_assert(!environment_name_removed("XDG_RUNTIME_DIR", 14));
        ck_assert(!environment_name_removed("Xdg_Runtime_Dir", 15));
        ck_assert(environment_name_removed("ACTIONS_", 8));
        ck_assert(environment_name_removed("aCtIoNs_x", 9));
        ck_assert(!environment_name_removed("ACTIONS", 7));
        ck_assert(!environment_name_removed("ACTIONS_X", 7));
        ck_assert(!environment_name_removed("", 0));
}
END_TEST

static Suite *environment_filter_suite(void)
{
        Suite *s = suite_create("environment-filter");
        TCase *t = tcase_create("filter");

        tcase_add_test(t, test_runner_image);
        tcase_add_test(t, test_nothing_to_remove);
        tcase_add_test(t, test_forms);
        tcase_add_test(t, test_crlf_and_no_final_newline);
        tcase_add_test(t, test_duplicates_listed_once);
        tcase_add_test(t, test_continuations);
        tcase_add_test(t, test_lone_carriage_return);
        tcase_add_test(t, test_nul_bytes);
        tcase_add_test(t, test_name_rule);
        suite_add_tcase(s, t);
        return s;
}

int main(void)
{
        return check_run(environment_filter_suite());
}
