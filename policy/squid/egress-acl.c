/* SPDX-License-Identifier: MIT */
/* agentic-job-egress-acl: squid's external ACL helper, the seam between squid and the egress policy.
 * squid starts it as the proxy user and writes one line per request (squid.conf.in names the fields);
 * for each, it asks egress_decide() once, appends one line to the egress log, then answers OK or ERR.
 * The policy and the threat list are read once, at start. Anything it cannot read or parse is refused;
 * if it cannot start, squid has no helper, and squid refuses what it cannot ask about.
 *
 * usage: agentic-job-egress-acl [--policy FILE] [--threats FILE] [--log FILE] [--log-max BYTES] */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "acl-line.h"
#include "acl-log.h"
#include "config.h"
#include "egress-policy.h"
#include "macro.h"
#include "parse.h"
#include "write-all.h"

#define ACCESS_LOG "/var/log/egress-proxy/access.jsonl"

/* squid puts a helper's standard error into its cache.log. */
_printf_(1, 2) static int fail(const char *fmt, ...)
{
        va_list ap;

        fputs("agentic-job-egress-acl: ", stderr);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
        return 1;
}

int main(int argc, char **argv)
{
        static char line[ACL_LINE_MAX + 1];
        _cleanup_(egress_policy_freep) EgressPolicy *policy = NULL;
        _cleanup_(egress_threats_freep) EgressThreats *threats = NULL;
        _cleanup_close_ int log_fd = -EBADF;
        const char *policy_path = EGRESS_POLICY_PATH, *threats_path = EGRESS_THREATS_PATH,
                   *log_path = ACCESS_LOG, *log_max_text = NULL, *reads = "any";
        uint64_t log_max = EGRESS_LOG_MAX_BYTES_DEFAULT;
        bool said_full = false;
        AjError e = { 0 };
        struct stat st;
        int r;

        for (int i = 1; i < argc; i += 2) {
                const char **slot = strcmp(argv[i], "--policy") == 0    ? &policy_path
                                    : strcmp(argv[i], "--threats") == 0 ? &threats_path
                                    : strcmp(argv[i], "--log") == 0     ? &log_path
                                    : strcmp(argv[i], "--log-max") == 0 ? &log_max_text
                                    : strcmp(argv[i], "--reads") == 0   ? &reads
                                                                        : NULL;
                if (!slot || i + 1 >= argc)
                        return fail(
                                "usage: agentic-job-egress-acl [--policy FILE] [--threats FILE] "
                                "[--log FILE] [--log-max BYTES] [--reads any|listed]; not understood: %s",
                                argv[i]);
                *slot = argv[i + 1];
        }
        if (log_max_text &&
            parse_decimal(log_max_text, strlen(log_max_text), EGRESS_LOG_MAX_BYTES_MAX, &log_max) < 0)
                return fail("--log-max: '%.64s' is not a number of bytes (0 to %llu)", log_max_text,
                            (unsigned long long)EGRESS_LOG_MAX_BYTES_MAX);

        if (strcmp(reads, "any") != 0 && strcmp(reads, "listed") != 0)
                return fail("--reads: '%.64s' is not \"any\" or \"listed\"", reads);
        if (egress_policy_load(policy_path, &policy, &e) < 0)
                return fail("%s", e.message);
        policy->reads_listed = strcmp(reads, "listed") == 0;
        r = egress_threats_load(threats_path, &threats, &e);
        if (r == -ENOENT)
                fprintf(stderr, "agentic-job-egress-acl: no threat list at %s; deciding without one\n",
                        threats_path);
        else if (r < 0)
                return fail("%s", e.message);

        /* The proxy user's own file, which the helper's proxy-log insists on: never through a link. */
        log_fd = open(log_path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0640);
        if (log_fd < 0)
                return fail("%s: %s", log_path, strerror(errno));
        if (fstat(log_fd, &st) < 0 || !S_ISREG(st.st_mode))
                return fail("%s: not a regular file", log_path);

        for (;;) {
                AclOutcome o;
                const char *answer;
                size_t n = 0;
                bool truncated = false;
                int c;

                while ((c = getc_unlocked(stdin)) != EOF && c != '\n') {
                        if (n < ACL_LINE_MAX)
                                line[n++] = (char)c;
                        else
                                truncated = true;
                }
                if (c == EOF && n == 0 && !truncated)
                        return ferror(stdin) ? fail("cannot read from squid: %s", strerror(errno)) : 0;
                line[n] = '\0';

                if (acl_handle_line(policy, threats, line, n, truncated, &o) < 0)
                        return fail("out of memory");
                /* The log comes first: a request that cannot be logged is refused, a full log's too. */
                r = acl_log_append(log_fd, o.log, strlen(o.log), log_max);
                if (r == -EFBIG && !said_full) {
                        fprintf(stderr,
                                "agentic-job-egress-acl: %s has reached [egress] log-max-bytes (%llu "
                                "bytes): "
                                "every request that would be logged is refused\n",
                                log_path, (unsigned long long)log_max);
                        said_full = true;
                }
                answer = r < 0 ? o.unlogged : o.answer;
                r = write_all(STDOUT_FILENO, answer, strlen(answer));
                acl_outcome_done(&o);
                if (r < 0)
                        return fail("cannot answer squid: %s", strerror(-r));
        }
}
