/* SPDX-License-Identifier: MIT */
/* agentic-job helper: the root side. Linear: make the process safe, parse the command line, check who
 * calls and what the configuration says, then run one operation from a fixed table. Any doubt ends the
 * process with a documented status before anything is changed. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "helper.h"
#include "macro.h"
#include "parse.h"
#include "trusted-path.h"

void die(int status, const char *fmt, ...)
{
        char msg[768], line[sizeof(msg) * 4];
        va_list ap;

        va_start(ap, fmt);
        (void)vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        /* Recorded before it is printed: a caller whose standard error is a closed pipe gets EPIPE (SIGPIPE
         * is ignored), never a refusal without its record. */
        audit(LOG_WARNING, "refused (status %d): %s", status, msg);
        audit_escape(msg, line, sizeof(line));
        dprintf(STDERR_FILENO, "agentic-job-helper: %s\n", line);
        _exit(status);
}

/* Standard streams must be open, so nothing the helper opens lands on 0, 1 or 2; the rest are closed,
 * so nothing of the caller's reaches root's children. */
static void sanitize_fds(void)
{
        for (int fd = 0; fd < 3; fd++)
                if (fcntl(fd, F_GETFD) < 0 && open("/dev/null", O_RDWR | O_NOCTTY) != fd)
                        die(EXIT_UNSAFE, "cannot open /dev/null for a closed standard stream");
        if (close_range(3, ~0U, 0) < 0)
                die(EXIT_UNSAFE, "cannot close inherited descriptors: %s", strerror(errno));
}

/* sudo sets SUDO_UID to the real uid of whoever called it; the helper takes the caller from nowhere else. */
static uid_t caller_from_sudo(const char *s)
{
        uint64_t v;

        if (!s || parse_decimal(s, strlen(s), UINT32_MAX - 1, &v) < 0)
                return (uid_t)-1;
        return (uid_t)v;
}

static void lookup_users(Helper *h)
{
        struct passwd *pw;
        uid_t runner_uid;

        if (!h->config->runner_user)
                die(EXIT_CONFIG, "%s: [sandbox] runner-user is not set", CONFIG_PATH);
        pw = getpwnam(h->config->runner_user);
        if (!pw)
                die(EXIT_CONFIG, "runner user %s does not exist", h->config->runner_user);
        runner_uid = pw->pw_uid;
        if (h->caller_uid == (uid_t)-1 || h->caller_uid != runner_uid)
                die(EXIT_CALLER, "only the runner user %s may call the helper", h->config->runner_user);

        pw = getpwnam(h->config->sandbox_user);
        if (!pw)
                die(EXIT_CONFIG, "sandbox user %s does not exist", h->config->sandbox_user);
        if (pw->pw_uid == 0 || pw->pw_gid == 0)
                die(EXIT_CONFIG, "sandbox user %s has uid or gid 0", h->config->sandbox_user);
        if (pw->pw_uid == runner_uid)
                die(EXIT_CONFIG, "sandbox user %s has the runner's uid", h->config->sandbox_user);
        if (!path_is_plain_absolute(pw->pw_dir) || strcmp(pw->pw_dir, "/") == 0)
                die(EXIT_CONFIG, "sandbox user %s has home %s, not a plain absolute path", pw->pw_name,
                    pw->pw_dir);
        h->sandbox = *pw;
        h->sandbox.pw_name = strdup(pw->pw_name);
        h->sandbox.pw_dir = strdup(pw->pw_dir);
        h->sandbox.pw_shell = strdup(pw->pw_shell ? pw->pw_shell : "");
        h->sandbox.pw_passwd = NULL;
        h->sandbox.pw_gecos = NULL;
        if (!h->sandbox.pw_name || !h->sandbox.pw_dir || !h->sandbox.pw_shell)
                die(EXIT_FAILED, "out of memory");
}

int main(int argc, char **argv)
{
        static HelperArgs args;
        static Helper h;
        AjError e = { 0 };
        uid_t caller;

        /* Before anything else: no core dumps or ptrace by the caller, no inherited descriptors, a known
         * umask, and none of the caller's environment (SUDO_UID is read first, then everything goes).
         * SIGPIPE is ignored so a closed pipe on a standard stream is an error to handle, not the end of
         * the helper before its audit record; every child sets its signals back to the defaults. */
        (void)signal(SIGPIPE, SIG_IGN);
        if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
                die(EXIT_UNSAFE, "cannot make the process undumpable: %s", strerror(errno));
        sanitize_fds();
        umask(077);
        caller = caller_from_sudo(getenv("SUDO_UID"));
        audit_context(NULL, caller);
        if (clearenv() != 0 || setenv("PATH", ROOT_PATH, 1) < 0)
                die(EXIT_UNSAFE, "cannot clear the environment");

        if (geteuid() != 0 || getuid() != 0)
                die(EXIT_CALLER, "must run as root, through sudo");
        if (helper_args_parse(argc, argv, &args, &e) < 0)
                die(EXIT_USAGE, "%s", e.message);
        audit_context(helper_op_name(args.op), caller);
        if (caller == (uid_t)-1)
                die(EXIT_CALLER, "not called through sudo (no SUDO_UID)");

        if (trusted_search_path_check(ROOT_PATH, &e) < 0)
                die(EXIT_UNSAFE, "PATH directory not root's alone: %s", e.message);
        if (trusted_path_check(CONFIG_PATH, &e) < 0)
                die(EXIT_CONFIG, "configuration not trusted: %s", e.message);
        if (config_load(CONFIG_PATH, &h.config, &e) < 0)
                die(EXIT_CONFIG, "%s", e.message);
        h.args = &args;
        h.caller_uid = caller;
        lookup_users(&h);
        audit(LOG_INFO, "accepted");

        switch (args.op) {
        case OP_PING:
                audit(LOG_INFO, "done");
                return 0;
        case OP_ENTER:
                op_enter(&h);
        case OP_KILL_USER:
                op_kill_user(&h);
        case OP_PROXY_LOG:
                op_proxy_log(&h);
        }
        abort(); /* helper_args_parse() returns only the operations above */
}
