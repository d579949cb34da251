/* SPDX-License-Identifier: MIT */
/* The egress policy on arbitrary bytes, read four ways: as a policy, as a request decided against a fixed
 * policy, as a threat list and as a URL. What is accepted must obey every rule, and every decision must
 * keep its promises (one printable line, no query string, an allow only for what may be allowed): the
 * checks below repeat them, so a breach is a crash. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "egress-policy.h"
#include "macro.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(x)                                                                                            \
        do {                                                                                                \
                if (!(x))                                                                                   \
                        __builtin_trap();                                                                   \
        } while (0)

static const char fixed_policy[] = "[[write]]\n"
                                   "name = \"git\"\n"
                                   "why = \"w\"\n"
                                   "hosts = [\"github.com\", \"[2001:db8::1]\"]\n"
                                   "methods = [\"POST\"]\n"
                                   "paths = [\"/**/git-upload-pack\"]\n"
                                   "[[write]]\n"
                                   "name = \"up\"\n"
                                   "why = \"w\"\n"
                                   "hosts = [\"upload.example.com\"]\n"
                                   "methods = [\"PUT\", \"WEBSOCKET\"]\n"
                                   "paths = [\"/up/**\", \"/a/*.txt\", \"/\"]\n";
static const char *const fixed_threat_hosts[] = { "192.0.2.66", "evil.com" };
static const EgressThreats fixed_threats = { fixed_threat_hosts, ELEMENTSOF(fixed_threat_hosts) };

static bool is_read(const char *m)
{
        return strcmp(m, "GET") == 0 || strcmp(m, "HEAD") == 0 || strcmp(m, "OPTIONS") == 0;
}

static bool strv_has(char *const *v, const char *s)
{
        for (; v && *v; v++)
                if (strcmp(*v, s) == 0)
                        return true;
        return false;
}

static void check_decision(const EgressDecision *d, const EgressRequest *q)
{
        size_t n = strlen(d->reason);

        CHECK(n > 0 && n < sizeof(d->reason));
        for (size_t i = 0; i < n; i++)
                CHECK(d->reason[i] >= ' ' && d->reason[i] < 0x7f);
        CHECK(!strchr(d->reason, '?'));
        if (d->verdict == EGRESS_DENY) {
                CHECK(!d->rule);
                return;
        }
        CHECK(d->verdict == EGRESS_ALLOW);
        CHECK(q->method && q->host);
        if (strcmp(d->reason, "read") == 0) {
                CHECK(!d->rule && is_read(q->method) && !q->has_body && !q->upgrade);
        } else if (strcmp(d->reason, "tunnel") == 0) {
                CHECK(!d->rule && strcmp(q->method, "CONNECT") == 0);
        } else if (d->rule && d->rule->read) {
                char host[EGRESS_HOST_MAX];

                CHECK(strcmp(d->rule->name, d->reason) == 0 && is_read(q->method) && !q->has_body &&
                      !q->upgrade);
                CHECK(egress_host_normalize(q->host, host) == 0 && strv_has(d->rule->hosts, host));
        } else {
                char host[EGRESS_HOST_MAX];
                bool matched = false;

                CHECK(d->rule && strcmp(d->rule->name, d->reason) == 0);
                CHECK(strv_has(d->rule->methods, q->upgrade ? "WEBSOCKET" : q->method));
                CHECK(egress_host_normalize(q->host, host) == 0 && strv_has(d->rule->hosts, host));
                CHECK(q->path && q->path[0] == '/');
                for (char **g = d->rule->paths; *g; g++)
                        matched = matched || egress_path_match(*g, q->path);
                CHECK(matched);
        }
}

/* A read rule, with reads listed: a read of each host it names is allowed, by it or an earlier read rule,
 * unless the host is refused for every request; so is a tunnel there. */
static void check_read_rule(const EgressPolicy *p, const EgressRule *r)
{
        EgressPolicy listed = *p;

        CHECK(!r->methods && !r->paths);
        listed.reads_listed = true;
        for (char **h = r->hosts; *h; h++) {
                EgressRequest q = { .method = "GET", .host = *h, .path = "/" };
                EgressDecision d;

                egress_decide(&listed, NULL, &q, &d);
                check_decision(&d, &q);
                CHECK((d.verdict == EGRESS_ALLOW && d.rule && d.rule->read) ||
                      strstr(d.reason, "local destination"));
                q = (EgressRequest){ .method = "CONNECT", .host = *h, .port = 443 };
                egress_decide(&listed, NULL, &q, &d);
                check_decision(&d, &q);
                CHECK(d.verdict == EGRESS_ALLOW || strstr(d.reason, "local destination"));
        }
}

/* A policy that parsed: every rule as the parser promises, and each rule allows what it names. */
static void check_policy(const EgressPolicy *p)
{
        for (size_t i = 0; i < p->n_rules; i++) {
                const EgressRule *r = &p->rules[i];

                CHECK(r->name && r->name[0] && r->why && r->why[0] && r->line > 0);
                for (size_t j = 0; j < i; j++)
                        CHECK(strcmp(p->rules[j].name, r->name) != 0);
                CHECK(r->hosts && r->hosts[0]);
                for (char **h = r->hosts; *h; h++) {
                        char again[EGRESS_HOST_MAX];
                        CHECK(egress_host_normalize(*h, again) == 0 && strcmp(again, *h) == 0);
                        CHECK(!strchr(*h, '*'));
                }
                if (r->read) {
                        check_read_rule(p, r);
                        continue;
                }
                CHECK(r->methods && r->methods[0] && r->paths && r->paths[0]);
                for (char **m = r->methods; *m; m++)
                        CHECK(!is_read(*m) && strcmp(*m, "CONNECT") != 0 && **m >= 'A' && **m <= 'Z');
                for (char **g = r->paths; *g; g++) {
                        CHECK((*g)[0] == '/' && !strpbrk(*g, "?# "));
                        if (strchr(*g, '*'))
                                continue;
                        /* A glob without a star is a path it matches, and a request for it is allowed
                         * (by this rule or an earlier one) unless its host is refused for every request. */
                        CHECK(egress_path_match(*g, *g));
                        for (char **h = r->hosts; *h; h++) {
                                EgressRequest q = {
                                        .method = r->methods[0], .host = *h, .path = *g, .has_body = true
                                };
                                EgressDecision d;

                                if (strcmp(q.method, "WEBSOCKET") == 0) {
                                        q.method = "GET";
                                        q.upgrade = true;
                                }
                                egress_decide(p, NULL, &q, &d);
                                check_decision(&d, &q);
                                CHECK(d.verdict == EGRESS_ALLOW || strstr(d.reason, "local destination"));
                        }
                }
        }
}

/* The input as a request: fields separated by newlines (method, host, Host header, TLS server name,
 * path, flags); an empty field is absent. */
static void check_request(char *text, const EgressPolicy *policy)
{
        char *field[6] = {}, *p = text;
        EgressRequest q;
        EgressDecision d;

        for (size_t i = 0; i < ELEMENTSOF(field) && p; i++) {
                char *nl = strchr(p, '\n');

                if (nl)
                        *nl = '\0';
                field[i] = *p ? p : NULL;
                p = nl ? nl + 1 : NULL;
        }
        q = (EgressRequest){
                .method = field[0],
                .host = field[1],
                .host_header = field[2],
                .sni = field[3],
                .path = field[4],
                .has_body = field[5] && strchr(field[5], 'b'),
                .upgrade = field[5] && strchr(field[5], 'u'),
                .port = field[5] && strchr(field[5], 'p') ? 443 : 0,
        };
        egress_decide(policy, &fixed_threats, &q, &d);
        check_decision(&d, &q);
        egress_decide(NULL, NULL, &q, &d);
        check_decision(&d, &q);
}

/* A list that parsed: as egress-policy.h promises, and every name on it refused, with its subdomains. */
static void check_threats(const char *data, size_t size)
{
        EgressThreats *t = NULL;
        AjError e = {};
        int r = egress_threats_parse(data, size, &t, &e);

        if (r < 0) {
                CHECK(r == -EINVAL || r == -ENOMEM || r == -EFBIG);
                CHECK(!t && e.message[0] && !strchr(e.message, '\n'));
                return;
        }
        CHECK(t && t->hosts);
        for (size_t i = 0; i < t->n; i++) {
                char again[EGRESS_HOST_MAX], sub[EGRESS_HOST_MAX + 8];
                EgressDecision d;

                CHECK(egress_host_normalize(t->hosts[i], again) == 0 && strcmp(again, t->hosts[i]) == 0);
                CHECK(i == 0 || strcmp(t->hosts[i - 1], t->hosts[i]) < 0);
                egress_decide(NULL, t, &(EgressRequest){ .method = "GET", .host = t->hosts[i], .path = "/" },
                              &d);
                CHECK(d.verdict == EGRESS_DENY && strstr(d.reason, "threat list"));
                if (strchr(t->hosts[i], ':') ||
                    snprintf(sub, sizeof(sub), "x.%s", t->hosts[i]) >= EGRESS_HOST_MAX)
                        continue;
                egress_decide(NULL, t, &(EgressRequest){ .method = "GET", .host = sub, .path = "/" }, &d);
                CHECK(d.verdict == EGRESS_DENY);
        }
        egress_threats_free(t);
}

static void check_url(const char *text, const EgressPolicy *policy)
{
        EgressUrl u = {};
        AjError e = {};
        EgressDecision d;
        char again[EGRESS_HOST_MAX];

        if (egress_url_parse(text, &u, &e) < 0) {
                CHECK(!u.path && e.message[0] && !strchr(e.message, '\n'));
                return;
        }
        CHECK(u.path && u.path[0] == '/' && !strpbrk(u.path, "?# "));
        CHECK(u.port > 0 && u.port <= 65535);
        CHECK(egress_host_normalize(u.host, again) == 0 && strcmp(again, u.host) == 0);
        egress_decide_client(policy, &fixed_threats,
                             &(EgressClientRequest){ .method = "POST", .url = &u, .has_body = true }, &d);
        CHECK(d.reason[0] && !strchr(d.reason, '?'));
        egress_url_done(&u);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        _cleanup_(egress_policy_freep) EgressPolicy *fixed = NULL;
        EgressPolicy *p = NULL;
        AjError e = {};
        char *text;
        int r;

        r = egress_policy_parse((const char *)data, size, &p, &e);
        if (r < 0) {
                CHECK(r == -EINVAL || r == -ENOMEM || r == -EFBIG);
                CHECK(p == NULL);
                CHECK(e.message[0] != '\0' && !strchr(e.message, '\n'));
        } else {
                check_policy(p);
                egress_policy_free(p);
        }

        CHECK(egress_policy_parse(fixed_policy, strlen(fixed_policy), &fixed, &e) == 0);
        check_threats((const char *)data, size);

        text = malloc(size + 1);
        if (!text)
                return 0;
        memcpy(text, data, size);
        text[size] = '\0';
        check_url(text, fixed);
        check_request(text, fixed);
        free(text);
        return 0;
}
