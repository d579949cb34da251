/* SPDX-License-Identifier: MIT */
#include "egress-plan.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "macro.h"

typedef struct Request {
        const char *method;
        const char *url; /* a path ("/...") after the repository's URL, else a URL as it is */
} Request;

/* What each tool asks for. git's smart HTTP (protocol version 2): the refs' advertisement, then ls-refs
 * posted to git-upload-pack. cargo with the sparse index: its configuration, the crate's index file (a
 * name of four letters or more sits under its first two and next two), the download (the index's "dl"
 * with /NAME/VERSION/download). npm: the package's document, its tarball, then the audit's post of what it
 * installed (npm-audit in the shipped policy). A push posts its pack to git-receive-pack. */
static const Request git_requests[] = {
        { "GET", "/info/refs?service=git-upload-pack" },
        { "POST", "/git-upload-pack" },
};
static const Request cargo_requests[] = {
        { "GET", "https://index.crates.io/config.json" },
        { "GET", "https://index.crates.io/it/oa/itoa" },
        { "GET", "https://static.crates.io/crates/itoa/1.0.15/download" },
};
static const Request npm_requests[] = {
        { "GET", "https://registry.npmjs.org/is-number" },
        { "GET", "https://registry.npmjs.org/is-number/-/is-number-7.0.0.tgz" },
        { "POST", "https://registry.npmjs.org/-/npm/v1/security/advisories/bulk" },
};
static const Request push_requests[] = {
        { "POST", "/git-receive-pack" },
};

static const struct {
        const char *name;
        const Request *requests;
        size_t n;
        bool refusal_expected; /* egress-push: the refused form is the probe's own name */
} tools[EGRESS_PLANNED] = {
        { "egress-git", git_requests, ELEMENTSOF(git_requests), false },
        { "egress-cargo", cargo_requests, ELEMENTSOF(cargo_requests), false },
        { "egress-npm", npm_requests, ELEMENTSOF(npm_requests), false },
        { "egress-push", push_requests, ELEMENTSOF(push_requests), true },
};

static bool method_known(const char *m)
{
        return strcmp(m, "GET") == 0 || strcmp(m, "POST") == 0;
}

int egress_plan(const EgressPolicy *policy, const char *fetch_repo, EgressPlanned ret[EGRESS_PLANNED],
                AjError *reterr)
{
        char repo[EGRESS_PLAN_URL_MAX - 64];
        size_t n = strlen(fetch_repo);

        /* git takes the URL with its trailing slashes dropped before it appends a path. */
        while (n > 0 && fetch_repo[n - 1] == '/')
                n--;
        if (n >= sizeof(repo))
                return aj_error(reterr, EINVAL, 0, 0, "[sandbox.check] fetch-repo: longer than %zu bytes",
                                sizeof(repo) - 1);
        memcpy(repo, fetch_repo, n);
        repo[n] = '\0';

        for (size_t t = 0; t < EGRESS_PLANNED; t++) {
                EgressPlanned *p = &ret[t];

                *p = (EgressPlanned){};
                (void)snprintf(p->name, sizeof(p->name), "%s", tools[t].name);
                for (size_t i = 0; i < tools[t].n; i++) {
                        const Request *q = &tools[t].requests[i];
                        EgressUrl url = {};
                        EgressDecision d;
                        AjError e = {};
                        int r;

                        (void)snprintf(p->url, sizeof(p->url), "%s%s", q->url[0] == '/' ? repo : "", q->url);
                        r = egress_url_parse(p->url, &url, &e);
                        if (r < 0)
                                return aj_error(reterr, EINVAL, 0, 0, "[sandbox.check] fetch-repo: %s",
                                                e.message);
                        egress_decide_client(
                                policy, NULL,
                                &(EgressClientRequest){ .method = q->method,
                                                        .url = &url,
                                                        .has_body = strcmp(q->method, "POST") == 0 },
                                &d);
                        egress_url_done(&url);
                        if (d.verdict == EGRESS_ALLOW)
                                continue;
                        p->refused = true;
                        (void)snprintf(p->method, sizeof(p->method), "%s", q->method);
                        if (!tools[t].refusal_expected)
                                (void)snprintf(p->name, sizeof(p->name), "%s-refused", tools[t].name);
                        break;
                }
                if (!p->refused)
                        p->url[0] = '\0';
        }
        return 0;
}

int egress_planned_format(const EgressPlanned *p, char *buf, size_t size)
{
        int n = p->refused ? snprintf(buf, size, "%s %s %s", p->name, p->method, p->url)
                           : snprintf(buf, size, "%s", p->name);

        return n < 0 || (size_t)n >= size ? -ENOBUFS : 0;
}

int egress_planned_parse(const char *arg, EgressPlanned *ret)
{
        const char *sp = strchr(arg, ' ');
        size_t n = sp ? (size_t)(sp - arg) : strlen(arg);
        EgressPlanned p = {};
        bool known = false;

        for (size_t t = 0; t < EGRESS_PLANNED && !known; t++) {
                size_t m = strlen(tools[t].name);

                if (n == m && strncmp(arg, tools[t].name, m) == 0)
                        known = true;
                else if (!tools[t].refusal_expected && n == m + 8 && strncmp(arg, tools[t].name, m) == 0 &&
                         strncmp(arg + m, "-refused", 8) == 0)
                        known = p.refused = true;
        }
        if (!known)
                return -EINVAL;
        memcpy(p.name, arg, n);
        if (!sp) {
                /* NAME-refused names its request; egress-push alone is admitted without one. */
                if (p.refused)
                        return -EINVAL;
                *ret = p;
                return 0;
        }
        p.refused = true;
        const char *m = sp + 1, *u = strchr(m, ' ');

        if (!u || (size_t)(u - m) >= sizeof(p.method))
                return -EINVAL;
        memcpy(p.method, m, (size_t)(u - m));
        u++;
        if (!method_known(p.method) || strlen(u) >= sizeof(p.url) || strchr(u, ' ') ||
            (strncmp(u, "https://", 8) != 0 && strncmp(u, "http://", 7) != 0))
                return -EINVAL;
        for (const char *c = u; *c; c++)
                if ((unsigned char)*c < 0x21 || (unsigned char)*c == 0x7f)
                        return -EINVAL;
        (void)snprintf(p.url, sizeof(p.url), "%s", u);
        /* egress-git with a request is a contradiction: admitted forms carry none. */
        if (strcmp(p.name, "egress-push") != 0 && !strstr(p.name, "-refused"))
                return -EINVAL;
        *ret = p;
        return 0;
}
