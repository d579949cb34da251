/* SPDX-License-Identifier: MIT */
#include "confine.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "confine-seccomp.h"
#include "macro.h"
#include "spawn.h"
#include "strv.h"

/* Every directory that can hold a unix socket, a secret or another workspace of the sandbox user's: each
 * gets an empty tmpfs, made read-only once the binds under it are in place. /tmp and /var/tmp are the
 * run's own temp instead; /dev/shm stays a writable tmpfs (POSIX shared memory lives there). */
static const char *const hidden[] = { "/run", "/home", "/root", "/mnt", "/media", "/srv" };

/* The namespaces and the process shape, shared by the run and the preflight. */
static int push_namespaces(Strv *s)
{
        static const char *const words[] = {
                BWRAP_PATH,
                "--unshare-user",
                "--unshare-ipc",
                "--unshare-pid",
                "--unshare-net",
                "--unshare-uts",
                "--unshare-cgroup-try",
                "--die-with-parent",
                "--new-session",
                "--ro-bind",
                "/",
                "/",
                "--dev",
                "/dev",
                "--proc",
                "/proc",
        };
        int r = 0;

        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(words); i++)
                r = strv_push(s, strdup(words[i]));
        r = r < 0 ? r : strv_push(s, strdup("--seccomp"));
        return r < 0 ? r : strv_pushf(s, "%d", CONFINE_SECCOMP_FD);
}

static int push3(Strv *s, const char *opt, const char *a, const char *b)
{
        int r = strv_push(s, strdup(opt));

        r = r < 0 ? r : strv_push(s, strdup(a));
        return r < 0 || !b ? r : strv_push(s, strdup(b));
}

static int push_bind_under(Strv *s, const char *opt, const char *run_dir, const char *name, const char *dest)
{
        _cleanup_free_ char *src = NULL;

        if (asprintf(&src, "%s/%s", run_dir, name) < 0)
                return -ENOMEM;
        return push3(s, opt, src, dest ? dest : src);
}

static bool stat_is_dir(const char *path)
{
        struct stat st;

        return lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int confine_bwrap_argv(const ConfineLayout *l, bool (*is_dir)(const char *path), char ***ret_argv)
{
        _cleanup_free_ char *parent = NULL, *workspace = NULL;
        bool present[ELEMENTSOF(hidden)] = {};
        Strv s = { 0 };
        const char *slash;
        int r;

        if (!l->run_dir || l->run_dir[0] != '/' || !l->self || l->self[0] != '/' ||
            (l->broker_socket && !path_is_plain_absolute(l->broker_socket)))
                return -EINVAL;
        if (!is_dir)
                is_dir = stat_is_dir;
        slash = strrchr(l->run_dir, '/');
        parent = slash == l->run_dir ? strdup("/") : strndup(l->run_dir, (size_t)(slash - l->run_dir));
        if (!parent || asprintf(&workspace, "%s/workspace", l->run_dir) < 0)
                return -ENOMEM;

        r = push_namespaces(&s);
        r = r < 0 ? r : push3(&s, "--perms", "1777", NULL);
        r = r < 0 ? r : push3(&s, "--tmpfs", "/dev/shm", NULL);
        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(hidden); i++) {
                present[i] = is_dir(hidden[i]);
                if (present[i])
                        r = push3(&s, "--tmpfs", hidden[i], NULL);
        }
        /* The sandbox user's home (the run directory's parent), wherever it is: its other runs and files. */
        r = r < 0 ? r : push3(&s, "--tmpfs", parent, NULL);
        r = r < 0 ? r : push_bind_under(&s, "--bind", l->run_dir, "workspace", NULL);
        r = r < 0 ? r : push_bind_under(&s, "--bind", l->run_dir, "home", NULL);
        r = r < 0 ? r : push_bind_under(&s, "--bind", l->run_dir, "tmp", NULL);
        r = r < 0 ? r : push_bind_under(&s, "--bind", l->run_dir, "tmp", "/tmp");
        r = r < 0 ? r : push_bind_under(&s, "--bind", l->run_dir, "tmp", "/var/tmp");
        if (l->task)
                r = r < 0 ? r : push_bind_under(&s, "--ro-bind", l->run_dir, "task", NULL);
        if (l->token)
                r = r < 0 ? r : push_bind_under(&s, "--ro-bind", l->run_dir, "token", NULL);
        if (l->profile)
                r = r < 0 ? r : push_bind_under(&s, "--ro-bind", l->run_dir, "profile", NULL);
        if (l->bridge_dir)
                r = r < 0 ? r : push3(&s, "--ro-bind", l->bridge_dir, CONFINE_BRIDGE_DIR);
        /* A unix socket's connect(2) needs no writable mount: read-only, like the bridge. */
        if (l->broker_socket)
                r = r < 0 ? r : push3(&s, "--ro-bind", l->broker_socket, CONFINE_BROKER_SOCKET);
        /* Read-only once the binds are made, or the agent could fill them (and leave sockets there). */
        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(hidden); i++)
                if (present[i])
                        r = push3(&s, "--remount-ro", hidden[i], NULL);
        r = r < 0 ? r : push3(&s, "--remount-ro", parent, NULL);
        r = r < 0 ? r : push3(&s, "--chdir", workspace, NULL);
        r = r < 0 ? r : strv_push(&s, strdup("--"));
        if (r < 0) {
                strv_clear(&s);
                return r;
        }
        *ret_argv = s.v;
        return 0;
}

static long long now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* Forks argv[0] with stdin from /dev/null, stdout to /dev/null, stderr kept; dies with its parent. */
static int spawn_bridge(char *const *argv, pid_t *ret_pid)
{
        static char *const empty_env[] = { NULL };
        pid_t parent = getpid();
        pid_t pid = fork();

        if (pid < 0)
                return -errno;
        if (pid == 0) {
                int null = open("/dev/null", O_RDWR | O_CLOEXEC);

                if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
                        _exit(127);
                if (null < 0 || dup2(null, STDIN_FILENO) < 0 || dup2(null, STDOUT_FILENO) < 0)
                        _exit(127);
                (void)close_range(3, ~0U, 0);
                (void)execve(argv[0], argv, empty_env);
                _exit(127);
        }
        *ret_pid = pid;
        return 0;
}

/* Until connect() to addr works (5 s at most), or the bridge has exited. */
static int await_accept(pid_t pid, int family, const struct sockaddr *addr, socklen_t len)
{
        long long deadline = now_ms() + 5000;

        for (;;) {
                _cleanup_close_ int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
                int status;

                if (fd < 0)
                        return -errno;
                if (connect(fd, addr, len) == 0)
                        return 0;
                if (waitpid(pid, &status, WNOHANG) == pid)
                        return -ECHILD;
                if (now_ms() > deadline)
                        return -ETIMEDOUT;
                (void)nanosleep(&(struct timespec){ .tv_nsec = 10 * 1000 * 1000 }, NULL);
        }
}

/* 1 when a TCP socket listens on 127.0.0.1:port in this network namespace (its /proc/net/tcp), 0 when
 * none does yet, -errno when that cannot be read. Nothing connects: a connection would make socat fork a
 * child that goes on towards the host end, where it could meet the run's end and say so on the agent's
 * standard error. */
static int tcp_loopback_listening(int port)
{
        _cleanup_fclose_ FILE *f = fopen("/proc/net/tcp", "re");
        char line[512], want[16];

        if (!f)
                return -errno;
        (void)snprintf(want, sizeof(want), "%08X:%04X", (unsigned)htonl(INADDR_LOOPBACK), (unsigned)port);
        /* The table is the namespace's own: a handful of lines, the bridge's the only listener. */
        for (int n = 0; n < 4096 && fgets(line, sizeof(line), f); n++) {
                char local[32], remote[32], state[8];

                if (sscanf(line, " %*[0-9]: %31s %31s %7s", local, remote, state) == 3 &&
                    strcmp(local, want) == 0 && strcmp(state, "0A") == 0)
                        return 1;
        }
        return ferror(f) ? -EIO : 0;
}

/* Until 127.0.0.1:port listens (5 s at most), or the bridge has exited. */
static int await_listen_loopback(pid_t pid, int port)
{
        long long deadline = now_ms() + 5000;

        for (;;) {
                int status, r = tcp_loopback_listening(port);

                if (r != 0)
                        return r < 0 ? r : 0;
                if (waitpid(pid, &status, WNOHANG) == pid)
                        return -ECHILD;
                if (now_ms() > deadline)
                        return -ETIMEDOUT;
                (void)nanosleep(&(struct timespec){ .tv_nsec = 10 * 1000 * 1000 }, NULL);
        }
}

void confine_bridge_stop(pid_t pid)
{
        if (pid <= 0)
                return;
        /* It holds nothing to flush once the confinement has ended; TERM would only make it say so. */
        (void)kill(pid, SIGKILL);
        (void)wait_exit_status(pid);
}

int confine_host_bridge_start(const char *socket_path, pid_t *ret_pid)
{
        _cleanup_free_ char *listen = NULL, *connect_to = NULL;
        struct sockaddr_un sun = { .sun_family = AF_UNIX };
        pid_t pid = -1;
        int r;

        if (strlen(socket_path) >= sizeof(sun.sun_path))
                return -ENAMETOOLONG;
        /* socat takes ',' and ':' as separators: a path with them would be read as options. */
        if (strpbrk(socket_path, ",:!\\\"'"))
                return -EINVAL;
        strcpy(sun.sun_path, socket_path);
        if (asprintf(&listen, "UNIX-LISTEN:%s,fork,unlink-early,mode=600", socket_path) < 0 ||
            asprintf(&connect_to, "TCP4:127.0.0.1:%d", CONFINE_PROXY_PORT) < 0)
                return -ENOMEM;
        r = spawn_bridge((char *[]){ (char *)SOCAT_PATH, listen, connect_to, NULL }, &pid);
        if (r < 0)
                return r;
        r = await_accept(pid, AF_UNIX, (struct sockaddr *)&sun, sizeof(sun));
        if (r < 0) {
                confine_bridge_stop(pid);
                return r;
        }
        *ret_pid = pid;
        return 0;
}

int confine_inner_bridge_start(int port, const char *socket_path, pid_t *ret_pid)
{
        _cleanup_free_ char *listen = NULL, *connect_to = NULL;
        pid_t pid = -1;
        int r;

        /* socat takes ',' and ':' as separators: a path with them would be read as options. */
        if (strpbrk(socket_path, ",:!\\\"'"))
                return -EINVAL;
        /* TCP4 and bind= spelled out: a newer socat's plain TCP-LISTEN may open an IPv6 socket. */
        if (asprintf(&listen, "TCP4-LISTEN:%d,bind=127.0.0.1,fork,reuseaddr", port) < 0 ||
            asprintf(&connect_to, "UNIX-CONNECT:%s", socket_path) < 0)
                return -ENOMEM;
        r = spawn_bridge((char *[]){ (char *)SOCAT_PATH, listen, connect_to, NULL }, &pid);
        if (r < 0)
                return r;
        r = await_listen_loopback(pid, port);
        if (r < 0) {
                confine_bridge_stop(pid);
                return r;
        }
        *ret_pid = pid;
        return 0;
}

int confine_spawn(char *const *argv, char *const *env, int filter_fd, int out_fd, int err_fd, pid_t *ret_pid)
{
        pid_t pid = fork();

        if (pid < 0)
                return -errno;
        if (pid == 0) {
                int null = open("/dev/null", O_RDONLY | O_CLOEXEC);

                /* Above the fixed numbers first, so no dup2() below overwrites another's source. */
                int f = fcntl(filter_fd, F_DUPFD_CLOEXEC, 10);
                int o = fcntl(out_fd, F_DUPFD_CLOEXEC, 10);
                int e = fcntl(err_fd, F_DUPFD_CLOEXEC, 10);

                if (null < 0 || f < 0 || o < 0 || e < 0)
                        _exit(127);
                if (dup2(null, STDIN_FILENO) < 0 || dup2(o, STDOUT_FILENO) < 0 ||
                    dup2(e, STDERR_FILENO) < 0 || dup2(f, CONFINE_SECCOMP_FD) < 0)
                        _exit(127);
                (void)close_range(CONFINE_SECCOMP_FD + 1, ~0U, 0);
                (void)execve(argv[0], argv, env);
                _exit(127);
        }
        *ret_pid = pid;
        return 0;
}

/* "NAME=VALUE" of a sysctl, or "NAME absent". */
static void sysctl_value(const char *name, const char *path, char *buf, size_t size)
{
        _cleanup_close_ int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        char v[64];
        ssize_t n = fd < 0 ? -1 : read(fd, v, sizeof(v) - 1);

        if (n < 0) {
                (void)snprintf(buf, size, "%s absent", name);
                return;
        }
        v[n] = '\0';
        v[strcspn(v, "\n")] = '\0';
        (void)snprintf(buf, size, "%s=%s", name, v);
}

int confine_preflight(char *reason, size_t size)
{
        _cleanup_close_ int filter = -EBADF, rd = -EBADF, wr = -EBADF;
        _cleanup_free_ char *out = NULL;
        char line[256], a[96], b[96], c[96];
        Strv s = { 0 };
        size_t n = 0;
        int p[2], r, status;
        pid_t pid = -1;

        if (access(BWRAP_PATH, X_OK) < 0 || access(SOCAT_PATH, X_OK) < 0) {
                r = -errno;
                (void)snprintf(reason, size, "%s: %s",
                               access(BWRAP_PATH, X_OK) < 0 ? BWRAP_PATH : SOCAT_PATH, strerror(-r));
                return r;
        }
        r = confine_seccomp_fd(&filter);
        if (r < 0) {
                (void)snprintf(reason, size, "cannot build the seccomp filter: %s", strerror(-r));
                return r;
        }
        r = push_namespaces(&s);
        r = r < 0 ? r : strv_push(&s, strdup("--"));
        r = r < 0 ? r : strv_push(&s, strdup(SOCAT_PATH));
        r = r < 0 ? r : strv_push(&s, strdup("-V"));
        if (r < 0 || pipe2(p, O_CLOEXEC) < 0) {
                strv_clear(&s);
                (void)snprintf(reason, size, "out of resources");
                return r < 0 ? r : -errno;
        }
        rd = p[0];
        wr = p[1];
        {
                int null = open("/dev/null", O_WRONLY | O_CLOEXEC);

                r = null < 0 ? -errno : confine_spawn(s.v, (char *[]){ NULL }, filter, null, wr, &pid);
                if (null >= 0)
                        (void)close(null);
        }
        strv_clear(&s);
        if (r < 0) {
                (void)snprintf(reason, size, "cannot start %s: %s", BWRAP_PATH, strerror(-r));
                return r;
        }
        closep(&wr);
        wr = -EBADF;
        r = read_pipe_bounded(rd, 4096, &out, &n);
        status = wait_exit_status(pid);
        if (r >= 0 && status == 0)
                return 0;
        spawn_first_line(out ? out : "", out ? n : 0, line, sizeof(line));
        sysctl_value("kernel.apparmor_restrict_unprivileged_userns",
                     "/proc/sys/kernel/apparmor_restrict_unprivileged_userns", a, sizeof(a));
        sysctl_value("kernel.unprivileged_userns_clone", "/proc/sys/kernel/unprivileged_userns_clone", b,
                     sizeof(b));
        sysctl_value("user.max_user_namespaces", "/proc/sys/user/max_user_namespaces", c, sizeof(c));
        (void)snprintf(reason, size,
                       "bubblewrap cannot run socat as the sandbox user (status %d): %s (%s, %s, %s)",
                       status, line[0] ? line : "no message", a, b, c);
        return -EPERM;
}
