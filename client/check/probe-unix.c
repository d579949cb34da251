/* SPDX-License-Identifier: MIT */
/* local-abstract and local-sockets: every unix socket of the host that the sandbox user can reach, found
 * by what it is (sock_diag: its type, its state, its exact name, the inode of the file it is bound to)
 * rather than by the name /proc/net/unix prints. A socket file renamed, hard-linked elsewhere and
 * unlinked, or bound by a relative name is looked for by its inode in the trees where sockets live; an
 * abstract name is connected to with its exact bytes, NULs and all; datagram sockets count as much as
 * listening ones. A socket that cannot be found is a failure the operator must look at, never a pass. */
#include "probe-unix.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "check-line.h"
#include "macro.h"
#include "probe-emit.h"
#include "unix-diag.h"

#define MAX_SOCKETS 1024   /* sockets of the namespace that accept, each tried */
#define MAX_FILES   4096   /* socket files found by the walk */
#define MAX_ENTRIES 500000 /* entries the walk visits */
#define CONNECT_MS  1000   /* one connect() */
#define LIST_ENTRY  160    /* a name in a detail, at most */

/* Where a socket file can be: every tree a daemon or a user may bind in (not /proc, /sys, /usr, whose
 * sockets would be a package's, found at their bound names). */
static const char *const walk_roots[] = { "/run",  "/var", "/tmp", "/dev",   "/srv", "/opt",
                                          "/home", "/etc", "/mnt", "/media", "/root" };

/* The host's sockets that every user of a systemd machine is meant to reach, each deciding for itself
 * what a caller may do: the system bus (where polkit decides), the journal's, the service manager's
 * notification socket (it takes a message from a process of a unit alone), the user database's
 * read-only services, and systemd's own varlink services in /run/systemd (io.systemd.*: hostnamed,
 * credentials, the OOM daemon; systemd 252 named the last one io.system.ManagedOOM). Anything else
 * reachable is named, to be stopped or allowed by name. A name ending '/' or '.' is a prefix of a name
 * in that directory. */
static const char *const host_sockets[] = {
        "/run/dbus/system_bus_socket",
        "/var/run/dbus/system_bus_socket",
        "/run/systemd/journal/socket",
        "/run/systemd/journal/stdout",
        "/run/systemd/journal/dev-log",
        "/run/systemd/notify",
        "/run/systemd/userdb/",
        "/run/systemd/io.systemd.",
        "/run/systemd/io.system.ManagedOOM",
};

typedef struct SocketFile {
        dev_t dev;
        ino_t ino;
        char *path;
} SocketFile;

/* The walk's findings: made once, by the first probe that needs them, under walk_lock. */
static pthread_mutex_t walk_lock = PTHREAD_MUTEX_INITIALIZER;
static SocketFile files[MAX_FILES];
static size_t n_files, n_entries;
static int walk_error; /* 0, or why the walk could not see everything (-E2BIG: too much) */
static bool walked;

static int collect(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        (void)ftw;
        if (++n_entries > MAX_ENTRIES) {
                walk_error = -E2BIG;
                return 1;
        }
        if (flag != FTW_F || !S_ISSOCK(st->st_mode))
                return 0;
        if (n_files == MAX_FILES) {
                walk_error = -E2BIG;
                return 1;
        }
        files[n_files].path = strdup(path);
        if (!files[n_files].path) {
                walk_error = -ENOMEM;
                return 1;
        }
        files[n_files].dev = st->st_dev;
        files[n_files++].ino = st->st_ino;
        return 0;
}

/* A directory the sandbox user cannot read is one it cannot reach into either: the walk goes on. */
static void walk_once(void)
{
        for (size_t i = 0; i < ELEMENTSOF(walk_roots) && !walk_error; i++)
                (void)nftw(walk_roots[i], collect, 16, FTW_PHYS);
        walked = true;
}

typedef struct Probe {
        const InsideArgs *args;
        char home[PATH_MAX];
        char runtime[64];
        char list[CHECK_DETAIL_MAX];
        char unresolved[CHECK_DETAIL_MAX];
        unsigned tried, unreachable, own;
} Probe;

static bool reaches(const struct sockaddr_un *sa, socklen_t len, unsigned type)
{
        _cleanup_close_ int fd = socket(AF_UNIX, (int)type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        struct pollfd p;
        int err = 0;
        socklen_t el = sizeof(err);

        if (fd < 0)
                return false;
        if (connect(fd, (const struct sockaddr *)sa, len) == 0)
                return true;
        if (errno == EAGAIN) /* a backlog that is full: reached all the same */
                return true;
        if (errno != EINPROGRESS)
                return false;
        p = (struct pollfd){ fd, POLLOUT, 0 };
        if (poll(&p, 1, CONNECT_MS) <= 0)
                return false;
        return getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) == 0 && err == 0;
}

static bool path_reaches(const char *path, unsigned type)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        size_t n = strlen(path);

        if (n == 0 || n >= sizeof(sa.sun_path))
                return false;
        memcpy(sa.sun_path, path, n + 1);
        return reaches(&sa, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + 1), type);
}

static void list_add(char *list, const char *name, size_t name_len, const UnixSocket *owner)
{
        char shown[LIST_ENTRY + 1], uid[32] = "";
        size_t l = strlen(list), k = 0;

        /* An abstract name's NULs as '@', as /proc/net/unix shows them; check_escape() does the rest. */
        for (size_t i = 0; i < name_len && k < LIST_ENTRY; i++) {
                char c = name[i];

                if (c == '\0')
                        c = '@';
                shown[k++] = c;
        }
        shown[k] = '\0';
        if (owner->has_uid)
                (void)snprintf(uid, sizeof(uid), " (uid %u)", (unsigned)owner->uid);
        (void)snprintf(list + l, CHECK_DETAIL_MAX - l, "%s%s%s", l ? " " : "", shown, uid);
}

static bool abstract_allowed(const InsideArgs *a, const UnixSocket *s)
{
        /* Allowed by name only where the name has no NUL of its own past the first: a name written in
         * the configuration cannot hold one. */
        if (strlen(s->name + 1) + 1 != s->name_len)
                return false;
        if (a->abstract && strcmp(s->name + 1, a->abstract) == 0)
                return true;
        for (size_t i = 0; i < a->n_allow_socket; i++)
                if (a->allow_socket[i][0] == '@' && strcmp(a->allow_socket[i] + 1, s->name + 1) == 0)
                        return true;
        return false;
}

static bool path_allowed(const Probe *p, const char *path)
{
        const InsideArgs *a = p->args;
        size_t n;

        if (a->socket_control && strcmp(path, a->socket_control) == 0)
                return true;
        n = strlen(p->home);
        if (n > 1 && strncmp(path, p->home, n) == 0 && path[n] == '/')
                return true;
        n = strlen(p->runtime);
        if (strncmp(path, p->runtime, n) == 0)
                return true;
        for (size_t i = 0; i < ELEMENTSOF(host_sockets); i++) {
                bool prefix;

                n = strlen(host_sockets[i]);
                prefix = host_sockets[i][n - 1] == '/' || host_sockets[i][n - 1] == '.';
                if (prefix ? strncmp(path, host_sockets[i], n) == 0 && !strchr(path + n, '/')
                           : strcmp(path, host_sockets[i]) == 0)
                        return true;
        }
        for (size_t i = 0; i < a->n_allow_socket; i++)
                if (strcmp(a->allow_socket[i], path) == 0)
                        return true;
        return false;
}

static int on_abstract(const UnixSocket *s, void *userdata)
{
        Probe *p = userdata;
        struct sockaddr_un sa = { .sun_family = AF_UNIX };

        if (s->name[0] != '\0' || abstract_allowed(p->args, s))
                return 0;
        /* The sandbox user's own (another probe's process, a client socket the kernel bound a name to
         * itself): reaching it crosses nothing. */
        if (s->has_uid && s->uid == (uint32_t)getuid()) {
                p->own++;
                return 0;
        }
        p->tried++;
        memcpy(sa.sun_path, s->name, s->name_len);
        if (reaches(&sa, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + s->name_len), s->type))
                list_add(p->list, s->name, s->name_len, s);
        return 0;
}

/* Whether the file at path is the one the socket is bound to. */
static bool is_bound_file(const char *path, const UnixSocket *s, int *ret_errno)
{
        struct stat st;

        if (lstat(path, &st) < 0) {
                *ret_errno = errno;
                return false;
        }
        *ret_errno = 0;
        return S_ISSOCK(st.st_mode) && st.st_ino == s->vfs_ino && unix_diag_same_dev(st.st_dev, s->vfs_dev);
}

/* Whether the directory path names its file in is one the sandbox user cannot search: closed to it, or
 * not there at all where it looks (another user's runtime directory, a mount it does not see). */
static bool dir_closed(const char *path)
{
        const char *slash = strrchr(path, '/');
        char dir[UNIX_DIAG_NAME_MAX + 1];

        if (!slash || slash == path)
                return access("/", X_OK) < 0;
        (void)snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
        return access(dir, X_OK) < 0;
}

/* Tries every name the socket's file has where the walk found it: 1 one was reached (named in the
 * list), 0 none, -ENOENT the walk found none. */
static int try_found(Probe *p, const UnixSocket *s)
{
        bool any = false;

        pthread_mutex_lock(&walk_lock);
        if (!walked)
                walk_once();
        pthread_mutex_unlock(&walk_lock);
        for (size_t i = 0; i < n_files; i++) {
                if (files[i].ino != s->vfs_ino || !unix_diag_same_dev(files[i].dev, s->vfs_dev))
                        continue;
                any = true;
                if (path_allowed(p, files[i].path))
                        continue;
                if (path_reaches(files[i].path, s->type)) {
                        list_add(p->list, files[i].path, strlen(files[i].path), s);
                        return 1;
                }
        }
        return any ? 0 : -ENOENT;
}

static int on_path(const UnixSocket *s, void *userdata)
{
        Probe *p = userdata;
        int err = 0;

        if (s->name[0] == '\0')
                return 0;
        if (!s->has_vfs) { /* bound, but its file's inode not told: nothing to look for */
                list_add(p->unresolved, s->name, s->name_len, s);
                return 0;
        }
        /* Where it was bound, when that is still its file: the usual case, and a whole answer, since every
         * name of a file shares its mode. */
        if (s->name[0] == '/' && is_bound_file(s->name, s, &err)) {
                if (path_allowed(p, s->name))
                        return 0;
                p->tried++;
                if (path_reaches(s->name, s->type))
                        list_add(p->list, s->name, s->name_len, s);
                return 0;
        }
        p->tried++;
        /* Renamed, linked elsewhere, bound by a relative name, or behind a directory the sandbox user
         * cannot search: by its inode, where the walk found it. */
        if (try_found(p, s) != -ENOENT)
                return 0;
        if (s->name[0] == '/' && (err == EACCES || dir_closed(s->name))) {
                p->unreachable++; /* its directory is closed to the sandbox user, or not there for it at
                                   * all, and no other name of it was found in an open one */
                return 0;
        }
        list_add(p->unresolved, s->name, s->name_len, s);
        return 0;
}

static void probe_init(Probe *p, const InsideArgs *a)
{
        struct passwd pwd, *pw = NULL;
        char pwbuf[4096];

        *p = (Probe){ .args = a, .home = "/" };
        /* getpwuid_r: the other probes' threads look the user up too. */
        if (getpwuid_r(getuid(), &pwd, pwbuf, sizeof(pwbuf), &pw) == 0 && pw)
                (void)snprintf(p->home, sizeof(p->home), "%s", pw->pw_dir);
        (void)snprintf(p->runtime, sizeof(p->runtime), "/run/user/%u/", (unsigned)getuid());
}

void probe_unix_abstract(const InsideArgs *a)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        long long t = probe_now_ms();
        size_t n = a->abstract ? strlen(a->abstract) : 0;
        Probe p;
        int r;

        probe_init(&p, a);
        if (n > 0 && n < sizeof(sa.sun_path) - 1) {
                memcpy(sa.sun_path + 1, a->abstract, n);
                if (reaches(&sa, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n), SOCK_STREAM))
                        probe_emit("local-abstract-control", "ok", t, "reached @%s (the runner's)",
                                   a->abstract);
                else
                        probe_emit("local-abstract-control", "fail", t, "did not reach @%s (the runner's)",
                                   a->abstract);
        } else
                probe_emit("local-abstract-control", "fail", t,
                           "no abstract socket of the runner's to reach");
        t = probe_now_ms();
        r = unix_diag_dump(MAX_SOCKETS, on_abstract, &p);
        if (r == -E2BIG)
                probe_emit("local-abstract", "fail", t, "more than %d sockets", MAX_SOCKETS);
        else if (r < 0)
                probe_emit("local-abstract", "fail", t, "cannot list the unix sockets (sock_diag): %s",
                           strerror(-r));
        else if (p.list[0])
                probe_emit("local-abstract", "fail", t, "reached %s", p.list);
        else
                probe_emit(
                        "local-abstract", "ok", t,
                        "reached none of %u other abstract sockets (%u of the sandbox user's own not tried)",
                        p.tried, p.own);
}

void probe_unix_paths(const InsideArgs *a)
{
        long long t = probe_now_ms();
        Probe p;
        int r;

        probe_init(&p, a);
        if (a->socket_control && path_reaches(a->socket_control, SOCK_STREAM))
                probe_emit("local-sockets-control", "ok", t, "reached %s (the runner's)", a->socket_control);
        else
                probe_emit("local-sockets-control", "fail", t, "did not reach %s (the runner's)",
                           a->socket_control ? a->socket_control : "a socket of the runner's");
        t = probe_now_ms();
        r = unix_diag_dump(MAX_SOCKETS, on_path, &p);
        if (r == 0 && walk_error)
                r = walk_error;
        if (r == -E2BIG)
                probe_emit("local-sockets", "fail", t,
                           "more than %d sockets, %d socket files or %d entries: "
                           "cannot tell",
                           MAX_SOCKETS, MAX_FILES, MAX_ENTRIES);
        else if (r < 0)
                probe_emit("local-sockets", "fail", t, "cannot list the unix sockets (sock_diag): %s",
                           strerror(-r));
        else if (p.list[0])
                probe_emit("local-sockets", "fail", t, "reached %s", p.list);
        else if (p.unresolved[0])
                probe_emit(
                        "local-sockets", "fail", t,
                        "sockets whose file was found nowhere, bound as: %s (cannot tell who reaches them)",
                        p.unresolved);
        else
                probe_emit("local-sockets", "ok", t,
                           "reached none of %u others (%u behind closed directories)", p.tried,
                           p.unreachable);
}
