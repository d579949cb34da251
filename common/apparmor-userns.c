/* SPDX-License-Identifier: MIT */
#include "apparmor-userns.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include "macro.h"

int apparmor_userns_restricted(const char *path)
{
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        char buf[8];
        ssize_t n;

        if (fd < 0)
                return errno == ENOENT ? 0 : -errno;
        n = read(fd, buf, sizeof(buf));
        if (n < 0)
                return -errno;
        if (n == 2 && buf[1] == '\n' && (buf[0] == '0' || buf[0] == '1'))
                return buf[0] == '1';
        return -EINVAL;
}

int userns_capability_try(int *ret_errno)
{
        char map[64];
        int status, len = snprintf(map, sizeof(map), "0 %u 1", (unsigned)getuid());
        int p[2];
        pid_t pid;

        if (pipe2(p, O_CLOEXEC) < 0)
                return -errno;
        pid = fork();
        if (pid < 0) {
                int r = -errno;

                (void)close(p[0]);
                (void)close(p[1]);
                return r;
        }
        if (pid == 0) {
                /* Only system calls here, as a threaded parent requires; the failing step's errno through
                 * the pipe, the step in the exit status. */
                int step = USERNS_STEP_UNSHARE;

                if (unshare(CLONE_NEWUSER) == 0) {
                        int fd = open("/proc/self/setgroups", O_WRONLY | O_CLOEXEC);

                        if (fd >= 0)
                                (void)!write(fd, "deny", 4), (void)close(fd);
                        step = USERNS_STEP_UID_MAP;
                        fd = open("/proc/self/uid_map", O_WRONLY | O_CLOEXEC);
                        if (fd >= 0 && write(fd, map, (size_t)len) == len) {
                                step = USERNS_STEP_MOUNT_NS;
                                if (unshare(CLONE_NEWNS) == 0) {
                                        step = USERNS_STEP_MOUNT;
                                        if (mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) == 0 &&
                                            mount("none", "/tmp", "tmpfs", 0, "size=4k") == 0)
                                                _exit(0);
                                }
                        }
                }
                int e = errno;

                (void)!write(p[1], &e, sizeof(e));
                _exit(step);
        }
        (void)close(p[1]);
        if (read(p[0], ret_errno, sizeof(*ret_errno)) != sizeof(*ret_errno))
                *ret_errno = 0;
        (void)close(p[0]);
        if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
                return -ECHILD;
        return WEXITSTATUS(status);
}
