/* SPDX-License-Identifier: MIT */
/* enter: run the caller's command as the sandbox user, in a directory under its home, with none of the
 * caller's environment. Through run0 or a systemd transient service where systemd runs, by dropping
 * privileges directly where it does not. Either way the helper stays as the parent: it forwards the
 * signals sudo relays, tells its own failures from the command's, and audits the outcome. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <linux/openat2.h>
#include <linux/sched.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <syslog.h>
#include <unistd.h>

#include "cgroup.h"
#include "creds.h"
#include "helper.h"
#include "libsystemd.h"
#include "macro.h"
#include "sandbox-env.h"
#include "trusted-path.h"

extern char **environ;

/* Before anything happens, the directory is looked up as the sandbox user would: with its file-system
 * uid, gid and groups (a non-zero fsuid takes root's file capabilities away), from its home, through no
 * link at all. So whatever the answer, it tells the caller nothing the sandbox user could not find out
 * itself, and a link the sandbox swaps in is never followed by root. The command changes directory again
 * as the sandbox user, the same way. */
static void check_dir_as_sandbox(const Helper *h)
{
        const struct passwd *pw = &h->sandbox;
        const char *rel = h->args->chdir + strlen(pw->pw_dir);
        struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
                                .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
        _cleanup_free_ gid_t *groups = NULL;
        int n_groups, home, dir, error = 0;
        struct stat st;

        if (stat(pw->pw_dir, &st) < 0 || !S_ISDIR(st.st_mode))
                die(EXIT_CONFIG, "the sandbox home %s is not a directory", pw->pw_dir);
        n_groups = getgroups(0, NULL);
        if (n_groups < 0 || n_groups > NGROUPS_MAX)
                die(EXIT_FAILED, "cannot read root's groups");
        /* Root's own count, bounded above; clang-tidy 19's taint check does not see the bound. */
        /* NOLINTNEXTLINE(clang-analyzer-optin.taint.TaintedAlloc) */
        groups = calloc((size_t)n_groups + 1, sizeof(gid_t));
        if (!groups || getgroups(n_groups, groups) != n_groups)
                die(EXIT_FAILED, "cannot read root's groups");
        if (initgroups(pw->pw_name, pw->pw_gid) < 0)
                die(EXIT_FAILED, "cannot take the groups of %s: %s", pw->pw_name, strerror(errno));
        (void)setfsgid(pw->pw_gid);
        (void)setfsuid(pw->pw_uid);
        if ((uid_t)setfsuid((uid_t)-1) != pw->pw_uid || (gid_t)setfsgid((gid_t)-1) != pw->pw_gid)
                die(EXIT_FAILED, "cannot take the file-system identity of %s", pw->pw_name);

        rel += strspn(rel, "/");
        home = open(pw->pw_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        dir = home < 0 || !*rel ? home : (int)syscall(SYS_openat2, home, rel, &how, sizeof(how));
        if (dir < 0)
                error = errno;

        (void)setfsuid(0);
        (void)setfsgid(0);
        if (setgroups((size_t)n_groups, groups) < 0 || setfsuid((uid_t)-1) != 0 || setfsgid((gid_t)-1) != 0)
                die(EXIT_FAILED, "cannot take root's identity back");
        if (dir >= 0 && dir != home)
                close(dir);
        if (home >= 0)
                close(home);
        if (error)
                die(EXIT_USAGE, "--chdir %s: %s", h->args->chdir,
                    error == ELOOP     ? "is a link or passes through one"
                    : error == ENOTDIR ? "is not a directory or passes through a file"
                                       : strerror(error));
}

static int systemd_major_version(void)
{
        _cleanup_free_ char *version = NULL;
        const Libsystemd *sd = libsystemd();
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus *bus = NULL;
        int r;

        if (!sd)
                return -ELIBACC;
        r = sd->bus_open_system(&bus);
        if (r >= 0)
                r = sd->bus_get_property_string(bus, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                                "org.freedesktop.systemd1.Manager", "Version", &error,
                                                &version);
        sd->bus_error_free(&error);
        sd->bus_flush_close_unref(bus);
        if (r < 0)
                return r;
        /* "257.9-1~deb13u1": the leading number is the major version. */
        long major = strtol(version, NULL, 10);
        return major > 0 && major < 100000 ? (int)major : -EINVAL;
}

static EnterBackend choose_backend(EnterBackend wanted)
{
        int version;

        if (wanted == ENTER_DIRECT)
                return ENTER_DIRECT;
        if (!systemd_running()) {
                if (wanted != ENTER_AUTO)
                        die(EXIT_FAILED, "enter = \"%s\" but systemd is not running here",
                            enter_backend_to_string(wanted));
                return ENTER_DIRECT;
        }
        if (wanted == ENTER_SYSTEMD_RUN)
                return ENTER_SYSTEMD_RUN;
        version = systemd_major_version();
        if (version < 0)
                die(EXIT_FAILED, "cannot ask systemd for its version: %s", strerror(-version));
        /* run0 came in systemd 256, its --pipe in 257. */
        if (version >= 257)
                return ENTER_RUN0;
        if (wanted == ENTER_RUN0)
                die(EXIT_FAILED, "enter = \"run0\" but systemd %d has no run0 --pipe (257 or newer)",
                    version);
        return ENTER_SYSTEMD_RUN;
}

/* What the child reports through the close-on-exec pipe when it fails before its exec. */
#define EXEC_STEP "execute the command"

typedef struct ChildFailure {
        char step[64];
        int error;
} ChildFailure;

_Noreturn static void child_fail(int fd, const char *step, int error)
{
        ChildFailure f = { .error = error };

        (void)snprintf(f.step, sizeof(f.step), "%s", step);
        (void)!write(fd, &f, sizeof(f));
        _exit(EXIT_FAILED);
}

/* The OOM killer's first choice: oom_score_adj 1000, written as root, so that where root has
 * CAP_SYS_RESOURCE 1000 is also the floor the command cannot go below (lowering it needs that capability).
 * 0 or -errno. */
static int oom_score_pin(void)
{
        int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
        ssize_t n;

        if (fd < 0)
                return -errno;
        n = write(fd, "1000", 4);
        n = n < 0 ? -errno : n;
        close(fd);
        return n < 0 ? (int)n : 0;
}

_Noreturn static void child_direct(const Helper *h, char **env, int report)
{
        const struct passwd *pw = &h->sandbox;
        const char *rel = h->args->chdir + strlen(pw->pw_dir);
        struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
                                .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
        const char *step = NULL;
        int home, dir, r;

        if (setsid() < 0)
                child_fail(report, "start a new session", errno);
        r = oom_score_pin();
        if (r < 0)
                child_fail(report, "set oom_score_adj to 1000", -r);
        /* [sandbox] tasks-max, as LimitNPROC= gives it through systemd: set as root, so the hard limit is
         * one the command cannot raise. */
        if (setrlimit(RLIMIT_NPROC,
                      &(struct rlimit){ h->config->sandbox_tasks_max, h->config->sandbox_tasks_max }) < 0)
                child_fail(report, "set RLIMIT_NPROC to [sandbox] tasks-max", errno);
        /* A /proc of its own that shows only what the sandbox user may look at (hidepid=invisible): the
         * command lines and environments of root's and the runner's processes are not its to read. */
        if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0 ||
            mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "hidepid=invisible") < 0)
                child_fail(report, "mount a /proc that hides other users' processes", errno);
        r = creds_drop_to_user(pw, &step);
        if (r < 0)
                child_fail(report, step, -r);
        if (!creds_dropped_to(pw))
                child_fail(report, "verify its identity", EPERM);

        /* As the sandbox user: the home as the user database names it, then below it no link at all. */
        rel += strspn(rel, "/");
        home = open(pw->pw_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (home < 0)
                child_fail(report, "change directory", errno);
        dir = *rel ? (int)syscall(SYS_openat2, home, rel, &how, sizeof(how)) : home;
        if (dir < 0 || fchdir(dir) < 0)
                child_fail(report, "change directory", errno);

        umask(022); /* what a login or a systemd service starts with */
        environ = env;
        execvp(h->args->argv[0], h->args->argv);
        child_fail(report, EXEC_STEP, errno);
}

_Noreturn static void child_systemd(char **line, int report)
{
        char *empty[] = { NULL };

        execve(line[0], line, empty);
        child_fail(report, EXEC_STEP, errno);
}

/* Signals are forwarded through a pidfd: once the child is reaped its pid may name another process, the
 * pidfd never does. */
static volatile sig_atomic_t child_pidfd = -1;
static const int forwarded[] = { SIGHUP,  SIGINT,  SIGQUIT, SIGTERM, SIGUSR1,
                                 SIGUSR2, SIGCONT, SIGTSTP, SIGWINCH };

static void forward_signal(int sig)
{
        if (child_pidfd >= 0)
                (void)syscall(SYS_pidfd_send_signal, (int)child_pidfd, sig, NULL, 0);
}

/* clone3() with a pidfd, and where there is a cgroup straight into it: joining a cgroup later (a write to
 * cgroup.procs) waits for an RCU grace period, starting in it does not. The helper has one thread, so
 * the child may go on as after fork(). */
static pid_t spawn(int cgroup_fd, int *ret_pidfd)
{
        struct clone_args args = { .flags = CLONE_PIDFD, .exit_signal = SIGCHLD };

        args.pidfd = (uint64_t)(uintptr_t)ret_pidfd;
        if (cgroup_fd >= 0) {
                args.flags |= CLONE_INTO_CGROUP;
                args.cgroup = (uint64_t)cgroup_fd;
        }
        return (pid_t)syscall(SYS_clone3, &args, sizeof(args));
}

/* The caller ended before the command: nobody is left to end it, or to call kill-user after it. The
 * helper does, as kill-user does: every process of the sandbox user ends, this command's and whatever it
 * started in a unit or session of its own. */
_Noreturn static void caller_gone(const Helper *h, pid_t caller)
{
        audit(LOG_WARNING, "the caller (pid %ld) ended before the command: every process of %s is ended",
              (long)caller, h->sandbox.pw_name);
        op_kill_user(h);
}

/* Waits until the command has exited (its pidfd is readable) or its caller has. Signals interrupt the
 * wait only to be forwarded. */
static void wait_child_or_caller(const Helper *h, int pidfd, int caller_fd, pid_t caller)
{
        for (;;) {
                struct pollfd p[2] = { { .fd = pidfd, .events = POLLIN },
                                       { .fd = caller_fd, .events = POLLIN } };
                int k = poll(p, 2, -1);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        die(EXIT_FAILED, "poll: %s", strerror(errno));
                if (p[0].revents)
                        return;
                if (p[1].revents)
                        caller_gone(h, caller);
        }
}

/* Runs line (systemd backends) or the command itself (line NULL: direct) as a child, waits for it, and
 * ends the helper with its status. */
_Noreturn static void run_child(const Helper *h, const char *how, char **line, char **env)
{
        _cleanup_free_ char *cgroup = NULL;
        struct sigaction sa = { .sa_handler = forward_signal };
        int report[2], cgroup_fd = -1, pidfd = -1, caller_fd, status;
        pid_t caller;
        sigset_t block, saved;
        ChildFailure f;
        ssize_t n;
        pid_t pid;

        /* Before anything is made: a caller already gone is refused (pidfd_open sets close-on-exec). */
        caller_fd = caller_watch_open(&caller);
        /* A cgroup of its own where there is cgroup2 and no systemd to make one: kill-user empties it
         * in one write. */
        if (!line) {
                int r = cgroup_enter_create(&cgroup, &cgroup_fd);
                /* No cgroup2, or one mounted read-only (a container's): nothing to make one in. */
                if (r == -ENOENT || r == -EROFS)
                        audit(LOG_NOTICE,
                              "no writable cgroup2 mount: the command runs without a cgroup of its own");
                else if (r < 0)
                        die(EXIT_FAILED, "cannot make a cgroup for the command: %s", strerror(-r));
        }
        if (pipe2(report, O_CLOEXEC) < 0)
                die(EXIT_FAILED, "pipe: %s", strerror(errno));
        sigemptyset(&sa.sa_mask);
        sigemptyset(&block);
        for (size_t i = 0; i < ELEMENTSOF(forwarded); i++) {
                (void)sigaction(forwarded[i], &sa, NULL);
                sigaddset(&block, forwarded[i]);
        }
        audit(LOG_INFO, "entering %s %s in %s", h->sandbox.pw_name, how, h->args->chdir);

        /* Signals wait until child_pidfd is known, so none is lost between the fork and the handler. */
        (void)sigprocmask(SIG_BLOCK, &block, &saved);
        pid = spawn(cgroup_fd, &pidfd);
        if (pid < 0)
                die(EXIT_FAILED, "cannot start the command: %s", strerror(errno));
        if (pid == 0) {
                for (int sig = 1; sig < NSIG; sig++)
                        (void)signal(sig, SIG_DFL);
                sigemptyset(&saved);
                (void)sigprocmask(SIG_SETMASK, &saved, NULL);
                close(report[0]);
                if (line)
                        child_systemd(line, report[1]);
                child_direct(h, env, report[1]);
        }
        child_pidfd = pidfd;
        (void)sigprocmask(SIG_SETMASK, &saved, NULL);
        if (cgroup_fd >= 0)
                close(cgroup_fd);
        close(report[1]);

        do
                n = read(report[0], &f, sizeof(f));
        while (n < 0 && errno == EINTR);
        if (n == 0)
                wait_child_or_caller(h, pidfd, caller_fd, caller);
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        die(EXIT_FAILED, "waitpid: %s", strerror(errno));
        if (cgroup)
                (void)rmdir(cgroup); /* still busy if the command left processes: kill-user removes it */

        if (n == (ssize_t)sizeof(f) && strcmp(f.step, EXEC_STEP) == 0 && !line) {
                /* The name goes to the caller only: the audit trail keeps no part of the command line. */
                dprintf(STDERR_FILENO, "agentic-job-helper: enter: could not execute the command %s: %s\n",
                        h->args->argv[0], strerror(f.error));
                audit(LOG_WARNING, "refused: could not execute the command: %s", strerror(f.error));
                _exit(f.error == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_EXECUTE);
        }
        if (n == (ssize_t)sizeof(f) && line)
                die(EXIT_FAILED, "enter: cannot execute %s: %s", line[0], strerror(f.error));
        if (n == (ssize_t)sizeof(f))
                die(EXIT_FAILED, "enter: could not %.64s: %s", f.step, strerror(f.error));
        if (WIFSIGNALED(status)) {
                audit(LOG_INFO, "done: the command was killed by signal %d", WTERMSIG(status));
                _exit(128 + WTERMSIG(status));
        }
        audit(LOG_INFO, "done: the command exited with status %d", WEXITSTATUS(status));
        _exit(WEXITSTATUS(status));
}

void op_enter(const Helper *h)
{
        _cleanup_free_ char *program = NULL, *sh_program = NULL, *env_program = NULL;
        char **env = NULL, **line = NULL;
        AjError e = { 0 };
        EnterBackend backend;
        int r;

        if (enter_dir_check(h->sandbox.pw_dir, h->args->chdir, &e) < 0)
                die(EXIT_USAGE, "%s", e.message);
        check_dir_as_sandbox(h);
        for (int fd = 0; fd < 3; fd++)
                if (isatty(fd))
                        die(EXIT_UNSAFE,
                            "standard %s is a terminal: enter passes no terminal to the sandbox",
                            fd == 0   ? "input"
                            : fd == 1 ? "output"
                                      : "error");
        r = sandbox_env_build(h->config, &h->sandbox, &env);
        if (r < 0)
                die(EXIT_CONFIG, "cannot build the sandbox environment: %s", strerror(-r));

        backend = choose_backend(h->config->enter);
        if (backend == ENTER_DIRECT)
                run_child(h, "directly", NULL, env);

        if (trusted_program_find(ROOT_PATH, backend == ENTER_RUN0 ? "run0" : "systemd-run", &program, &e) <
                    0 ||
            trusted_program_find(ROOT_PATH, "sh", &sh_program, &e) < 0 ||
            trusted_program_find(ROOT_PATH, "env", &env_program, &e) < 0)
                die(EXIT_FAILED, "%s", e.message);
        r = enter_line_build(backend == ENTER_RUN0 ? LINE_RUN0 : LINE_SYSTEMD_RUN, program, sh_program,
                             env_program, h->sandbox.pw_name, h->args->chdir, h->config->sandbox_tasks_max,
                             env, h->args->argv, &line);
        if (r == -EINVAL)
                die(EXIT_USAGE,
                    "enter: through %s the command may not start with '-' or hold '=' (env would take it "
                    "for an option or a variable)",
                    backend == ENTER_RUN0 ? "run0" : "systemd-run");
        if (r < 0)
                die(EXIT_FAILED, "enter: cannot build the %s command line: %s", program, strerror(-r));
        run_child(h, backend == ENTER_RUN0 ? "through run0" : "through systemd-run", line, env);
}
