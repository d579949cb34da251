/* SPDX-License-Identifier: MIT */
/* The runner side's calls of the root helper, through sudo, for the check and run: kill-user, proxy-log,
 * and enter of this binary's own sandbox side with its standard streams on sockets the caller pumps and a
 * pidfd to wait on; and the runner's own count of what the sandbox user still runs. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "subid.h"

typedef struct Entered {
        pid_t pid;  /* sudo, whose child the helper is */
        int pidfd;  /* of pid: readable once it has exited */
        int in_fd;  /* its standard input (-EBADF once closed) */
        int out_fd; /* its standard output */
        int err_fd; /* its standard error */
} Entered;

/* sudo -n -- HELPER helper enter --chdir DIR -- SELF ARGS... (args NULL-terminated), SELF this binary. */
int helper_enter_self(const char *dir, char *const *args, Entered *ret);
void entered_done(Entered *e);
/* Reads what the entered command writes, up to out_size - 1 and err_size - 1 bytes of each (NUL-terminated;
 * the rest dropped), until both streams end and sudo has exited, at most timeout_ms; then closes e and
 * reaps sudo. sudo's exit status (the helper's, or 128+N), or -errno (-ETIMEDOUT: sudo was killed). */
int entered_collect(Entered *e, long long timeout_ms, char *out, size_t out_size, char *err,
                    size_t err_size);

/* helper kill-user; the first line of what it said in line. The helper's exit status, or -errno. */
int helper_kill_user(char *line, size_t size);

/* The egress proxy's log from offset, to fd (-EBADF: counted and dropped) at most max bytes, its calls
 * repeated while the helper says more follows; the bytes that came in *ret_bytes. 0, -ENOENT (no log),
 * -ESTALE (truncated since offset), -EFBIG (over max: what fit was written), other -errno. */
int helper_proxy_log(uint64_t offset, int fd, uint64_t max, uint64_t *ret_bytes);

/* Where the egress proxy's log ends now (proxy-log --from end: its size, nothing of it read), the offset a
 * later helper_proxy_log() starts at. 0, -ENOENT (no log), -EBADMSG (not the helper's answer), other
 * -errno. */
int helper_proxy_log_end(uint64_t *ret_end);

/* How many live processes (any thread running) of uid or of its subordinate ranges /proc shows: the
 * runner's own view, not the helper's word. */
int count_sandbox_processes(uid_t uid, const UidRange *ranges, size_t n_ranges, unsigned *ret_count);
