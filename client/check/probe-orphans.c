/* SPDX-License-Identifier: MIT */
#include "probe-orphans.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proc.h"

#define POLL_MS 20

int probe_orphans_adopt(void)
{
        return prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0 ? -errno : 0;
}

static long long now_ms(void)
{
        struct timespec t;

        (void)clock_gettime(CLOCK_MONOTONIC, &t);
        return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Reaps every child that has ended: 1 when none is left, 0 when some still run, or -errno. */
static int reap_ended(void)
{
        for (;;) {
                pid_t pid = waitpid(-1, NULL, WNOHANG | __WALL);

                if (pid > 0)
                        continue;
                if (pid == 0)
                        return 0;
                if (errno == ECHILD)
                        return 1;
                if (errno != EINTR)
                        return -errno;
        }
}

/* A child stays unreaped until this process reaps it, so its pid cannot be another's meanwhile. */
static int kill_child(pid_t pid, const ProcStatus *s, void *userdata)
{
        (void)userdata;
        if (s->ppid == getpid())
                (void)kill(pid, SIGKILL);
        return 0;
}

/* Rootless podman's pause process (catatonit -P, or podman itself under that name) holds the user
 * namespace and waits for good: no reason to give it the grace. Its name only shortens the wait; whatever
 * its name, a child left at the end of the grace is killed. */
static bool is_pause_process(pid_t pid)
{
        char path[64], comm[32] = "";
        ssize_t n;
        int fd;

        (void)snprintf(path, sizeof(path), "/proc/%ld/comm", (long)pid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return false;
        n = read(fd, comm, sizeof(comm) - 1);
        (void)close(fd);
        if (n <= 0)
                return false;
        comm[strcspn(comm, "\n")] = '\0';
        return strcmp(comm, "catatonit") == 0 || strcmp(comm, "podman pause") == 0;
}

static int count_working_child(pid_t pid, const ProcStatus *s, void *userdata)
{
        unsigned *n = userdata;

        if (s->ppid == getpid() && !proc_status_dead(s) && !is_pause_process(pid))
                (*n)++;
        return 0;
}

static int wait_until(long long deadline, bool kill_first)
{
        for (;;) {
                int r = reap_ended();
                if (r != 0)
                        return r < 0 ? r : 0;
                if (now_ms() >= deadline)
                        return -ETIMEDOUT;
                if (kill_first) {
                        r = proc_for_each(kill_child, NULL);
                        if (r < 0)
                                return r;
                } else {
                        unsigned working = 0;

                        r = proc_for_each(count_working_child, &working);
                        if (r < 0)
                                return r;
                        if (working == 0)
                                return -ETIMEDOUT; /* the grace is over: only what stays for good is left */
                }
                (void)nanosleep(&(struct timespec){ 0, POLL_MS * 1000 * 1000 }, NULL);
        }
}

int probe_orphans_end(unsigned grace_ms, unsigned kill_ms)
{
        int r = wait_until(now_ms() + grace_ms, false);

        if (r != -ETIMEDOUT)
                return r;
        return wait_until(now_ms() + kill_ms, true);
}
