/* SPDX-License-Identifier: MIT */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "macro.h"
#include "spawn.h"

int read_pipe_bounded(int fd, size_t max, char **ret, size_t *ret_size)
{
        _cleanup_free_ char *buf = malloc(max + 1);
        char sink[4096];
        size_t n = 0;

        if (!buf)
                return -ENOMEM;
        for (;;) {
                ssize_t k = n < max ? read(fd, buf + n, max - n) : read(fd, sink, sizeof(sink));

                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return -errno;
                if (k == 0)
                        break;
                if (n < max)
                        n += (size_t)k;
        }
        buf[n] = '\0';
        *ret = TAKE_PTR(buf);
        if (ret_size)
                *ret_size = n;
        return 0;
}

int wait_exit_status(pid_t pid)
{
        int status;

        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return -errno;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int spawn_wait(char *const *argv, char *const *env, SpawnFlags flags, size_t max, char **ret_out,
               size_t *ret_size)
{
        static char *const empty_env[] = { NULL };
        _cleanup_close_ int rd = -EBADF, wr = -EBADF;
        _cleanup_free_ char *out = NULL;
        int r, status;
        pid_t pid;

        assert(argv && argv[0]);
        if (argv[0][0] != '/')
                return -EINVAL;
        if (ret_out) {
                int p[2];

                if (pipe2(p, O_CLOEXEC) < 0)
                        return -errno;
                rd = p[0];
                wr = p[1];
        }
        pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0) {
                /* Only async-signal-safe calls from here on. */
                int null = open("/dev/null", O_RDWR | O_CLOEXEC);
                int out_fd = wr >= 0 ? wr : null;
                int err_fd = wr >= 0 && (flags & SPAWN_MERGE_STDERR) ? wr : null;

                if (null < 0 || dup2(null, STDIN_FILENO) < 0 || dup2(out_fd, STDOUT_FILENO) < 0 ||
                    dup2(err_fd, STDERR_FILENO) < 0)
                        _exit(127);
                (void)close_range(3, ~0U, 0);
                (void)execve(argv[0], argv, env ? env : empty_env);
                _exit(127);
        }
        if (!ret_out)
                return wait_exit_status(pid);

        closep(&wr);
        wr = -EBADF;
        r = read_pipe_bounded(rd, max, &out, ret_size);
        status = wait_exit_status(pid);
        if (r < 0)
                return r;
        *ret_out = TAKE_PTR(out);
        return status;
}

void spawn_first_line(const char *out, size_t n, char *buf, size_t size)
{
        size_t i = 0;

        assert(size > 0);
        while (i < n && i + 1 < size && out[i] != '\n') {
                unsigned char c = (unsigned char)out[i];

                if (c < 0x20 || c == 0x7f)
                        buf[i] = '?';
                else
                        buf[i] = out[i];
                i++;
        }
        buf[i] = '\0';
}
