/* SPDX-License-Identifier: MIT */
/* Scanning /proc for processes: who they run as and whether they are still alive. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

typedef struct ProcStatus {
        char state; /* the State: letter; 'Z' and 'X' are dead and waiting for their parent ('t': traced) */
        uid_t uid[4];     /* real, effective, saved, filesystem */
        pid_t ppid;       /* the PPid: line, -1 where it is missing */
        unsigned threads; /* the Threads: count, 0 where the line is missing */
        /* Set by proc_for_each() when the leader is 'Z' or 'X' but another of its threads still runs: a
         * main thread that called pthread_exit() shows as a zombie while its process goes on. */
        bool other_task_alive;
} ProcStatus;

/* Parses the text of /proc/PID/status. -EINVAL if the State: or Uid: line is missing or malformed. */
int proc_status_parse(const char *text, ProcStatus *ret);

static inline bool proc_state_dead(char state)
{
        return state == 'Z' || state == 'X';
}

/* Dead: the leader has exited and so has every other thread of the process. */
static inline bool proc_status_dead(const ProcStatus *s)
{
        return proc_state_dead(s->state) && !s->other_task_alive;
}

/* Reads and parses /proc/PID/status: 0; -ESRCH when the process is gone; another -errno (-EBADMSG for a
 * text that does not parse) otherwise. */
int proc_status_read(pid_t pid, ProcStatus *ret);

typedef int (*ProcFn)(pid_t pid, const ProcStatus *status, void *userdata);

/* Calls fn for every process in /proc. A process that is gone (its directory or status file missing, or
 * reading empty) is skipped; any other failure to open, read or parse a status file ends the scan with
 * that error, so a caller never counts as gone what it could not look at. A negative return from fn
 * stops the scan and is returned. */
int proc_for_each(ProcFn fn, void *userdata);
/* The same over a directory laid out like /proc (for the tests). */
int proc_for_each_at(int proc_fd, ProcFn fn, void *userdata);
