/* SPDX-License-Identifier: MIT */
/* The egress proxy's install and start, as root. squid ends TLS and asks agentic-job-egress-acl about
 * every request; it runs as the proxy user with no capabilities, and everything it may write is that
 * user's: the state directory (certificate authority key, certificate database, pid) and the log
 * directory. What root writes (squid's configuration, its error pages, the published authority) lives in
 * /etc/egress-proxy/, which is root's. Whatever root does inside the proxy user's directories, it does as
 * that user, in a child that dropped everything first, so no link the proxy user planted there can make
 * root read or write elsewhere. Every program is found on a fixed PATH whose directories are root's alone
 * and runs with an empty environment. */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "creds.h"
#include "egress-env.h"
#include "egress-paths.h"
#include "egress-policy.h"
#include "egress-proxy.h"
#include "libsystemd.h"
#include "local-ranges.h"
#include "macro.h"
#include "parse.h"
#include "proc.h"
#include "read-file.h"
#include "spawn.h"
#include "trusted-path.h"
#include "write-all.h"

#define ROOT_PATH         "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#define ACCESS_LOG        EGRESS_LOG_DIR "/access.jsonl"
#define LISTEN_TIMEOUT_MS 30000
#define STOP_TIMEOUT_MS   10000
/* Root's proxy is a late choice of the OOM killer: it prefers the sandbox's processes (1000, every helper
 * enter) and the runner's own (0). */
#define EGRESS_OOM_SCORE_ADJ "-500"
/* A machine used for one job needs the authority for hours; a year leaves room for machines kept longer. */
#define CA_DAYS    "365"
#define BUNDLE_MAX (16 * 1024 * 1024)
#define PAGE_MAX   (256 * 1024)
#define CHILD_MAX  (1024 * 1024)

static const char *const certgen_paths[] = {
        "/usr/lib/squid/security_file_certgen",
        "/usr/lib64/squid/security_file_certgen",
        "/usr/libexec/squid/security_file_certgen",
        NULL,
};
static const char *const template_dirs[] = {
        "/usr/share/squid/errors/templates",
        "/usr/share/squid-langpack/templates",
        NULL,
};
static const char *const system_cas[] = {
        "/etc/ssl/certs/ca-certificates.crt",
        "/etc/pki/tls/certs/ca-bundle.crt",
        NULL,
};
static const char *const nologin_shells[] = { "/usr/sbin/nologin", "/sbin/nologin", NULL };
static char *const empty_env[] = { NULL };

typedef struct Tools {
        char *squid, *openssl, *rm, *useradd, *systemd_run, *systemctl;
        const char *certgen, *templates, *system_ca, *nologin;
        bool systemd;
        bool owners_only; /* egress_proxy_check() for setup: write bits are setup's to remove first */
} Tools;

static void tools_done(Tools *t)
{
        free(t->squid);
        free(t->openssl);
        free(t->rm);
        free(t->useradd);
        free(t->systemd_run);
        free(t->systemctl);
}

/* ---- running programs ------------------------------------------------------------------------------ */

static int run(char *const *argv)
{
        return spawn_wait(argv, NULL, SPAWN_STDOUT, 0, NULL, NULL);
}

/* Runs argv and returns its status; *ret_out is its first line of output. */
static int run_line(char *const *argv, char *ret_out, size_t size)
{
        _cleanup_free_ char *out = NULL;
        int r = spawn_wait(argv, NULL, SPAWN_STDOUT, size - 1, &out, NULL);

        if (r < 0)
                return r;
        out[strcspn(out, "\n")] = '\0';
        (void)snprintf(ret_out, size, "%s", out);
        return r;
}

/* What a child running as the proxy user does: it writes its result (or, failing, one line saying why)
 * to out and returns 0 or -1. */
typedef int (*ProxyStep)(const Tools *t, int out);

/* Runs step in a child that is the proxy user with no capabilities and no_new_privs. Returns 0 with
 * what the child wrote in *ret_out, or -EIO with its line in *reterr. */
static int as_proxy(const struct passwd *pw, const Tools *t, ProxyStep step, char **ret_out, AjError *reterr)
{
        _cleanup_free_ char *out = NULL;
        _cleanup_close_ int rd = -EBADF;
        int p[2], r, status;
        pid_t pid;

        if (pipe2(p, O_CLOEXEC) < 0)
                return aj_error(reterr, errno, 0, 0, "pipe: %s", strerror(errno));
        pid = fork();
        if (pid < 0) {
                r = errno;
                (void)close(p[0]);
                (void)close(p[1]);
                return aj_error(reterr, r, 0, 0, "fork: %s", strerror(r));
        }
        if (pid == 0) {
                const char *what = NULL;

                (void)close(p[0]);
                r = creds_drop_to_user(pw, &what);
                if (r < 0) {
                        dprintf(p[1], "cannot become %s: %s: %s", pw->pw_name, what, strerror(-r));
                        _exit(1);
                }
                umask(077);
                _exit(step(t, p[1]) < 0 ? 1 : 0);
        }
        (void)close(p[1]);
        rd = p[0];
        r = read_pipe_bounded(rd, CHILD_MAX, &out, NULL);
        status = wait_exit_status(pid);
        if (r < 0)
                return aj_error(reterr, -r, 0, 0, "reading from the child: %s", strerror(-r));
        if (status != 0)
                return aj_error(reterr, EIO, 0, 0, "%s", out[0] ? out : "the child failed");
        *ret_out = TAKE_PTR(out);
        return 0;
}

_printf_(2, 3) static int say(int out, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        (void)vdprintf(out, fmt, ap);
        va_end(ap);
        return -1;
}

/* ---- files ----------------------------------------------------------------------------------------- */

/* Replaces path (in a directory of root's) with data, mode, at once: readers see the old or the new. */
static int write_file_atomic(const char *path, const char *data, size_t size, mode_t mode)
{
        _cleanup_free_ char *tmp = NULL;
        _cleanup_close_ int fd = -EBADF;
        int r;

        if (asprintf(&tmp, "%s.tmp-XXXXXX", path) < 0)
                return -ENOMEM;
        fd = mkostemp(tmp, O_CLOEXEC);
        if (fd < 0)
                return -errno;
        r = write_all(fd, data, size);
        if (r >= 0 && fchmod(fd, mode) < 0)
                r = -errno;
        if (r >= 0 && rename(tmp, path) < 0)
                r = -errno;
        if (r < 0)
                (void)unlink(tmp);
        return r;
}

/* Makes the directory, or takes the one there (never through a link), and gives it owner and mode. */
static int ensure_dir(const char *path, mode_t mode, uid_t uid, gid_t gid)
{
        _cleanup_close_ int fd = -EBADF;

        if (mkdir(path, mode) < 0 && errno != EEXIST)
                return -errno;
        fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (fchown(fd, uid, gid) < 0 || fchmod(fd, mode) < 0)
                return -errno;
        return 0;
}

/* A path start may take over: absent, or a directory (not a link to one). */
static int absent_or_dir(const char *path, AjError *reterr)
{
        struct stat st;

        if (lstat(path, &st) < 0)
                return errno == ENOENT ? 0 : aj_error(reterr, errno, 0, 0, "%s: %s", path, strerror(errno));
        if (!S_ISDIR(st.st_mode))
                return aj_error(reterr, EEXIST, 0, 0, "%s exists and is not a directory", path);
        return 0;
}

/* The first of paths that exists, checked to be root's alone. */
static int first_trusted(const char *const *paths, const char *what, const char **ret, AjError *reterr)
{
        for (const char *const *p = paths; *p; p++) {
                if (access(*p, F_OK) < 0)
                        continue;
                if (trusted_path_check(*p, reterr) < 0)
                        return -EPERM;
                *ret = *p;
                return 0;
        }
        return aj_error(reterr, ENOENT, 0, 0, "no %s (looked for %s and others)", what, paths[0]);
}

/* ---- the proxy user's steps ------------------------------------------------------------------------ */

/* In the state directory: the certificate authority (made once; the key never leaves the directory), a
 * certificate database that matches it, and the egress log. Writes the authority's certificate. */
static int prepare_state(const Tools *t, int out)
{
        _cleanup_free_ char *pem = NULL;
        _cleanup_close_ int fd = -EBADF;
        struct stat st;
        bool new_ca;
        int r;

        if (chdir(EGRESS_STATE_DIR) < 0)
                return say(out, "cannot enter %s: %s", EGRESS_STATE_DIR, strerror(errno));
        if (mkdir("ca", 0700) < 0 && errno != EEXIST)
                return say(out, "cannot make %s/ca: %s", EGRESS_STATE_DIR, strerror(errno));

        new_ca = access("ca/ca.key", R_OK) < 0 || access("ca/ca.pem", R_OK) < 0;
        if (new_ca) {
                char *req[] = { t->openssl,
                                (char *)"req",
                                (char *)"-x509",
                                (char *)"-newkey",
                                (char *)"rsa:2048",
                                (char *)"-nodes",
                                (char *)"-keyout",
                                (char *)"ca/ca.key.new",
                                (char *)"-out",
                                (char *)"ca/ca.pem.new",
                                (char *)"-days",
                                (char *)CA_DAYS,
                                (char *)"-subj",
                                (char *)"/O=agentic-job/CN=agentic-job egress proxy CA",
                                (char *)"-addext",
                                (char *)"basicConstraints=critical,CA:TRUE",
                                (char *)"-addext",
                                (char *)"keyUsage=critical,keyCertSign,cRLSign",
                                NULL };
                char *rm[] = { t->rm, (char *)"-rf", (char *)"--", (char *)EGRESS_STATE_DIR "/ssl_db",
                               NULL };

                r = run(req);
                if (r != 0)
                        return say(out, "openssl req could not make the certificate authority (status %d)",
                                   r);
                if (rename("ca/ca.key.new", "ca/ca.key") < 0 || rename("ca/ca.pem.new", "ca/ca.pem") < 0)
                        return say(out, "cannot put the certificate authority in place: %s",
                                   strerror(errno));
                /* Certificates an earlier authority signed would be served to clients that do not trust
                 * it. */
                r = run(rm);
                if (r != 0)
                        return say(out, "cannot remove the old certificate database (rm: status %d)", r);
        }
        if (access("ssl_db", F_OK) < 0) {
                char *init[] = {
                        (char *)t->certgen, (char *)"-c",  (char *)"-s", (char *)EGRESS_STATE_DIR "/ssl_db",
                        (char *)"-M",       (char *)"4MB", NULL
                };

                r = run(init);
                if (r != 0)
                        return say(out, "%s -c could not make the certificate database (status %d)",
                                   t->certgen, r);
        }

        /* The helper's proxy-log reads it only as the proxy user's regular file; made now, so it
         * exists before the first request. */
        fd = open(ACCESS_LOG, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0640);
        if (fd < 0 || fstat(fd, &st) < 0)
                return say(out, "%s: %s", ACCESS_LOG, strerror(errno));
        if (!S_ISREG(st.st_mode) || st.st_uid != getuid())
                return say(out, "%s is not the proxy user's regular file", ACCESS_LOG);

        r = read_regular_nofollow(AT_FDCWD, "ca/ca.pem", 64 * 1024, &pem, NULL);
        if (r < 0)
                return say(out, "%s/ca/ca.pem: %s", EGRESS_STATE_DIR, strerror(-r));
        return write_all(out, pem, strlen(pem)) < 0 ? -1 : 0;
}

/* ---- what root writes ------------------------------------------------------------------------------ */

static bool is_one_certificate(const char *pem)
{
        static const char begin[] = "-----BEGIN CERTIFICATE-----\n", end[] = "-----END CERTIFICATE-----\n";
        size_t n = strlen(pem);

        return strncmp(pem, begin, strlen(begin)) == 0 && n > strlen(end) &&
               strcmp(pem + n - strlen(end), end) == 0 && strstr(pem + 1, "-----BEGIN") == NULL;
}

static int publish_ca(const Tools *t, const char *pem, AjError *reterr)
{
        _cleanup_free_ char *roots = NULL, *bundle = NULL;
        _cleanup_close_ int fd = -EBADF;
        size_t n = 0;
        int r;

        if (!is_one_certificate(pem))
                return aj_error(reterr, EINVAL, 0, 0, "%s/ca/ca.pem is not one PEM certificate",
                                EGRESS_STATE_DIR);
        /* Through links: the bundle is one on some distributions, and the path was checked to be
         * root's alone, links included. */
        fd = open(t->system_ca, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        r = fd < 0 ? -errno : read_regular_fd(fd, BUNDLE_MAX, &roots, &n);
        if (r < 0)
                return aj_error(reterr, -r, 0, 0, "%s: %s", t->system_ca, strerror(-r));
        if (asprintf(&bundle, "%s%s%s", roots, n > 0 && roots[n - 1] != '\n' ? "\n" : "", pem) < 0)
                return aj_error(reterr, ENOMEM, 0, 0, "out of memory");
        r = write_file_atomic(EGRESS_CA_PATH, pem, strlen(pem), 0644);
        if (r >= 0)
                r = write_file_atomic(EGRESS_CA_BUNDLE, bundle, strlen(bundle), 0644);
        if (r < 0)
                return aj_error(reterr, -r, 0, 0, "cannot write %s: %s", EGRESS_CA_DIR, strerror(-r));
        return 0;
}

/* What squid's local_dst refuses by the address a name resolves to: the ranges of this machine's networks
 * (those nftables refuses the proxy's uid) and every address of this machine now. An address it gains
 * later is for nftables (fib daddr type local) alone. */
static int local_destinations(char **ret, AjError *reterr)
{
        _cleanup_free_ char *text = NULL;
        _cleanup_fclose_ FILE *f = NULL;
        struct ifaddrs *ifa = NULL;
        size_t size = 0;
        int r;

        if (getifaddrs(&ifa) < 0)
                return aj_error(reterr, errno, 0, 0, "cannot list this machine's addresses: %s",
                                strerror(errno));
        f = open_memstream(&text, &size);
        if (!f) {
                freeifaddrs(ifa);
                return aj_error(reterr, ENOMEM, 0, 0, "out of memory");
        }
        r = local_ranges_write(f, AF_INET, " ", false);
        (void)fputc(' ', f);
        if (r >= 0)
                r = local_ranges_write(f, AF_INET6, " ", false);
        for (const struct ifaddrs *i = ifa; r >= 0 && i; i = i->ifa_next) {
                int family = i->ifa_addr ? i->ifa_addr->sa_family : AF_UNSPEC;
                char a[INET6_ADDRSTRLEN];
                const void *where =
                        family == AF_INET
                                ? (const void *)&((struct sockaddr_in *)(void *)i->ifa_addr)->sin_addr
                        : family == AF_INET6
                                ? (const void *)&((struct sockaddr_in6 *)(void *)i->ifa_addr)->sin6_addr
                                : NULL;

                /* squid warns of an address inside a range it has already. */
                if (where && !local_ranges_contain(family, where) && inet_ntop(family, where, a, sizeof(a)))
                        (void)fprintf(f, " %s", a);
        }
        freeifaddrs(ifa);
        if (r < 0 || fclose(TAKE_PTR(f)) != 0)
                return aj_error(reterr, ENOMEM, 0, 0, "out of memory");
        *ret = TAKE_PTR(text);
        return 0;
}

/* squid.conf.in with its @NAME@s filled in. */
static int render_config(const Tools *t, uint64_t log_max_bytes, bool reads_listed, char **ret,
                         AjError *reterr)
{
        _cleanup_free_ char *tmpl = NULL, *conf = NULL, *local = NULL;
        char log_max[24];
        _cleanup_fclose_ FILE *f = NULL;
        size_t size = 0;
        int r;

        r = local_destinations(&local, reterr);
        if (r < 0)
                return r;
        (void)snprintf(log_max, sizeof(log_max), "%llu", (unsigned long long)log_max_bytes);
        const struct {
                const char *name, *value;
        } vars[] = {
                { "@STATE@", EGRESS_STATE_DIR },
                { "@LOG_DIR@", EGRESS_LOG_DIR },
                { "@CONF@", EGRESS_CA_DIR },
                { "@ACL_HELPER@", EGRESS_ACL_PATH },
                { "@POLICY@", EGRESS_POLICY_SNAPSHOT },
                { "@THREATS@", EGRESS_THREATS_SNAPSHOT },
                { "@CERTGEN@", t->certgen },
                { "@SYSTEM_CA@", t->system_ca },
                { "@LOCAL_DST@", local },
                { "@PROXY_NAME@", EGRESS_PROXY_NAME },
                { "@LOG_MAX@", log_max },
                { "@READS@", reads_listed ? "listed" : "any" },
        };

        r = read_regular_nofollow(AT_FDCWD, EGRESS_SQUID_DATA_DIR "/squid.conf.in", PAGE_MAX, &tmpl, NULL);
        if (r < 0)
                return aj_error(reterr, -r, 0, 0, "%s/squid.conf.in: %s", EGRESS_SQUID_DATA_DIR,
                                strerror(-r));
        f = open_memstream(&conf, &size);
        if (!f)
                return aj_error(reterr, ENOMEM, 0, 0, "out of memory");
        for (const char *p = tmpl; *p;) {
                size_t i, n = strcspn(p, "@");

                (void)fwrite(p, 1, n, f);
                p += n;
                if (!*p)
                        break;
                for (i = 0; i < ELEMENTSOF(vars); i++)
                        if (strncmp(p, vars[i].name, strlen(vars[i].name)) == 0)
                                break;
                if (i == ELEMENTSOF(vars))
                        return aj_error(reterr, EINVAL, 0, 0, "%s/squid.conf.in: unknown name at '%.16s'",
                                        EGRESS_SQUID_DATA_DIR, p);
                (void)fputs(vars[i].value, f);
                p += strlen(vars[i].name);
        }
        if (fclose(TAKE_PTR(f)) != 0)
                return aj_error(reterr, ENOMEM, 0, 0, "out of memory");
        *ret = TAKE_PTR(conf);
        return 0;
}

/* The installed policy's and threat list's bytes as check_policy() read and parsed them. */
typedef struct PolicyBytes {
        char *policy, *threats; /* threats NULL: no threat list */
        size_t policy_size, threats_size;
} PolicyBytes;

static void policy_bytes_done(PolicyBytes *b)
{
        free(b->policy);
        free(b->threats);
        *b = (PolicyBytes){};
}

/* The bytes check_policy() parsed, written as the proxy's own copies: what was checked is what the
 * helpers load. Without a threat list, none (the helper decides without one). */
static int snapshot_policy(const PolicyBytes *b, AjError *reterr)
{
        int r;

        r = write_file_atomic(EGRESS_POLICY_SNAPSHOT, b->policy, b->policy_size, 0644);
        if (r < 0)
                return aj_error(reterr, -r, 0, 0, "cannot write %s: %s", EGRESS_POLICY_SNAPSHOT,
                                strerror(-r));
        r = b->threats ? write_file_atomic(EGRESS_THREATS_SNAPSHOT, b->threats, b->threats_size, 0644)
                       : (unlink(EGRESS_THREATS_SNAPSHOT) < 0 && errno != ENOENT ? -errno : 0);
        if (r < 0)
                return aj_error(reterr, -r, 0, 0, "cannot write %s: %s", EGRESS_THREATS_SNAPSHOT,
                                strerror(-r));
        return 0;
}

static int write_config(const Tools *t, uint64_t log_max_bytes, bool reads_listed, AjError *reterr)
{
        _cleanup_free_ char *conf = NULL;
        int r;

        r = render_config(t, log_max_bytes, reads_listed, &conf, reterr);
        if (r < 0)
                return r;
        r = write_file_atomic(EGRESS_SQUID_CONF, conf, strlen(conf), 0644);
        if (r < 0)
                return aj_error(reterr, -r, 0, 0, "cannot write %s: %s", EGRESS_SQUID_CONF, strerror(-r));
        return 0;
}

/* squid loads every error page from its error_directory at start: a copy of its own, with ours for
 * ERR_ACCESS_DENIED over it. */
static int write_error_pages(const Tools *t, AjError *reterr)
{
        _cleanup_free_ char *ours = NULL;
        DIR *d;
        struct dirent *de;
        int r = 0;

        if (mkdir(EGRESS_ERRORS_DIR, 0755) < 0 && errno != EEXIST)
                return aj_error(reterr, errno, 0, 0, "cannot make %s: %s", EGRESS_ERRORS_DIR,
                                strerror(errno));
        d = opendir(t->templates);
        if (!d)
                return aj_error(reterr, errno, 0, 0, "%s: %s", t->templates, strerror(errno));
        while (r >= 0 && (de = readdir(d))) {
                _cleanup_free_ char *page = NULL, *dst = NULL;
                _cleanup_close_ int fd = -EBADF;
                size_t n;

                if (de->d_name[0] == '.' ||
                    strspn(de->d_name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                       "0123456789_.-") != strlen(de->d_name))
                        continue;
                /* The templates are root's (checked); links among them are the package's. */
                fd = openat(dirfd(d), de->d_name, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
                if (fd < 0)
                        continue;
                r = read_regular_fd(fd, PAGE_MAX, &page, &n);
                if (r == -EBADFD) {
                        r = 0;
                        continue;
                }
                if (r >= 0 && asprintf(&dst, "%s/%s", EGRESS_ERRORS_DIR, de->d_name) < 0)
                        r = -ENOMEM;
                if (r >= 0)
                        r = write_file_atomic(dst, page, n, 0644);
                if (r < 0)
                        (void)aj_error(reterr, -r, 0, 0, "%s/%s: %s", t->templates, de->d_name,
                                       strerror(-r));
        }
        closedir(d);
        if (r < 0)
                return r;

        r = read_regular_nofollow(AT_FDCWD, EGRESS_SQUID_DATA_DIR "/ERR_ACCESS_DENIED", PAGE_MAX, &ours,
                                  NULL);
        if (r >= 0)
                r = write_file_atomic(EGRESS_ERRORS_DIR "/ERR_ACCESS_DENIED", ours, strlen(ours), 0644);
        if (r < 0)
                return aj_error(reterr, -r, 0, 0, "the error page ERR_ACCESS_DENIED: %s", strerror(-r));
        return 0;
}

/* ---- is it running --------------------------------------------------------------------------------- */

static bool port_open(void)
{
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(EGRESS_LISTEN_PORT) };
        _cleanup_close_ int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        return fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
}

/* The start time of a process (field 22 of /proc/PID/stat), 0 when it is gone or a zombie. */
static uint64_t proc_start_time(pid_t pid)
{
        _cleanup_free_ char *stat = NULL, *path = NULL;
        uint64_t start;
        const char *p;
        int field = 3;

        if (asprintf(&path, "/proc/%d/stat", (int)pid) < 0 ||
            read_regular_nofollow(AT_FDCWD, path, 4096, &stat, NULL) < 0)
                return 0;
        p = strrchr(stat, ')');
        if (!p || p[1] != ' ' || p[2] == 'Z' || p[2] == 'X')
                return 0;
        for (p += 2; *p && field < 22; p++)
                if (*p == ' ')
                        field++;
        return parse_decimal(p, strcspn(p, " \n"), UINT64_MAX, &start) < 0 ? 0 : start;
}

/* The supervisor recorded in the pid file ("PID START\n"), if it is still that process. */
static pid_t supervisor_running(void)
{
        _cleanup_free_ char *text = NULL;
        uint64_t pid, start;
        size_t n;

        if (read_regular_nofollow(AT_FDCWD, EGRESS_PIDFILE, 256, &text, NULL) < 0)
                return 0;
        n = strcspn(text, " ");
        if (parse_decimal(text, n, INT32_MAX, &pid) < 0 || pid <= 1 || text[n] != ' ' ||
            parse_decimal(text + n + 1, strcspn(text + n + 1, "\n"), UINT64_MAX, &start) < 0)
                return 0;
        return proc_start_time((pid_t)pid) == start ? (pid_t)pid : 0;
}

/* ActiveState of the unit: "active", "activating", "failed", "inactive" (also when it is not loaded). */
static int unit_state(const Tools *t, char *buf, size_t size)
{
        char *argv[] = { t->systemctl, (char *)"is-active", (char *)EGRESS_UNIT, NULL };
        int r = run_line(argv, buf, size);

        return r < 0 ? r : 0;
}

static bool unit_alive(const char *state)
{
        return strcmp(state, "active") == 0 || strcmp(state, "activating") == 0 ||
               strcmp(state, "reloading") == 0 || strcmp(state, "deactivating") == 0;
}

/* ---- starting and stopping squid ------------------------------------------------------------------- */

static int start_unit(const Tools *t, AjError *reterr)
{
        char *argv[] = {
                t->systemd_run,
                (char *)"--quiet",
                (char *)"--unit=" EGRESS_UNIT,
                (char *)"--description=agentic-job egress proxy (squid)",
                (char *)"--service-type=exec",
                (char *)"--collect",
                (char *)"-p",
                (char *)"User=" EGRESS_PROXY_USER,
                (char *)"-p",
                (char *)"WorkingDirectory=" EGRESS_STATE_DIR,
                (char *)"-p",
                (char *)"UMask=0077",
                (char *)"-p",
                (char *)"Restart=on-failure",
                (char *)"-p",
                (char *)"RestartSec=1",
                /* SIGTERM to squid alone, which stops its helpers itself (they would otherwise die
                 * first and squid start them again while shutting down). */
                (char *)"-p",
                (char *)"KillMode=mixed",
                (char *)"-p",
                (char *)"LimitNOFILE=16384",
                (char *)"-p",
                (char *)"OOMScoreAdjust=" EGRESS_OOM_SCORE_ADJ,
                (char *)"-p",
                (char *)"NoNewPrivileges=yes",
                (char *)"-p",
                (char *)"CapabilityBoundingSet=",
                (char *)"-p",
                (char *)"AmbientCapabilities=",
                (char *)"-p",
                (char *)"ProtectSystem=strict",
                (char *)"-p",
                (char *)"ReadWritePaths=" EGRESS_STATE_DIR " " EGRESS_LOG_DIR,
                (char *)"-p",
                (char *)"ProtectHome=yes",
                (char *)"-p",
                (char *)"PrivateTmp=yes",
                (char *)"-p",
                (char *)"PrivateDevices=yes",
                (char *)"-p",
                (char *)"ProtectKernelTunables=yes",
                (char *)"-p",
                (char *)"ProtectKernelModules=yes",
                (char *)"-p",
                (char *)"ProtectKernelLogs=yes",
                (char *)"-p",
                (char *)"ProtectControlGroups=yes",
                (char *)"-p",
                (char *)"ProtectClock=yes",
                (char *)"-p",
                (char *)"ProtectHostname=yes",
                (char *)"-p",
                (char *)"RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX AF_NETLINK",
                (char *)"-p",
                (char *)"RestrictNamespaces=yes",
                (char *)"-p",
                (char *)"RestrictRealtime=yes",
                (char *)"-p",
                (char *)"RestrictSUIDSGID=yes",
                (char *)"-p",
                (char *)"LockPersonality=yes",
                (char *)"-p",
                (char *)"MemoryDenyWriteExecute=yes",
                (char *)"-p",
                (char *)"SystemCallArchitectures=native",
                (char *)"-p",
                (char *)"SystemCallFilter=@system-service",
                (char *)"--",
                t->squid,
                (char *)"-N",
                (char *)"-f",
                (char *)EGRESS_SQUID_CONF,
                NULL,
        };
        int r = run(argv);

        if (r != 0)
                return aj_error(reterr, EIO, 0, 0, "systemd-run could not start %s (status %d)", EGRESS_UNIT,
                                r);
        return 0;
}

/* The supervisor where systemd does not run: it is the proxy user, starts squid and starts it again if
 * it ends on its own (at most 5 times a minute), and stops it on SIGTERM, SIGINT or SIGHUP. */
_noreturn_ static void supervise(const struct passwd *pw, const Tools *t)
{
        char *argv[] = { t->squid, (char *)"-N", (char *)"-f", (char *)EGRESS_SQUID_CONF, NULL };
        const char *what = NULL;
        time_t window = time(NULL);
        int failures = 0, fd;
        sigset_t set;

        /* As the unit's OOMScoreAdjust=, as root. A value below 0 needs CAP_SYS_RESOURCE: where root lacks
         * it, squid keeps 0, as systemd leaves a unit then. */
        fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
        if (fd < 0 || (write(fd, EGRESS_OOM_SCORE_ADJ, strlen(EGRESS_OOM_SCORE_ADJ)) < 0 &&
                       errno != EACCES && errno != EPERM))
                _exit(1);
        (void)close(fd);
        if (creds_drop_to_user(pw, &what) < 0 || chdir(EGRESS_STATE_DIR) < 0)
                _exit(1);
        umask(077);
        fd = open(EGRESS_LOG_DIR "/squid.out", O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0 || dup2(fd, STDERR_FILENO) < 0)
                _exit(1);
        (void)close_range(3, ~0U, 0);
        /* Signals are taken with sigtimedwait(), so none is lost between checking and waiting. */
        sigemptyset(&set);
        sigaddset(&set, SIGTERM);
        sigaddset(&set, SIGINT);
        sigaddset(&set, SIGHUP);
        sigaddset(&set, SIGCHLD);
        (void)sigprocmask(SIG_BLOCK, &set, NULL);
        for (;;) {
                struct timespec second = { .tv_sec = 1 };
                pid_t pid = fork();
                bool stopping = false;
                int sig;

                if (pid == 0) {
                        (void)sigprocmask(SIG_UNBLOCK, &set, NULL);
                        execve(argv[0], argv, empty_env);
                        _exit(127);
                }
                if (pid < 0)
                        _exit(1);
                while (waitpid(pid, NULL, WNOHANG) == 0) {
                        sig = sigtimedwait(&set, NULL, &second);
                        if (sig == SIGTERM || sig == SIGINT || sig == SIGHUP) {
                                stopping = true;
                                (void)kill(pid, SIGTERM);
                        }
                }
                if (stopping)
                        _exit(0);
                if (time(NULL) - window > 60) {
                        window = time(NULL);
                        failures = 0;
                }
                if (++failures > 5)
                        _exit(1);
                sig = sigtimedwait(&set, NULL, &second);
                if (sig == SIGTERM || sig == SIGINT || sig == SIGHUP)
                        _exit(0);
        }
}

static int start_supervisor(const struct passwd *pw, const Tools *t, AjError *reterr)
{
        _cleanup_free_ char *record = NULL;
        int p[2], status;
        pid_t pid, mid;
        ssize_t k;

        if (pipe2(p, O_CLOEXEC) < 0)
                return aj_error(reterr, errno, 0, 0, "pipe: %s", strerror(errno));
        /* Twice forked, in a session of its own: no terminal, and not the caller's child. */
        mid = fork();
        if (mid == 0) {
                int null = open("/dev/null", O_RDWR | O_CLOEXEC);

                (void)close(p[0]);
                if (null < 0 || dup2(null, STDIN_FILENO) < 0 || setsid() < 0)
                        _exit(1);
                pid = fork();
                if (pid == 0)
                        supervise(pw, t);
                _exit(pid > 0 && write(p[1], &pid, sizeof(pid)) == sizeof(pid) ? 0 : 1);
        }
        (void)close(p[1]);
        if (mid < 0) {
                (void)close(p[0]);
                return aj_error(reterr, errno, 0, 0, "fork: %s", strerror(errno));
        }
        do
                k = read(p[0], &pid, sizeof(pid));
        while (k < 0 && errno == EINTR);
        (void)close(p[0]);
        status = wait_exit_status(mid);
        if (k != sizeof(pid) || status != 0)
                return aj_error(reterr, EIO, 0, 0, "the supervisor could not be started");
        if (asprintf(&record, "%d %llu\n", (int)pid, (unsigned long long)proc_start_time(pid)) < 0)
                return aj_error(reterr, ENOMEM, 0, 0, "out of memory");
        if (write_file_atomic(EGRESS_PIDFILE, record, strlen(record), 0644) < 0) {
                (void)kill(pid, SIGTERM);
                return aj_error(reterr, EIO, 0, 0, "cannot write %s", EGRESS_PIDFILE);
        }
        return 0;
}

static int wait_listening(const Tools *t, AjError *reterr)
{
        for (int ms = 0; ms < LISTEN_TIMEOUT_MS; ms += 50) {
                struct timespec pause = { .tv_nsec = 50 * 1000 * 1000 };
                char state[64] = "";

                if (port_open())
                        return 0;
                if (ms % 500 == 0 && t->systemd && unit_state(t, state, sizeof(state)) >= 0 &&
                    !unit_alive(state))
                        return aj_error(
                                reterr, EIO, 0, 0,
                                "squid ended before it listened (%s is %s); see journalctl -u %s and "
                                "%s/cache.log",
                                EGRESS_UNIT, state, EGRESS_UNIT, EGRESS_LOG_DIR);
                if (ms % 500 == 0 && !t->systemd && supervisor_running() == 0)
                        return aj_error(reterr, EIO, 0, 0,
                                        "squid ended before it listened; see %s/squid.out and %s/cache.log",
                                        EGRESS_LOG_DIR, EGRESS_LOG_DIR);
                (void)nanosleep(&pause, NULL);
        }
        return aj_error(reterr, ETIMEDOUT, 0, 0,
                        "squid did not listen on 127.0.0.1:%d in %d s; see %s/cache.log", EGRESS_LISTEN_PORT,
                        LISTEN_TIMEOUT_MS / 1000, EGRESS_LOG_DIR);
}

/* ---- the checks before any change ------------------------------------------------------------------ */

/* Our own files (under the install prefix and /opt): trusted, or with owners_only root's at least. */
static int check_ours(bool owners_only, const char *path, AjError *reterr)
{
        return owners_only ? trusted_path_check_owners(path, reterr) : trusted_path_check(path, reterr);
}

static int find_tools(Tools *t, AjError *reterr)
{
        t->systemd = systemd_running();
        if (trusted_program_find(ROOT_PATH, "squid", &t->squid, reterr) < 0 ||
            trusted_program_find(ROOT_PATH, "openssl", &t->openssl, reterr) < 0 ||
            trusted_program_find(ROOT_PATH, "rm", &t->rm, reterr) < 0 ||
            trusted_program_find(ROOT_PATH, "useradd", &t->useradd, reterr) < 0)
                return -ENOENT;
        if (t->systemd && (trusted_program_find(ROOT_PATH, "systemd-run", &t->systemd_run, reterr) < 0 ||
                           trusted_program_find(ROOT_PATH, "systemctl", &t->systemctl, reterr) < 0))
                return -ENOENT;
        if (first_trusted(certgen_paths, "squid certificate generator (security_file_certgen)", &t->certgen,
                          reterr) < 0 ||
            first_trusted(template_dirs, "squid error page templates", &t->templates, reterr) < 0 ||
            first_trusted(system_cas, "system certificate bundle", &t->system_ca, reterr) < 0 ||
            first_trusted(nologin_shells, "nologin shell", &t->nologin, reterr) < 0)
                return -ENOENT;
        if (check_ours(t->owners_only, EGRESS_ACL_PATH, reterr) < 0 ||
            check_ours(t->owners_only, EGRESS_SQUID_DATA_DIR "/squid.conf.in", reterr) < 0 ||
            check_ours(t->owners_only, EGRESS_SQUID_DATA_DIR "/ERR_ACCESS_DENIED", reterr) < 0)
                return -ENOENT;
        return 0;
}

/* The policy and the threat list the helper will load: root's alone, and valid now, so that squid does
 * not start with a helper that cannot. The bytes parsed go to ret_bytes where it is given. */
static int check_policy(const char *path, bool owners_only, PolicyBytes *ret_bytes, AjError *reterr)
{
        _cleanup_(egress_policy_freep) EgressPolicy *policy = NULL;
        _cleanup_(egress_threats_freep) EgressThreats *threats = NULL;
        _cleanup_(policy_bytes_done) PolicyBytes b = {};
        AjError inner = {};
        int r;

        if (access(path, F_OK) < 0)
                return aj_error(reterr, ENOENT, 0, 0, "there is no egress policy at %s", path);
        r = check_ours(owners_only, path, reterr);
        if (r < 0)
                return r;
        r = read_file_for_parse(path, EGRESS_POLICY_MAX_SIZE, &b.policy, &b.policy_size, reterr);
        if (r < 0)
                return r;
        r = egress_policy_parse(b.policy, b.policy_size, &policy, &inner);
        if (r < 0)
                return aj_error_in_file(reterr, r, path, &inner);
        if (access(EGRESS_THREATS_PATH, F_OK) == 0) {
                r = check_ours(owners_only, EGRESS_THREATS_PATH, reterr);
                if (r < 0)
                        return r;
                r = read_file_for_parse(EGRESS_THREATS_PATH, EGRESS_THREATS_MAX_SIZE, &b.threats,
                                        &b.threats_size, reterr);
                if (r < 0)
                        return r;
                r = egress_threats_parse(b.threats, b.threats_size, &threats, &inner);
                if (r < 0)
                        return aj_error_in_file(reterr, r, EGRESS_THREATS_PATH, &inner);
        }
        if (ret_bytes) {
                ret_bytes->policy = TAKE_PTR(b.policy);
                ret_bytes->policy_size = b.policy_size;
                ret_bytes->threats = TAKE_PTR(b.threats);
                ret_bytes->threats_size = b.threats_size;
        }
        return 0;
}

static int check_fresh(const Tools *t, const struct passwd *pw, AjError *reterr)
{
        char state[64] = "";
        struct stat st;
        int r;

        if (pw && (pw->pw_uid == 0 || pw->pw_gid == 0))
                return aj_error(reterr, EPERM, 0, 0, "the proxy user %s has uid or gid 0",
                                EGRESS_PROXY_USER);
        if (t->systemd && unit_state(t, state, sizeof(state)) >= 0 && unit_alive(state))
                return aj_error(reterr, EALREADY, 0, 0, "the egress proxy is already running (%s is %s)",
                                EGRESS_UNIT, state);
        if (supervisor_running() > 0)
                return aj_error(reterr, EALREADY, 0, 0,
                                "the egress proxy is already running (supervisor in %s)", EGRESS_PIDFILE);
        if (port_open())
                return aj_error(reterr, EADDRINUSE, 0, 0, "something else listens on 127.0.0.1:%d",
                                EGRESS_LISTEN_PORT);
        if ((r = absent_or_dir(EGRESS_STATE_DIR, reterr)) < 0 ||
            (r = absent_or_dir(EGRESS_LOG_DIR, reterr)) < 0 ||
            (r = absent_or_dir(EGRESS_CA_DIR, reterr)) < 0 ||
            (r = absent_or_dir(EGRESS_ERRORS_DIR, reterr)) < 0)
                return r;
        if (lstat(ACCESS_LOG, &st) == 0 && (!S_ISREG(st.st_mode) || !pw || st.st_uid != pw->pw_uid))
                return aj_error(reterr, EEXIST, 0, 0, "%s exists and is not the proxy user's regular file",
                                ACCESS_LOG);
        return 0;
}

/* ---- start and stop -------------------------------------------------------------------------------- */

static int kill_uid(pid_t pid, const ProcStatus *status, void *userdata)
{
        uid_t uid = *(uid_t *)userdata;

        if (status->uid[0] == uid || status->uid[1] == uid || status->uid[2] == uid)
                (void)kill(pid, SIGKILL);
        return 0;
}

/* SIGTERM to the supervisor, which stops squid and ends; if it has not in STOP_TIMEOUT_MS, every process
 * of the proxy user is killed (it runs nothing else). */
static int stop_supervisor(pid_t pid, uid_t proxy_uid)
{
        (void)kill(pid, SIGTERM);
        for (int ms = 0; ms < STOP_TIMEOUT_MS && proc_start_time(pid) != 0; ms += 50) {
                struct timespec pause = { .tv_nsec = 50 * 1000 * 1000 };
                (void)nanosleep(&pause, NULL);
        }
        if (proc_start_time(pid) != 0 && proxy_uid != (uid_t)-1 && proxy_uid != 0) {
                (void)proc_for_each(kill_uid, &proxy_uid);
                for (int ms = 0; ms < 1000 && proc_start_time(pid) != 0; ms += 50) {
                        struct timespec pause = { .tv_nsec = 50 * 1000 * 1000 };
                        (void)nanosleep(&pause, NULL);
                }
        }
        if (proc_start_time(pid) != 0)
                return -EBUSY;
        (void)unlink(EGRESS_PIDFILE);
        return 0;
}

int egress_proxy_stop(bool *ret_stopped, AjError *reterr)
{
        _cleanup_(tools_done) Tools t = { 0 };
        char state[64] = "";
        bool stopped = false;
        pid_t pid;

        *ret_stopped = false;
        if (geteuid() != 0)
                return aj_error(reterr, EPERM, 0, 0, "must run as root");
        t.systemd = systemd_running();
        if (t.systemd && trusted_program_find(ROOT_PATH, "systemctl", &t.systemctl, reterr) < 0)
                return -ENOENT;
        if (t.systemd && unit_state(&t, state, sizeof(state)) >= 0 && unit_alive(state)) {
                char *argv[] = { t.systemctl, (char *)"stop", (char *)EGRESS_UNIT, NULL };
                int r = run(argv);

                if (r != 0)
                        return aj_error(reterr, EIO, 0, 0, "systemctl stop %s failed (status %d)",
                                        EGRESS_UNIT, r);
                stopped = true;
        }
        pid = supervisor_running();
        if (pid > 0) {
                const struct passwd *pw = getpwnam(EGRESS_PROXY_USER);

                if (stop_supervisor(pid, pw ? pw->pw_uid : (uid_t)-1) < 0)
                        return aj_error(reterr, EBUSY, 0, 0, "the supervisor (pid %d) did not end",
                                        (int)pid);
                stopped = true;
        }
        *ret_stopped = stopped;
        return 0;
}

int egress_proxy_check(const char *policy_path, bool owners_only, AjError *reterr)
{
        _cleanup_(tools_done) Tools t = { .owners_only = owners_only };
        int r;

        if (geteuid() != 0)
                return aj_error(reterr, EPERM, 0, 0, "must run as root");
        r = find_tools(&t, reterr);
        if (r >= 0)
                r = check_policy(policy_path, owners_only, NULL, reterr);
        if (r >= 0)
                r = check_fresh(&t, getpwnam(EGRESS_PROXY_USER), reterr);
        return r;
}

int egress_proxy_start(uint64_t log_max_bytes, bool reads_listed, bool *ret_changed, AjError *reterr)
{
        _cleanup_(tools_done) Tools t = { 0 };
        _cleanup_(policy_bytes_done) PolicyBytes bytes = {};
        _cleanup_free_ char *pem = NULL;
        struct passwd *pw;
        AjError ignored = { 0 };
        bool stopped;
        int r;

        *ret_changed = false;
        if (geteuid() != 0)
                return aj_error(reterr, EPERM, 0, 0, "must run as root");
        r = find_tools(&t, reterr);
        if (r < 0)
                return r;
        r = check_policy(EGRESS_POLICY_PATH, false, &bytes, reterr);
        if (r < 0)
                return r;
        pw = getpwnam(EGRESS_PROXY_USER);
        r = check_fresh(&t, pw, reterr);
        if (r < 0)
                return r;

        *ret_changed = true;
        if (!pw) {
                char *argv[] = { t.useradd,
                                 (char *)"--system",
                                 (char *)"--user-group",
                                 (char *)"--home-dir",
                                 (char *)EGRESS_STATE_DIR,
                                 (char *)"--no-create-home",
                                 (char *)"--shell",
                                 (char *)t.nologin,
                                 (char *)"--comment",
                                 (char *)"agentic-job egress proxy",
                                 (char *)EGRESS_PROXY_USER,
                                 NULL };

                r = run(argv);
                pw = r == 0 ? getpwnam(EGRESS_PROXY_USER) : NULL;
                if (!pw)
                        return aj_error(reterr, EIO, 0, 0, "useradd could not make the user %s (status %d)",
                                        EGRESS_PROXY_USER, r);
        }
        if ((r = ensure_dir(EGRESS_CA_DIR, 0755, 0, 0)) < 0 ||
            (r = ensure_dir(EGRESS_STATE_DIR, 0700, pw->pw_uid, pw->pw_gid)) < 0 ||
            (r = ensure_dir(EGRESS_LOG_DIR, 0750, pw->pw_uid, pw->pw_gid)) < 0)
                return aj_error(reterr, -r, 0, 0, "cannot make the proxy's directories: %s", strerror(-r));

        r = as_proxy(pw, &t, prepare_state, &pem, reterr);
        if (r < 0)
                return r;
        r = publish_ca(&t, pem, reterr);
        if (r >= 0)
                r = write_error_pages(&t, reterr);
        if (r >= 0)
                r = snapshot_policy(&bytes, reterr);
        if (r >= 0)
                r = write_config(&t, log_max_bytes, reads_listed, reterr);
        if (r < 0)
                return r;

        r = t.systemd ? start_unit(&t, reterr) : start_supervisor(pw, &t, reterr);
        if (r >= 0)
                r = wait_listening(&t, reterr);
        if (r < 0)
                /* Nothing is left restarting a proxy that cannot start. */
                (void)egress_proxy_stop(&stopped, &ignored);
        return r;
}
