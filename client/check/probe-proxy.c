/* SPDX-License-Identifier: MIT */
/* The sandbox side's requests of the egress proxy: what it must pass (egress-read, and egress-git, -cargo,
 * -npm where the policy admits their requests) and what it must refuse with its own mark, the 403 that
 * carries X-Egress-Denied (a write, a push, a fronted name, a local or metadata address). Only that 403
 * counts as a refusal: a timeout, a 502 or an upstream's own 403 prove nothing about the proxy. */
#include "probe-proxy.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ftw.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "egress-policy.h"
#include "macro.h"
#include "probe-emit.h"
#include "probe-run.h"
#include "sandbox-env.h"
#include "trusted-path.h"

#define GIT         "/usr/bin/git"
#define TOOL_MS     30000 /* cargo fetch, npm install: a registry's round trips */
#define HEADERS_MAX 8192

typedef struct Answer {
        int curl;        /* curl's status; -errno or 127 where it did not run */
        unsigned status; /* the last response's, 0 for none */
        bool denied;     /* it carries X-Egress-Denied */
        char mark[128];  /* the header's value, where it does */
} Answer;

static void mark_of(const char *headers, char *buf, size_t size)
{
        const char *last = NULL, *v;

        buf[0] = '\0';
        for (const char *l = headers; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
                if (strncasecmp(l, "x-egress-denied:", 16) == 0)
                        last = l;
        if (!last)
                return;
        v = last + 16;
        v += strspn(v, " \t");
        (void)snprintf(buf, size, "%.*s", (int)strcspn(v, "\r\n"), v);
}

/* One request through the proxy, with curl: method (GET without a body, POST with one), url, extra
 * options before the URL (NULL-terminated, at most 6). */
static void ask(const char *method, const char *url, const char *const *extra, Answer *ret)
{
        const char *argv[24] = { PROBE_CURL, "-q", "-s", "-o",        "/dev/null", "-D",
                                 "-",        "-m", "5",  "--noproxy", "" };
        char out[HEADERS_MAX] = "";
        size_t k = 11;

        if (strcmp(method, "GET") != 0) {
                argv[k++] = "-X";
                argv[k++] = method;
        }
        if (strcmp(method, "POST") == 0) {
                argv[k++] = "-d";
                argv[k++] = "agentic-job-check";
        }
        for (size_t i = 0; extra && extra[i] && i < 6; i++)
                argv[k++] = extra[i];
        argv[k++] = "--";
        argv[k++] = url;
        argv[k] = NULL;
        /* --noproxy "": the proxy for every host, loopback's too, whatever no_proxy says. */
        ret->curl = probe_run((char *const *)argv, environ, out, sizeof(out));
        probe_last_response(out, &ret->status, &ret->denied);
        mark_of(out, ret->mark, sizeof(ret->mark));
}

static bool ran(const Answer *a)
{
        return a->curl >= 0 && a->curl != 127;
}

static bool refused(const Answer *a)
{
        return a->status == 403 && a->denied;
}

static void describe(const Answer *a, char *buf, size_t size)
{
        if (refused(a))
                (void)snprintf(buf, size, "403, X-Egress-Denied: %.100s", a->mark);
        else if (a->status)
                (void)snprintf(buf, size, "HTTP %u%s (curl status %d)", a->status,
                               a->denied ? "" : " without X-Egress-Denied", a->curl);
        else
                (void)snprintf(buf, size, "no answer (curl status %d)", a->curl);
}

void probe_proxy_post(const InsideArgs *a)
{
        long long t = probe_now_ms();
        char what[192];
        Answer ans;

        if (a->post == INSIDE_POST_NONE) {
                probe_emit("egress-post", "note", t, "[egress] proxy = false: no proxy to refuse a write");
                return;
        }
        if (a->post == INSIDE_POST_ADMITTED) {
                probe_emit("egress-post", "note", t, "not probed: the egress policy admits a POST to %s",
                           a->control_url);
                return;
        }
        ask("POST", a->control_url, NULL, &ans);
        if (!ran(&ans)) {
                probe_emit("egress-post", "note", t, "not probed: cannot run " PROBE_CURL);
                return;
        }
        describe(&ans, what, sizeof(what));
        probe_emit("egress-post", refused(&ans) ? "ok" : "fail", t, "POST %s, which the policy refuses: %s",
                   a->control_url, what);
}

/* GET and HEAD of control-url: reads need no rule, so the origin must answer both. */
void probe_proxy_read(const InsideArgs *a)
{
        static const char *const head[] = { "-I", NULL };
        long long t = probe_now_ms();
        char what[192];
        Answer get, hd;

        if (a->proxy_port == 0) {
                probe_emit("egress-read", "note", t, "[egress] proxy = false: no proxy to pass a read");
                return;
        }
        ask("GET", a->control_url, NULL, &get);
        ask("GET", a->control_url, head, &hd);
        if (!ran(&get)) {
                probe_emit("egress-read", "note", t, "not probed: cannot run " PROBE_CURL);
                return;
        }
        if (get.status >= 200 && get.status < 400 && !get.denied && hd.status >= 200 && hd.status < 400 &&
            !hd.denied) {
                probe_emit("egress-read", "ok", t, "GET and HEAD %s answered %u and %u through the proxy",
                           a->control_url, get.status, hd.status);
                return;
        }
        describe(get.status >= 200 && get.status < 400 && !get.denied ? &hd : &get, what, sizeof(what));
        probe_emit("egress-read", "fail", t, "%s %s, a read the policy admits: %s",
                   get.status >= 200 && get.status < 400 && !get.denied ? "HEAD" : "GET", a->control_url,
                   what);
}

/* Domain fronting: a connection to control-url's host that names another, in the Host header, then in
 * the TLS server name. The other name is one the origin's certificate covers (the runner found it), as a
 * real front's would be: squid's check of the certificate passes, and the policy must refuse each, its
 * reason saying fronting. */
void probe_proxy_fronting(const InsideArgs *a)
{
        char hostport[300], connect_to[600], front_url[300], what[192], host_header[320];
        const char *host = a->control_host;
        long long t = probe_now_ms();
        bool https = strncmp(a->control_url, "https://", 8) == 0;
        unsigned port = a->control_port;
        Answer by_host, by_sni = {};

        if (a->proxy_port == 0) {
                probe_emit("egress-fronting", "note", t, "[egress] proxy = false: no proxy to refuse it");
                return;
        }
        if (!https || !a->front) {
                probe_emit("egress-fronting", "note", t,
                           "not probed: no other name of control-url's certificate to front with");
                return;
        }
        (void)snprintf(host_header, sizeof(host_header), "Host: %s", a->front);
        ask("GET", a->control_url, (const char *const[]){ "-H", host_header, NULL }, &by_host);
        if (!ran(&by_host)) {
                probe_emit("egress-fronting", "note", t, "not probed: cannot run " PROBE_CURL);
                return;
        }
        if (!refused(&by_host) || !strstr(by_host.mark, "fronting")) {
                describe(&by_host, what, sizeof(what));
                probe_emit("egress-fronting", "fail", t, "GET %s with Host: %s: %s", a->control_url,
                           a->front, what);
                return;
        }
        /* The tunnel to control-url's host and port (curl's CONNECT goes where --connect-to says), the
         * server name another's, the Host header the host's own. */
        (void)snprintf(connect_to, sizeof(connect_to), "%s:%u:%s:%u", a->front, port, host, port);
        (void)snprintf(front_url, sizeof(front_url), "https://%s:%u/", a->front, port);
        (void)snprintf(hostport, sizeof(hostport), "Host: %s:%u", host, port);
        ask("GET", front_url, (const char *const[]){ "--connect-to", connect_to, "-H", hostport, NULL },
            &by_sni);
        if (refused(&by_sni) && strstr(by_sni.mark, "fronting")) {
                probe_emit("egress-fronting", "ok", t,
                           "%s named in the Host header, then in the TLS server name: both refused by the "
                           "proxy "
                           "as fronting",
                           a->front);
                return;
        }
        describe(&by_sni, what, sizeof(what));
        probe_emit("egress-fronting", "fail", t, "a tunnel to %s:%u with the server name %s: %s", host, port,
                   a->front, what);
}

/* URLs the proxy must refuse as local, each asked; fail names the first it did not refuse. */
static void ask_all_refused(const char *name, long long t, char urls[][96], size_t n)
{
        char what[192];

        for (size_t i = 0; i < n; i++) {
                Answer ans;

                ask("GET", urls[i], NULL, &ans);
                if (!ran(&ans)) {
                        probe_emit(name, "note", t, "not probed: cannot run " PROBE_CURL);
                        return;
                }
                if (!refused(&ans)) {
                        describe(&ans, what, sizeof(what));
                        probe_emit(name, "fail", t, "the proxy asked for %s: %s", urls[i], what);
                        return;
                }
        }
        probe_emit(name, "ok", t, "the proxy refused all %zu (403, X-Egress-Denied): %s%s", n, urls[0],
                   n > 1 ? " ..." : "");
}

/* The proxy asked for the metadata service, and for loopback and this machine's own addresses: it must
 * connect to none (the policy refuses them by address, squid by where a name resolves to, nftables on the
 * proxy's uid). */
void probe_proxy_local(const InsideArgs *a)
{
        char urls[2 + 2 * INSIDE_MAX_LIST][96];
        struct ifaddrs *ifa = NULL;
        long long t = probe_now_ms();
        size_t n = 0;

        if (a->proxy_port == 0) {
                probe_emit("egress-proxy-metadata", "note", t, "[egress] proxy = false: no proxy");
                probe_emit("egress-proxy-local", "note", t, "[egress] proxy = false: no proxy");
                return;
        }
        (void)snprintf(urls[n++], sizeof(urls[0]), "http://169.254.169.254/");
        (void)snprintf(urls[n++], sizeof(urls[0]), "http://[fd00:ec2::254]/");
        ask_all_refused("egress-proxy-metadata", t, urls, n);

        t = probe_now_ms();
        n = 0;
        (void)snprintf(urls[n++], sizeof(urls[0]), "http://127.0.0.1:%u/", a->tcp_control);
        (void)snprintf(urls[n++], sizeof(urls[0]), "http://[::1]:%u/", a->tcp_control);
        (void)snprintf(urls[n++], sizeof(urls[0]), "http://localhost:%u/", a->tcp_control);
        if (getifaddrs(&ifa) == 0) {
                for (const struct ifaddrs *i = ifa; i && n < ELEMENTSOF(urls); i = i->ifa_next) {
                        char addr[INET6_ADDRSTRLEN];
                        int family = i->ifa_addr ? i->ifa_addr->sa_family : AF_UNSPEC;

                        if (i->ifa_flags & IFF_LOOPBACK)
                                continue;
                        if (family == AF_INET &&
                            inet_ntop(AF_INET, &((struct sockaddr_in *)(void *)i->ifa_addr)->sin_addr, addr,
                                      sizeof(addr)))
                                (void)snprintf(urls[n++], sizeof(urls[0]), "http://%s/", addr);
                        else if (family == AF_INET6 &&
                                 !IN6_IS_ADDR_LINKLOCAL(
                                         &((struct sockaddr_in6 *)(void *)i->ifa_addr)->sin6_addr) &&
                                 inet_ntop(AF_INET6,
                                           &((struct sockaddr_in6 *)(void *)i->ifa_addr)->sin6_addr, addr,
                                           sizeof(addr)))
                                (void)snprintf(urls[n++], sizeof(urls[0]), "http://[%s]/", addr);
                }
                freeifaddrs(ifa);
        }
        ask_all_refused("egress-proxy-local", t, urls, n);
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        (void)st;
        (void)flag;
        (void)ftw;
        (void)remove(path);
        return 0;
}

/* A directory of the probe's own, under the sandbox side's temp, removed with everything in it. */
static int scratch_make(char *buf, size_t size, const char *what)
{
        const char *tmp = getenv("TMPDIR");

        (void)snprintf(buf, size, "%s/agentic-job-check-%s-XXXXXX", tmp && tmp[0] == '/' ? tmp : "/tmp",
                       what);
        return mkdtemp(buf) ? 0 : -errno;
}

static void scratch_remove(const char *dir)
{
        (void)nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static int write_text(const char *path, const char *text)
{
        FILE *f = fopen(path, "wxe");
        int r = 0;

        if (!f)
                return -errno;
        if (fputs(text, f) < 0)
                r = -EIO;
        if (fclose(f) != 0 && r == 0)
                r = -errno;
        return r;
}

/* A program on the sandbox's PATH whose every directory is root's alone: never one of the sandbox
 * user's (a ~/.cargo/bin/cargo an earlier step planted would answer whatever it likes). */
static bool find_tool(const char *name, char *buf, size_t size)
{
        _cleanup_free_ char *path = NULL;
        AjError e = {};

        if (trusted_program_find(SANDBOX_PATH, name, &path, &e) < 0 ||
            (size_t)snprintf(buf, size, "%s", path) >= size)
                return false;
        return true;
}

/* Our environment and the given additions, which win over what it has. */
static char **env_with(const char *const *add, char **storage, size_t max)
{
        size_t k = 0;

        for (size_t i = 0; add[i] && k + 1 < max; i++)
                storage[k++] = (char *)add[i];
        for (char **e = environ; *e && k + 1 < max; e++) {
                bool shadowed = false;

                for (size_t i = 0; add[i] && !shadowed; i++)
                        shadowed = strncmp(*e, add[i], strcspn(add[i], "=") + 1) == 0;
                if (!shadowed)
                        storage[k++] = *e;
        }
        storage[k] = NULL;
        return storage;
}

/* A tool's end: ok with what it did, else fail with its status and the first line it wrote. */
static void tool_result(const char *name, long long t, int status, char *out, const char *did)
{
        out[strcspn(out, "\n")] = '\0';
        if (status == 0)
                probe_emit(name, "ok", t, "%s through the proxy", did);
        else
                probe_emit(name, "fail", t, "%s, which the policy admits: status %d: %.160s", did, status,
                           out);
}

static void tool_git(const InsideArgs *a, const char *name, long long t)
{
        /* No configuration file but root's (probe_home_enter() set the rest): no global or system
         * file, no repository ("/" is the working directory), http and https only. */
        static const char *const add[] = { "GIT_TERMINAL_PROMPT=0", "GIT_CONFIG_NOSYSTEM=1",
                                           "GIT_CONFIG_GLOBAL=/dev/null", "GIT_ALLOW_PROTOCOL=http:https",
                                           NULL };
        char *env[512], out[4096] = "", did[256];
        AjError e = {};
        char *argv[] = { (char *)GIT,         (char *)"-c", (char *)"protocol.version=2",
                         (char *)"ls-remote", (char *)"--", (char *)a->fetch_repo,
                         (char *)"HEAD",      NULL };
        int r;

        if (access(GIT, X_OK) < 0) {
                probe_emit(name, "note", t, "not probed: no " GIT " (the policy admits its requests)");
                return;
        }
        if (trusted_path_check(GIT, &e) < 0) {
                probe_emit(name, "fail", t, "%s: %.200s: not run", GIT, e.message);
                return;
        }
        r = probe_run_capture(argv, env_with(add, env, ELEMENTSOF(env)), out, sizeof(out), true);
        /* The refs' advertisement: an object id, a tab, HEAD. */
        if (r == 0 && (strlen(out) < 41 || strspn(out, "0123456789abcdef") < 40 || !strstr(out, "\tHEAD")))
                r = -EBADMSG;
        (void)snprintf(did, sizeof(did), "git ls-remote %.200s HEAD", a->fetch_repo);
        tool_result(name, t, r, out, did);
}

static void tool_cargo(const char *name, long long t)
{
        char cargo[512], dir[256], path[320], home[300], *env[512], out[4096] = "";
        const char *add[] = { home, NULL };
        int r;

        if (!find_tool("cargo", cargo, sizeof(cargo))) {
                probe_emit(name, "note", t, "not probed: no cargo (the policy admits its requests)");
                return;
        }
        r = scratch_make(dir, sizeof(dir), "cargo");
        if (r < 0) {
                probe_emit(name, "fail", t, "cannot make a directory for cargo: %s", strerror(-r));
                return;
        }
        (void)snprintf(home, sizeof(home), "CARGO_HOME=%s/home", dir);
        (void)snprintf(path, sizeof(path), "%s/Cargo.toml", dir);
        r = write_text(path,
                       "[package]\nname = \"agentic-job-check\"\nversion = \"0.0.0\"\nedition = \"2021\"\n"
                       "[lib]\npath = \"lib.rs\"\n[dependencies]\nitoa = \"1\"\n");
        (void)snprintf(path, sizeof(path), "%s/lib.rs", dir);
        if (r >= 0)
                r = write_text(path, "");
        if (r < 0) {
                scratch_remove(dir);
                probe_emit(name, "fail", t, "cannot write a manifest for cargo: %s", strerror(-r));
                return;
        }
        (void)snprintf(path, sizeof(path), "%s/Cargo.toml", dir);
        r = probe_run_timed((char *const[]){ cargo, (char *)"fetch", (char *)"--quiet",
                                             (char *)"--manifest-path", path, NULL },
                            env_with(add, env, ELEMENTSOF(env)), out, sizeof(out), true, TOOL_MS);
        scratch_remove(dir);
        tool_result(name, t, r, out, "cargo fetch of a crate depending on itoa");
}

static void tool_npm(const char *name, long long t)
{
        char npm[512], dir[256], cache[300], *env[512], out[4096] = "";
        const char *add[] = { cache, "npm_config_update_notifier=false", "npm_config_fund=false", NULL };
        int r;

        if (!find_tool("npm", npm, sizeof(npm))) {
                probe_emit(name, "note", t, "not probed: no npm (the policy admits its requests)");
                return;
        }
        r = scratch_make(dir, sizeof(dir), "npm");
        if (r < 0) {
                probe_emit(name, "fail", t, "cannot make a directory for npm: %s", strerror(-r));
                return;
        }
        (void)snprintf(cache, sizeof(cache), "npm_config_cache=%s/cache", dir);
        r = probe_run_timed((char *const[]){ npm, (char *)"install", (char *)"--silent", (char *)"--prefix",
                                             dir, (char *)"is-number", NULL },
                            env_with(add, env, ELEMENTSOF(env)), out, sizeof(out), true, TOOL_MS);
        scratch_remove(dir);
        tool_result(name, t, r, out, "npm install is-number");
}

void probe_proxy_planned(const InsideArgs *a, size_t i)
{
        const EgressPlanned *p = &a->planned[i];
        long long t = probe_now_ms();

        if (a->proxy_port == 0) {
                probe_emit(p->name, "note", t,
                           "[egress] proxy = false: the sandbox reaches the network directly");
                return;
        }
        if (p->refused) {
                char what[192];
                Answer ans;

                ask(p->method, p->url, NULL, &ans);
                if (!ran(&ans)) {
                        probe_emit(p->name, "note", t, "not probed: cannot run " PROBE_CURL);
                        return;
                }
                describe(&ans, what, sizeof(what));
                probe_emit(p->name, refused(&ans) ? "ok" : "fail", t, "%s %s, which the policy refuses: %s",
                           p->method, p->url, what);
        } else if (strcmp(p->name, "egress-push") == 0)
                probe_emit(p->name, "note", t, "not probed: the egress policy admits a push to %s",
                           a->fetch_repo);
        else if (strcmp(p->name, "egress-git") == 0)
                tool_git(a, p->name, t);
        else if (strcmp(p->name, "egress-cargo") == 0)
                tool_cargo(p->name, t);
        else
                tool_npm(p->name, t);
}
