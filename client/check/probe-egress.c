/* SPDX-License-Identifier: MIT */
#include "probe-egress.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "egress-attempt.h"
#include "egress-policy.h"
#include "macro.h"
#include "probe-emit.h"
#include "resolv-conf.h"
#include "strv.h"

/* control-url's host, resolved as any program of the runner's would: the first IPv4 address, else the
 * first IPv6 one. */
static int resolve(const char *host, char *buf, size_t size)
{
        struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *res = NULL;
        const struct addrinfo *pick = NULL;
        int r = getaddrinfo(host, NULL, &hints, &res);

        if (r != 0)
                return -EHOSTUNREACH;
        for (const struct addrinfo *a = res; a && !pick; a = a->ai_next)
                if (a->ai_family == AF_INET)
                        pick = a;
        if (!pick)
                pick = res;
        if (pick->ai_family == AF_INET)
                r = inet_ntop(AF_INET, &((struct sockaddr_in *)pick->ai_addr)->sin_addr, buf,
                              (socklen_t)size)
                            ? 0
                            : -errno;
        else
                r = inet_ntop(AF_INET6, &((struct sockaddr_in6 *)pick->ai_addr)->sin6_addr, buf,
                              (socklen_t)size)
                            ? 0
                            : -errno;
        freeaddrinfo(res);
        return r;
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
                return 0;
        }
        r = egress_url_parse(c->check_control_url, &url, &e);
        if (r == -ENOMEM)
                return r;
        r = r < 0 ? r : resolve(url.host, t.addr, sizeof(t.addr));
        if (r < 0) {
                report_addf(rep, "egress-tcp-control", CHECK_FAIL, probe_now_ms() - t0, false,
                            "control-url's host %s does not resolve for the runner", url.host);
                report_add(rep, "egress-udp-control", CHECK_FAIL, probe_now_ms() - t0,
                           "control-url's host does not resolve for the runner", false);
                t.addr[0] = '\0';
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
        }
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
