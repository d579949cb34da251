/* SPDX-License-Identifier: MIT */
#include "pid-namespace.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "macro.h"
#include "spawn.h"

#define STATUS_NO_NAMESPACE 126

static int write_file(const char *path, const char *text)
{
        _cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);
        size_t n = strlen(text);
        ssize_t w;

        if (fd < 0)
                return -errno;
        w = write(fd, text, n);
        if (w < 0)
                return -errno;
        return (size_t)w == n ? 0 : -EIO;
}

static _noreturn_ void no_namespace(const char *what, int err)
{
        fprintf(stderr, "agentic-job run-inside: cannot make the clone's namespaces: %s: %s\n", what,
                strerror(err));
        _exit(STATUS_NO_NAMESPACE);
}

/* The child: the user namespace and the PID namespace in it, then fn in its first process. The map is
 * written from inside, as an unprivileged process may: its own uid and gid only, setgroups denied. */
static _noreturn_ void namespace_child(int (*fn)(void *), void *userdata, uid_t uid, gid_t gid)
{
        char map[64];
        int status, r;
        pid_t pid;

        if (unshare(CLONE_NEWUSER | CLONE_NEWPID) < 0)
                no_namespace("unshare", errno);
        (void)snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)uid, (unsigned)uid);
        r = write_file("/proc/self/uid_map", map);
        if (r < 0)
                no_namespace("/proc/self/uid_map", -r);
        r = write_file("/proc/self/setgroups", "deny");
        if (r < 0)
                no_namespace("/proc/self/setgroups", -r);
        (void)snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)gid, (unsigned)gid);
        r = write_file("/proc/self/gid_map", map);
        if (r < 0)
                no_namespace("/proc/self/gid_map", -r);
        pid = fork();
        if (pid < 0)
                no_namespace("fork", errno);
        if (pid == 0) {
                int null = open("/dev/null", O_RDONLY | O_CLOEXEC);

                if (null < 0 || dup2(null, STDIN_FILENO) < 0)
                        no_namespace("/dev/null", errno);
                status = fn(userdata);
                (void)fflush(NULL);
                _exit(status < 0 || status > 125 ? 125 : status);
        }
        /* When the first process ends, the kernel kills the rest of the namespace and reaps it before
         * this wait returns. */
        status = wait_exit_status(pid);
        _exit(status < 0 ? STATUS_NO_NAMESPACE : status);
}

int run_in_pid_namespace(int (*fn)(void *userdata), void *userdata, int *ret_status)
{
        uid_t uid = geteuid();
        gid_t gid = getegid();
        pid_t pid;
        int status;

        /* Nothing buffered may be written twice. */
        (void)fflush(NULL);
        pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0)
                namespace_child(fn, userdata, uid, gid);
        status = wait_exit_status(pid);
        if (status < 0)
                return status;
        *ret_status = status;
        return 0;
}
