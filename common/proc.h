/* SPDX-License-Identifier: MIT */
/* Scanning /proc for processes: who they run as and whether they are still alive. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

typedef struct ProcStatus {
        char state; /* the State: letter; 'Z' and 'X' are dead and waiting for their parent ('t': traced) */
        uid_t uid[4]; /* real, effective, saved, filesystem */
} ProcStatus;

/* Parses the text of /proc/PID/status. -EINVAL if the State: or Uid: line is missing or malformed. */
int proc_status_parse(const char *text, ProcStatus *ret);

static inline bool proc_status_dead(const ProcStatus *s)
{
        return s->state == 'Z' || s->state == 'X';
}

/* Calls fn for every process in /proc (a process that exits during the scan is skipped). A negative
 * return from fn stops the scan and is returned. */
int proc_for_each(int (*fn)(pid_t pid, const ProcStatus *status, void *userdata), void *userdata);
