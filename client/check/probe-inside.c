/* SPDX-License-Identifier: MIT */
/* agentic-job sandbox probe-inside ARGS: the sandbox side of the check, run as the sandbox user through
 * `helper enter` (never by hand: it is not in the usage). Each probe group runs in a thread of its own,
 * each attempt with a bounded time; each result is one JSON line on standard output (check-line.h).
 * Nothing else is written there. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <jansson.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "build-config.h"
#include "check-inside.h"
#include "check-line.h"
#include "check-text.h"
#include "config.h"
#include "egress-attempt.h"
#include "egress-policy.h"
#include "macro.h"
#include "package-owner.h"
#include "probe-containers.h"
#include "probe-emit.h"
#include "probe-home.h"
#include "probe-orphans.h"
#include "probe-processes.h"
#include "probe-proxy.h"
#include "probe-resources.h"
#include "probe-run.h"
#include "probe-unix.h"
#include "probe-userns.h"
#include "probes.h"
#include "procnet.h"
#include "ptrace-scope.h"
#include "read-file.h"
#include "walk-probe.h"

/* The check's own home (probe-home.h), made before the probes start. */
static char check_home[PATH_MAX];

extern char **environ;

#define STATE_DIR        "/etc/agentic-job"
#define POLICY_DIR       "/opt/egress-proxy/policy"
#define SYSTEMD_RUN      "/usr/bin/systemd-run"
#define PKCHECK          "/usr/bin/pkcheck"
#define LOGINCTL         "/usr/bin/loginctl"
#define CRONTAB          "/usr/bin/crontab"
#define ATQ              "/usr/bin/atq"
#define RUN0             "/usr/bin/run0"
#define SUDO             "/usr/bin/sudo"
#define SYSTEMCTL        "/usr/bin/systemctl"
#define DPKG_QUERY       "/usr/bin/dpkg-query"
#define RPM              "/usr/bin/rpm"
#define METADATA_URL     "http://169.254.169.254/"
#define CONNECT_MS       1000   /* one local connect() */
#define ALL_MS           45000  /* every probe */
#define WALK_ALL_MS      900000 /* every probe, with --walk: a walk of a hosted runner takes minutes */
#define MAX_LISTENERS    1024
#define ORPHANS_GRACE_MS 2000 /* podman's cleanup of its container, left to end by itself */
#define ORPHANS_KILL_MS  5000
#define WALK_TREES_TEXT  "/etc, /usr, /opt, /var/lib, /var/spool, /srv, /root and /boot"

static InsideArgs args_storage;
static const InsideArgs *const args = &args_storage;

/* ---- privilege ---- */

static void *probe_groups(void *unused)
{
        gid_t gids[1025];
        char named[CHECK_DETAIL_MAX] = "", bad[CHECK_DETAIL_MAX] = "";
        long long t = probe_now_ms();
        int n, resolved = 0;

        (void)unused;
        n = getgroups(1024, gids);
        if (n < 0) {
                probe_emit("groups-control", "fail", t, "getgroups: %s", strerror(errno));
                probe_emit("groups", "note", t, "not probed: its control failed");
                return NULL;
        }
        gids[n++] = getgid();
        for (int i = 0; i < n; i++) {
                struct group gr, *res = NULL;
                char buf[4096];
                const char *name = NULL;
                size_t l;

                if (getgrgid_r(gids[i], &gr, buf, sizeof(buf), &res) == 0 && res) {
                        name = res->gr_name;
                        resolved++;
                }
                l = strlen(named);
                (void)snprintf(named + l, sizeof(named) - l, "%s%s(%u)", l ? " " : "", name ? name : "?",
                               (unsigned)gids[i]);
                if (gids[i] == 0 || (name && group_is_root_equivalent(name))) {
                        l = strlen(bad);
                        (void)snprintf(bad + l, sizeof(bad) - l, "%s%s(%u)", l ? " " : "", name ? name : "?",
                                       (unsigned)gids[i]);
                }
        }
        if (resolved == 0) {
                probe_emit("groups-control", "fail", t, "none of the groups has a name: %s", named);
                probe_emit("groups", "note", t, "not probed: its control failed");
                return NULL;
        }
        probe_emit("groups-control", "ok", t, "groups: %s", named);
        if (bad[0])
                probe_emit("groups", "fail", t, "in groups that are root by another name: %s", bad);
        else
                probe_emit("groups", "ok", t, "in no group that is root by another name");
        return NULL;
}

/* Where Yama's scope is 0, a process of the sandbox user may trace any dumpable one of its own, not only
 * its descendants: one a step left behind could take over what a later step runs as that user (this very
 * side of the check, the exporter). The control tells a kernel without Yama from a /proc/sys that cannot
 * be read. */
static void *probe_ptrace_scope(void *unused)
{
        _cleanup_free_ char *release = NULL;
        long long t = probe_now_ms();
        unsigned scope = 0;
        size_t size = 0;
        int r;

        (void)unused;
        r = read_regular_nofollow(AT_FDCWD, "/proc/sys/kernel/osrelease", 256, &release, &size);
        if (r < 0 || size == 0) {
                probe_emit("ptrace-scope-control", "fail", t, "cannot read /proc/sys/kernel/osrelease: %s",
                           r < 0 ? strerror(-r) : "empty");
                probe_emit("ptrace-scope", "note", t, "not probed: its control failed");
                return NULL;
        }
        release[strcspn(release, "\n")] = '\0';
        probe_emit("ptrace-scope-control", "ok", t, "kernel.osrelease reads %s", release);
        t = probe_now_ms();
        r = ptrace_scope_read(YAMA_PTRACE_SCOPE_PATH, &scope);
        if (r == -ENOENT)
                probe_emit("ptrace-scope", "note", t,
                           "this kernel has no Yama (no %s): uids alone decide who may trace whom",
                           YAMA_PTRACE_SCOPE_PATH);
        else if (r < 0)
                probe_emit("ptrace-scope", "fail", t, "cannot read %s: %s", YAMA_PTRACE_SCOPE_PATH,
                           r == -EINVAL ? "not a scope from 0 to 3" : strerror(-r));
        else if (scope == 0)
                probe_emit("ptrace-scope", "fail", t,
                           "kernel.yama.ptrace_scope is 0: any process of the sandbox user may trace any "
                           "other");
        else
                probe_emit("ptrace-scope", "ok", t, "kernel.yama.ptrace_scope is %u", scope);
        return NULL;
}

/* ---- files ---- */

static void *probe_private_dirs(void *unused)
{
        (void)unused;
        for (size_t i = 0; i < args->n_private; i++) {
                const char *d = args->private[i];
                char name[CHECK_NAME_MAX];
                long long t = probe_now_ms();
                struct stat st;
                bool r, x;

                (void)snprintf(name, sizeof(name), "private-dir:%s", d);
                if (lstat(d, &st) < 0) {
                        probe_emit(name, "note", t, "%s: %s: not probed", d, strerror(errno));
                        continue;
                }
                r = faccessat(AT_FDCWD, d, R_OK, AT_EACCESS) == 0;
                x = faccessat(AT_FDCWD, d, X_OK, AT_EACCESS) == 0;
                if (r || x)
                        probe_emit(name, "fail", t, "%s is %s by the sandbox user (mode %04o)", d,
                                   r && x ? "readable and searchable"
                                   : r    ? "readable"
                                          : "searchable",
                                   (unsigned)(st.st_mode & 07777));
                else
                        probe_emit(name, "ok", t, "%s is closed (mode %04o)", d,
                                   (unsigned)(st.st_mode & 07777));
        }
        return NULL;
}

/* A user manager runs units that outlive the command that started them, outside its cgroup, without
 * no_new_privs: the sandbox user asks it for one, as anyone would, with XDG_RUNTIME_DIR set. */
static void *probe_user_manager(void *unused)
{
        char st[64];
        char runtime[64], xdg[96];
        long long t = probe_now_ms();
        size_t n = 0;
        char *env[64];
        int r;

        (void)unused;
        (void)snprintf(runtime, sizeof(runtime), "/run/user/%u", (unsigned)getuid());
        (void)snprintf(xdg, sizeof(xdg), "XDG_RUNTIME_DIR=%s", runtime);
        if (access("/run/systemd/system", F_OK) < 0) {
                probe_emit("user-manager-control", "note", t,
                           "systemd is not running: there is no user manager");
                probe_emit("user-manager", "note", t, "not probed: systemd is not running");
                return NULL;
        }
        if (access(SYSTEMD_RUN, X_OK) < 0) {
                probe_emit("user-manager-control", "fail", t, "no " SYSTEMD_RUN);
                probe_emit("user-manager", "note", t, "not probed: its control failed");
                return NULL;
        }
        probe_emit("user-manager-control", "ok", t, "systemd runs and %s is there", SYSTEMD_RUN);
        t = probe_now_ms();
        if (args->user_manager_kept) {
                probe_emit(
                        "user-manager", "note", t,
                        "not probed: [sandbox] user-manager = true keeps the sandbox user's user manager");
                return NULL;
        }
        for (char **e = environ; *e && n < ELEMENTSOF(env) - 2; e++)
                if (strncmp(*e, "XDG_RUNTIME_DIR=", 16) != 0)
                        env[n++] = *e;
        env[n++] = xdg;
        env[n] = NULL;
        r = probe_run((char *const[]){ (char *)SYSTEMD_RUN, (char *)"--user", (char *)"--quiet",
                                       (char *)"--wait", (char *)"--collect", (char *)"/bin/true", NULL },
                      env, NULL, 0);
        if (r == 0)
                probe_emit("user-manager", "fail", t,
                           "systemd-run --user started a unit: the sandbox user has a user manager");
        else if (probe_refused(r))
                probe_emit("user-manager", "ok", t,
                           "systemd-run --user refused (status %d): no user manager", r);
        else
                probe_emit("user-manager", "fail", t, "systemd-run --user: cannot tell (%s)",
                           probe_status_text(r, st, sizeof(st)));
        return NULL;
}

/* polkit asked about the sandbox side's own process, for managing the machine's units (what run0 and
 * systemctl need): setup's rule answers no to every action of the sandbox user. pkcheck's statuses: 0
 * authorized, 1 not authorized, 2 an administrator could authorize it (a challenge), 3 dismissed; anything
 * else is no answer. */
static void *probe_polkit(void *unused)
{
        char pid[32];
        long long t = probe_now_ms();
        int r;

        (void)unused;
        if (access(PKCHECK, X_OK) < 0) {
                probe_emit("polkit-control", "note", t, "no " PKCHECK ": polkit is not installed");
                probe_emit("polkit", "note", t, "not probed: polkit is not installed");
                return NULL;
        }
        (void)snprintf(pid, sizeof(pid), "%d", (int)getpid());
        r = probe_run_timed((char *const[]){ (char *)PKCHECK, (char *)"--action-id",
                                             (char *)"org.freedesktop.systemd1.manage-units",
                                             (char *)"--process", pid, NULL },
                            environ, NULL, 0, false, PROBE_POLKIT_MS);
        if (r < 0 || r > 3) {
                probe_emit("polkit-control", "fail", t, "pkcheck got no answer from polkitd (status %d)", r);
                probe_emit("polkit", "note", t, "not probed: its control failed");
                return NULL;
        }
        probe_emit("polkit-control", "ok", t, "polkitd answered pkcheck (status %d)", r);
        if (r == 0)
                probe_emit("polkit", "fail", t,
                           "polkit authorizes the sandbox user to manage the machine's units");
        else if (r == 1)
                probe_emit("polkit", "ok", t,
                           "polkit refuses the sandbox user to manage the machine's units");
        else
                probe_emit("polkit", "fail", t,
                           "polkit would let an administrator authorize it (status %d): no rule refuses the "
                           "sandbox "
                           "user",
                           r);
        return NULL;
}

/* Lingering keeps a user's manager, and what it started, after the user's last session. */
#define LINGER_DIR "/var/lib/systemd/linger"

/* 1 where logind's flag for the sandbox user is there, 0 where it is not, -1 where that cannot be told. */
static int user_lingers(void)
{
        struct passwd pw, *res = NULL;
        char buf[4096], path[PATH_MAX];
        struct stat st;

        if (getpwuid_r(getuid(), &pw, buf, sizeof(buf), &res) != 0 || !res)
                return -1;
        if (snprintf(path, sizeof(path), "%s/%s", LINGER_DIR, res->pw_name) >= (int)sizeof(path))
                return -1;
        if (lstat(path, &st) == 0)
                return 1;
        return errno == ENOENT ? 0 : -1;
}

static void *probe_linger(void *unused)
{
        char st[64], out[1024], first[512] = "";
        const char *why;
        long long t = probe_now_ms();
        int r, lingers;

        (void)unused;
        if (access("/run/systemd/system", F_OK) < 0 || access(LOGINCTL, X_OK) < 0) {
                probe_emit("linger-control", "note", t, "systemd-logind is not running here");
                probe_emit("linger", "note", t, "not probed: there is no logind");
                return NULL;
        }
        /* Twice at most: logind is one thread, and on a loaded two-core runner it once took longer than a
         * probe's bound to answer. A control that fails only fails closed, but it must say why. */
        for (int attempt = 1; attempt <= 2; attempt++) {
                r = probe_run_capture((char *const[]){ (char *)LOGINCTL, (char *)"--no-legend",
                                                       (char *)"list-users", NULL },
                                      environ, out, sizeof(out), true);
                if (r == 0)
                        break;
                (void)snprintf(first, sizeof(first), "%s: %s", probe_status_text(r, st, sizeof(st)),
                               probe_last_line(out));
        }
        if (r != 0) {
                probe_emit("linger-control", "fail", t, "loginctl list-users failed twice (last %s: %s)",
                           probe_status_text(r, st, sizeof(st)), probe_last_line(out));
                probe_emit("linger", "note", t, "not probed: its control failed");
                return NULL;
        }
        if (first[0])
                probe_emit("linger-control", "ok", t,
                           "logind answers loginctl (at the second attempt; the first: %s)", first);
        else
                probe_emit("linger-control", "ok", t, "logind answers loginctl");
        t = probe_now_ms();
        /* logind answers only when polkitd has, one thread each on a two-core runner: a bound of their
         * own. loginctl's own D-Bus call gives up at 25 s with status 1, which is no refusal. */
        r = probe_run_timed((char *const[]){ (char *)LOGINCTL, (char *)"--no-ask-password",
                                             (char *)"enable-linger", NULL },
                            environ, out, sizeof(out), true, PROBE_POLKIT_MS);
        why = probe_last_line(out);
        /* logind writes the flag before it answers: what it says is checked against what it did. */
        lingers = user_lingers();
        if (r == 0 || lingers > 0) {
                /* Undone at once, by the sandbox user itself: kill-user ends what it started. */
                int undo = probe_run((char *const[]){ (char *)LOGINCTL, (char *)"--no-ask-password",
                                                      (char *)"disable-linger", NULL },
                                     environ, NULL, 0);
                probe_emit("linger", "fail", t, "loginctl enable-linger worked (%s; undone: status %d)",
                           probe_status_text(r, st, sizeof(st)), undo);
        } else if (probe_refused(r) && !strstr(why, "timed out") && lingers == 0)
                probe_emit("linger", "ok", t, "loginctl enable-linger refused (status %d: %s)", r, why);
        else
                probe_emit("linger", "fail", t, "loginctl enable-linger: cannot tell (%s: %s%s)",
                           probe_status_text(r, st, sizeof(st)), why,
                           lingers < 0 ? "; " LINGER_DIR " cannot be read" : "");
        return NULL;
}

/* run0 asks the service manager, through polkit, for a command as root: no setuid, so no_new_privs does
 * not stop it; only polkit's answer does. */
static void *probe_run0(void *unused)
{
        char st[64];
        long long t = probe_now_ms();
        int r;

        (void)unused;
        if (access(RUN0, X_OK) < 0) {
                probe_emit("run0-control", "note", t, "no " RUN0 " (systemd 256 or newer has it)");
                probe_emit("run0", "note", t, "not probed: there is no run0");
                return NULL;
        }
        r = probe_run((char *const[]){ (char *)RUN0, (char *)"--version", NULL }, environ, NULL, 0);
        if (r != 0) {
                probe_emit("run0-control", "fail", t, "run0 --version failed (status %d)", r);
                probe_emit("run0", "note", t, "not probed: its control failed");
                return NULL;
        }
        probe_emit("run0-control", "ok", t, "run0 runs");
        t = probe_now_ms();
        r = probe_run_timed(
                (char *const[]){ (char *)RUN0, (char *)"--no-ask-password", (char *)"/bin/true", NULL },
                environ, NULL, 0, false, PROBE_POLKIT_MS);
        if (r == 0)
                probe_emit("run0", "fail", t, "run0 ran a command as root for the sandbox user");
        else if (probe_refused(r))
                probe_emit("run0", "ok", t, "run0 refused (status %d)", r);
        else
                probe_emit("run0", "fail", t, "run0: cannot tell (%s)",
                           probe_status_text(r, st, sizeof(st)));
        return NULL;
}

/* sudo is set-uid root: under enter's no_new_privs its bit does nothing, so it cannot become root to read
 * a rule at all. The control makes sure there is a set-uid sudo to try, so a missing one never passes. */
static void *probe_sudo(void *unused)
{
        char status_text[64];
        char out[256];
        struct stat st;
        long long t = probe_now_ms();
        int r;

        (void)unused;
        if (stat(SUDO, &st) < 0) {
                probe_emit("sudo-control", "note", t, SUDO ": %s: sudo is not installed", strerror(errno));
                probe_emit("sudo", "note", t, "not probed: there is no sudo");
                return NULL;
        }
        if (!S_ISREG(st.st_mode) || st.st_uid != 0 || !(st.st_mode & S_ISUID)) {
                probe_emit("sudo-control", "fail", t, SUDO " is not a set-uid program of root's (mode %04o)",
                           (unsigned)(st.st_mode & 07777));
                probe_emit("sudo", "note", t, "not probed: its control failed");
                return NULL;
        }
        probe_emit("sudo-control", "ok", t, SUDO " is set-uid root (mode %04o)",
                   (unsigned)(st.st_mode & 07777));
        t = probe_now_ms();
        r = probe_run_capture((char *const[]){ (char *)SUDO, (char *)"-n", (char *)"/bin/true", NULL },
                              environ, out, sizeof(out), true);
        out[strcspn(out, "\n")] = '\0';
        if (r == 0)
                probe_emit("sudo", "fail", t, "sudo ran a command as root for the sandbox user");
        else if (probe_refused(r))
                probe_emit("sudo", "ok", t, "sudo refused (status %d): %s", r, out);
        else
                probe_emit("sudo", "fail", t, "sudo: cannot tell (%s): %s",
                           probe_status_text(r, status_text, sizeof(status_text)), out);
        return NULL;
}

/* What setup installed and root trusts: the sandbox user must be able to change none of it. Asked with
 * faccessat(2), which answers as the kernel would for a write (modes, ACLs, read-only mounts) and changes
 * nothing. */
static void *probe_state_write(void *unused)
{
        const char *const state[] = {
                STATE_DIR,
                CONFIG_PATH,
                HELPER_DIR,
                HELPER_PATH,
                args->proxy_port ? POLICY_DIR : NULL,
                args->proxy_port ? EGRESS_POLICY_PATH : NULL,
        };
        char list[CHECK_DETAIL_MAX] = "", buf[4096];
        struct passwd pw, *res = NULL;
        long long t = probe_now_ms();
        unsigned n = 0;

        (void)unused;
        if (getpwuid_r(getuid(), &pw, buf, sizeof(buf), &res) != 0 || !res ||
            faccessat(AT_FDCWD, res->pw_dir, W_OK, AT_EACCESS) < 0)
                probe_emit("state-write-control", "fail", t,
                           "the sandbox user cannot write its own home (%s)",
                           res ? res->pw_dir : "no user entry");
        else
                probe_emit("state-write-control", "ok", t, "the sandbox user may write its home %s",
                           res->pw_dir);
        t = probe_now_ms();
        for (size_t i = 0; i < ELEMENTSOF(state); i++) {
                size_t l;

                if (!state[i])
                        continue;
                n++;
                if (faccessat(AT_FDCWD, state[i], W_OK, AT_EACCESS) < 0)
                        continue;
                l = strlen(list);
                (void)snprintf(list + l, sizeof(list) - l, "%s%s", l ? " " : "", state[i]);
        }
        if (list[0])
                probe_emit("state-write", "fail", t, "the sandbox user may write %s", list);
        else
                probe_emit("state-write", "ok", t, "none of %u files and directories of root's is writable",
                           n);
        return NULL;
}

/* ---- network ---- */

static void *probe_network(void *unused)
{
        char st[64];
        long long t = probe_now_ms();
        char code[8];
        int r;

        (void)unused;
        r = probe_curl_code(args->control_url, args->proxy_port == 0, code);
        if (r < 0 || r == 127) {
                probe_emit("network-control", "fail", t, "cannot run " PROBE_CURL);
                probe_emit("metadata", "note", t, "not probed: no curl");
                probe_emit("egress-direct", "note", t, "not probed: no curl");
                return NULL;
        }
        if (r == 0 && code[0] != '0' && code[0] != '4' && code[0] != '5')
                probe_emit("network-control", "ok", t, "%s answered %s%s", args->control_url, code,
                           args->proxy_port ? " through the proxy" : "");
        else
                probe_emit("network-control", "fail", t, "%s: HTTP %s, curl status %d", args->control_url,
                           code, r);

        t = probe_now_ms();
        r = probe_curl_code(METADATA_URL, true, code);
        if (strcmp(code, "000") != 0 || !probe_refused(r))
                probe_emit("metadata", "fail", t, METADATA_URL " answered %s (curl: %s)", code,
                           probe_status_text(r, st, sizeof(st)));
        else
                probe_emit("metadata", "ok", t, METADATA_URL " not reached (curl status %d)", r);

        t = probe_now_ms();
        if (args->proxy_port == 0) {
                probe_emit("egress-direct", "note", t,
                           "[egress] proxy = false: the sandbox reaches the network directly");
                return NULL;
        }
        r = probe_curl_code(args->control_url, true, code);
        if (strcmp(code, "000") != 0 || !probe_refused(r))
                probe_emit("egress-direct", "fail", t, "%s answered %s without the proxy (curl: %s)",
                           args->control_url, code, probe_status_text(r, st, sizeof(st)));
        else
                probe_emit("egress-direct", "ok", t, "%s not reached without the proxy (curl status %d)",
                           args->control_url, r);
        return NULL;
}

/* Around the proxy without HTTP: a TCP connection, a datagram (QUIC's port), a DNS query to each
 * resolver. Each refused is a pass; the runner side makes the same attempts as its controls. */
static void *probe_egress_raw(void *unused)
{
        static const char payload[] = "agentic-job-check";
        struct sockaddr_storage ss;
        socklen_t len = 0;
        long long t = probe_now_ms();
        unsigned char query[128];
        size_t n_query = egress_dns_query(query, sizeof(query));
        char sent[CHECK_DETAIL_MAX] = "";
        int r;

        (void)unused;
        if (args->proxy_port == 0) {
                static const char *const names[] = { "egress-tcp", "egress-udp", "egress-dns" };

                for (size_t i = 0; i < ELEMENTSOF(names); i++)
                        probe_emit(names[i], "note", t,
                                   "[egress] proxy = false: the sandbox reaches the network directly");
                return NULL;
        }
        if (!args->egress_addr || egress_sockaddr(args->egress_addr, args->egress_port, &ss, &len) < 0) {
                probe_emit("egress-tcp", "note", t,
                           "not probed: control-url's host did not resolve for the runner");
                probe_emit("egress-udp", "note", t,
                           "not probed: control-url's host did not resolve for the runner");
        } else {
                r = egress_try_tcp((struct sockaddr *)&ss, len);
                if (r == 0)
                        probe_emit("egress-tcp", "fail", t, "connected to %s port %u without the proxy",
                                   args->egress_addr, args->egress_port);
                else
                        probe_emit("egress-tcp", "ok", t, "%s port %u not reached without the proxy: %s",
                                   args->egress_addr, args->egress_port, strerror(-r));
                t = probe_now_ms();
                (void)egress_sockaddr(args->egress_addr, 443, &ss, &len);
                r = egress_try_udp((struct sockaddr *)&ss, len, payload, sizeof(payload) - 1);
                if (r == 0)
                        probe_emit("egress-udp", "fail", t, "the kernel sent a datagram to %s port 443",
                                   args->egress_addr);
                else
                        probe_emit("egress-udp", "ok", t, "a datagram to %s port 443 refused: %s",
                                   args->egress_addr, strerror(-r));
        }
        t = probe_now_ms();
        if (args->n_nameserver == 0) {
                probe_emit("egress-dns", "note", t, "not probed: /etc/resolv.conf names no nameserver");
                return NULL;
        }
        for (size_t i = 0; i < args->n_nameserver; i++) {
                size_t l = strlen(sent);

                if (egress_sockaddr(args->nameserver[i], 53, &ss, &len) < 0)
                        continue;
                r = egress_try_udp((struct sockaddr *)&ss, len, query, n_query);
                if (r == 0)
                        (void)snprintf(sent + l, sizeof(sent) - l, "%s%s", l ? " " : "",
                                       args->nameserver[i]);
        }
        if (sent[0])
                probe_emit("egress-dns", "fail", t, "the kernel sent a DNS query to %s", sent);
        else
                probe_emit("egress-dns", "ok", t, "a DNS query to each of %zu nameservers refused",
                           args->n_nameserver);
        return NULL;
}

/* IPv6 and the system's resolver, around the proxy: control-url's IPv6 address (where the runner reaches
 * it), and a fresh name through getaddrinfo(), which asks whatever nsswitch names (a local stub, nscd,
 * systemd-resolved over its socket), any of which may send the name on. Only the runner's working
 * control makes either a probe. */
static void *probe_egress_v6_resolve(void *unused)
{
        struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *res = NULL;
        struct sockaddr_storage ss;
        socklen_t len = 0;
        long long t = probe_now_ms();
        int r;

        (void)unused;
        if (args->proxy_port == 0) {
                probe_emit("egress-ipv6", "note", t,
                           "[egress] proxy = false: the sandbox reaches the network directly");
                probe_emit("egress-resolve", "note", t,
                           "[egress] proxy = false: the sandbox resolves names");
                return NULL;
        }
        if (!args->egress_addr6 || egress_sockaddr(args->egress_addr6, args->egress_port, &ss, &len) < 0)
                probe_emit("egress-ipv6", "note", t,
                           "not probed: the runner reaches control-url's host over no IPv6 address");
        else {
                r = egress_try_tcp((struct sockaddr *)&ss, len);
                if (r == 0)
                        probe_emit("egress-ipv6", "fail", t, "connected to [%s] port %u without the proxy",
                                   args->egress_addr6, args->egress_port);
                else
                        probe_emit("egress-ipv6", "ok", t, "[%s] port %u not reached without the proxy: %s",
                                   args->egress_addr6, args->egress_port, strerror(-r));
        }
        t = probe_now_ms();
        if (!args->resolve_name) {
                probe_emit("egress-resolve", "note", t, "not probed: no resolver answers the runner");
                return NULL;
        }
        r = getaddrinfo(args->resolve_name, NULL, &hints, &res);
        if (r == 0)
                freeaddrinfo(res);
        /* An address or "no such name" is a resolver's answer: the name reached one. */
        if (r == 0 || r == EAI_NONAME || r == EAI_NODATA)
                probe_emit("egress-resolve", "fail", t, "a resolver answered for %s: %s", args->resolve_name,
                           r == 0 ? "an address" : gai_strerror(r));
        else
                probe_emit("egress-resolve", "ok", t, "%s not resolved: %s", args->resolve_name,
                           gai_strerror(r));
        return NULL;
}

/* ---- local IPC ---- */

/* Whether a connection to the address succeeds within CONNECT_MS. */
static bool reaches_type(const struct sockaddr *sa, socklen_t len, int type)
{
        _cleanup_close_ int fd = socket(sa->sa_family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        struct pollfd p;
        int err = 0;
        socklen_t el = sizeof(err);

        if (fd < 0)
                return false;
        if (connect(fd, sa, len) == 0)
                return true;
        if (errno != EINPROGRESS && errno != EAGAIN)
                return false;
        if (errno == EAGAIN) /* a unix socket whose backlog is full: reached all the same */
                return true;
        p = (struct pollfd){ fd, POLLOUT, 0 };
        if (poll(&p, 1, CONNECT_MS) <= 0)
                return false;
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) < 0)
                return false;
        return err == 0;
}

static bool reaches(const struct sockaddr *sa, socklen_t len)
{
        return reaches_type(sa, len, SOCK_STREAM);
}

static bool reaches_tcp(int family, const void *addr, unsigned port)
{
        if (family == AF_INET) {
                struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
                memcpy(&sa.sin_addr, addr, 4);
                return reaches((struct sockaddr *)&sa, sizeof(sa));
        }
        struct sockaddr_in6 sa = { .sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port) };
        memcpy(&sa.sin6_addr, addr, 16);
        return reaches((struct sockaddr *)&sa, sizeof(sa));
}

static bool port_allowed(unsigned port)
{
        if (args->proxy_port && port == args->proxy_port)
                return true;
        if (!args->proxy_port && port == args->tcp_control)
                return true;
        for (size_t i = 0; i < args->n_allow_tcp; i++)
                if (args->allow_tcp[i] == port)
                        return true;
        return false;
}

/* Appends "ADDR:PORT" for every listener of a /proc/net/tcp file the sandbox user reaches. */
static int scan_tcp(const char *file, int family, char *list, size_t size, unsigned *n_tried)
{
        _cleanup_fclose_ FILE *f = fopen(file, "re");
        char line[512];

        if (!f)
                return errno == ENOENT ? 0 : -errno;
        while (fgets(line, sizeof(line), f)) {
                char addr_text[INET6_ADDRSTRLEN];
                unsigned char addr[16];
                ProcNetTcp l4;
                unsigned port;
                size_t l;
                int k = procnet_tcp_line(line, family == AF_INET6, &l4);

                if (k < 0)
                        return -EBADMSG;
                if (k == 0 || port_allowed(l4.port))
                        continue;
                if (++*n_tried > MAX_LISTENERS)
                        break;
                port = l4.port;
                memcpy(addr, l4.addr, 16);
                if (family == AF_INET &&
                    memcmp(addr, "\0\0\0\0", 4) == 0) /* wildcard: dialled on loopback */
                        memcpy(addr, &(uint32_t){ htonl(INADDR_LOOPBACK) }, 4);
                if (family == AF_INET6 && memcmp(addr, &in6addr_any, 16) == 0) {
                        memcpy(addr, &in6addr_loopback, 16);
                        /* A wildcard of IPv6 takes IPv4 too, unless it is v6-only. */
                        if (reaches_tcp(AF_INET, &(uint32_t){ htonl(INADDR_LOOPBACK) }, port)) {
                                l = strlen(list);
                                (void)snprintf(list + l, size - l, "%s127.0.0.1:%u", l ? " " : "", port);
                        }
                }
                if (!reaches_tcp(family, addr, port))
                        continue;
                inet_ntop(family, addr, addr_text, sizeof(addr_text));
                l = strlen(list);
                (void)snprintf(list + l, size - l, family == AF_INET ? "%s%s:%u" : "%s[%s]:%u", l ? " " : "",
                               addr_text, port);
        }
        return 0;
}

static void *probe_local_tcp(void *unused)
{
        long long t = probe_now_ms();
        char list[CHECK_DETAIL_MAX] = "";
        unsigned control = args->proxy_port ? args->proxy_port : args->tcp_control, tried = 0;
        int r;

        (void)unused;
        if (reaches_tcp(AF_INET, &(uint32_t){ htonl(INADDR_LOOPBACK) }, control))
                probe_emit("local-tcp-control", "ok", t, "reached 127.0.0.1:%u (%s)", control,
                           args->proxy_port ? "the proxy" : "the runner's listener");
        else
                probe_emit("local-tcp-control", "fail", t, "did not reach 127.0.0.1:%u (%s)", control,
                           args->proxy_port ? "the proxy" : "the runner's listener");
        t = probe_now_ms();
        r = scan_tcp("/proc/net/tcp", AF_INET, list, sizeof(list), &tried);
        if (r >= 0)
                r = scan_tcp("/proc/net/tcp6", AF_INET6, list, sizeof(list), &tried);
        if (r < 0)
                probe_emit("local-tcp", "fail", t, "cannot read /proc/net/tcp: %s",
                           r == -EBADMSG ? "a line of an unknown shape" : strerror(-r));
        else if (tried > MAX_LISTENERS)
                probe_emit("local-tcp", "fail", t, "more than %d listeners", MAX_LISTENERS);
        else if (list[0])
                probe_emit("local-tcp", "fail", t, "reached %s", list);
        else
                probe_emit("local-tcp", "ok", t, "reached none of %u listeners", tried);
        return NULL;
}

static void *probe_local_abstract(void *unused)
{
        (void)unused;
        probe_unix_abstract(args);
        return NULL;
}

static void *probe_local_sockets(void *unused)
{
        (void)unused;
        probe_unix_paths(args);
        return NULL;
}

/* One datagram to the runner's echoing UDP socket: 1 the echo came back (reached), 0 the kernel refused
 * it (*ret_err says how: the rules fail the send with EPERM), -1 neither within CONNECT_MS (taken as
 * reached: nothing said no). */
static int udp_echo(int family, unsigned port, int *ret_err)
{
        struct sockaddr_storage ss = {};
        socklen_t len;
        _cleanup_close_ int fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        struct pollfd p;
        char buf[64];
        ssize_t n;

        if (family == AF_INET) {
                struct sockaddr_in *sa = (struct sockaddr_in *)&ss;
                sa->sin_family = AF_INET;
                sa->sin_port = htons((uint16_t)port);
                sa->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
                len = sizeof(*sa);
        } else {
                struct sockaddr_in6 *sa = (struct sockaddr_in6 *)&ss;
                sa->sin6_family = AF_INET6;
                sa->sin6_port = htons((uint16_t)port);
                sa->sin6_addr = in6addr_loopback;
                len = sizeof(*sa);
        }
        if (fd < 0 || connect(fd, (struct sockaddr *)&ss, len) < 0 ||
            send(fd, PROBE_UDP_PAYLOAD, strlen(PROBE_UDP_PAYLOAD), 0) < 0) {
                *ret_err = errno;
                return 0;
        }
        p = (struct pollfd){ fd, POLLIN, 0 };
        if (poll(&p, 1, CONNECT_MS) <= 0)
                return -1;
        n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
        if (n >= 0)
                return 1;
        *ret_err = errno;
        return 0;
}

static void *probe_local_udp(void *unused)
{
        static const int families[] = { AF_INET, AF_INET6 };
        static const char *const names[] = { "127.0.0.1", "[::1]" };
        char list[CHECK_DETAIL_MAX] = "";
        long long t = probe_now_ms();
        bool bad = false;

        (void)unused;
        if (!args->proxy_port) {
                probe_emit(
                        "local-udp", "note", t,
                        "not probed: without the proxy, setup's rules keep the sandbox user only from the "
                        "metadata "
                        "address");
                return NULL;
        }
        for (size_t i = 0; i < ELEMENTSOF(families); i++) {
                int err = 0, r = udp_echo(families[i], args->udp_target, &err);
                size_t l = strlen(list);

                bad = bad || r != 0;
                (void)snprintf(list + l, sizeof(list) - l, "%s%s:%u %s%s", l ? "; " : "", names[i],
                               args->udp_target,
                               r > 0   ? "echoed it"
                               : r < 0 ? "neither echoed nor refused it"
                                       : "refused: ",
                               r == 0 ? strerror(err) : "");
        }
        probe_emit("local-udp", bad ? "fail" : "ok", t, "the runner's UDP socket at %s", list);
        return NULL;
}

/* ---- schedulers ---- */

/* A job of cron or at runs later, outside the run's end: the sandbox user asks each for its jobs (crontab
 * -l, atq), which they refuse by their allow and deny lists before anything else; the runner's control is
 * the runner side's. */
static void *probe_schedulers(void *unused)
{
        static const struct {
                const char *name, *program, *arg, *refusal;
        } tries[] = {
                { "cron", CRONTAB, "-l", "not allowed to use this program" },
                { "at", ATQ, NULL, "do not have permission to use" },
        };

        (void)unused;
        for (size_t i = 0; i < ELEMENTSOF(tries); i++) {
                char out[1024] = "";
                long long t = probe_now_ms();
                int r;

                if (access(tries[i].program, X_OK) < 0) {
                        probe_emit(tries[i].name, "note", t, "%s is not installed: nothing to schedule with",
                                   tries[i].program);
                        continue;
                }
                r = probe_run_capture(
                        (char *const[]){ (char *)tries[i].program, (char *)tries[i].arg, NULL }, environ,
                        out, sizeof(out), true);
                out[strcspn(out, "\n")] = '\0';
                if (probe_refused(r) && strstr(out, tries[i].refusal))
                        probe_emit(tries[i].name, "ok", t, "%s refused the sandbox user: %s",
                                   tries[i].program, out);
                else
                        probe_emit(tries[i].name, "fail", t, "%s answered the sandbox user (status %d): %s",
                                   tries[i].program, r, out[0] ? out : "nothing");
        }
        return NULL;
}

/* What systemctl is-active says of unit: its first line ("active", "inactive", "failed", ...), or the
 * status where it said nothing. */
static int unit_state(const char *unit, char *out, size_t size)
{
        int r = probe_run_capture(
                (char *const[]){ (char *)SYSTEMCTL, (char *)"is-active", (char *)"--", (char *)unit, NULL },
                environ, out, size, false);

        out[strcspn(out, "\n")] = '\0';
        return r;
}

/* The units setup stopped must stay stopped: a daemon running again is one the sandbox user may reach
 * (its sockets, its ports). The control asks the same of a unit that runs wherever systemd does. */
static void *probe_services(void *unused)
{
        char out[128] = "";
        long long t = probe_now_ms();
        int r;

        (void)unused;
        if (access("/run/systemd/system", F_OK) < 0) {
                probe_emit("service-control", "note", t, "systemd is not running: no unit to ask about");
                for (size_t i = 0; i < args->n_service; i++) {
                        char name[CHECK_NAME_MAX];

                        (void)snprintf(name, sizeof(name), "service:%s", args->service[i]);
                        probe_emit(name, "note", t, "not probed: systemd is not running");
                }
                return NULL;
        }
        r = unit_state("systemd-journald.service", out, sizeof(out));
        if (r != 0 || strcmp(out, "active") != 0) {
                probe_emit("service-control", "fail", t,
                           "systemctl is-active systemd-journald.service: %s (status %d)",
                           out[0] ? out : "nothing", r);
                for (size_t i = 0; i < args->n_service; i++) {
                        char name[CHECK_NAME_MAX];

                        (void)snprintf(name, sizeof(name), "service:%s", args->service[i]);
                        probe_emit(name, "note", t, "not probed: its control failed");
                }
                return NULL;
        }
        probe_emit("service-control", "ok", t, "systemctl is-active systemd-journald.service: active");
        for (size_t i = 0; i < args->n_service; i++) {
                char name[CHECK_NAME_MAX];

                t = probe_now_ms();
                (void)snprintf(name, sizeof(name), "service:%s", args->service[i]);
                r = unit_state(args->service[i], out, sizeof(out));
                /* is-active: 0 for active, reloading, refreshing; 3 for inactive, failed, or no such unit.
                 */
                if (r == 0 || strcmp(out, "activating") == 0 || strcmp(out, "deactivating") == 0)
                        probe_emit(name, "fail", t, "%s is %s: setup stopped it", args->service[i], out);
                else if (r == 3)
                        probe_emit(name, "ok", t, "%s is %s", args->service[i],
                                   out[0] ? out : "not running");
                else
                        probe_emit(name, "fail", t, "systemctl is-active %s: status %d: cannot tell",
                                   args->service[i], r);
        }
        return NULL;
}

/* --walk: setup's walk again, as the sandbox user, changing nothing: what all may write (setup took o+w
 * away) and the set-id programs of root's that no package vouches for (setup took their bit away). */
/* sandbox-writable: what the sandbox user may write in the trees root runs, other than by o+w (its uid,
 * its groups, ACL entries naming either). The control: the same walk of a directory of the check's own
 * home holding a file the sandbox user owns, mode 0600, no o+w. */
static void probe_sandbox_writable(const WalkFound *root, long long t)
{
        char dir[PATH_MAX + 16], file[PATH_MAX + 32];
        WalkFound found;
        int fd;

        (void)snprintf(dir, sizeof(dir), "%s/walk", check_home);
        (void)snprintf(file, sizeof(file), "%s/owned", dir);
        fd = mkdir(dir, 0700) < 0 ? -1 : open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd < 0) {
                probe_emit("sandbox-writable-control", "fail", t, "cannot make %s: %s", file,
                           strerror(errno));
                probe_emit("sandbox-writable", "note", t, "not probed: its control failed");
                return;
        }
        (void)close(fd);
        walk_probe_dir(dir, &found);
        if (found.error == 0 && walk_found_writable(&found, file))
                probe_emit("sandbox-writable-control", "ok", t,
                           "the walk finds %s, the sandbox user's, 0600", file);
        else
                probe_emit("sandbox-writable-control", "fail", t, "the walk of %s found %s (%s)", dir,
                           found.writable_names[0] ? found.writable_names : "nothing",
                           found.error ? strerror(-found.error) : "not the file of its own");
        walk_found_done(&found);
        if (root->error)
                probe_emit("sandbox-writable", "fail", t, "the walk of / stopped: %s",
                           strerror(-root->error));
        else if (root->writable)
                probe_emit("sandbox-writable", "fail", t, "%llu it may write in the trees root runs: %s",
                           (unsigned long long)root->writable, root->writable_names);
        else
                probe_emit("sandbox-writable", "ok", t,
                           "nothing it may write in " WALK_TREES_TEXT " (its uid, its groups, ACL entries)");
}

static void *probe_walk(void *unused)
{
        WalkFound dir, root;
        _cleanup_free_ bool *owned = NULL;
        char control[PATH_MAX], unowned[CHECK_DETAIL_MAX] = "", vouched[PATH_MAX] = "";
        long long t = probe_now_ms();
        const char *dpkg = access(DPKG_QUERY, X_OK) == 0 ? DPKG_QUERY : NULL;
        const char *rpm = access(RPM, X_OK) == 0 ? RPM : NULL;
        AjError e = {};
        int r;

        (void)unused;
        if (!args->walk_dir)
                return NULL;
        (void)snprintf(control, sizeof(control), "%s/world-writable", args->walk_dir);
        walk_probe_dir(args->walk_dir, &dir);
        if (dir.error == 0 && walk_found_names(&dir, control))
                probe_emit("world-writable-control", "ok", t, "the walk finds %s", control);
        else
                probe_emit("world-writable-control", "fail", t, "the walk of %s found %s (%s)",
                           args->walk_dir,
                           dir.world_writable_names[0] ? dir.world_writable_names : "nothing",
                           dir.error ? strerror(-dir.error) : "not the planted file");
        walk_found_done(&dir);

        t = probe_now_ms();
        walk_probe_root(getuid(), true, &root);
        if (root.error)
                probe_emit("world-writable", "fail", t, "the walk of / stopped: %s", strerror(-root.error));
        else if (root.world_writable)
                probe_emit("world-writable", "fail", t, "%llu that all may write: %s",
                           (unsigned long long)root.world_writable, root.world_writable_names);
        else
                probe_emit("world-writable", "ok", t,
                           "nothing that all may write in %llu directories (%llu it may not read)",
                           (unsigned long long)root.directories, (unsigned long long)root.denied);
        probe_sandbox_writable(&root, t);

        t = probe_now_ms();
        owned = calloc(root.n_setuid + 1, sizeof(bool));
        r = !owned          ? -ENOMEM
            : !dpkg && !rpm ? -ENOENT
                            : package_owners(dpkg, rpm, root.setuid, root.n_setuid, owned, &e);
        if (r == -ENOENT) {
                probe_emit("setuid-control", "note", t,
                           "neither " DPKG_QUERY " nor " RPM ": no package to ask");
                probe_emit("setuid-unowned", "note", t, "not probed: no package database to ask");
                walk_found_done(&root);
                return NULL;
        }
        if (r < 0 || root.error) {
                probe_emit("setuid-control", "fail", t, "%s",
                           r < 0 ? (e.message[0] ? e.message : strerror(-r)) : "the walk of / stopped");
                probe_emit("setuid-unowned", "note", t, "not probed: its control failed");
                walk_found_done(&root);
                return NULL;
        }
        for (size_t i = 0; i < root.n_setuid; i++) {
                const char *base = strrchr(root.setuid[i], '/');

                if (owned[i] && !vouched[0] && base &&
                    (strcmp(base, "/su") == 0 || strcmp(base, "/sudo") == 0))
                        (void)snprintf(vouched, sizeof(vouched), "%s", root.setuid[i]);
                if (!owned[i]) {
                        size_t l = strlen(unowned);
                        (void)snprintf(unowned + l, sizeof(unowned) - l, "%s%s", l ? " " : "",
                                       root.setuid[i]);
                }
        }
        if (vouched[0])
                probe_emit("setuid-control", "ok", t,
                           "%s is set-id root and its package owns it (%zu such programs)", vouched,
                           root.n_setuid);
        else
                probe_emit("setuid-control", "fail", t,
                           "the walk found no su or sudo set-id root that a package owns");
        if (root.setuid_truncated)
                probe_emit("setuid-unowned", "fail", t, "more than %d set-id programs of root's",
                           WALK_PROBE_MAX_SETUID);
        else if (unowned[0])
                probe_emit("setuid-unowned", "fail", t, "no package owns %s", unowned);
        else
                probe_emit("setuid-unowned", "ok", t, "a package owns each of %zu set-id programs of root's",
                           root.n_setuid);
        walk_found_done(&root);
        return NULL;
}

/* ---- the command ---- */

static void *probe_processes(void *unused)
{
        (void)unused;
        probe_runner_processes(args);
        return NULL;
}

static void *userns_net(void *unused)
{
        (void)unused;
        probe_userns_net(args);
        return NULL;
}

static void *userns_restricted(void *unused)
{
        (void)unused;
        probe_userns_restricted();
        return NULL;
}

static void *proxy_post(void *unused)
{
        (void)unused;
        probe_proxy_post(args);
        return NULL;
}

static void *proxy_read(void *unused)
{
        (void)unused;
        probe_proxy_read(args);
        probe_proxy_fronting(args);
        return NULL;
}

static void *proxy_local(void *unused)
{
        (void)unused;
        probe_proxy_local(args);
        return NULL;
}

/* Each planned probe a thread of its own: cargo and npm take seconds where they are installed. */
static void *proxy_planned(void *i)
{
        if ((uintptr_t)i < args->n_planned)
                probe_proxy_planned(args, (uintptr_t)i);
        return NULL;
}

static void *containers(void *unused)
{
        (void)unused;
        probe_containers(args);
        return NULL;
}

static void *resources(void *unused)
{
        (void)unused;
        probe_resources(args);
        return NULL;
}

static void *probe_environ(void *unused)
{
        (void)unused;
        probe_environments(args);
        return NULL;
}

/* Each a thread of its own, in the group of the table its results are of (--only picks groups). */
static const struct {
        const char *group;
        void *(*run)(void *);
        uintptr_t arg;
} probes[] = {
        { "privilege", probe_groups },
        { "privilege", probe_sudo },
        { "privilege", probe_ptrace_scope },
        { "processes", probe_processes },
        { "processes", probe_environ },
        { "files", probe_private_dirs },
        { "files", probe_state_write },
        { "privilege", probe_user_manager },
        { "privilege", probe_polkit },
        { "privilege", probe_linger },
        { "privilege", probe_run0 },
        { "privilege", userns_restricted },
        { "resources", resources },
        { "network", probe_network },
        { "network", proxy_post },
        { "network", proxy_read },
        { "network", proxy_local },
        { "network", proxy_planned, 0 },
        { "network", proxy_planned, 1 },
        { "network", proxy_planned, 2 },
        { "network", proxy_planned, 3 },
        { "network", probe_egress_raw },
        { "network", probe_egress_v6_resolve },
        { "network", userns_net },
        { "local-ipc", probe_local_tcp },
        { "local-ipc", probe_local_abstract },
        { "local-ipc", probe_local_sockets },
        { "local-ipc", probe_local_udp },
        { "schedulers", probe_schedulers },
        { "services", probe_services },
        { "files", probe_walk },
        { "containers", containers },
};

static bool wanted(size_t i)
{
        for (size_t k = 0; k < args->n_only; k++)
                if (strcmp(args->only[k], probes[i].group) == 0)
                        return true;
        return args->n_only == 0;
}

static pthread_mutex_t done_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t done_cond = PTHREAD_COND_INITIALIZER;
static size_t n_done;

static void *run_probe(void *i)
{
        probes[(uintptr_t)i].run((void *)probes[(uintptr_t)i].arg);
        pthread_mutex_lock(&done_lock);
        n_done++;
        pthread_cond_signal(&done_cond);
        pthread_mutex_unlock(&done_lock);
        return NULL;
}

int sandbox_probe_inside_main(int argc, char **argv)
{
        AjError e = {};
        struct timespec deadline;
        size_t n_started = 0;
        int r;

        r = inside_args_parse(argc, argv, &args_storage, &e);
        if (r < 0) {
                fprintf(stderr, "agentic-job sandbox probe-inside: %s\n", e.message);
                return 2;
        }
        r = probe_orphans_adopt();
        if (r < 0) {
                fprintf(stderr, "agentic-job sandbox probe-inside: cannot become a subreaper: %s\n",
                        strerror(-r));
                return 2;
        }
        r = probe_home_enter(getenv("TMPDIR"), check_home, sizeof(check_home));
        if (r < 0) {
                fprintf(stderr, "agentic-job sandbox probe-inside: cannot make the check's own home: %s\n",
                        strerror(-r));
                return 2;
        }
        clock_gettime(CLOCK_REALTIME, &deadline);
        deadline.tv_sec += (args->walk_dir ? WALK_ALL_MS : ALL_MS) / 1000;
        for (size_t i = 0; i < ELEMENTSOF(probes); i++) {
                pthread_t t;

                if (!wanted(i))
                        continue;
                n_started++;
                r = pthread_create(&t, NULL, run_probe, (void *)(uintptr_t)i);
                if (r != 0) {
                        fprintf(stderr, "agentic-job sandbox probe-inside: cannot start a thread: %s\n",
                                strerror(r));
                        return 2;
                }
                (void)pthread_detach(t);
        }
        pthread_mutex_lock(&done_lock);
        while (n_done < n_started)
                if (pthread_cond_timedwait(&done_cond, &done_lock, &deadline) == ETIMEDOUT)
                        break;
        r = n_done < n_started;
        pthread_mutex_unlock(&done_lock);
        /* A probe still running has no result: the runner side counts it failed. */
        probe_emit_end();
        /* Only when every probe is done: a late one may still use the home, and its thread waits for its
         * own child (kill-user, before the next enter, ends what is left; the directory then stays, the
         * sandbox user's own, holding nothing). What the probes' programs left (probe-orphans.h) ends
         * first: podman's cleanup would make the store again after its removal. */
        if (r == 0) {
                (void)probe_orphans_end(ORPHANS_GRACE_MS, ORPHANS_KILL_MS);
                (void)probe_home_remove(check_home);
        }
        _exit(r);
}
