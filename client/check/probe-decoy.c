/* SPDX-License-Identifier: MIT */
#include "probe-decoy.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "macro.h"
#include "probe-emit.h"
#include "ptrace-scope.h"
#include "random-hex.h"

#define DECOY_LIFETIME_S 600

/* A byte on the pipe says the child failed before its execve (its end alone would not: a zombie still
 * takes kill -0). */
_Noreturn static void child_fail(int ready)
{
        (void)!write(ready, "x", 1);
        _exit(127);
}

_Noreturn static void decoy_child(const Decoy *d, pid_t parent, int ready)
{
        char env_canary[sizeof(DECOY_CANARY_VAR) + sizeof(d->canary) + 1];
        char *argv[] = { (char *)"agentic-job", (char *)"sandbox", (char *)"decoy", NULL };
        char *env[] = { env_canary, NULL };
        int tty;

        (void)snprintf(env_canary, sizeof(env_canary), "%s=%s", DECOY_CANARY_VAR, d->canary);
        /* Out of the way of descriptors 0 to 3, which are about to be replaced. */
        ready = fcntl(ready, F_DUPFD_CLOEXEC, 10);
        if (ready < 0)
                _exit(127);
        /* A session of its own whose controlling terminal is the pseudo-terminal: a terminal of the
         * runner's, as an interactive job would have one. */
        if (setsid() < 0)
                child_fail(ready);
        tty = open(d->tty, O_RDWR);
        if (tty < 0 || ioctl(tty, TIOCSCTTY, 0) < 0 || dup2(tty, 0) < 0 || dup2(tty, 1) < 0 ||
            dup2(tty, 2) < 0)
                child_fail(ready);
        if (dup2(ready, 3) < 0 || fcntl(3, F_SETFD, FD_CLOEXEC) < 0)
                child_fail(ready);
        (void)close_range(4, ~0U, 0);
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
                child_fail(3);
        execve("/proc/self/exe", argv, env);
        child_fail(3);
}

int decoy_start(Decoy *ret)
{
        int ready[2], r;
        pid_t parent = getpid();
        Decoy d = DECOY_NULL;
        char buf[1];
        ssize_t n;

        r = random_hex(d.canary, (sizeof(d.canary) - 1) / 2);
        if (r < 0)
                return r;
        d.master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
        if (d.master < 0)
                return -errno;
        if (grantpt(d.master) < 0 || unlockpt(d.master) < 0 ||
            ptsname_r(d.master, d.tty, sizeof(d.tty)) != 0) {
                r = -errno;
                closep(&d.master);
                return r;
        }
        if (pipe2(ready, O_CLOEXEC) < 0) {
                r = -errno;
                closep(&d.master);
                return r;
        }
        d.pid = fork();
        if (d.pid < 0) {
                r = -errno;
                close(ready[0]);
                close(ready[1]);
                closep(&d.master);
                return r;
        }
        if (d.pid == 0)
                decoy_child(&d, parent, ready[1]);
        close(ready[1]);
        /* The pipe closes at the execve (close-on-exec): from then on the decoy is the new program, its
         * environment the canary. A byte, or the end without an exec, is a failure. */
        do
                n = read(ready[0], buf, sizeof(buf));
        while (n < 0 && errno == EINTR);
        close(ready[0]);
        if (n != 0 || kill(d.pid, 0) < 0) {
                decoy_stop(&d);
                return -ECHILD;
        }
        *ret = d;
        return 0;
}

void decoy_stop(Decoy *d)
{
        if (d->pid > 0) {
                (void)kill(d->pid, SIGKILL);
                while (waitpid(d->pid, NULL, 0) < 0 && errno == EINTR)
                        ;
        }
        d->pid = 0;
        closep(&d->master);
        d->master = -EBADF;
}

static ssize_t read_file(const char *path, off_t offset, char *buf, size_t size)
{
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        ssize_t n;

        if (fd < 0)
                return -errno;
        n = pread(fd, buf, size, offset);
        return n < 0 ? -errno : n;
}

/* Fields env_start and env_end (50 and 51) of /proc/PID/stat, counted after the ')' that ends the name. */
static int env_range(pid_t pid, uint64_t *start, uint64_t *end)
{
        char path[64], buf[2048], *p;
        ssize_t n;

        (void)snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
        n = read_file(path, 0, buf, sizeof(buf) - 1);
        if (n <= 0)
                return n < 0 ? (int)n : -EIO;
        buf[n] = '\0';
        p = strrchr(buf, ')');
        if (!p)
                return -EIO;
        p++;
        for (int field = 3; field <= 51; field++) {
                char *endp;
                unsigned long long v;

                p += strspn(p, " ");
                if (field < 50) {
                        p += strcspn(p, " ");
                        continue;
                }
                errno = 0;
                v = strtoull(p, &endp, 10);
                if (errno || endp == p)
                        return -EIO;
                *(field == 50 ? start : end) = v;
                p = endp;
        }
        return *end > *start ? 0 : -EIO;
}

static void control_environ(Report *rep, const Decoy *d)
{
        char path[64], buf[512];
        long long t = probe_now_ms();
        ssize_t n;

        (void)snprintf(path, sizeof(path), "/proc/%d/environ", (int)d->pid);
        n = read_file(path, 0, buf, sizeof(buf) - 1);
        if (n > 0 && memmem(buf, (size_t)n, d->canary, strlen(d->canary)))
                report_addf(rep, "environ-runner-control", CHECK_OK, probe_now_ms() - t, false,
                            "the runner reads the canary in %s", path);
        else
                report_addf(rep, "environ-runner-control", CHECK_FAIL, probe_now_ms() - t, false,
                            "the runner does not find the canary in %s (%s)", path,
                            n < 0 ? strerror((int)-n) : "not in what it read");
}

static void control_mem(Report *rep, const Decoy *d)
{
        char path[64], buf[512];
        uint64_t start = 0, end = 0;
        long long t = probe_now_ms();
        ssize_t n;
        int r;

        r = env_range(d->pid, &start, &end);
        if (r < 0) {
                report_addf(rep, "proc-mem-control", CHECK_FAIL, probe_now_ms() - t, false,
                            "cannot find the decoy's environment in /proc/%d/stat: %s", (int)d->pid,
                            strerror(-r));
                return;
        }
        (void)snprintf(path, sizeof(path), "/proc/%d/mem", (int)d->pid);
        n = read_file(path, (off_t)start, buf,
                      end - start < sizeof(buf) ? (size_t)(end - start) : sizeof(buf));
        if (n > 0 && memmem(buf, (size_t)n, d->canary, strlen(d->canary)))
                report_addf(rep, "proc-mem-control", CHECK_OK, probe_now_ms() - t, false,
                            "the runner reads the canary in %s at 0x%llx", path, (unsigned long long)start);
        else
                report_addf(rep, "proc-mem-control", CHECK_FAIL, probe_now_ms() - t, false,
                            "the runner does not read the canary in %s at 0x%llx (%s)", path,
                            (unsigned long long)start, n < 0 ? strerror((int)-n) : "not in what it read");
}

static void control_ptrace(Report *rep, const Decoy *d)
{
        long long t = probe_now_ms();
        unsigned scope = 0;
        int status, error;

        if (ptrace(PTRACE_SEIZE, d->pid, NULL, NULL) == 0) {
                bool stopped = ptrace(PTRACE_INTERRUPT, d->pid, NULL, NULL) == 0 &&
                               waitpid(d->pid, &status, __WALL) == d->pid;
                bool detached = stopped && ptrace(PTRACE_DETACH, d->pid, NULL, NULL) == 0;

                if (detached)
                        report_add(rep, "ptrace-runner-control", CHECK_OK, probe_now_ms() - t,
                                   "the runner attached to its decoy and let it go", false);
                else
                        report_add(rep, "ptrace-runner-control", CHECK_FAIL, probe_now_ms() - t,
                                   "the runner attached to its decoy but could not let it go", false);
                return;
        }
        error = errno;
        if (error == EPERM && ptrace_scope_read(YAMA_PTRACE_SCOPE_PATH, &scope) == 0 && scope >= 2)
                report_addf(rep, "ptrace-runner-control", CHECK_NOTE, probe_now_ms() - t, false,
                            "kernel.yama.ptrace_scope is %u: the runner may not trace its own child either",
                            scope);
        else
                report_addf(rep, "ptrace-runner-control", CHECK_FAIL, probe_now_ms() - t, false,
                            "the runner cannot attach to its own decoy: %s", strerror(error));
}

static void control_tty(Report *rep, const Decoy *d)
{
        long long t = probe_now_ms();
        int fd = open(d->tty, O_RDWR | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);

        if (fd >= 0) {
                close(fd);
                report_addf(rep, "tiocsti-control", CHECK_OK, probe_now_ms() - t, false,
                            "the runner opens %s, its decoy's controlling terminal", d->tty);
        } else
                report_addf(rep, "tiocsti-control", CHECK_FAIL, probe_now_ms() - t, false,
                            "the runner cannot open %s: %s", d->tty, strerror(errno));
}

void control_decoy(Report *rep, const Decoy *d)
{
        long long t = probe_now_ms();
        pid_t w = waitpid(d->pid, NULL, WNOHANG);

        /* First, since every other result rests on it: the decoy is the process the sandbox side aimed
         * at, still alive (our child, not reaped: its pid is not anyone else's). */
        if (w == 0 && kill(d->pid, 0) == 0)
                report_addf(rep, "signal-runner-control", CHECK_OK, probe_now_ms() - t, false,
                            "the decoy (pid %d) lived through the sandbox side and takes a signal of the "
                            "runner's",
                            (int)d->pid);
        else {
                report_addf(rep, "signal-runner-control", CHECK_FAIL, probe_now_ms() - t, false,
                            "the decoy (pid %d) is gone: the sandbox side's results about it prove nothing",
                            (int)d->pid);
                return;
        }
        control_environ(rep, d);
        control_mem(rep, d);
        control_ptrace(rep, d);
        control_tty(rep, d);
}

int sandbox_decoy_main(int argc, char **argv)
{
        (void)argv;
        if (argc != 1) {
                fputs("agentic-job sandbox decoy: takes no argument\n", stderr);
                return 2;
        }
        /* Ends with the check (the death signal is kept across the execve), or after its lifetime. */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() == 1)
                return 1;
        (void)alarm(DECOY_LIFETIME_S);
        for (;;)
                pause();
}
