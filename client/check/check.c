/* SPDX-License-Identifier: MIT */
/* agentic-job sandbox check [--record | --unless-passed] [--json] [--walk]: the runner side. It reads
 * the installed configuration (root's alone, as the helper wants it) and the egress policy, plants what
 * the probes aim at (listeners, sockets, a decoy process), makes its own controls, ends every process of
 * the sandbox user (helper kill-user), then runs the sandbox side of every probe in one `helper enter` of
 * this binary and reads its results strictly (check-line.h). */
#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "build-config.h"
#include "check-inside.h"
#include "check-line.h"
#include "check-record.h"
#include "check-report.h"
#include "cli.h"
#include "client.h"
#include "config.h"
#include "egress-policy.h"
#include "environ-scan.h"
#include "helper-call.h"
#include "macro.h"
#include "probe-decoy.h"
#include "probe-egress.h"
#include "probe-emit.h"
#include "probe-runner-groups.h"
#include "probe-runner.h"
#include "probes.h"
#include "random-hex.h"
#include "read-file.h"
#include "spawn.h"
#include "walk-probe.h"

#define CURL_PATH      "/usr/bin/curl"
#define PROXY_PORT     3128
#define METADATA_URL   "http://169.254.169.254/"
#define INSIDE_MS      60000  /* the whole sandbox side */
#define INSIDE_WALK_MS 915000 /* with --walk (the sandbox side's own bound is 900 s then) */
#define STDERR_MAX     4096

typedef enum CheckOption { CHECK_RECORD, CHECK_UNLESS_PASSED, CHECK_JSON, CHECK_WALK } CheckOption;

const CliOption sandbox_check_options[] = {
        { "--record", CHECK_RECORD, CLI_FLAG, false },
        { "--unless-passed", CHECK_UNLESS_PASSED, CLI_FLAG, false },
        { "--json", CHECK_JSON, CLI_FLAG, false },
        { "--walk", CHECK_WALK, CLI_FLAG, false },
        {},
};

static const char *const prog = "agentic-job sandbox check";

/* One line on standard error; the check could not run: status 2. */
static _printf_(1, 2) int fail_run(const char *fmt, ...)
{
        va_list ap;

        fprintf(stderr, "%s: ", prog);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
        return CLIENT_EXIT_USAGE;
}

/* ---- what the probes aim at ---- */

typedef struct Plants {
        int tcp4, tcp6, abstract;
        int udp4, udp6; /* each answers every datagram with its echo, while the sandbox side runs */
        unsigned tcp_port, udp_port;
        char abstract_name[64];
        int path_socket;   /* a listening socket of the runner's on a path, 0666, in a directory of /tmp */
        char path_dir[64]; /* "" until made */
        char path_name[96];
        char open_file[96]; /* a file all may write, for the walk's controls; "" until made */
} Plants;

static void plants_done(Plants *p)
{
        closep(&p->tcp4);
        closep(&p->udp4);
        closep(&p->udp6);
        closep(&p->tcp6);
        closep(&p->abstract);
        closep(&p->path_socket);
        if (p->path_dir[0]) {
                if (p->open_file[0])
                        (void)unlink(p->open_file);
                p->open_file[0] = '\0';
                (void)unlink(p->path_name);
                (void)rmdir(p->path_dir);
                p->path_dir[0] = '\0';
        }
}

static int listen_loopback(int family, int type, unsigned *port)
{
        _cleanup_close_ int fd = socket(family, type | SOCK_CLOEXEC, 0);
        struct sockaddr_storage ss = {};
        socklen_t len;

        if (fd < 0)
                return -errno;
        if (family == AF_INET) {
                struct sockaddr_in *sa = (struct sockaddr_in *)&ss;
                sa->sin_family = AF_INET;
                sa->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
                sa->sin_port = htons((uint16_t)*port);
                len = sizeof(*sa);
        } else {
                struct sockaddr_in6 *sa = (struct sockaddr_in6 *)&ss;
                sa->sin6_family = AF_INET6;
                sa->sin6_addr = in6addr_loopback;
                sa->sin6_port = htons((uint16_t)*port);
                len = sizeof(*sa);
        }
        if (bind(fd, (struct sockaddr *)&ss, len) < 0 || (type == SOCK_STREAM && listen(fd, 16) < 0))
                return -errno;
        len = sizeof(ss);
        if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0)
                return -errno;
        *port = ntohs(family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
                                        : ((struct sockaddr_in6 *)&ss)->sin6_port);
        /* cppcheck-suppress unreadVariable ; TAKE_FD() leaves -EBADF for the cleanup, which reads it */
        return TAKE_FD(fd);
}

static int plants_make(Plants *p)
{
        char hex[33];
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        size_t n;
        int r;

        p->tcp_port = 0;
        r = listen_loopback(AF_INET, SOCK_STREAM, &p->tcp_port);
        if (r < 0)
                return r;
        p->tcp4 = r;
        /* The same port on ::1 where IPv6 works; without IPv6 there is nothing to reach there. */
        r = listen_loopback(AF_INET6, SOCK_STREAM, &p->tcp_port);
        p->tcp6 = r >= 0 ? r : -EBADF;
        p->udp_port = 0;
        r = listen_loopback(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, &p->udp_port);
        if (r < 0)
                return r;
        p->udp4 = r;
        r = listen_loopback(AF_INET6, SOCK_DGRAM | SOCK_NONBLOCK, &p->udp_port);
        p->udp6 = r >= 0 ? r : -EBADF;

        if (random_hex(hex, 8) < 0)
                return -EIO;
        (void)snprintf(p->abstract_name, sizeof(p->abstract_name), PROBE_ABSTRACT_PREFIX "%s", hex);
        n = strlen(p->abstract_name);
        memcpy(sa.sun_path + 1, p->abstract_name, n);
        p->abstract = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (p->abstract < 0)
                return -errno;
        if (bind(p->abstract, (struct sockaddr *)&sa,
                 (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n)) < 0 ||
            listen(p->abstract, 16) < 0)
                return -errno;

        /* local-sockets-control: a socket all may connect to; the walk's control: a file all may write
         * (empty; nothing reads it). The directory others may list, so that the walk sees the file. */
        (void)snprintf(p->path_dir, sizeof(p->path_dir), "/tmp/%sXXXXXX", PROBE_ABSTRACT_PREFIX);
        if (!mkdtemp(p->path_dir)) {
                p->path_dir[0] = '\0';
                return -errno;
        }
        (void)snprintf(p->path_name, sizeof(p->path_name), "%s/socket", p->path_dir);
        memset(&sa, 0, sizeof(sa));
        sa.sun_family = AF_UNIX;
        memcpy(sa.sun_path, p->path_name, strlen(p->path_name) + 1);
        p->path_socket = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (p->path_socket < 0)
                return -errno;
        if (chmod(p->path_dir, 0755) < 0 || bind(p->path_socket, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
            chmod(p->path_name, 0666) < 0 || listen(p->path_socket, 16) < 0)
                return -errno;
        (void)snprintf(p->open_file, sizeof(p->open_file), "%s/world-writable", p->path_dir);
        {
                _cleanup_close_ int fd =
                        open(p->open_file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);

                if (fd < 0 || fchmod(fd, 0666) < 0) {
                        if (fd < 0)
                                p->open_file[0] = '\0';
                        return -errno;
                }
        }
        return 0;
}

/* Answers each datagram waiting on fd with its echo, to whoever sent it. */
static void udp_echo_all(int fd)
{
        for (;;) {
                struct sockaddr_storage from;
                socklen_t len = sizeof(from);
                char buf[512];
                ssize_t n = recvfrom(fd, buf, sizeof(buf), MSG_DONTWAIT, (struct sockaddr *)&from, &len);

                if (n < 0)
                        return;
                (void)sendto(fd, buf, (size_t)n, MSG_DONTWAIT, (struct sockaddr *)&from, len);
        }
}

/* ---- the runner's own controls ---- */

/* A datagram of the runner's to its own UDP socket comes back as the sandbox side's would if nothing
 * refused it: the echo works, so the probe's refusal is the rules' doing. */
static void control_local_udp(Report *rep, const Plants *p)
{
        _cleanup_close_ int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in to = { .sin_family = AF_INET,
                                  .sin_port = htons((uint16_t)p->udp_port),
                                  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        struct pollfd pf = { p->udp4, POLLIN, 0 };
        long long t = probe_now_ms();
        ssize_t n = -1;

        if (fd >= 0 && connect(fd, (struct sockaddr *)&to, sizeof(to)) == 0 &&
            send(fd, PROBE_UDP_PAYLOAD, strlen(PROBE_UDP_PAYLOAD), 0) > 0 && poll(&pf, 1, 1000) == 1) {
                udp_echo_all(p->udp4);
                pf = (struct pollfd){ fd, POLLIN, 0 };
                if (poll(&pf, 1, 1000) == 1) {
                        char buf[64];

                        n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
                }
        }
        if (n == (ssize_t)strlen(PROBE_UDP_PAYLOAD))
                report_addf(rep, "local-udp-control", CHECK_OK, probe_now_ms() - t, false,
                            "the runner's datagram to 127.0.0.1:%u came back", p->udp_port);
        else
                report_addf(rep, "local-udp-control", CHECK_FAIL, probe_now_ms() - t, false,
                            "the runner's datagram to 127.0.0.1:%u did not come back", p->udp_port);
}

static void control_private_dir(Report *rep, const char *home)
{
        long long t = probe_now_ms();
        DIR *d = opendir(home);
        bool ok = d && readdir(d);

        if (d)
                closedir(d);
        if (ok)
                report_addf(rep, "private-dir-control", CHECK_OK, probe_now_ms() - t, false,
                            "the runner lists %s", home);
        else
                report_addf(rep, "private-dir-control", CHECK_FAIL, probe_now_ms() - t, false,
                            "the runner cannot list %s", home);
}

static void control_metadata(Report *rep)
{
        char *argv[] = {
                (char *)CURL_PATH, (char *)"-q",           (char *)"-s", (char *)"-o", (char *)"/dev/null",
                (char *)"-w",      (char *)"%{http_code}", (char *)"-m", (char *)"5",  (char *)"--noproxy",
                (char *)"*",       (char *)METADATA_URL,   NULL
        };
        char *env[] = { (char *)"PATH=/usr/bin:/bin", NULL };
        _cleanup_free_ char *out = NULL;
        long long t = probe_now_ms();
        int r = spawn_wait(argv, env, SPAWN_STDOUT, 16, &out, NULL);

        if (r >= 0 && out && strlen(out) == 3 && strcmp(out, "000") != 0)
                report_addf(rep, "metadata-control", CHECK_OK, probe_now_ms() - t, false,
                            "the runner reaches " METADATA_URL " (HTTP %s)", out);
        else
                report_addf(rep, "metadata-control", CHECK_NOTE, probe_now_ms() - t, false,
                            "the runner does not reach " METADATA_URL
                            " (status %d): no metadata service here",
                            r);
}

/* The controls of cron and at: the runner asks them the same question, and is not refused (at with neither
 * list admits root alone: then a note). */
static void control_schedulers(Report *rep)
{
        static const struct {
                const char *name, *program, *arg, *refusal, *allow, *deny;
        } tries[] = {
                { "cron-control", "/usr/bin/crontab", "-l", "not allowed to use this program",
                  "/etc/cron.allow", "/etc/cron.deny" },
                { "at-control", "/usr/bin/atq", NULL, "do not have permission to use", "/etc/at.allow",
                  "/etc/at.deny" },
        };
        char *env[] = { (char *)"PATH=/usr/bin:/bin", (char *)"LANG=C", NULL };

        for (size_t i = 0; i < ELEMENTSOF(tries); i++) {
                char *argv[] = { (char *)tries[i].program, (char *)tries[i].arg, NULL };
                _cleanup_free_ char *out = NULL;
                long long t = probe_now_ms();
                int r;

                if (access(tries[i].program, X_OK) < 0) {
                        report_addf(rep, tries[i].name, CHECK_NOTE, 0, false, "%s is not installed",
                                    tries[i].program);
                        continue;
                }
                if (access(tries[i].allow, F_OK) < 0 && access(tries[i].deny, F_OK) < 0) {
                        report_addf(rep, tries[i].name, CHECK_NOTE, 0, false,
                                    "neither %s nor %s: it admits root alone", tries[i].allow,
                                    tries[i].deny);
                        continue;
                }
                r = spawn_wait(argv, env, SPAWN_MERGE_STDERR, 1024, &out, NULL);
                if (r >= 0 && out && !strstr(out, tries[i].refusal))
                        report_addf(rep, tries[i].name, CHECK_OK, probe_now_ms() - t, false,
                                    "%s answers the runner (status %d)", tries[i].program, r);
                else
                        report_addf(rep, tries[i].name, CHECK_FAIL, probe_now_ms() - t, false,
                                    "%s refused the runner too (status %d): the probe would prove nothing",
                                    tries[i].program, r);
        }
}

static int kill_user(Report *rep)
{
        char line[256];
        long long t = probe_now_ms();
        int r = helper_kill_user(line, sizeof(line));

        if (r != 0) {
                fprintf(stderr, "%s: helper kill-user failed (status %d): %s\n", prog, r, line);
                return -EIO;
        }
        report_add(rep, "kill-user", CHECK_NOTE, probe_now_ms() - t, line, false);
        return 0;
}

/* The job's OIDC request values, if it has them: the sandbox side gets their lengths and digests to look
 * for, never the values. */
static void control_oidc(Report *rep, char (*secrets)[ENVIRON_SECRET_ARG_MAX], char **names, size_t *n)
{
        static const char *const vars[] = { "ACTIONS_ID_TOKEN_REQUEST_URL",
                                            "ACTIONS_ID_TOKEN_REQUEST_TOKEN" };
        const char *missing = NULL;

        *n = 0;
        for (size_t i = 0; i < ELEMENTSOF(vars); i++) {
                const char *v = getenv(vars[i]);

                if (v && v[0] && environ_secret_format(vars[i], v, secrets[*n], ENVIRON_SECRET_ARG_MAX) == 0)
                        names[(*n)++] = (char *)vars[i];
                else
                        missing = vars[i];
        }
        if (*n == ELEMENTSOF(vars))
                report_add(rep, "oidc-control", CHECK_OK, 0,
                           "the check has ACTIONS_ID_TOKEN_REQUEST_URL and _TOKEN: the sandbox side looks "
                           "for them by length and SHA-256",
                           false);
        else if (*n == 0)
                report_add(
                        rep, "oidc-control", CHECK_NOTE, 0,
                        "no ACTIONS_ID_TOKEN_REQUEST_URL nor _TOKEN here (a job without id-token: write): "
                        "no oidc-value probe",
                        false);
        else
                report_addf(rep, "oidc-control", CHECK_NOTE, 0, false,
                            "no %s (or not one to look for): the other is probed alone", missing);
}

/* ---- the runner's walk (--walk) ---- */

/* runner-world-write and its control: setup's walk as the runner, in a thread of its own while the
 * sandbox side runs (its own walk, as the sandbox user, is there). */
typedef struct RunnerWalk {
        pthread_t thread;
        bool started;
        const char *dir;
        WalkFound in_dir, in_root;
        long long dir_ms, root_ms;
} RunnerWalk;

static void *runner_walk_thread(void *userdata)
{
        RunnerWalk *w = userdata;
        long long t = probe_now_ms();

        walk_probe_dir(w->dir, &w->in_dir);
        w->dir_ms = probe_now_ms() - t;
        t = probe_now_ms();
        walk_probe_root(getuid(), false, &w->in_root);
        w->root_ms = probe_now_ms() - t;
        return NULL;
}

static void runner_walk_finish(Report *rep, RunnerWalk *w, const char *open_file)
{
        if (!w->started)
                return;
        (void)pthread_join(w->thread, NULL);
        w->started = false;
        if (w->in_dir.error == 0 && walk_found_names(&w->in_dir, open_file))
                report_addf(rep, "runner-world-write-control", CHECK_OK, w->dir_ms, false,
                            "the walk finds %s", open_file);
        else
                report_addf(rep, "runner-world-write-control", CHECK_FAIL, w->dir_ms, false,
                            "the walk of %s found %s", w->dir,
                            w->in_dir.world_writable_names[0] ? w->in_dir.world_writable_names : "nothing");
        if (w->in_root.error)
                report_addf(rep, "runner-world-write", CHECK_FAIL, w->root_ms, false,
                            "the walk of / stopped: %s", strerror(-w->in_root.error));
        else if (w->in_root.world_writable)
                report_addf(rep, "runner-world-write", CHECK_FAIL, w->root_ms, false,
                            "%llu that all may write, not the runner's: %s",
                            (unsigned long long)w->in_root.world_writable, w->in_root.world_writable_names);
        else
                report_addf(rep, "runner-world-write", CHECK_OK, w->root_ms, false,
                            "nothing the runner does not own that all may write, in %llu directories",
                            (unsigned long long)w->in_root.directories);
        walk_found_done(&w->in_dir);
        walk_found_done(&w->in_root);
}

static void runner_walk_stop(RunnerWalk *w)
{
        if (w->started)
                (void)pthread_join(w->thread, NULL);
        w->started = false;
        walk_found_done(&w->in_dir);
        walk_found_done(&w->in_root);
}

/* ---- the sandbox side ---- */

typedef struct Inside {
        Report *rep;
} Inside;

static void on_line(const CheckLine *l, void *userdata)
{
        Inside *in = userdata;

        report_add(in->rep, l->name, l->status, l->ms, l->detail, true);
}

static int run_inside(Report *rep, const Config *c, const char *home, const Plants *p, const Decoy *decoy,
                      const EgressTargets *net, bool walk, char *const *dirs, size_t n_dirs,
                      char (*secrets)[ENVIRON_SECRET_ARG_MAX], size_t n_secrets, char *const *expected,
                      const char *post, const EgressPlanned planned[EGRESS_PLANNED])
{
        _cleanup_free_ char **argv = NULL;
        _cleanup_free_ bool *seen = NULL;
        char tcp[8], udp[8], pid[16], egress_port[8], tasks_max[24], ports[INSIDE_MAX_LIST][8],
                errbuf[STDERR_MAX + 1];
        char plans[EGRESS_PLANNED][32 + 8 + EGRESS_PLAN_URL_MAX];
        Entered en = { .pidfd = -EBADF, .in_fd = -EBADF, .out_fd = -EBADF, .err_fd = -EBADF };
        int status = -1, r;
        size_t k = 0, n_err = 0, n_expected = strv_length(expected);
        long long t = probe_now_ms(), deadline = t + (walk ? INSIDE_WALK_MS : INSIDE_MS);
        CheckStream stream;
        Inside ctx = { rep };
        AjError e = {};
        bool broken = false;

        argv = calloc(50 + 2 * (EGRESS_PLANNED + n_dirs + n_secrets + c->n_check_allow_tcp_ports +
                                strv_length(c->check_allow_sockets) + strv_length(c->stop_services) +
                                strv_length(net->nameservers)),
                      sizeof(char *));
        seen = calloc(n_expected + 1, sizeof(bool));
        if (!argv || !seen)
                return -ENOMEM;
        (void)snprintf(tcp, sizeof(tcp), "%u", p->tcp_port);
        (void)snprintf(udp, sizeof(udp), "%u", p->udp_port);
        (void)snprintf(tasks_max, sizeof(tasks_max), "%llu", c->sandbox_tasks_max);
        argv[k++] = (char *)"sandbox";
        argv[k++] = (char *)"probe-inside";
        argv[k++] = (char *)"--proxy-port";
        argv[k++] = (char *)(c->egress_proxy ? "3128" : "0");
        argv[k++] = (char *)"--user-manager";
        argv[k++] = (char *)(c->user_manager ? "kept" : "masked");
        argv[k++] = (char *)"--tasks-max";
        argv[k++] = tasks_max;
        argv[k++] = (char *)"--post";
        argv[k++] = (char *)post;
        argv[k++] = (char *)"--control-url";
        argv[k++] = c->check_control_url;
        argv[k++] = (char *)"--fetch-repo";
        argv[k++] = c->check_fetch_repo;
        if (c->check_containers) {
                argv[k++] = (char *)"--container-image";
                argv[k++] = c->check_container_image;
        }
        for (size_t i = 0; i < EGRESS_PLANNED; i++) {
                if (egress_planned_format(&planned[i], plans[i], sizeof(plans[i])) < 0)
                        return -ENOBUFS;
                argv[k++] = (char *)"--egress";
                argv[k++] = plans[i];
        }
        argv[k++] = (char *)"--tcp-control";
        argv[k++] = tcp;
        argv[k++] = (char *)"--udp-target";
        argv[k++] = udp;
        argv[k++] = (char *)"--abstract";
        argv[k++] = (char *)p->abstract_name;
        argv[k++] = (char *)"--socket-control";
        argv[k++] = (char *)p->path_name;
        (void)snprintf(pid, sizeof(pid), "%d", (int)decoy->pid);
        argv[k++] = (char *)"--decoy";
        argv[k++] = pid;
        argv[k++] = (char *)"--decoy-tty";
        argv[k++] = (char *)decoy->tty;
        argv[k++] = (char *)"--canary";
        argv[k++] = (char *)decoy->canary;
        for (size_t i = 0; i < n_secrets; i++) {
                argv[k++] = (char *)"--secret";
                argv[k++] = secrets[i];
        }
        if (net->addr[0]) {
                (void)snprintf(egress_port, sizeof(egress_port), "%u", net->port);
                argv[k++] = (char *)"--egress-addr";
                argv[k++] = (char *)net->addr;
                argv[k++] = (char *)"--egress-port";
                argv[k++] = egress_port;
        }
        if (net->addr6[0]) {
                argv[k++] = (char *)"--egress-addr6";
                argv[k++] = (char *)net->addr6;
        }
        if (net->front[0]) {
                argv[k++] = (char *)"--front";
                argv[k++] = (char *)net->front;
        }
        if (net->resolve_name[0]) {
                argv[k++] = (char *)"--resolve-name";
                argv[k++] = (char *)net->resolve_name;
        }
        for (char **ns = net->nameservers; ns && *ns; ns++) {
                argv[k++] = (char *)"--nameserver";
                argv[k++] = *ns;
        }
        if (walk) {
                argv[k++] = (char *)"--walk";
                argv[k++] = (char *)p->path_dir;
        }
        for (char **u = c->stop_services; *u; u++) {
                argv[k++] = (char *)"--service";
                argv[k++] = *u;
        }
        for (size_t i = 0; i < n_dirs; i++) {
                argv[k++] = (char *)"--private";
                argv[k++] = dirs[i];
        }
        assert(c->n_check_allow_tcp_ports <= CONFIG_LIST_MAX); /* config.c's bound, within ports[] */
        for (size_t i = 0; i < c->n_check_allow_tcp_ports; i++) {
                (void)snprintf(ports[i], sizeof(ports[i]), "%u", c->check_allow_tcp_ports[i]);
                argv[k++] = (char *)"--allow-tcp";
                argv[k++] = ports[i];
        }
        for (char **s = c->check_allow_sockets; *s; s++) {
                argv[k++] = (char *)"--allow-socket";
                argv[k++] = *s;
        }

        r = helper_enter_self(home, argv, &en);
        if (r < 0)
                return r;
        closep(&en.in_fd); /* nothing to read: end of file at once */
        en.in_fd = -EBADF;

        check_stream_init(&stream, expected, seen);
        for (int open_fds = 2; open_fds > 0;) {
                struct pollfd pf[4] = { { en.out_fd, POLLIN, 0 },
                                        { en.err_fd, POLLIN, 0 },
                                        { p->udp4, POLLIN, 0 },
                                        { p->udp6, POLLIN, 0 } };
                long long left = deadline - probe_now_ms();
                char buf[4096];
                ssize_t m;

                if (left <= 0) {
                        report_add(rep, "probe-inside", CHECK_FAIL, probe_now_ms() - t,
                                   "the sandbox side did not end in time", false);
                        broken = true;
                        break;
                }
                if (poll(pf, ELEMENTSOF(pf), (int)left) < 0) {
                        if (errno == EINTR)
                                continue;
                        break;
                }
                for (int i = 2; i < 4; i++)
                        if (pf[i].fd >= 0 && (pf[i].revents & POLLIN))
                                udp_echo_all(pf[i].fd);
                for (int i = 0; i < 2; i++) {
                        if (pf[i].fd < 0 || !(pf[i].revents & (POLLIN | POLLHUP | POLLERR)))
                                continue;
                        m = read(pf[i].fd, buf, sizeof(buf));
                        if (m <= 0) {
                                int *fd = i == 0 ? &en.out_fd : &en.err_fd;
                                closep(fd);
                                *fd = -EBADF;
                                open_fds--;
                                continue;
                        }
                        if (i == 1) {
                                size_t take =
                                        (size_t)m < STDERR_MAX - n_err ? (size_t)m : STDERR_MAX - n_err;
                                memcpy(errbuf + n_err, buf, take);
                                n_err += take;
                                continue;
                        }
                        if (!broken && check_stream_feed(&stream, buf, (size_t)m, on_line, &ctx, &e) < 0) {
                                report_addf(rep, "probe-inside", CHECK_FAIL, probe_now_ms() - t, true,
                                            "the sandbox side wrote what is not a result: %s", e.message);
                                broken = true;
                        }
                }
        }
        if (broken)
                (void)kill(en.pid, SIGKILL);
        status = wait_exit_status(en.pid);
        entered_done(&en);
        if (!broken && check_stream_end(&stream, &e) < 0) {
                report_addf(rep, "probe-inside", CHECK_FAIL, probe_now_ms() - t, true,
                            "the sandbox side wrote what is not a result: %s", e.message);
                broken = true;
        }
        errbuf[n_err] = '\0';
        if (!broken && n_err > 0) {
                report_addf(rep, "probe-inside", CHECK_FAIL, probe_now_ms() - t, true,
                            "the sandbox side wrote on standard error: %s", errbuf);
                broken = true;
        }
        if (!broken && status != 0) {
                report_addf(rep, "probe-inside", CHECK_FAIL, probe_now_ms() - t, false,
                            "the sandbox side ended with status %d", status);
                broken = true;
        }
        if (!broken)
                report_add(rep, "probe-inside", CHECK_OK, probe_now_ms() - t,
                           "one helper enter, every result a well-formed line", false);
        for (size_t i = 0; i < n_expected; i++)
                if (!seen[i])
                        report_add(rep, expected[i], CHECK_FAIL, 0, "no result from the sandbox side",
                                   false);
        return 0;
}

/* ---- the command ---- */

static int usage_error(const char *what, const char *arg)
{
        fprintf(stderr, "%s: %s%s\n", prog, what, arg);
        fputs("usage: agentic-job sandbox check [--record | --unless-passed] [--json] [--walk]\n", stderr);
        return CLIENT_EXIT_USAGE;
}

int sandbox_check_main(int argc, char **argv)
{
        _cleanup_(config_freep) Config *config = NULL;
        _cleanup_(egress_policy_freep) EgressPolicy *policy = NULL;
        _cleanup_(egress_threats_freep) EgressThreats *threats = NULL;
        _cleanup_free_ char *config_data = NULL, *policy_data = NULL, *home = NULL, *runner_home = NULL;
        _cleanup_strv_free_ char **dirs = NULL, **expected = NULL;
        _cleanup_(report_freep) Report *rep = NULL;
        _cleanup_(decoy_stop) Decoy decoy = DECOY_NULL;
        _cleanup_(egress_targets_done) EgressTargets net = {};
        _cleanup_(probe_runner_su_stop) RunnerSu su = RUNNER_SU_NULL;
        _cleanup_(runner_walk_stop) RunnerWalk runner_walk = {};
        char secrets[2][ENVIRON_SECRET_ARG_MAX], *secret_names[2];
        size_t n_secrets = 0;
        bool record = false, unless_passed = false, json = false, walk = false;
        size_t config_size = 0, policy_size = 0, n_dirs = 0;
        Plants plants = { .tcp4 = -EBADF,
                          .tcp6 = -EBADF,
                          .abstract = -EBADF,
                          .udp4 = -EBADF,
                          .udp6 = -EBADF,
                          .path_socket = -EBADF };
        RecordTaken taken = {};
        const char *post = "none";
        EgressPlanned planned[EGRESS_PLANNED];
        Record self = {};
        AjError e = {};
        struct passwd *pw;
        int r;

        for (int i = 1; i < argc; i++) {
                const CliOption *o = cli_option_find(sandbox_check_options, argv[i]);
                bool *flag = NULL;

                if (!o)
                        return usage_error("unknown argument ", argv[i]);
                switch ((CheckOption)o->id) {
                case CHECK_RECORD:
                        flag = &record;
                        break;
                case CHECK_UNLESS_PASSED:
                        flag = &unless_passed;
                        break;
                case CHECK_JSON:
                        flag = &json;
                        break;
                case CHECK_WALK:
                        flag = &walk;
                        break;
                }
                if (!flag)
                        return usage_error("unknown argument ", argv[i]);
                if (*flag)
                        return usage_error("given twice: ", argv[i]);
                *flag = true;
        }
        if (record && unless_passed)
                return usage_error("--record and --unless-passed exclude each other", "");
        if (geteuid() == 0 || getuid() == 0)
                return fail_run("refused as root: run it as the runner's user");

        /* Every check removes the record before anything else, whether it takes it or not. */
        r = record_take(getenv("RUNNER_TEMP"), &taken);
        if (r < 0)
                return fail_run("cannot remove the record in $RUNNER_TEMP: %s", strerror(-r));

        r = config_load_trusted(CONFIG_PATH, &config, &config_data, &config_size, &e);
        if (r < 0)
                return fail_run("%s", e.message);
        if (config->egress_proxy) {
                AjError inner = {};
                EgressUrl url = {};
                EgressDecision d;

                r = read_file_for_parse(EGRESS_POLICY_PATH, EGRESS_POLICY_MAX_SIZE, &policy_data,
                                        &policy_size, &e);
                if (r < 0)
                        return fail_run("the egress policy: %s", e.message);
                r = egress_policy_parse(policy_data, policy_size, &policy, &inner);
                if (r < 0) {
                        (void)aj_error_in_file(&e, r, EGRESS_POLICY_PATH, &inner);
                        return fail_run("the egress policy: %s", e.message);
                }
                /* The proxy's mode, which its helper was started with: the same configuration's. */
                policy->reads_listed = config->egress_reads_listed;
                r = egress_threats_load(EGRESS_THREATS_PATH, &threats, &e);
                if (r < 0 && r != -ENOENT)
                        return fail_run("the threat list: %s", e.message);
                r = egress_url_parse(config->check_control_url, &url, &e);
                if (r < 0)
                        return fail_run("[sandbox.check] control-url: %s", e.message);
                egress_decide_client(policy, threats, &(EgressClientRequest){ .method = "GET", .url = &url },
                                     &d);
                if (d.verdict == EGRESS_ALLOW) {
                        EgressDecision w;

                        /* What egress-post expects of the proxy: the policy's own answer. */
                        egress_decide_client(
                                policy, threats,
                                &(EgressClientRequest){ .method = "POST", .url = &url, .has_body = true },
                                &w);
                        post = w.verdict == EGRESS_ALLOW ? "admitted" : "refused";
                }
                egress_url_done(&url);
                if (d.verdict != EGRESS_ALLOW)
                        return fail_run(
                                "[sandbox.check] control-url: the egress policy refuses a read of it (%s)",
                                d.reason);
                r = egress_plan(policy, config->check_fetch_repo, planned, &e);
                if (r < 0)
                        return fail_run("%s", e.message);
        } else {
                /* No proxy: each planned probe is a note in its admitted form. */
                static const char *const names[EGRESS_PLANNED] = { "egress-git", "egress-cargo",
                                                                   "egress-npm", "egress-push" };

                for (size_t i = 0; i < EGRESS_PLANNED; i++) {
                        planned[i] = (EgressPlanned){};
                        (void)snprintf(planned[i].name, sizeof(planned[i].name), "%s", names[i]);
                }
        }

        r = record_self(config_data, config_size, policy_data, policy_size, &self);
        if (r < 0)
                return fail_run("cannot fingerprint the binary, configuration and policy: %s", strerror(-r));
        rep = report_new(json);
        if (!rep)
                return fail_run("out of memory");
        if (taken.note[0])
                report_add(rep, "record", CHECK_NOTE, 0, taken.note, false);
        if (unless_passed && taken.found) {
                if (record_matches(&taken.record, &self, taken.note, sizeof(taken.note))) {
                        report_add(rep, "record", CHECK_NOTE, 0,
                                   "a matching record of a check that passed in this job: no probe made",
                                   false);
                        return report_finish(rep);
                }
                report_add(rep, "record", CHECK_NOTE, 0, taken.note, false);
        }

        pw = getpwnam(config->sandbox_user);
        if (!pw)
                return fail_run("the sandbox user %s does not exist", config->sandbox_user);
        home = strdup(pw->pw_dir);
        pw = getpwuid(getuid());
        if (!pw)
                return fail_run("the runner's uid is in no user entry");
        runner_home = strdup(pw->pw_dir);
        dirs = calloc(2 + strv_length(config->private_dirs), sizeof(char *));
        if (!home || !runner_home || !dirs)
                return fail_run("out of memory");
        dirs[n_dirs++] = strdup(runner_home);
        for (char **d = config->private_dirs; *d; d++)
                if (strcmp(*d, runner_home) != 0)
                        dirs[n_dirs++] = strdup(*d);
        for (size_t i = 0; i < n_dirs; i++)
                if (!dirs[i])
                        return fail_run("out of memory");
        control_oidc(rep, secrets, secret_names, &n_secrets);
        if (inside_expected_names(dirs, n_dirs, secret_names, n_secrets, config->stop_services, planned,
                                  EGRESS_PLANNED, walk, &expected) < 0)
                return fail_run("out of memory");

        r = plants_make(&plants);
        if (r < 0) {
                plants_done(&plants);
                return fail_run("cannot plant the probes' targets: %s", strerror(-r));
        }
        r = probe_runner_su_start(config, &su);
        if (r < 0) {
                plants_done(&plants);
                return fail_run("cannot start su: %s", strerror(-r));
        }
        r = decoy_start(&decoy);
        if (r < 0) {
                plants_done(&plants);
                return fail_run("cannot start the runner's decoy: %s", strerror(-r));
        }
        control_private_dir(rep, runner_home);
        control_metadata(rep);
        if (control_egress(rep, config, &net) < 0) {
                plants_done(&plants);
                return fail_run("out of memory");
        }
        control_local_udp(rep, &plants);
        probe_runner_lock(rep, config);
        probe_runner_groups(rep);
        control_schedulers(rep);
        r = kill_user(rep);
        if (r < 0) {
                plants_done(&plants);
                return CLIENT_EXIT_USAGE;
        }
        if (walk) {
                runner_walk.dir = plants.path_dir;
                r = pthread_create(&runner_walk.thread, NULL, runner_walk_thread, &runner_walk);
                if (r != 0) {
                        plants_done(&plants);
                        return fail_run("cannot start the runner's walk: %s", strerror(r));
                }
                runner_walk.started = true;
        } else
                report_add(rep, "walk", CHECK_NOTE, 0,
                           "world-writable, sandbox-writable, runner-world-write and setuid-unowned are "
                           "made with "
                           "--walk (a walk of the root filesystem)",
                           false);
        r = run_inside(rep, config, home, &plants, &decoy, &net, walk, dirs, n_dirs, secrets, n_secrets,
                       expected, post, planned);
        runner_walk_finish(rep, &runner_walk, plants.open_file);
        if (r < 0) {
                plants_done(&plants);
                return fail_run("cannot run the sandbox side: %s", strerror(-r));
        }
        plants_done(&plants);
        control_decoy(rep, &decoy);
        decoy_stop(&decoy);
        probe_runner_su_finish(rep, &su);

        if (record && report_failed(rep) == 0) {
                char why[256];

                r = record_write(getenv("RUNNER_TEMP"), &self, why, sizeof(why));
                report_add(rep, "record", CHECK_NOTE, 0, why, false);
                if (r < 0)
                        report_add(rep, "record", CHECK_FAIL, 0, why, false);
        }
        return report_finish(rep);
}
