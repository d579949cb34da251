/* SPDX-License-Identifier: MIT */
/* What the check's programs leave behind (probe_orphans_adopt(), probe_orphans_end()): a process that left
 * its parent is adopted, one that ends by itself within the grace is let finish, and what stays (a daemon,
 * podman's pause process) is killed and reaped, so nothing writes in the check's home once it is removed. */
#include <check.h>

#include "check-run.h"
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "probe-orphans.h"

/* A child that starts a grandchild running fn and exits at once: the grandchild is an orphan, adopted by
 * the subreaper. Its pid in the return value. */
static pid_t start_orphan(void (*fn)(const char *), const char *arg)
{
        int p[2];
        pid_t child, orphan = -1;

        pid_t self = getpid();

        ck_assert_int_eq(pipe(p), 0);
        child = fork();
        ck_assert_int_ge(child, 0);
        if (child == 0) {
                pid_t g = fork();

                if (g == 0) {
                        close(p[0]);
                        close(p[1]);
                        (void)setsid();
                        /* Once adopted, it dies with the test, also where the test fails or times out. */
                        for (int i = 0; i < 1000 && getppid() != self; i++)
                                usleep(1000);
                        if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != self)
                                _exit(1);
                        fn(arg);
                        _exit(0);
                }
                (void)!write(p[1], &g, sizeof(g));
                _exit(g < 0);
        }
        close(p[1]);
        ck_assert_int_eq(read(p[0], &orphan, sizeof(orphan)), (ssize_t)sizeof(orphan));
        close(p[0]);
        ck_assert_int_eq(waitpid(child, NULL, 0), child);
        return orphan;
}

static void sleep_long(const char *name)
{
        if (name)
                (void)prctl(PR_SET_NAME, name, 0, 0, 0);
        for (;;)
                pause();
}

/* As podman's cleanup: it writes a while after the command that started it has returned. */
static void write_late(const char *path)
{
        usleep(300 * 1000);
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        _exit(fd < 0);
}

static bool gone(pid_t pid)
{
        return kill(pid, 0) < 0 && errno == ESRCH;
}

START_TEST(test_nothing_to_end)
{
        ck_assert_int_eq(probe_orphans_adopt(), 0);
        ck_assert_int_eq(probe_orphans_end(600000, 2000), 0);
}
END_TEST

START_TEST(test_late_writer_finishes_daemon_killed)
{
        char dir[] = "/tmp/agentic-job-test-orphans-XXXXXX", late[sizeof(dir) + 8];
        pid_t daemon, writer;

        ck_assert_ptr_nonnull(mkdtemp(dir));
        (void)snprintf(late, sizeof(late), "%s/late", dir);
        ck_assert_int_eq(probe_orphans_adopt(), 0);
        daemon = start_orphan(sleep_long, NULL);
        writer = start_orphan(write_late, late);
        /* Adopted: the subreaper is their parent now. */
        ck_assert_int_eq(kill(daemon, 0), 0);
        ck_assert_int_eq(probe_orphans_end(3000, 5000), 0);
        ck_assert_msg(access(late, F_OK) == 0, "the late writer was killed before its write");
        ck_assert(gone(daemon));
        ck_assert(gone(writer));
        ck_assert_int_eq(waitpid(-1, NULL, WNOHANG), -1);
        ck_assert_int_eq(unlink(late), 0);
        ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

/* A grace of 10 minutes: only its early end for a pause process lets this finish within the test's bound. */
START_TEST(test_pause_process_ends_the_grace)
{
        pid_t pause1, pause2;

        ck_assert_int_eq(probe_orphans_adopt(), 0);
        pause1 = start_orphan(sleep_long, "catatonit");
        pause2 = start_orphan(sleep_long, "podman pause");
        ck_assert_int_eq(probe_orphans_end(600000, 5000), 0);
        ck_assert(gone(pause1));
        ck_assert(gone(pause2));
}
END_TEST

static Suite *probe_orphans_suite(void)
{
        Suite *s = suite_create("probe-orphans");
        TCase *tc = tcase_create("probe-orphans");

        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_nothing_to_end);
        tcase_add_test(tc, test_late_writer_finishes_daemon_killed);
        tcase_add_test(tc, test_pause_process_ends_the_grace);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return check_run(probe_orphans_suite());
}
