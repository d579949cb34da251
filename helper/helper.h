/* SPDX-License-Identifier: MIT */
/* The root helper: a closed set of operations, reached only as
 *   sudo -n /usr/local/libexec/agentic-job helper OP ...
 * Every exit status is listed here and in agentic-job-helper(8). */
#pragma once

#include <pwd.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"
#include "error.h"

/* Exit statuses of the helper itself. enter passes its command's status through (128+N for signal N), so
 * the helper's own failures use values a command rarely does, and always print a line on stderr that
 * starts "agentic-job-helper: ". */
#define EXIT_PROXY_LOG_TRUNCATED 3   /* proxy-log: the log is shorter than --from (truncated or replaced) */
#define EXIT_PROXY_LOG_ABSENT    4   /* proxy-log: there is no log */
#define EXIT_PROXY_LOG_MORE      5   /* proxy-log: output capped at PROXY_LOG_MAX_OUTPUT; more follows */
#define EXIT_USAGE               120 /* unknown operation; missing, extra or refused argument */
#define EXIT_CALLER              121 /* not root, not through sudo, or not the configured runner user */
#define EXIT_CONFIG              122 /* configuration missing, untrusted or invalid; users not as configured */
#define EXIT_UNSAFE              123 /* the fixed PATH is not root's alone, or standard streams unusable */
#define EXIT_FAILED              125 /* the operation failed: could not enter, survivors, log refused */
#define EXIT_CANNOT_EXECUTE      126 /* enter: the command was found but could not be executed */
#define EXIT_NOT_FOUND           127 /* enter: the command was not found on the sandbox PATH */

/* Where root looks for programs; each directory must be root's alone. */
#define ROOT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

#define PROXY_LOG_PATH "/var/log/egress-proxy/access.jsonl"
#define PROXY_USER     "egress-proxy"
/* proxy-log writes at most this much per call, then exits EXIT_PROXY_LOG_MORE; the caller advances
 * --from by what it received and calls again. */
#define PROXY_LOG_MAX_OUTPUT (64 * 1024 * 1024)

typedef enum HelperOp {
        OP_PING,
        OP_ENTER,
        OP_KILL_USER,
        OP_PROXY_LOG,
} HelperOp;

typedef struct HelperArgs {
        HelperOp op;
        const char *chdir; /* enter */
        char **argv;       /* enter: NULL-terminated, at least one element */
        uint64_t from;     /* proxy-log */
        bool from_end;     /* proxy-log --from end: the log's size, nothing of it read */
} HelperArgs;

/* Parses argv (argv[0] is the program). Returns 0, or -EINVAL with a message in *reterr. Pure: it only
 * reads its arguments, so it is unit-tested and fuzzed. */
int helper_args_parse(int argc, char **argv, HelperArgs *ret, AjError *reterr);
const char *helper_op_name(HelperOp op);

/* Checks that dir is plainly spelled (absolute, no empty, "." or ".." component, at most one trailing
 * "/", no control character) and lies under home, component-wise. Pure. */
int enter_dir_check(const char *home, const char *dir, AjError *reterr);

typedef enum EnterLine {
        LINE_RUN0,
        LINE_SYSTEMD_RUN,
} EnterLine;

/* Builds the argv of run0 or systemd-run that enters the sandbox user: program is the resolved path of
 * run0/systemd-run, sh_program that of sh (the unit's main process, which passes the command's status
 * on), env_program that of env (which looks the command up as the sandbox user and, for run0, drops the
 * SUDO_* variables run0 adds), tasks_max the unit's LimitNPROC=, env the "NAME=VALUE" list. -EINVAL for an
 * empty argv, or an argv[0] starting '-' or holding '='. Pure. */
int enter_line_build(EnterLine line, const char *program, const char *sh_program, const char *env_program,
                     const char *user, const char *dir, unsigned long long tasks_max, char *const *env,
                     char *const *argv, char ***ret_argv);

/* What every operation knows once the entry checks passed. */
typedef struct Helper {
        const HelperArgs *args;
        Config *config;
        uid_t caller_uid;
        struct passwd sandbox; /* copied out of getpwnam() */
} Helper;

_Noreturn void die(int status, const char *fmt, ...) __attribute__((noreturn, format(printf, 2, 3)));
/* Every call is audited: journal where journald listens, syslog (authpriv) otherwise. */
void audit_context(const char *op, uid_t caller);
void audit(int priority, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Copies text into out (size bytes, at least 5), each control character and backslash written as \xNN,
 * cut short rather than overflowing: one line, whatever the caller's text held. */
void audit_escape(const char *text, char *out, size_t size);

/* The process that started sudo (the first ancestor that is not sudo), as a pidfd that turns readable when
 * it exits; its pid in *ret_pid. Ends the helper with EXIT_CALLER where that process is already gone. */
int caller_watch_open(pid_t *ret_pid);

_Noreturn void op_enter(const Helper *h);
_Noreturn void op_kill_user(const Helper *h);

/* kill-user's part with systemd (systemd-user.c), each a no-op where systemd does not run. Before the
 * kills: lingering off, SIGKILL to user-UID.slice, logind's TerminateUser. */
void systemd_user_stop(uid_t uid);
/* After them: the next enter's session must be able to start. TerminateUser's stop jobs may still run
 * (the user's manager and runtime directory, then the slice, stopped when nothing needs it); a session
 * opened meanwhile cannot start its scope ("Transaction ... is destructive (user-UID.slice has 'stop' job
 * queued)"), and pam_systemd goes on without it: the command runs in the transient service, whose end
 * ends what it left, and without its user manager. Each enter also starts user-runtime-dir@UID.service
 * and user@UID.service again, and systemd's start limit (5 in 10 s) fails a quick sixth the same way. So
 * this waits, up to timeout_ns, until the slice is stopped (or gone), then resets the two services' start
 * limits (ResetFailedUnit). 0, -ETIME if the slice still runs then, another -errno if systemd cannot be
 * asked. */
int systemd_user_settle(uid_t uid, long long timeout_ns);
/* kill-user's last stage, once no process of uid lives: its entries in /dev/shm, /dev/mqueue, /tmp and
 * /var/tmp and its System V IPC objects removed, by a child that is uid and gid and nothing more.
 * *ret_removed counts them. 0; -ENOTEMPTY when some could not be removed (failure says which first);
 * -ETIME when the child took too long (root ended it); another -errno. */
int remove_left(uid_t uid, gid_t gid, unsigned long *ret_removed, char *failure, size_t size);
_Noreturn void op_proxy_log(const Helper *h);
