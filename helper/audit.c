/* SPDX-License-Identifier: MIT */
/* The audit trail: who called, which operation, what came of it. The command line of enter is not
 * recorded: it is the caller's and may hold what does not belong in logs. What of the caller's text a
 * record does hold (a refused --chdir or --from) is escaped, so it can never start a record of its own. */
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

void audit_escape(const char *text, char *out, size_t size)
{
        size_t n = 0;

        for (const unsigned char *p = (const unsigned char *)text; *p && n + 5 < size; p++) {
                if (*p < 0x20 || *p == 0x7f || *p == '\\')
                        n += (size_t)snprintf(out + n, size - n, "\\x%02x", *p);
                else
                        out[n++] = (char)*p;
        }
        out[n] = '\0';
}

void audit(int priority, const char *fmt, ...)
{
        char raw[768], msg[sizeof(raw) * 4];
        va_list ap;

        va_start(ap, fmt);
        (void)vsnprintf(raw, sizeof(raw), fmt, ap);
        va_end(ap);
        audit_escape(raw, msg, sizeof(msg));

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
