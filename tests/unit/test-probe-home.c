/* SPDX-License-Identifier: MIT */
/* The sandbox side's own home (probe_home_enter(), probe_home_remove()) and how a probe reads a program's
 * end (probe_run_timed(), probe_refused()): nothing of the sandbox user's home or working directory is
 * where the probes' programs look, and a program a signal ended is never a refusal. */
#include <check.h>

#include "check-run.h"
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "probe-home.h"
#include "probe-run.h"

/* Each test in a child of its own (CK_FORK) changes only its own environment and working directory; with
 * CK_FORK=no the next test starts from what the last left, which none of them relies on. */
static char parent[] = "/tmp/agentic-job-test-probe-home-XXXXXX";

static void setup(void)
{
        ck_assert_ptr_nonnull(mkdtemp(parent));
}

static void teardown(void)
{
        char cmd[PATH_MAX + 16];

        (void)snprintf(cmd, sizeof(cmd), "rm -rf '%s'", parent);
        ck_assert_int_eq(system(cmd), 0);
}

static bool is_dir_0700(const char *path)
{
        struct stat st;

        return lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 07777) == 0700 &&
               st.st_uid == getuid();
}

START_TEST(test_enter_points_everything_inside)
{
        static const char *const names[] = { PROBE_HOME_VARIABLES };
        char dir[PATH_MAX], cwd[PATH_MAX], want[PATH_MAX];

        /* What an earlier step left: a HOME of its own choosing, and a working directory in it. */
        ck_assert_int_eq(setenv("HOME", parent, 1), 0);
        ck_assert_int_eq(setenv("XDG_CONFIG_HOME", parent, 1), 0);
        ck_assert_int_eq(chdir(parent), 0);

        ck_assert_int_eq(probe_home_enter(parent, dir, sizeof(dir)), 0);
        ck_assert_int_eq(strncmp(dir, parent, strlen(parent)), 0);
        ck_assert(is_dir_0700(dir));
        ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
        ck_assert_str_eq(cwd, "/");
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
                const char *v = getenv(names[i]);

                ck_assert_msg(v, "%s is not set", names[i]);
                ck_assert_msg(strncmp(v, dir, strlen(dir)) == 0 || strcmp(v, "/dev/null") == 0 ||
                                      strcmp(names[i], "GIT_CONFIG_NOSYSTEM") == 0 ||
                                      strcmp(names[i], "GIT_ALLOW_PROTOCOL") == 0,
                              "%s=%s is outside %s", names[i], v, dir);
        }
        ck_assert_str_eq(getenv("GIT_ALLOW_PROTOCOL"), "http:https");
        ck_assert_str_eq(getenv("GIT_CONFIG_GLOBAL"), "/dev/null");
        (void)snprintf(want, sizeof(want), "%s/home", dir);
        ck_assert_str_eq(getenv("HOME"), want);
        ck_assert_str_eq(getenv("CURL_HOME"), want);
        ck_assert(is_dir_0700(want));
        (void)snprintf(want, sizeof(want), "%s/config", dir);
        ck_assert_str_eq(getenv("XDG_CONFIG_HOME"), want);
        ck_assert(is_dir_0700(want));
        ck_assert_int_eq(probe_home_remove(dir), 0);
        ck_assert_int_eq(access(dir, F_OK), -1);
}
END_TEST

/* Two checks never share a home, and a name planted where the next one would go is never taken. */
START_TEST(test_enter_fresh_each_time)
{
        char a[PATH_MAX], b[PATH_MAX];

        ck_assert_int_eq(probe_home_enter(parent, a, sizeof(a)), 0);
        ck_assert_int_eq(probe_home_enter(parent, b, sizeof(b)), 0);
        ck_assert_str_ne(a, b);
        ck_assert_int_eq(probe_home_remove(a), 0);
        ck_assert_int_eq(probe_home_remove(b), 0);
        /* A relative or missing TMPDIR: /tmp. */
        ck_assert_int_eq(probe_home_enter("relative", a, sizeof(a)), 0);
        ck_assert_int_eq(strncmp(a, "/tmp/agentic-job-check-home-", 28), 0);
        ck_assert_int_eq(probe_home_remove(a), 0);
        ck_assert_int_eq(probe_home_enter(NULL, a, sizeof(a)), 0);
        ck_assert_int_eq(strncmp(a, "/tmp/", 5), 0);
        ck_assert_int_eq(probe_home_remove(a), 0);
}
END_TEST

START_TEST(test_enter_fails_cleanly)
{
        char dir[PATH_MAX], missing[PATH_MAX + 16];

        (void)snprintf(missing, sizeof(missing), "%s/missing", parent);
        ck_assert_int_eq(probe_home_enter(missing, dir, sizeof(dir)), -ENOENT);
        ck_assert_int_eq(probe_home_enter(parent, dir, 16), -ENAMETOOLONG);
}
END_TEST

/* podman's store holds directories without write permission (and the check's own files may too): all of
 * it goes, and a link in it is removed, never followed. */
START_TEST(test_remove_read_only_and_links)
{
        char dir[PATH_MAX], p[PATH_MAX + 64], outside[PATH_MAX + 16];
        FILE *f;

        (void)snprintf(outside, sizeof(outside), "%s/outside", parent);
        f = fopen(outside, "we");
        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(fclose(f), 0);
        ck_assert_int_eq(probe_home_enter(parent, dir, sizeof(dir)), 0);
        (void)snprintf(p, sizeof(p), "%s/data/containers", dir);
        ck_assert_int_eq(mkdir(p, 0700), 0);
        (void)snprintf(p, sizeof(p), "%s/data/containers/ro", dir);
        ck_assert_int_eq(mkdir(p, 0700), 0);
        (void)snprintf(p, sizeof(p), "%s/data/containers/ro/file", dir);
        f = fopen(p, "we");
        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(fclose(f), 0);
        (void)snprintf(p, sizeof(p), "%s/data/containers/ro/link", dir);
        ck_assert_int_eq(symlink(parent, p), 0);
        (void)snprintf(p, sizeof(p), "%s/data/containers/ro", dir);
        ck_assert_int_eq(chmod(p, 0555), 0);
        (void)snprintf(p, sizeof(p), "%s/data/containers", dir);
        ck_assert_int_eq(chmod(p, 0500), 0);
        ck_assert_int_eq(probe_home_remove(dir), 0);
        ck_assert_int_eq(access(dir, F_OK), -1);
        ck_assert_int_eq(access(outside, F_OK), 0);
        ck_assert_int_eq(access(parent, W_OK), 0);
}
END_TEST

/* A program killed by a signal (what code loaded into it from the sandbox user's files could do to a
 * probe's program) is no refusal; nor is one that could not run. */
START_TEST(test_signal_is_not_a_refusal)
{
        char out[64];
        char st[64];
        int r;

        r = probe_run_timed((char *const[]){ (char *)"/bin/sh", (char *)"-c", (char *)"exit 1", NULL }, NULL,
                            out, sizeof(out), false, 5000);
        ck_assert_int_eq(r, 1);
        ck_assert(probe_refused(r));
        ck_assert_str_eq(probe_status_text(r, st, sizeof(st)), "status 1");

        r = probe_run_timed(
                (char *const[]){ (char *)"/bin/sh", (char *)"-c", (char *)"kill -KILL $$", NULL }, NULL, out,
                sizeof(out), false, 5000);
        ck_assert_int_eq(r, PROBE_SIGNALLED + SIGKILL);
        ck_assert(!probe_refused(r));
        ck_assert_str_eq(probe_status_text(r, st, sizeof(st)), "killed by signal 9");

        /* An exit status that looks like a shell's report of a signal is still the program's own. */
        r = probe_run_timed((char *const[]){ (char *)"/bin/sh", (char *)"-c", (char *)"exit 137", NULL },
                            NULL, out, sizeof(out), false, 5000);
        ck_assert_int_eq(r, 137);
        ck_assert(!probe_refused(r));

        r = probe_run_timed((char *const[]){ (char *)"/bin/sh", (char *)"-c", (char *)"sleep 5", NULL },
                            NULL, out, sizeof(out), false, 100);
        ck_assert_int_eq(r, PROBE_SIGNALLED + SIGKILL);
        ck_assert(!probe_refused(r));

        r = probe_run_timed((char *const[]){ (char *)"/nonexistent/program", NULL }, NULL, out, sizeof(out),
                            false, 5000);
        ck_assert_int_eq(r, 127);
        ck_assert(!probe_refused(r));
        ck_assert(!probe_refused(0));
        ck_assert(!probe_refused(-ENOENT));
        ck_assert_str_eq(probe_status_text(-ENOENT, st, sizeof(st)),
                         "not started: No such file or directory");
}
END_TEST

static Suite *probe_home_suite(void)
{
        Suite *s = suite_create("probe-home");
        TCase *tc = tcase_create("probe-home");

        tcase_add_unchecked_fixture(tc, setup, teardown);
        tcase_add_test(tc, test_enter_points_everything_inside);
        tcase_add_test(tc, test_enter_fresh_each_time);
        tcase_add_test(tc, test_enter_fails_cleanly);
        tcase_add_test(tc, test_remove_read_only_and_links);
        tcase_add_test(tc, test_signal_is_not_a_refusal);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return check_run(probe_home_suite());
}
