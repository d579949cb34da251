/* SPDX-License-Identifier: MIT */
#include "helper-call.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "build-config.h"
#include "macro.h"
#include "parse.h"
#include "proc.h"
#include "spawn.h"
#include "write-all.h"

#define SUDO_PATH      "/usr/bin/sudo"
#define EXIT_LOG_MORE  5 /* agentic-job-helper(8): proxy-log, more follows */
#define EXIT_LOG_SHORT 3 /* the log is shorter than the offset */
#define EXIT_LOG_NONE  4 /* there is no log */

static char *const sudo_env[] = { (char *)"PATH=/usr/bin:/bin", NULL };

int helper_kill_user(char *line, size_t size)
{
        char *argv[] = { (char *)SUDO_PATH, (char *)"-n",        (char *)"--", (char *)HELPER_PATH,
                         (char *)"helper",  (char *)"kill-user", NULL };
        _cleanup_free_ char *out = NULL;
        size_t n = 0;
        int r = spawn_wait(argv, sudo_env, SPAWN_MERGE_STDERR, 1024, &out, &n);

        spawn_first_line(out ? out : "", n, line, size);
        return r;
}

int helper_enter_self(const char *dir, char *const *args, Entered *ret)
{
        _cleanup_free_ char **argv = NULL;
        char exe[4096];
        int in[2] = { -1, -1 }, out[2] = { -1, -1 }, err[2] = { -1, -1 };
        size_t k = 0, n = 0;
        ssize_t len;
        pid_t pid;
        int pidfd;

        len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
        if (len <= 0)
                return -errno;
        exe[len] = '\0';
        while (args[n])
                n++;
        argv = calloc(n + 11, sizeof(char *));
        if (!argv)
                return -ENOMEM;
        argv[k++] = (char *)SUDO_PATH;
        argv[k++] = (char *)"-n";
        argv[k++] = (char *)"--";
        argv[k++] = (char *)HELPER_PATH;
        argv[k++] = (char *)"helper";
        argv[k++] = (char *)"enter";
        argv[k++] = (char *)"--chdir";
        argv[k++] = (char *)dir;
        argv[k++] = (char *)"--";
        argv[k++] = exe;
        for (size_t i = 0; i < n; i++)
                argv[k++] = args[i];

        /* Sockets, not pipes: run0 and systemd-run hand the streams to the service manager. */
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in) < 0)
                return -errno;
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, out) < 0 ||
            socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, err) < 0) {
                int r = -errno;
                close(in[0]);
                close(in[1]);
                if (out[0] >= 0) {
                        close(out[0]);
                        close(out[1]);
                }
                return r;
        }
        pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0) {
                sigset_t none;

                sigemptyset(&none);
                (void)sigprocmask(SIG_SETMASK, &none, NULL);
                (void)signal(SIGPIPE, SIG_DFL);
                if (dup2(in[1], 0) < 0 || dup2(out[1], 1) < 0 || dup2(err[1], 2) < 0)
                        _exit(127);
                execve(argv[0], argv, sudo_env);
                _exit(127);
        }
        close(in[1]);
        close(out[1]);
        close(err[1]);
        pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
        if (pidfd < 0) {
                int r = -errno;
                (void)kill(pid, SIGKILL);
                (void)wait_exit_status(pid);
                close(in[0]);
                close(out[0]);
                close(err[0]);
                return r;
        }
        *ret = (Entered){ .pid = pid, .pidfd = pidfd, .in_fd = in[0], .out_fd = out[0], .err_fd = err[0] };
        return 0;
}

void entered_done(Entered *e)
{
        closep(&e->pidfd);
        closep(&e->in_fd);
        closep(&e->out_fd);
        closep(&e->err_fd);
        e->pidfd = e->in_fd = e->out_fd = e->err_fd = -EBADF;
}

static long long now_ms(void)
{
        struct timespec t;

        (void)clock_gettime(CLOCK_MONOTONIC, &t);
        return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Appends what fd has to buf (size bytes, kept NUL-terminated; the rest read and dropped). 1 at its end. */
static int collect_once(int fd, char *buf, size_t size, size_t *len)
{
        char chunk[4096];
        ssize_t n = read(fd, chunk, sizeof(chunk));

        if (n < 0)
                return errno == EINTR || errno == EAGAIN ? 0 : -errno;
        if (n == 0)
                return 1;
        for (ssize_t i = 0; i < n && *len + 1 < size; i++)
                buf[(*len)++] = chunk[i];
        buf[*len] = '\0';
        return 0;
}

int entered_collect(Entered *e, long long timeout_ms, char *out, size_t out_size, char *err, size_t err_size)
{
        long long deadline = now_ms() + timeout_ms;
        size_t n_out = 0, n_err = 0;
        bool out_open = true, err_open = true;
        int r = 0;

        assert(out_size > 0 && err_size > 0);
        out[0] = err[0] = '\0';
        closep(&e->in_fd);
        e->in_fd = -EBADF;
        while (r == 0 && (out_open || err_open)) {
                struct pollfd p[2] = { { .fd = out_open ? e->out_fd : -1, .events = POLLIN },
                                       { .fd = err_open ? e->err_fd : -1, .events = POLLIN } };
                long long left = deadline - now_ms();
                int k = left <= 0 ? 0 : poll(p, 2, (int)(left > 1000 ? 1000 : left));

                if (k < 0 && errno != EINTR)
                        r = -errno;
                else if (left <= 0)
                        r = -ETIMEDOUT;
                else if (k > 0) {
                        int a = p[0].revents ? collect_once(e->out_fd, out, out_size, &n_out) : 0;
                        int b = p[1].revents ? collect_once(e->err_fd, err, err_size, &n_err) : 0;

                        out_open = out_open && a == 0;
                        err_open = err_open && b == 0;
                        r = a < 0 ? a : b < 0 ? b : 0;
                }
        }
        while (r == 0) {
                struct pollfd p = { .fd = e->pidfd, .events = POLLIN };
                long long left = deadline - now_ms();
                int k = left <= 0 ? 0 : poll(&p, 1, (int)(left > 1000 ? 1000 : left));

                if (k > 0)
                        break;
                if (k < 0 && errno != EINTR)
                        r = -errno;
                else if (left <= 0)
                        r = -ETIMEDOUT;
        }
        /* Out of time: sudo, still this process's unreaped child, ends; the entered side, which watches its
         * standard output, ends as its peer closes. */
        if (r < 0)
                (void)kill(e->pid, SIGKILL);
        entered_done(e);
        int status = wait_exit_status(e->pid);
        return r < 0 ? r : status;
}

/* One call of proxy-log --from FROM: its bytes to fd (or dropped), counted. The helper's status. */
static int proxy_log_once(const char *from, int fd, uint64_t max, uint64_t *count)
{
        int p[2];
        pid_t pid;
        char buf[65536];
        int r = 0;

        if (pipe2(p, O_CLOEXEC) < 0)
                return -errno;
        pid = fork();
        if (pid < 0) {
                r = -errno;
                close(p[0]);
                close(p[1]);
                return r;
        }
        if (pid == 0) {
                char *argv[] = { (char *)SUDO_PATH,   (char *)"-n",     (char *)"--",
                                 (char *)HELPER_PATH, (char *)"helper", (char *)"proxy-log",
                                 (char *)"--from",    (char *)from,     NULL };
                int null = open("/dev/null", O_RDWR | O_CLOEXEC);

                if (null < 0 || dup2(null, 0) < 0 || dup2(p[1], 1) < 0 || dup2(null, 2) < 0)
                        _exit(127);
                execve(argv[0], argv, sudo_env);
                _exit(127);
        }
        close(p[1]);
        for (;;) {
                ssize_t k = read(p[0], buf, sizeof(buf));
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        break;
                /* Past max, read on and drop, so the helper never blocks. */
                if (fd >= 0 && *count < max && r == 0) {
                        size_t take = (uint64_t)k < max - *count ? (size_t)k : (size_t)(max - *count);
                        if (write_all(fd, buf, take) < 0)
                                r = -EIO;
                }
                *count += (uint64_t)k;
        }
        close(p[0]);
        {
                int status = wait_exit_status(pid);
                return r < 0 ? r : status;
        }
}

int helper_proxy_log_end(uint64_t *ret_end)
{
        _cleanup_close_ int fd = memfd_create("proxy-log-end", MFD_CLOEXEC);
        uint64_t count = 0;
        char text[32];
        ssize_t k;
        int status;

        if (fd < 0)
                return -errno;
        status = proxy_log_once("end", fd, sizeof(text) - 1, &count);
        if (status < 0)
                return status;
        if (status == EXIT_LOG_NONE)
                return -ENOENT;
        if (status != 0)
                return -EIO;
        k = pread(fd, text, sizeof(text) - 1, 0);
        if (k < 0)
                return -errno;
        /* One decimal line, whole: anything else is not the helper's answer. */
        if ((uint64_t)k != count || k < 2 || text[k - 1] != '\n')
                return -EBADMSG;
        return parse_decimal(text, (size_t)k - 1, INT64_MAX, ret_end) < 0 ? -EBADMSG : 0;
}

int helper_proxy_log(uint64_t offset, int fd, uint64_t max, uint64_t *ret_bytes)
{
        uint64_t count = 0;

        for (int calls = 0; calls < 1024; calls++) {
                uint64_t before = count;
                char from[32];
                int status;

                (void)snprintf(from, sizeof(from), "%llu", (unsigned long long)(offset + count));
                status = proxy_log_once(from, fd, max, &count);

                if (status < 0)
                        return status;
                if (status == EXIT_LOG_NONE)
                        return -ENOENT;
                if (status == EXIT_LOG_SHORT)
                        return -ESTALE;
                if (status == EXIT_LOG_MORE && count > before)
                        continue;
                if (status != 0)
                        return -EIO;
                *ret_bytes = count;
                return fd >= 0 && count > max ? -EFBIG : 0;
        }
        return -E2BIG;
}

typedef struct Census {
        uid_t uid;
        const UidRange *ranges;
        size_t n_ranges;
        unsigned count;
} Census;

static int count_one(pid_t pid, const ProcStatus *s, void *userdata)
{
        Census *c = userdata;

        (void)pid;
        if (proc_status_dead(s))
                return 0;
        for (int i = 0; i < 4; i++)
                if (s->uid[i] == c->uid || uid_in_ranges(s->uid[i], c->ranges, c->n_ranges)) {
                        c->count++;
                        break;
                }
        return 0;
}

int count_sandbox_processes(uid_t uid, const UidRange *ranges, size_t n_ranges, unsigned *ret_count)
{
        Census c = { .uid = uid, .ranges = ranges, .n_ranges = n_ranges };
        int r = proc_for_each(count_one, &c);

        if (r < 0)
                return r;
        *ret_count = c.count;
        return 0;
}
