/* SPDX-License-Identifier: MIT */
/* enter: run the caller's command as the sandbox user, in a directory under its home, with none of the
 * caller's environment. Through run0 or a systemd transient service where systemd runs, by dropping
 * privileges directly where it does not. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/openat2.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <syslog.h>
#include <unistd.h>

#include <systemd/sd-bus.h>
#include <systemd/sd-daemon.h>

#include "cgroup.h"
#include "helper.h"
#include "macro.h"
#include "trusted-path.h"

extern char **environ;

/* As root, before anything happens: every component from the home down must exist, be a directory and not
 * be a link. The command then changes directory as the sandbox user (again refusing links), so a race
 * here gains nothing the user could not do itself. */
static void check_dir_exists(const char *home, const char *dir)
{
        char path[4096];
        size_t hl = strlen(home);
        struct stat st;

        if (strlen(dir) >= sizeof(path))
                die(EXIT_USAGE, "--chdir: path too long");
        strcpy(path, dir);
        for (char *p = path + hl;; p++) {
                if (*p == '/' || *p == '\0') {
                        char c = *p;
                        *p = '\0';
                        if (path[0] && lstat(path, &st) < 0)
                                die(EXIT_USAGE, "--chdir %s: %s: %s", dir, path, strerror(errno));
                        if (path[0] && S_ISLNK(st.st_mode))
                                die(EXIT_USAGE, "--chdir %s: %s is a link", dir, path);
                        if (path[0] && !S_ISDIR(st.st_mode))
                                die(EXIT_USAGE, "--chdir %s: %s is not a directory", dir, path);
                        *p = c;
                        if (!c)
                                break;
                }
        }
}

static int systemd_major_version(void)
{
        _cleanup_free_ char *version = NULL;
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus *bus = NULL;
        int r;

        r = sd_bus_open_system(&bus);
        if (r >= 0)
                r = sd_bus_get_property_string(bus, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                               "org.freedesktop.systemd1.Manager", "Version", &error, &version);
        sd_bus_error_free(&error);
        sd_bus_flush_close_unref(bus);
        if (r < 0)
                return r;
        return atoi(version);
}

static EnterBackend choose_backend(EnterBackend wanted)
{
        int booted = sd_booted() > 0, version;

        if (wanted == ENTER_DIRECT)
                return ENTER_DIRECT;
        if (!booted) {
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
                die(EXIT_FAILED, "enter = \"run0\" but systemd %d has no run0 --pipe (257 or newer)", version);
        return ENTER_SYSTEMD_RUN;
}

_Noreturn static void enter_systemd(const Helper *h, EnterBackend backend, char **env)
{
        _cleanup_free_ char *program = NULL, *env_program = NULL;
        char **line = NULL;
        char *empty[] = { NULL };
        AjError e = { 0 };

        if (trusted_program_find(ROOT_PATH, backend == ENTER_RUN0 ? "run0" : "systemd-run", &program, &e) < 0)
                die(EXIT_FAILED, "%s", e.message);
        if (backend == ENTER_RUN0 && trusted_program_find(ROOT_PATH, "env", &env_program, &e) < 0)
                die(EXIT_FAILED, "%s", e.message);
        if (enter_line_build(backend == ENTER_RUN0 ? LINE_RUN0 : LINE_SYSTEMD_RUN, program, env_program,
                             h->sandbox.pw_name, h->args->chdir, env, h->args->argv, &line) < 0)
                die(EXIT_USAGE, "enter: cannot build the %s command line (a command name holding '=')",
                    enter_backend_to_string(backend));
        audit(LOG_INFO, "entering %s through %s in %s", h->sandbox.pw_name, program, h->args->chdir);
        execve(line[0], line, empty);
        die(EXIT_FAILED, "cannot execute %s: %s", line[0], strerror(errno));
}

/* What the child reports through the close-on-exec pipe when it fails before its exec. */
typedef struct ChildFailure {
        int stage;
        int error;
} ChildFailure;

static const char *const stage_names[] = {
        "join its cgroup", "start a new session", "set its groups", "drop its capabilities",
        "set its gid",     "set its uid",         "set no_new_privs", "verify its identity",
        "change directory", "execute the command",
};

_Noreturn static void child_fail(int fd, int stage, int error)
{
        ChildFailure f = { stage, error };

        (void)!write(fd, &f, sizeof(f));
        _exit(EXIT_FAILED);
}

/* Everything root can hold, let go: the bounding set while still allowed to, the ambient and inheritable
 * sets explicitly, permitted and effective by the uid change itself. */
static int drop_to_user(const struct passwd *pw)
{
        cap_t none;
        int r;

        for (int cap = 0; cap <= CAP_LAST_CAP || prctl(PR_CAPBSET_READ, cap, 0, 0, 0) >= 0; cap++)
                if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL)
                        return -errno;
        if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
                return -errno;
        if (setresgid(pw->pw_gid, pw->pw_gid, pw->pw_gid) < 0)
                return -errno;
        if (setresuid(pw->pw_uid, pw->pw_uid, pw->pw_uid) < 0)
                return -errno;
        none = cap_init();
        if (!none)
                return -ENOMEM;
        r = cap_set_proc(none);
        cap_free(none);
        return r < 0 ? -errno : 0;
}

static int verify_dropped(const struct passwd *pw)
{
        uid_t ru, eu, su;
        gid_t rg, eg, sg;
        cap_t now, none;
        int differ;

        if (getresuid(&ru, &eu, &su) < 0 || getresgid(&rg, &eg, &sg) < 0)
                return -errno;
        if (ru != pw->pw_uid || eu != pw->pw_uid || su != pw->pw_uid || rg != pw->pw_gid ||
            eg != pw->pw_gid || sg != pw->pw_gid)
                return -EPERM;
        now = cap_get_proc();
        none = cap_init();
        differ = !now || !none || cap_compare(now, none) != 0;
        cap_free(now);
        cap_free(none);
        if (differ || prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1)
                return -EPERM;
        for (int cap = 0;; cap++) {
                int in = prctl(PR_CAPBSET_READ, cap, 0, 0, 0);
                if (in < 0)
                        break;
                if (in != 0)
                        return -EPERM;
        }
        if (setresuid(0, 0, 0) == 0)
                return -EPERM;
        return 0;
}

_Noreturn static void child_run(const Helper *h, int cgroup_fd, int report, char **env)
{
        const struct passwd *pw = &h->sandbox;
        struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
                                .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
        int dirfd, r;

        /* Default dispositions and an empty mask, so the command starts as any fresh process would. */
        for (int sig = 1; sig < NSIG; sig++)
                (void)signal(sig, SIG_DFL);
        sigset_t all;
        sigemptyset(&all);
        (void)sigprocmask(SIG_SETMASK, &all, NULL);

        if (cgroup_fd >= 0 && write(cgroup_fd, "0", 1) != 1)
                child_fail(report, 0, errno);
        if (cgroup_fd >= 0)
                close(cgroup_fd);
        if (setsid() < 0)
                child_fail(report, 1, errno);
        if (initgroups(pw->pw_name, pw->pw_gid) < 0)
                child_fail(report, 2, errno);
        r = drop_to_user(pw);
        if (r < 0)
                child_fail(report, 3, -r);
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                child_fail(report, 6, errno);
        r = verify_dropped(pw);
        if (r < 0)
                child_fail(report, 7, -r);
        dirfd = (int)syscall(SYS_openat2, AT_FDCWD, h->args->chdir, &how, sizeof(how));
        if (dirfd < 0 || fchdir(dirfd) < 0)
                child_fail(report, 8, errno);
        close(dirfd);
        environ = env;
        execvp(h->args->argv[0], h->args->argv);
        child_fail(report, 9, errno);
}

static volatile sig_atomic_t child_pid;
static const int forwarded[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGCONT, SIGTSTP, SIGWINCH };

static void forward_signal(int sig)
{
        if (child_pid > 0)
                (void)kill(child_pid, sig);
}

/* A cgroup of its own under the cgroup2 mount, where there is one: kill-user empties it in one write. */
static int make_cgroup(char **ret_path)
{
        _cleanup_free_ char *mount = NULL, *parent = NULL, *path = NULL;
        int r, fd;

        r = cgroup2_mount_find(&mount);
        if (r == -ENOENT) {
                *ret_path = NULL;
                return -EBADF;
        }
        if (r < 0)
                die(EXIT_FAILED, "cannot read the mount table: %s", strerror(-r));
        if (asprintf(&parent, "%s/%s", mount, CGROUP_ENTER_PARENT) < 0 ||
            asprintf(&path, "%s/enter-%ld", parent, (long)getpid()) < 0)
                die(EXIT_FAILED, "out of memory");
        if (mkdir(parent, 0755) < 0 && errno != EEXIST)
                die(EXIT_FAILED, "cannot make cgroup %s: %s", parent, strerror(errno));
        if (mkdir(path, 0755) < 0)
                die(EXIT_FAILED, "cannot make cgroup %s: %s", path, strerror(errno));
        fd = openat(AT_FDCWD, path, O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        if (fd >= 0) {
                int procs = openat(fd, "cgroup.procs", O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
                close(fd);
                fd = procs;
        }
        if (fd < 0)
                die(EXIT_FAILED, "cannot open cgroup %s: %s", path, strerror(errno));
        *ret_path = TAKE_PTR(path);
        return fd;
}

_Noreturn static void enter_direct(const Helper *h, char **env)
{
        _cleanup_free_ char *cgroup = NULL;
        int report[2], cgroup_fd, status;
        ChildFailure f;
        struct sigaction sa = { .sa_handler = forward_signal };
        ssize_t n;
        pid_t pid;

        cgroup_fd = make_cgroup(&cgroup);
        if (pipe2(report, O_CLOEXEC) < 0)
                die(EXIT_FAILED, "pipe: %s", strerror(errno));
        audit(LOG_INFO, "entering %s directly in %s", h->sandbox.pw_name, h->args->chdir);

        /* Signals sudo relays to us go on to the command (the child resets them before it runs). */
        sigemptyset(&sa.sa_mask);
        for (size_t i = 0; i < ELEMENTSOF(forwarded); i++)
                (void)sigaction(forwarded[i], &sa, NULL);

        pid = fork();
        if (pid < 0)
                die(EXIT_FAILED, "fork: %s", strerror(errno));
        if (pid == 0) {
                close(report[0]);
                child_run(h, cgroup_fd, report[1], env);
        }
        child_pid = pid;
        if (cgroup_fd >= 0)
                close(cgroup_fd);
        close(report[1]);

        do
                n = read(report[0], &f, sizeof(f));
        while (n < 0 && errno == EINTR);
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        die(EXIT_FAILED, "waitpid: %s", strerror(errno));
        if (cgroup)
                (void)rmdir(cgroup); /* still busy if the command left processes: kill-user removes it */

        if (n == (ssize_t)sizeof(f) && f.stage == 9) {
                /* The name goes to the caller only: the audit trail keeps no part of the command line. */
                dprintf(STDERR_FILENO, "agentic-job-helper: enter: could not execute the command %s: %s\n",
                        h->args->argv[0], strerror(f.error));
                audit(LOG_WARNING, "refused: could not execute the command: %s", strerror(f.error));
                _exit(f.error == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_EXECUTE);
        }
        if (n == (ssize_t)sizeof(f))
                die(EXIT_FAILED, "enter: could not %s: %s", stage_names[f.stage], strerror(f.error));
        if (WIFSIGNALED(status)) {
                audit(LOG_INFO, "done: the command was killed by signal %d", WTERMSIG(status));
                _exit(128 + WTERMSIG(status));
        }
        audit(LOG_INFO, "done: the command exited with status %d", WEXITSTATUS(status));
        _exit(WEXITSTATUS(status));
}

void op_enter(const Helper *h)
{
        char **env = NULL;
        AjError e = { 0 };
        EnterBackend backend;

        if (enter_dir_check(h->sandbox.pw_dir, h->args->chdir, &e) < 0)
                die(EXIT_USAGE, "%s", e.message);
        check_dir_exists(h->sandbox.pw_dir, h->args->chdir);
        for (int fd = 0; fd < 3; fd++)
                if (isatty(fd))
                        die(EXIT_UNSAFE, "standard %s is a terminal: enter passes no terminal to the sandbox",
                            fd == 0 ? "input" : fd == 1 ? "output" : "error");
        if (enter_env_build(h->config, &h->sandbox, &env) < 0)
                die(EXIT_CONFIG, "cannot build the sandbox environment");
        backend = choose_backend(h->config->enter);
        if (backend == ENTER_DIRECT)
                enter_direct(h, env);
        enter_systemd(h, backend, env);
}
