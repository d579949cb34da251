/* SPDX-License-Identifier: MIT */
/* The audit trail: who called, which operation, what came of it. The command line of enter is not
 * recorded: it is the caller's and may hold what does not belong in logs. */
#include <stdarg.h>
#include <stdio.h>
#include <syslog.h>
#include <unistd.h>

#include "helper.h"
#include "libsystemd.h"

static const char *audit_op = "-";
static long audit_caller = -1;

void audit_context(const char *op, uid_t caller)
{
        if (op)
                audit_op = op;
        audit_caller = caller == (uid_t)-1 ? -1L : (long)caller;
}

void audit(int priority, const char *fmt, ...)
{
        char msg[768];
        va_list ap;

        va_start(ap, fmt);
        (void)vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);

        const Libsystemd *sd = access("/run/systemd/journal/socket", F_OK) == 0 ? libsystemd() : NULL;
        if (sd && sd->journal_send("MESSAGE=caller uid %ld: op %s: %s", audit_caller, audit_op, msg,
                                   "PRIORITY=%i", priority, "SYSLOG_IDENTIFIER=agentic-job-helper",
                                   "SYSLOG_FACILITY=%i", LOG_AUTHPRIV >> 3, "AGENTIC_JOB_OP=%s", audit_op,
                                   "AGENTIC_JOB_CALLER_UID=%ld", audit_caller, NULL) >= 0)
                return;
        openlog("agentic-job-helper", LOG_PID | LOG_NDELAY, LOG_AUTHPRIV);
        syslog(priority, "caller uid %ld: op %s: %s", audit_caller, audit_op, msg);
        closelog();
}
