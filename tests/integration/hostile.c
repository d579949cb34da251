/* SPDX-License-Identifier: MIT */
/* ajt-hostile: what a hostile sandbox user runs against kill-user, for the integration and end-to-end
 * tests. Each mode starts its processes, reports on standard output when they run, and returns; the
 * processes stay behind for kill-user to end.
 *
 *   ajt-hostile zombie-leader N   N processes whose main thread has exited (pthread_exit) while a second
 *                                 thread keeps working: each shows State: Z in /proc/PID/status
 *   ajt-hostile idle N            N processes that sleep
 *   ajt-hostile stopper           one process (a new one each round) that sends SIGSTOP, without pause,
 *                                 to the pids around /proc/sys/kernel/ns_last_pid above its own first
 *                                 pid: whatever starts next as this user stops
 *   ajt-hostile respawner UID GID N
 *                                 as root: a process of root's that keeps N processes of uid UID alive,
 *                                 starting one again as soon as one ends (a root service acting for the
 *                                 sandbox user, which no kill-user can outlast); prints "respawner PID" for
 *                                 the test to end it by
 */
/* setresuid(), setresgid(): the end-to-end tests compile this alone, without meson's flags. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static void *keep_working(void *arg)
{
        volatile unsigned long n = 0;

        (void)arg;
        /* Once a second: 2,000 of these waking every 10 ms kept two CPUs busy in the kernel alone (a load
         * of 850 in a test host), and starved the kill-user under test of any CPU to run on. */
        for (;;) {
                n++;
                sleep(1);
        }
        return NULL;
}

/* Forks a child that calls fn, reports one byte on ready once fn's setup is done, and never returns. */
static void start(void (*fn)(int ready), int ready)
{
        pid_t pid = fork();

        if (pid < 0) {
                perror("ajt-hostile: fork");
                exit(1);
        }
        if (pid == 0) {
                int null = open("/dev/null", O_RDWR | O_CLOEXEC);

                /* Nothing of the caller's: a test that reads this program's output gets its end. */
                if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0)
                        _exit(1);
                (void)setsid();
                fn(ready);
                _exit(0);
        }
}

static void zombie_leader(int ready)
{
        pthread_t t;

        if (pthread_create(&t, NULL, keep_working, NULL) != 0)
                _exit(1);
        (void)!write(ready, "z", 1);
        pthread_exit(NULL);
}

static void idle(int ready)
{
        (void)!write(ready, "i", 1);
        for (;;)
                pause();
}

/* It moves as it goes: each round a child takes over and the parent exits, so a kill(-1) that is walking
 * the process list (fork() waits for it) leaves the newest one alive to stop the killer on its way out. */
static void stopper(int ready)
{
        /* Only what starts after it: its ancestors (the program that started it, the shell run0 and
         * systemd-run wrap a command in) have lower pids, and stopping them would hang the enter that
         * started it, not the kill-user under test. */
        pid_t floor = getpid();
        char buf[32];

        (void)!write(ready, "s", 1);
        close(ready);
        for (;;) {
                int fd = open("/proc/sys/kernel/ns_last_pid", O_RDONLY | O_CLOEXEC);
                ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
                long last;
                pid_t child;

                if (fd >= 0)
                        close(fd);
                if (n <= 0)
                        continue;
                buf[n] = '\0';
                last = strtol(buf, NULL, 10);
                for (long p = last - 16; p <= last + 4; p++)
                        if (p > floor && p != getpid())
                                (void)kill((pid_t)p, SIGSTOP);
                child = fork();
                if (child > 0)
                        _exit(0);
        }
}

/* One child of uid u, gid g and no other group, which reports on ready (when ready >= 0) and waits. */
static pid_t respawn_one(uid_t u, gid_t g, int ready)
{
        pid_t pid = fork();

        if (pid != 0)
                return pid;
        if (setgroups(0, NULL) < 0 || setresgid(g, g, g) < 0 || setresuid(u, u, u) < 0)
                _exit(1);
        if (ready >= 0)
                (void)!write(ready, "r", 1);
        for (;;)
                pause();
}

static int respawner(int argc, char **argv)
{
        long u, g, n;
        int ready[2];
        pid_t pid;
        char c;

        if (argc != 5 || (u = strtol(argv[2], NULL, 10)) < 1 || (g = strtol(argv[3], NULL, 10)) < 1 ||
            (n = strtol(argv[4], NULL, 10)) < 1 || n > 1000) {
                fputs("usage: ajt-hostile respawner UID GID N\n", stderr);
                return 2;
        }
        if (geteuid() != 0) {
                fputs("ajt-hostile: respawner: only root can start processes of another uid\n", stderr);
                return 2;
        }
        if (pipe(ready) < 0) {
                perror("ajt-hostile: pipe");
                return 1;
        }
        pid = fork();
        if (pid < 0) {
                perror("ajt-hostile: fork");
                return 1;
        }
        if (pid == 0) {
                int null = open("/dev/null", O_RDWR | O_CLOEXEC);
                long live = 0;

                if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0)
                        _exit(1);
                close(ready[0]);
                (void)setsid();
                /* A kill-user that scans /proc between its kill(-1) and the first respawn sees no survivor
                 * (once, on a loaded runner): first in line for a CPU, the respawner's gap is microseconds
                 * where the scan takes milliseconds. Its children pause, so the policy costs nothing. */
                (void)setpriority(PRIO_PROCESS, 0, -20);
                (void)sched_setscheduler(0, SCHED_FIFO, &(struct sched_param){ .sched_priority = 1 });
                for (; live < n; live++)
                        if (respawn_one((uid_t)u, (gid_t)g, ready[1]) < 0)
                                _exit(1);
                /* Those started from now on report to no one: a write to the closed pipe would end them. */
                close(ready[1]);
                for (;;) {
                        if (waitpid(-1, NULL, 0) > 0)
                                live--;
                        while (live < n && respawn_one((uid_t)u, (gid_t)g, -1) > 0)
                                live++;
                }
        }
        close(ready[1]);
        for (long i = 0; i < n; i++)
                if (read(ready[0], &c, 1) != 1) {
                        fprintf(stderr, "ajt-hostile: only %ld of %ld started\n", i, n);
                        return 1;
                }
        printf("respawner %ld\n", (long)pid);
        return 0;
}

int main(int argc, char **argv)
{
        void (*fn)(int) = NULL;
        long n = 1;
        int ready[2];
        char c;

        if (argc >= 2 && strcmp(argv[1], "respawner") == 0)
                return respawner(argc, argv);
        if (argc >= 2 && strcmp(argv[1], "zombie-leader") == 0)
                fn = zombie_leader;
        else if (argc >= 2 && strcmp(argv[1], "idle") == 0)
                fn = idle;
        else if (argc == 2 && strcmp(argv[1], "stopper") == 0)
                fn = stopper;
        if (!fn || (fn != stopper && (argc != 3 || (n = strtol(argv[2], NULL, 10)) < 1 || n > 100000))) {
                fputs("usage: ajt-hostile zombie-leader N | idle N | stopper | respawner UID GID N\n",
                      stderr);
                return 2;
        }
        if (pipe(ready) < 0) {
                perror("ajt-hostile: pipe");
                return 1;
        }
        for (long i = 0; i < n; i++)
                start(fn, ready[1]);
        close(ready[1]);
        /* Every child said it runs (a zombie leader: its thread does) before this one returns. */
        for (long i = 0; i < n; i++)
                if (read(ready[0], &c, 1) != 1) {
                        fprintf(stderr, "ajt-hostile: only %ld of %ld started\n", i, n);
                        return 1;
                }
        printf("started %ld\n", n);
        return 0;
}
