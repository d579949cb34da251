/* SPDX-License-Identifier: MIT */
/* For tests that hand generated text to the tool that will read it (nft -c, visudo -c): the text in a
 * temporary file, the tool run on it, its exit status. These tools need root; not root, the caller notes
 * that the check was skipped. */
#pragma once

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* The first of paths that is an executable file, or NULL. */
static inline const char *tool_find(const char *const *paths)
{
        for (; *paths; paths++)
                if (access(*paths, X_OK) == 0)
                        return *paths;
        return NULL;
}

/* Whether the check may run: as root it must (a missing tool fails the test), otherwise it is skipped
 * with a note on standard error. */
static inline bool tool_check_runs(const char *what, const char *tool)
{
        if (geteuid() != 0) {
                fprintf(stderr, "note: %s skipped: not root\n", what);
                return false;
        }
        ck_assert_msg(tool, "%s: the tool is not installed (as root this check must run)", what);
        return true;
}

/* Writes text to a temporary file, runs tool ARGS... FILE (argv[] ends with NULL; the file is appended),
 * returns its exit status (-1 if it did not exit). Its output goes to standard error, where a failing
 * test's log shows it. */
static inline int tool_run_on_text(const char *tool, const char *const *args, const char *text)
{
        char path[] = "/tmp/agentic-job-test-XXXXXX";
        const char *argv[16];
        size_t n = 0, len = strlen(text);
        int fd, status = 0;
        pid_t pid;

        fd = mkstemp(path);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, text, len), (ssize_t)len);
        ck_assert_int_eq(close(fd), 0);

        argv[n++] = tool;
        for (; *args; args++) {
                ck_assert_uint_lt(n, 14);
                argv[n++] = *args;
        }
        argv[n++] = path;
        argv[n] = NULL;

        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                (void)dup2(STDERR_FILENO, STDOUT_FILENO);
                execv(tool, (char *const *)argv);
                _exit(127);
        }
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        (void)unlink(path);
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}
