/* SPDX-License-Identifier: MIT */
#include "probe-egress.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "check-inside.h"
#include "egress-attempt.h"
#include "egress-policy.h"
#include "macro.h"
#include "probe-emit.h"
#include "resolv-conf.h"
#include "strv.h"

/* control-url's host, resolved once as any program of the runner's would: its addresses, with the first
 * IPv4 one (else the first IPv6 one) in buf. *ret_res the caller's to free. */
static int resolve(const char *host, char *buf, size_t size, struct addrinfo **ret_res)
{
        struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *res = NULL;
        const struct addrinfo *pick = NULL;
        const void *addr;

        if (getaddrinfo(host, NULL, &hints, &res) != 0)
                return -EHOSTUNREACH;
        for (const struct addrinfo *a = res; a && !pick; a = a->ai_next)
                if (a->ai_family == AF_INET)
                        pick = a;
        if (!pick)
                pick = res;
        addr = pick->ai_family == AF_INET
                       ? (const void *)&((struct sockaddr_in *)(void *)pick->ai_addr)->sin_addr
                       : (const void *)&((struct sockaddr_in6 *)(void *)pick->ai_addr)->sin6_addr;
        if (!inet_ntop(pick->ai_family, addr, buf, (socklen_t)size)) {
                int r = -errno;

                freeaddrinfo(res);
                return r;
        }
        *ret_res = res;
        return 0;
}

/* A name no one has asked for: a resolver's answer to it, even "no such name", means the question left
 * the machine (or reached a resolver that would send it). */
static void fresh_name(const char *host, char *buf, size_t size)
{
        uint8_t b[8] = {};

        /* Without randomness, the clock: fresh enough for a name that only must not be cached. */
        if (getrandom(b, sizeof(b), GRND_NONBLOCK) != (ssize_t)sizeof(b))
                for (size_t i = 0; i < sizeof(b); i++)
                        b[i] = (uint8_t)((unsigned long long)probe_now_ms() >> (8 * i));
        (void)snprintf(buf, size, "agentic-job-check-%02x%02x%02x%02x%02x%02x%02x%02x.%s", b[0], b[1], b[2],
                       b[3], b[4], b[5], b[6], b[7], host);
}

static bool resolver_answered(int gai)
{
        return gai == 0 || gai == EAI_NONAME || gai == EAI_NODATA;
}

/* egress-resolve-control: the runner's resolver (nsswitch and all) answers a fresh name under control-url's
 * host; then the sandbox side gets a fresh name of its own to try. */
static void control_resolve(Report *rep, const char *host, EgressTargets *t)
{
        struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *res = NULL;
        char name[300];
        long long t0 = probe_now_ms();
        int r;

        fresh_name(host, name, sizeof(name));
        r = getaddrinfo(name, NULL, &hints, &res);
        if (r == 0)
                freeaddrinfo(res);
        if (!resolver_answered(r)) {
                report_addf(rep, "egress-resolve-control", CHECK_NOTE, probe_now_ms() - t0, false,
                            "no resolver answers the runner for %s: %s", name, gai_strerror(r));
                return;
        }
        report_addf(rep, "egress-resolve-control", CHECK_OK, probe_now_ms() - t0, false,
                    "a resolver answers the runner for %s (%s)", name,
                    r == 0 ? "an address" : gai_strerror(r));
        fresh_name(host, t->resolve_name, sizeof(t->resolve_name));
}

/* egress-ipv6-control: control-url's host has an IPv6 address the runner connects to. */
static void control_ipv6(Report *rep, const EgressUrl *url, const struct addrinfo *res, EgressTargets *t)
{
        struct sockaddr_in6 sa6;
        char addr[INET6_ADDRSTRLEN];
        long long t0 = probe_now_ms();
        int r;

        while (res && res->ai_family != AF_INET6)
                res = res->ai_next;
        if (!res) {
                report_addf(rep, "egress-ipv6-control", CHECK_NOTE, probe_now_ms() - t0, false,
                            "control-url's host %s has no IPv6 address", url->host);
                return;
        }
        memcpy(&sa6, res->ai_addr, sizeof(sa6));
        sa6.sin6_port = htons((uint16_t)url->port);
        (void)inet_ntop(AF_INET6, &sa6.sin6_addr, addr, sizeof(addr));
        r = egress_try_tcp((const struct sockaddr *)&sa6, sizeof(sa6));
        if (r < 0) {
                report_addf(rep, "egress-ipv6-control", CHECK_NOTE, probe_now_ms() - t0, false,
                            "the runner does not reach %s (%s) port %u over IPv6: %s", url->host, addr,
                            url->port, strerror(-r));
                return;
        }
        report_addf(rep, "egress-ipv6-control", CHECK_OK, probe_now_ms() - t0, false,
                    "the runner connects to %s (%s) port %u over IPv6", url->host, addr, url->port);
        (void)snprintf(t->addr6, sizeof(t->addr6), "%s", addr);
}

/* A name of the origin's certificate other than host: a front its certificate covers, so that squid's
 * check of the origin's certificate against the fronted name passes and the policy's own check is what
 * the probe meets. The certificate is read, not trusted: only its names are used. */
static bool front_name_ok(const char *n, const char *host)
{
        return strcasecmp(n, host) != 0 && inside_front_name_ok(n);
}

static int origin_other_name(const struct sockaddr *sa, socklen_t len, const char *host, char *buf,
                             size_t size, char *why, size_t wsize)
{
        _cleanup_close_ int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct timeval tv = { .tv_sec = EGRESS_TRY_MS / 1000 };
        SSL_CTX *ctx = NULL;
        SSL *ssl = NULL;
        X509 *cert = NULL;
        GENERAL_NAMES *names = NULL;
        int r = -ENOENT;

        if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0 ||
            setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0 || connect(fd, sa, len) < 0) {
                (void)snprintf(why, wsize, "cannot connect: %s", strerror(errno));
                return -errno;
        }
        ctx = SSL_CTX_new(TLS_client_method());
        ssl = ctx ? SSL_new(ctx) : NULL;
        if (!ssl || SSL_set_fd(ssl, fd) != 1 || SSL_set_tlsext_host_name(ssl, host) != 1 ||
            SSL_connect(ssl) != 1) {
                (void)snprintf(why, wsize, "no TLS handshake with it");
                r = -EPROTO;
                goto done;
        }
        cert = SSL_get1_peer_certificate(ssl);
        names = cert ? X509_get_ext_d2i(cert, NID_subject_alt_name, NULL, NULL) : NULL;
        for (int i = 0; names && i < sk_GENERAL_NAME_num(names); i++) {
                const GENERAL_NAME *g = sk_GENERAL_NAME_value(names, i);
                const char *n;

                if (g->type != GEN_DNS)
                        continue;
                n = (const char *)ASN1_STRING_get0_data(g->d.dNSName);
                if ((size_t)ASN1_STRING_length(g->d.dNSName) != strlen(n) || !front_name_ok(n, host))
                        continue;
                (void)snprintf(buf, size, "%s", n);
                r = 0;
                break;
        }
        if (r < 0)
                (void)snprintf(why, wsize, "its certificate names no other host");
done:
        GENERAL_NAMES_free(names);
        X509_free(cert);
        if (ssl)
                (void)SSL_shutdown(ssl);
        SSL_free(ssl);
        SSL_CTX_free(ctx);
        return r;
}

/* egress-fronting-control: another name the origin's certificate covers, for the sandbox side to front
 * with. */
static void control_fronting(Report *rep, const EgressUrl *url, EgressTargets *t)
{
        struct sockaddr_storage ss;
        socklen_t len;
        char why[128] = "";
        long long t0 = probe_now_ms();

        if (!url->https) {
                report_add(rep, "egress-fronting-control", CHECK_NOTE, 0,
                           "control-url is http: squid connects to the host a request names, so nothing to "
                           "front",
                           false);
                return;
        }
        if (egress_sockaddr(t->addr, url->port, &ss, &len) == 0 &&
            origin_other_name((struct sockaddr *)&ss, len, url->host, t->front, sizeof(t->front), why,
                              sizeof(why)) == 0) {
                report_addf(rep, "egress-fronting-control", CHECK_OK, probe_now_ms() - t0, false,
                            "the certificate of %s also names %s: the front", url->host, t->front);
                return;
        }
        t->front[0] = '\0';
        report_addf(rep, "egress-fronting-control", CHECK_NOTE, probe_now_ms() - t0, false,
                    "%s: %s (squid's check of the certificate against a fronted name stops one first)",
                    url->host, why);
}

static int read_resolv_conf(char ***ret, char *why, size_t size)
{
        _cleanup_free_ char *data = malloc(RESOLV_CONF_MAX_SIZE + 1);
        /* Often a link (systemd-resolved, resolvconf): followed, as the resolvers follow it. */
        _cleanup_close_ int fd = open(RESOLV_CONF_PATH, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
        AjError e = {};
        size_t n = 0;

        if (!data)
                return -ENOMEM;
        if (fd < 0) {
                (void)snprintf(why, size, "%s: %s", RESOLV_CONF_PATH, strerror(errno));
                return -EIO;
        }
        while (n <= RESOLV_CONF_MAX_SIZE) {
                ssize_t k = read(fd, data + n, RESOLV_CONF_MAX_SIZE + 1 - n);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0) {
                        (void)snprintf(why, size, "%s: %s", RESOLV_CONF_PATH, strerror(errno));
                        return -EIO;
                }
                if (k == 0)
                        break;
                n += (size_t)k;
        }
        if (n > RESOLV_CONF_MAX_SIZE) {
                (void)snprintf(why, size, "%s: larger than %d bytes", RESOLV_CONF_PATH,
                               RESOLV_CONF_MAX_SIZE);
                return -EFBIG;
        }
        if (resolv_conf_parse(data, n, ret, &e) < 0) {
                (void)snprintf(why, size, "%s: %.200s", RESOLV_CONF_PATH, e.message);
                return -EINVAL;
        }
        return 0;
}

int control_egress(Report *rep, const Config *c, EgressTargets *ret)
{
        static const char payload[] = "agentic-job-check";
        EgressTargets t = {};
        EgressUrl url = {};
        AjError e = {};
        struct addrinfo *res = NULL;
        struct sockaddr_storage ss;
        socklen_t len;
        unsigned char query[128];
        size_t n_query = egress_dns_query(query, sizeof(query)), sent = 0;
        char why[256] = "";
        long long t0 = probe_now_ms();
        int r;

        *ret = t;
        if (!c->egress_proxy) {
                report_add(rep, "egress-tcp-control", CHECK_NOTE, 0, "[egress] proxy = false: not probed",
                           false);
                report_add(rep, "egress-udp-control", CHECK_NOTE, 0, "[egress] proxy = false: not probed",
                           false);
                report_add(rep, "egress-dns-control", CHECK_NOTE, 0, "[egress] proxy = false: not probed",
                           false);
                report_add(rep, "egress-ipv6-control", CHECK_NOTE, 0, "[egress] proxy = false: not probed",
                           false);
                report_add(rep, "egress-resolve-control", CHECK_NOTE, 0,
                           "[egress] proxy = false: not probed", false);
                return 0;
        }
        r = egress_url_parse(c->check_control_url, &url, &e);
        if (r == -ENOMEM)
                return r;
        r = r < 0 ? r : resolve(url.host, t.addr, sizeof(t.addr), &res);
        if (r < 0) {
                report_addf(rep, "egress-tcp-control", CHECK_FAIL, probe_now_ms() - t0, false,
                            "control-url's host %s does not resolve for the runner", url.host);
                report_add(rep, "egress-udp-control", CHECK_FAIL, probe_now_ms() - t0,
                           "control-url's host does not resolve for the runner", false);
                t.addr[0] = '\0';
                report_add(rep, "egress-ipv6-control", CHECK_NOTE, probe_now_ms() - t0,
                           "control-url's host does not resolve for the runner", false);
                report_add(rep, "egress-fronting-control", CHECK_NOTE, probe_now_ms() - t0,
                           "control-url's host does not resolve for the runner", false);
        } else {
                t.port = url.port;
                (void)egress_sockaddr(t.addr, t.port, &ss, &len);
                r = egress_try_tcp((struct sockaddr *)&ss, len);
                if (r == 0)
                        report_addf(rep, "egress-tcp-control", CHECK_OK, probe_now_ms() - t0, false,
                                    "the runner connects to %s (%s) port %u", url.host, t.addr, t.port);
                else
                        report_addf(rep, "egress-tcp-control", CHECK_FAIL, probe_now_ms() - t0, false,
                                    "the runner cannot connect to %s (%s) port %u: %s", url.host, t.addr,
                                    t.port, strerror(-r));
                t0 = probe_now_ms();
                (void)egress_sockaddr(t.addr, 443, &ss, &len);
                r = egress_try_udp((struct sockaddr *)&ss, len, payload, sizeof(payload) - 1);
                if (r == 0)
                        report_addf(rep, "egress-udp-control", CHECK_OK, probe_now_ms() - t0, false,
                                    "the kernel sends the runner's datagram to %s port 443", t.addr);
                else
                        report_addf(rep, "egress-udp-control", CHECK_FAIL, probe_now_ms() - t0, false,
                                    "the runner cannot send a datagram to %s port 443: %s", t.addr,
                                    strerror(-r));
                control_ipv6(rep, &url, res, &t);
                freeaddrinfo(res);
                control_fronting(rep, &url, &t);
        }
        if (url.host[0])
                control_resolve(rep, url.host, &t);
        egress_url_done(&url);

        t0 = probe_now_ms();
        r = read_resolv_conf(&t.nameservers, why, sizeof(why));
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                report_addf(rep, "egress-dns-control", CHECK_FAIL, probe_now_ms() - t0, false, "%s", why);
                *ret = t;
                return 0;
        }
        for (char **ns = t.nameservers; *ns; ns++)
                if (egress_sockaddr(*ns, 53, &ss, &len) == 0 &&
                    egress_try_udp((struct sockaddr *)&ss, len, query, n_query) == 0)
                        sent++;
        if (strv_length(t.nameservers) == 0)
                report_add(rep, "egress-dns-control", CHECK_NOTE, probe_now_ms() - t0,
                           RESOLV_CONF_PATH " names no nameserver", false);
        else if (sent == strv_length(t.nameservers))
                report_addf(rep, "egress-dns-control", CHECK_OK, probe_now_ms() - t0, false,
                            "the kernel sends the runner's DNS query to each of %zu nameservers", sent);
        else
                report_addf(rep, "egress-dns-control", CHECK_FAIL, probe_now_ms() - t0, false,
                            "the runner's DNS query went to %zu of %zu nameservers", sent,
                            strv_length(t.nameservers));
        *ret = t;
        return 0;
}

void egress_targets_done(EgressTargets *t)
{
        strv_free(t->nameservers);
        t->nameservers = NULL;
}
