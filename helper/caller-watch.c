/* SPDX-License-Identifier: MIT */
/* The caller of enter, watched. sudo waits for the helper whatever becomes of its own parent, and a caller
 * ended by SIGKILL (the runner's last word on a cancelled step, after SIGINT and SIGTERM went to the step's
 * shell alone) sends nothing anyone could forward: without this the entered command, and all it started,
 * would run on with nobody to end it. So the helper holds a pidfd of the process that started sudo, which
 * turns readable when that process exits, however it ended. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "helper.h"
#include "macro.h"
#include "proc.h"
#include "trusted-path.h"

/* sudo itself, and where it runs the command on a pty of its own (use_pty) its monitor too; a caller that
 * ran sudo through sudo (sudo -u RUNNER sudo ...) has more. */
#define SUDO_LEVELS_MAX 8

static pid_t parent_of(pid_t pid)
{
        ProcStatus st;

        if (pid == getpid())
                return getppid();
        return proc_status_read(pid, &st) < 0 ? -1 : st.ppid;
}

static bool runs_program(pid_t pid, const struct stat *program)
{
        char path[64];
        struct stat st;

        (void)snprintf(path, sizeof(path), "/proc/%ld/exe", (long)pid);
        return stat(path, &st) == 0 && st.st_dev == program->st_dev && st.st_ino == program->st_ino;
}

int caller_watch_open(pid_t *ret_pid)
{
        _cleanup_free_ char *sudo = NULL;
        struct stat sudo_st;
        AjError e = { 0 };
        pid_t child = getpid();

        if (trusted_program_find(ROOT_PATH, "sudo", &sudo, &e) < 0)
                die(EXIT_UNSAFE, "%s", e.message);
        if (stat(sudo, &sudo_st) < 0)
                die(EXIT_UNSAFE, "%s: %s", sudo, strerror(errno));

        for (int level = 0; level <= SUDO_LEVELS_MAX; level++) {
                pid_t pid = parent_of(child);
                int fd;

                /* Reparented to init (or to no parent this pid namespace shows): whoever called is gone. */
                if (pid <= 1)
                        die(EXIT_CALLER, "the caller is gone: pid %ld has no parent left", (long)child);
                fd = (int)syscall(SYS_pidfd_open, pid, 0);
                if (fd < 0)
                        die(EXIT_CALLER, "the caller is gone: pid %ld: %s", (long)pid, strerror(errno));
                /* Held now, the pid names this process until the fd closes. It is the one looked at only if
                 * the child still has it as its parent (it was not reparented and the pid reused between
                 * the two reads), and if it is still alive after its program was looked at. */
                if (parent_of(child) != pid)
                        die(EXIT_CALLER, "the caller is gone: the parent of pid %ld changed", (long)child);
                bool is_sudo = runs_program(pid, &sudo_st);
                if (syscall(SYS_pidfd_send_signal, fd, 0, NULL, 0) < 0)
                        die(EXIT_CALLER, "the caller is gone: pid %ld ended", (long)pid);
                if (!is_sudo) {
                        *ret_pid = pid;
                        return fd;
                }
                close(fd);
                child = pid;
        }
        die(EXIT_CALLER, "more than %d sudo processes between the caller and the helper", SUDO_LEVELS_MAX);
}
