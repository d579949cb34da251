/* SPDX-License-Identifier: MIT */
/* Runs a child with socket pairs as its standard streams and copies bytes between them and ours; its
 * output, where asked, through run's filter of workflow commands (run-output.h).
 * Sockets, not our own descriptors, because run0 and systemd-run hand the streams to PID 1 (which takes
 * sockets, not regular files or terminals), and the helper refuses to pass a terminal into the sandbox. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "client.h"
#include "macro.h"
#include "run-output.h"
#include "write-all.h"

/* After the child ended, output still buffered in the sockets is copied until the streams are quiet for
 * DRAIN_MS, and for DRAIN_MAX_MS at most: a process it left behind that keeps a stream open or keeps
 * writing is not waited for. */
#define DRAIN_MS     200
#define DRAIN_MAX_MS 2000

/* The child, as a pidfd: a signal forwarded after it was reaped reaches no other process (a pid could
 * have been reused by then). */
static volatile sig_atomic_t child_pidfd = -1;
static volatile sig_atomic_t cancel_signal;

static long long now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static void forward_signal(int sig)
{
        int saved = errno;

        if (!cancel_signal)
                cancel_signal = sig;
        if (child_pidfd >= 0)
                (void)syscall(SYS_pidfd_send_signal, (int)child_pidfd, sig, NULL, 0);
        errno = saved;
}

int pump_cancel_signal(void)
{
        return cancel_signal;
}

static int write_fd(const char *data, size_t n, void *userdata)
{
        return write_all(*(const int *)userdata, data, n) < 0 ? -EPIPE : 0;
}

/* One read from src written whole to dst, through filter where there is one. Returns bytes copied, 0 at
 * end of file, -errno. */
static ssize_t copy_once(int src, int dst, OutputFilter *filter)
{
        char buf[65536];
        ssize_t k;

        do
                k = read(src, buf, sizeof(buf));
        while (k < 0 && errno == EINTR);
        if (k <= 0)
                return k < 0 ? -errno : 0;
        if (filter ? output_filter_feed(filter, buf, (size_t)k, write_fd, &dst) < 0
                   : write_all(dst, buf, (size_t)k) < 0)
                return -EPIPE;
        return k;
}

int spawn_pumped(char *const *argv, char *const *env, int in_fd, bool filter, int *ret_status)
{
        static const int out_fd = STDOUT_FILENO, err_fd = STDERR_FILENO;
        OutputFilter out_filter = {}, err_filter = {};
        int sp[3][2], pidfd, status;
        struct sigaction sa = { .sa_handler = forward_signal };
        bool in_open = true, out_open = true, err_open = true, exited = false;
        char inbuf[65536];
        long long drain_end = 0;
        size_t in_len = 0, in_off = 0;
        pid_t pid;

        for (int i = 0; i < 3; i++)
                if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp[i]) < 0)
                        return -errno;
        (void)signal(SIGPIPE, SIG_IGN);
        sigemptyset(&sa.sa_mask);
        (void)sigaction(SIGINT, &sa, NULL);
        (void)sigaction(SIGTERM, &sa, NULL);
        (void)sigaction(SIGHUP, &sa, NULL);

        pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0) {
                (void)signal(SIGPIPE, SIG_DFL);
                /* No controlling terminal: sudo then runs the helper on our sockets, not on a pty of its
                 * own. */
                (void)setsid();
                for (int i = 0; i < 3; i++)
                        if (dup2(sp[i][1], i) < 0)
                                _exit(127);
                execve(argv[0], argv, env);
                dprintf(STDERR_FILENO, "agentic-job: cannot execute %s: %s\n", argv[0], strerror(errno));
                _exit(127);
        }
        for (int i = 0; i < 3; i++)
                close(sp[i][1]);
        (void)shutdown(sp[1][0], SHUT_WR);
        (void)shutdown(sp[2][0], SHUT_WR);
        pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
        child_pidfd = pidfd;
        /* A signal that came between the fork and now: forwarded late, not lost. */
        if (cancel_signal && pidfd >= 0)
                (void)syscall(SYS_pidfd_send_signal, pidfd, (int)cancel_signal, NULL, 0);
        /* Input is buffered and written only when the socket takes it, so a command that never reads its
         * input cannot block its own output. */
        (void)fcntl(sp[0][0], F_SETFL, O_NONBLOCK);

        while (out_open || err_open) {
                struct pollfd p[4] = {
                        { .fd = !in_open ? -1
                                : in_len ? sp[0][0]
                                         : in_fd,
                          .events = in_len ? POLLOUT : POLLIN },
                        { .fd = out_open ? sp[1][0] : -1, .events = POLLIN },
                        { .fd = err_open ? sp[2][0] : -1, .events = POLLIN },
                        { .fd = exited ? -1 : pidfd, .events = POLLIN },
                };
                int k = poll(p, 4, exited ? DRAIN_MS : -1);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0 || (k == 0 && exited) || (exited && now_ms() > drain_end))
                        break;
                if (p[0].revents && in_len == 0) {
                        ssize_t c;
                        do
                                c = read(in_fd, inbuf, sizeof(inbuf));
                        while (c < 0 && errno == EINTR);
                        if (c > 0) {
                                in_len = (size_t)c;
                                in_off = 0;
                        } else {
                                /* End of input (or an error reading it): the command sees end of file. */
                                in_open = false;
                                (void)shutdown(sp[0][0], SHUT_WR);
                        }
                } else if (p[0].revents) {
                        ssize_t c = write(sp[0][0], inbuf + in_off, in_len - in_off);
                        if (c > 0) {
                                in_off += (size_t)c;
                                if (in_off == in_len)
                                        in_len = 0;
                        } else if (c < 0 && errno != EAGAIN && errno != EINTR) {
                                /* The command closed its input: stop feeding it. */
                                in_open = false;
                        }
                }
                if (p[1].revents && copy_once(sp[1][0], out_fd, filter ? &out_filter : NULL) <= 0)
                        out_open = false;
                if (p[2].revents && copy_once(sp[2][0], err_fd, filter ? &err_filter : NULL) <= 0)
                        err_open = false;
                if (p[3].revents && !exited) {
                        exited = true;
                        drain_end = now_ms() + DRAIN_MAX_MS;
                }
        }
        if (filter) {
                /* A last line the command did not end is ended here: the next line in the log is not
                 * its continuation. */
                (void)output_filter_flush(&out_filter, write_fd, (void *)&out_fd);
                (void)output_filter_flush(&err_filter, write_fd, (void *)&err_fd);
        }
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return -errno;
        child_pidfd = -1;
        for (int i = 0; i < 3; i++)
                close(sp[i][0]);
        if (pidfd >= 0)
                close(pidfd);
        *ret_status = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
        return 0;
}
