/* SPDX-License-Identifier: MIT */
/* Running a program as root's client does: found beforehand on a trusted path (argv[0] absolute), an
 * environment given in full (empty unless the caller says otherwise), standard input from /dev/null, its
 * output captured with a bound or thrown away. */
#pragma once

#include <stddef.h>
#include <sys/types.h>

typedef enum SpawnFlags {
        SPAWN_STDOUT = 0,      /* capture standard output only; standard error goes to /dev/null */
        SPAWN_MERGE_STDERR = 1 /* capture standard output and standard error together */
} SpawnFlags;

/* Runs argv with environment env (NULL: an empty one) and waits for it. When ret_out is not NULL, what the
 * program writes (see flags) is captured: the first max bytes are kept, NUL-terminated, in *ret_out (its
 * length in *ret_size, which may be NULL), the rest read and dropped so the program never blocks; when
 * ret_out is NULL both streams go to /dev/null. Returns the exit status (0-255; 128+N for signal N; 127 when
 * the program could not be executed), or -errno when it could not be started (-EINVAL: argv[0] not
 * absolute). */
int spawn_wait(char *const *argv, char *const *env, SpawnFlags flags, size_t max, char **ret_out,
               size_t *ret_size);

/* Waits for the child pid: its exit status (128+N for signal N), or -errno. */
int wait_exit_status(pid_t pid);

/* Reads fd (a pipe) to its end, keeping the first max bytes, NUL-terminated, in *ret (its length in
 * *ret_size, which may be NULL); the rest is read and dropped, so the writer never blocks. -errno. */
int read_pipe_bounded(int fd, size_t max, char **ret, size_t *ret_size);

/* The first line of out (n bytes), at most size - 1 characters, control characters shown as '?': what a
 * one-line error may quote of a program's output. */
void spawn_first_line(const char *out, size_t n, char *buf, size_t size);
