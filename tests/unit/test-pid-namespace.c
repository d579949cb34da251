/* SPDX-License-Identifier: MIT */
/* run_in_pid_namespace(): what the function leaves behind dies with it, however it hides: a daemon in a
 * session of its own that ignores TERM and HUP, a stopped process, a thread that outlives its leader, a
 * process that keeps forking. Each holds the write end of a pipe; the pipe's end of file, once the call
 * returned, shows that no process holding it is left, and kill(pid, 0) that the pid it reported is gone. */
#include <check.h>

#include "check-run.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pid-namespace.h"

typedef enum Leftover {
        LEFT_DAEMON,
        LEFT_STOPPED,
        LEFT_THREAD,
        LEFT_FORKER,
} Leftover;

typedef struct Job {
        Leftover how;
        int report; /* the write end: the leftover writes its pid as /proc shows it outside, and keeps it */
        int ready;  /* the leftover is in place: the function may return */
} Job;

/* The pid of this process in the namespace /proc was mounted in: the caller's, outside. */
static pid_t outer_pid(void)
{
        char buf[32];
        ssize_t n = readlink("/proc/self", buf, sizeof(buf) - 1);

        if (n <= 0)
                return -1;
        buf[n] = '\0';
        return (pid_t)strtol(buf, NULL, 10);
}

static void report_pid(const Job *j)
{
        pid_t pid = outer_pid();

        (void)!write(j->report, &pid, sizeof(pid));
        (void)!write(j->ready, "r", 1);
}

static void *sleeper(void *arg)
{
        (void)arg;
        for (;;)
                pause();
        return NULL;
}

static void leftover(const Job *j)
{
        pthread_t t;

        (void)setsid();
        (void)signal(SIGTERM, SIG_IGN);
        (void)signal(SIGHUP, SIG_IGN);
        switch (j->how) {
        case LEFT_DAEMON:
                report_pid(j);
                for (;;)
                        pause();
        case LEFT_STOPPED:
                report_pid(j);
                (void)raise(SIGSTOP);
                for (;;)
                        pause();
        case LEFT_THREAD:
                if (pthread_create(&t, NULL, sleeper, NULL) != 0)
                        _exit(1);
                report_pid(j);
                pthread_exit(NULL);
        case LEFT_FORKER:
                report_pid(j);
                for (;;) {
                        pid_t c = fork();
                        if (c > 0)
                                _exit(0);
                        if (c < 0)
                                pause();
                }
        }
        _exit(1);
}

static int leave_behind(void *userdata)
{
        Job *j = userdata;
        int ready[2];
        pid_t pid;
        char c;

        /* Standard input is /dev/null. */
        if (read(STDIN_FILENO, &c, 1) != 0)
                return 3;
        if (pipe2(ready, O_CLOEXEC) < 0)
                return 2;
        j->ready = ready[1];
        pid = fork();
        if (pid < 0)
                return 2;
        if (pid == 0)
                leftover(j);
        close(ready[1]);
        /* Once the leftover is in place (as a daemon would be, long before the clone ends). */
        return read(ready[0], &c, 1) == 1 ? 7 : 4;
}

static void check_nothing_left(Leftover how)
{
        int p[2], status = -1;
        pid_t pid = 0;
        struct pollfd pf;
        Job j = { .how = how };

        ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
        j.report = p[1];
        ck_assert_int_eq(run_in_pid_namespace(leave_behind, &j, &status), 0);
        ck_assert_int_eq(status, 7);
        close(p[1]);
        ck_assert_int_eq(read(p[0], &pid, sizeof(pid)), (ssize_t)sizeof(pid));
        ck_assert_int_gt(pid, 1);
        /* Nothing holds the write end any more: end of file at once. */
        pf = (struct pollfd){ .fd = p[0], .events = POLLIN };
        ck_assert_int_eq(poll(&pf, 1, 0), 1);
        ck_assert_int_eq(read(p[0], &pid, sizeof(pid)), 0);
        close(p[0]);
}

START_TEST(test_daemon_dies)
{
        check_nothing_left(LEFT_DAEMON);
}
END_TEST

START_TEST(test_stopped_dies)
{
        check_nothing_left(LEFT_STOPPED);
}
END_TEST

START_TEST(test_thread_dies)
{
        check_nothing_left(LEFT_THREAD);
}
END_TEST

START_TEST(test_forker_dies)
{
        check_nothing_left(LEFT_FORKER);
}
END_TEST

/* The reported pid itself is gone (the pipe shows that every holder is; this, that the one it named is). */
START_TEST(test_reported_pid_gone)
{
        int p[2], status = -1;
        pid_t pid = 0;
        Job j = { .how = LEFT_DAEMON };

        ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
        j.report = p[1];
        ck_assert_int_eq(run_in_pid_namespace(leave_behind, &j, &status), 0);
        close(p[1]);
        ck_assert_int_eq(read(p[0], &pid, sizeof(pid)), (ssize_t)sizeof(pid));
        close(p[0]);
        ck_assert_int_eq(kill(pid, 0), -1);
        ck_assert_int_eq(errno, ESRCH);
}
END_TEST

static int same_ids(void *userdata)
{
        const unsigned *ids = userdata;

        return geteuid() == ids[0] && getegid() == ids[1] ? 0 : 1;
}

static int returns(void *userdata)
{
        return *(const int *)userdata;
}

/* The caller's uid and gid inside, as themselves; the function's status back, out-of-range ones as 125. */
START_TEST(test_ids_and_status)
{
        unsigned ids[2] = { (unsigned)geteuid(), (unsigned)getegid() };
        int status = -1, v;

        ck_assert_int_eq(run_in_pid_namespace(same_ids, ids, &status), 0);
        ck_assert_int_eq(status, 0);
        v = 42;
        ck_assert_int_eq(run_in_pid_namespace(returns, &v, &status), 0);
        ck_assert_int_eq(status, 42);
        v = -5;
        ck_assert_int_eq(run_in_pid_namespace(returns, &v, &status), 0);
        ck_assert_int_eq(status, 125);
        v = 300;
        ck_assert_int_eq(run_in_pid_namespace(returns, &v, &status), 0);
        ck_assert_int_eq(status, 125);
}
END_TEST

static Suite *pid_namespace_suite(void)
{
        Suite *s = suite_create("pid-namespace");
        TCase *tc = tcase_create("pid-namespace");

        tcase_add_test(tc, test_daemon_dies);
        tcase_add_test(tc, test_stopped_dies);
        tcase_add_test(tc, test_thread_dies);
        tcase_add_test(tc, test_forker_dies);
        tcase_add_test(tc, test_reported_pid_gone);
        tcase_add_test(tc, test_ids_and_status);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return check_run(pid_namespace_suite());
}
