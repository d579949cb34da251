/* SPDX-License-Identifier: MIT */
#include "acl-line.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "parse.h"

/* In place; the result is never longer. squid %-escapes the bytes RFC 1738 calls unsafe (space, controls,
 * '"', '<', '[', ...) and leaves '%' alone, so an escape the value held already arrives as it was. */
static int unescape(char *s)
{
        char *w = s;

        for (const char *r = s; *r; r++) {
                int hi, lo;

                if (*r != '%') {
                        *w++ = *r;
                        continue;
                }
                hi = hex_digit_value(r[1]);
                lo = hi < 0 ? -1 : hex_digit_value(r[2]);
                if (lo < 0 || (hi == 0 && lo == 0))
                        return -EINVAL;
                *w++ = (char)(hi << 4 | lo);
                r += 2;
        }
        *w = '\0';
        return 0;
}

int acl_line_parse(char *line, size_t len, AclLine *ret, AjError *reterr)
{
        char *p = line, *end = line + len;
        size_t n;

        memset(ret, 0, sizeof(*ret));
        if (memchr(line, '\0', len))
                return aj_error(reterr, EINVAL, 0, 0, "a NUL byte in the line");

        for (n = 0; p + n < end && p[n] >= '0' && p[n] <= '9'; n++)
                ;
        if (n == 0 || n >= sizeof(ret->channel) || (p + n < end && p[n] != ' '))
                return aj_error(reterr, EINVAL, 0, 0, "the line does not start with a channel ID");
        memcpy(ret->channel, p, n);
        ret->channel[n] = '\0';
        p += n;

        for (int i = 0; i < ACL_FIELDS; i++) {
                char *word;

                /* Short of the end, p is at the space that ended the word before: it stops nowhere
                 * else. */
                if (p >= end)
                        return aj_error(reterr, EINVAL, 0, 0, "%d fields, not %d", i, ACL_FIELDS);
                word = ++p;
                while (p < end && *p != ' ')
                        p++;
                if (p == word)
                        return aj_error(reterr, EINVAL, 0, 0, "field %d is empty", i + 1);
                *p = '\0'; /* the space, or line[len] */
                if (strcmp(word, "-") == 0)
                        continue;
                /* The path stays as sent: a request target is %-encoded already, and the policy
                 * compares it as written (decoding "%2e" or "%20" would change what it decides on).
                 * What squid escaped in it is what the origin sees encoded anyway. */
                if (i != ACL_PATH && unescape(word) < 0)
                        return aj_error(reterr, EINVAL, 0, 0, "field %d has a bad %%-escape", i + 1);
                ret->f[i] = word;
        }
        if (p < end)
                return aj_error(reterr, EINVAL, 0, 0, "more than %d fields", ACL_FIELDS);
        return 0;
}

/* "1" to "65535", no leading zero; 0 for anything else. */
static unsigned port_value(const char *s, size_t len)
{
        unsigned long v = 0;

        if (len == 0 || len > 5 || s[0] == '0')
                return 0;
        for (size_t i = 0; i < len; i++) {
                if (s[i] < '0' || s[i] > '9')
                        return 0;
                v = v * 10 + (unsigned long)(s[i] - '0');
        }
        return v <= 65535 ? (unsigned)v : 0;
}

/* The connection tag this helper gives an allowed CONNECT: "HOST:PORT", HOST normalized, in brackets when
 * it holds a ':'. A refused CONNECT's tag is its reason instead, which squid shows the client; squid then
 * never asks about a request inside that connection, and if it did, the reason would not parse here. */
static int tag_host(const char *tag, char ret_host[static EGRESS_HOST_MAX], unsigned *ret_port)
{
        const char *colon = strrchr(tag, ':');
        size_t hl;

        if (!colon || (*ret_port = port_value(colon + 1, strlen(colon + 1))) == 0)
                return -EINVAL;
        hl = (size_t)(colon - tag);
        if (hl == 0 || hl >= EGRESS_HOST_MAX || memchr(tag, ' ', hl))
                return -EINVAL;
        if (tag[0] == '[' ? tag[hl - 1] != ']' : memchr(tag, ':', hl) != NULL)
                return -EINVAL;
        memcpy(ret_host, tag, hl);
        ret_host[hl] = '\0';
        return 0;
}

static bool acl_data_known(const char *data)
{
        return strcmp(data, ACL_DATA_LOCAL) == 0 || strcmp(data, ACL_DATA_MANAGER) == 0 ||
               strcmp(data, ACL_DATA_INNER) == 0 || strcmp(data, ACL_DATA_SCHEME) == 0 ||
               strcmp(data, ACL_DATA_PLACEHOLDER) == 0 || strcmp(data, ACL_DATA_POLICY) == 0;
}

int acl_request_build(const AclLine *l, EgressRequest *ret, char ret_host[static EGRESS_HOST_MAX],
                      AjError *reterr)
{
        const char *const *f = l->f;
        const char *cl = f[ACL_CONTENT_LENGTH];

        memset(ret, 0, sizeof(*ret));
        if (!f[ACL_METHOD])
                return aj_error(reterr, EINVAL, 0, 0, "no method");
        if (f[ACL_DATA] && !acl_data_known(f[ACL_DATA]))
                return aj_error(reterr, EINVAL, 0, 0, "the acl's argument is not one squid.conf.in gives");
        ret->method = f[ACL_METHOD];

        if (strcmp(ret->method, "CONNECT") == 0) {
                /* The tunnel itself: no path, no body and no TLS yet. Every request inside it comes
                 * here again, with this CONNECT's target as its tag. */
                ret->port = f[ACL_PORT] ? port_value(f[ACL_PORT], strlen(f[ACL_PORT])) : 0;
                if (!f[ACL_HOST] || ret->port == 0)
                        return aj_error(reterr, EINVAL, 0, 0, "a CONNECT without a host and port");
                ret->host = f[ACL_HOST];
                ret->host_header = f[ACL_HOST_HEADER];
                /* A CONNECT on a bumped connection (it has the connection's tag, or the server name of
                 * the TLS it came in): what it asks for is a URL inside the tunnel, and the decision
                 * refuses it. */
                ret->sni = f[ACL_SNI];
                if (f[ACL_CONN_TAG] || f[ACL_SNI]) {
                        ret->url_host = f[ACL_HOST];
                        ret->url_port = ret->port;
                }
                return 0;
        }

        /* Which protocol squid would speak to the origin: the decision refuses all but http and https,
         * before it looks at a host (a urn: has none). */
        if (!f[ACL_SCHEME])
                return aj_error(reterr, EINVAL, 0, 0, "a request without a scheme");
        ret->scheme = f[ACL_SCHEME];
        if (strcmp(ret->scheme, "http") != 0 && strcmp(ret->scheme, "https") != 0) {
                ret->host = f[ACL_HOST];
                ret->path = f[ACL_PATH];
                return 0;
        }
        if (!f[ACL_PATH] || !f[ACL_HOST])
                return aj_error(reterr, EINVAL, 0, 0, "a request without a host and path");
        if (f[ACL_CONN_TAG]) {
                /* Inside a bumped CONNECT: squid sends the request over the connection it made to the
                 * CONNECT target, whatever the Host header or the URL says, so the target is the host
                 * connected to, and the Host header, the server name and the URL are checked against
                 * it. */
                if (tag_host(f[ACL_CONN_TAG], ret_host, &ret->port) < 0)
                        return aj_error(reterr, EINVAL, 0, 0, "the connection's CONNECT target is unknown");
                ret->host = ret_host;
                /* The URL squid made of the request line (absolute form) or of the Host header: a third
                 * name, which must be the target's too. */
                ret->url_host = f[ACL_HOST];
                ret->url_port = f[ACL_PORT] ? port_value(f[ACL_PORT], strlen(f[ACL_PORT])) : 0;
        } else if (f[ACL_SNI]) {
                return aj_error(reterr, EINVAL, 0, 0, "a TLS request without its CONNECT target");
        } else {
                /* Plain HTTP: squid connects to the URL's host and rewrites the Host header to it. */
                ret->host = f[ACL_HOST];
                ret->port = f[ACL_PORT] ? port_value(f[ACL_PORT], strlen(f[ACL_PORT])) : 0;
        }
        ret->host_header = f[ACL_HOST_HEADER];
        ret->sni = f[ACL_SNI];
        ret->path = f[ACL_PATH];
        /* Fail closed: any Transfer-Encoding, and any Content-Length but exactly "0" (squid joins repeated
         * headers with ", "), mean a body. */
        ret->has_body = (cl && strcmp(cl, "0") != 0) || f[ACL_TRANSFER_ENCODING];
        ret->upgrade = f[ACL_UPGRADE] != NULL;
        return 0;
}

/* What is logged or shown of a field: printable ASCII, so every log line is valid UTF-8 JSON and no
 * header squid adds carries a control character. Anything else is '?', or in a path %XX as on the wire
 * (never '?', which would look like a query string). */
static char *printable(const char *s, size_t n, bool path)
{
        static const char hex[] = "0123456789ABCDEF";
        char *c = malloc(3 * n + 1), *w = c;

        if (!c)
                return NULL;
        for (size_t i = 0; i < n; i++) {
                unsigned char b = (unsigned char)s[i];

                if (b > 0x20 && b < 0x7f)
                        *w++ = (char)b;
                else if (b == 0x20 && !path)
                        *w++ = ' ';
                else if (!path)
                        *w++ = '?';
                else {
                        *w++ = '%';
                        *w++ = hex[b >> 4];
                        *w++ = hex[b & 0xf];
                }
        }
        *w = '\0';
        return c;
}

/* A value of the answer: every byte but [A-Za-z0-9._~-] as %XX, which squid decodes. */
static char *escape(const char *s)
{
        static const char hex[] = "0123456789ABCDEF";
        size_t n = strlen(s);
        char *e = malloc(3 * n + 1), *w = e;

        if (!e)
                return NULL;
        for (const unsigned char *r = (const unsigned char *)s; *r; r++) {
                if ((*r >= 'a' && *r <= 'z') || (*r >= 'A' && *r <= 'Z') || (*r >= '0' && *r <= '9') ||
                    *r == '.' || *r == '_' || *r == '~' || *r == '-') {
                        *w++ = (char)*r;
                } else {
                        *w++ = '%';
                        *w++ = hex[*r >> 4];
                        *w++ = hex[*r & 0xf];
                }
        }
        *w = '\0';
        return e;
}

/* "ID OK", with the connection tag when there is one (an allowed CONNECT). */
static char *answer_allow(const char *channel, const char *tag)
{
        _cleanup_free_ char *etag = NULL;
        char *a = NULL;

        if (!tag)
                return asprintf(&a, "%s%sOK\n", channel, channel[0] ? " " : "") < 0 ? NULL : a;
        etag = escape(tag);
        if (!etag || asprintf(&a, "%s%sOK clt_conn_tag=%s\n", channel, channel[0] ? " " : "", etag) < 0)
                return NULL;
        return a;
}

/* "ID ERR message=REASON verdict_=deny": verdict_ marks squid's 403 for the X-Egress-Denied header (a
 * name of our own ends in '_': squid 6 warns about any other it does not know).
 * A refused CONNECT is answered by squid inside the tunnel, where only the connection tag survives: the
 * reason goes there too. */
static char *answer_deny(const char *channel, bool connect, const char *reason)
{
        _cleanup_free_ char *message = escape(reason);
        char *a = NULL;

        if (!message ||
            asprintf(&a, "%s%sERR message=%s verdict_=deny%s%s\n", channel, channel[0] ? " " : "", message,
                     connect ? " clt_conn_tag=" : "", connect ? message : "") < 0)
                return NULL;
        return a;
}

/* {"method":...,"host":...,"path":...,"decision":...,"reason":...}: never a header, body or query
 * string; path is null for a CONNECT, which has none. */
static char *log_format(const char *method, const char *host, const char *path, bool allow,
                        const char *reason)
{
        _cleanup_free_ char *m = NULL, *h = NULL, *p = NULL, *why = NULL, *dump = NULL;
        json_t *o;
        char *line = NULL;

        m = method ? printable(method, strlen(method), false) : NULL;
        h = host ? printable(host, strlen(host), false) : NULL;
        p = path ? printable(path, strcspn(path, "?"), true) : NULL;
        why = printable(reason, strlen(reason), false);
        if ((method && !m) || (host && !h) || (path && !p) || !why)
                return NULL;
        o = json_pack("{s:s?, s:s?, s:s?, s:s, s:s}", "method", m, "host", h, "path", p, "decision",
                      allow ? "allow" : "deny", "reason", why);
        if (!o)
                return NULL;
        dump = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
        json_decref(o);
        if (!dump || asprintf(&line, "%s\n", dump) < 0)
                return NULL;
        return line;
}

/* squid asks with an argument only about a request it refuses itself (squid.conf.in): the decision's own
 * refusal stands, with its reason; what the decision allows is refused for squid's. */
static void squid_refusal(const AclLine *l, EgressDecision *d)
{
        _cleanup_free_ char *name = NULL, *scheme = NULL;

        if (!l->f[ACL_DATA] || d->verdict != EGRESS_ALLOW || strcmp(l->f[ACL_DATA], ACL_DATA_POLICY) == 0)
                return;
        d->verdict = EGRESS_DENY;
        d->rule = NULL;
        name = l->f[ACL_HOST] ? printable(l->f[ACL_HOST], strnlen(l->f[ACL_HOST], 200), false) : NULL;
        scheme = l->f[ACL_SCHEME] ? printable(l->f[ACL_SCHEME], strnlen(l->f[ACL_SCHEME], 40), false) : NULL;
        if (strcmp(l->f[ACL_DATA], ACL_DATA_INNER) == 0)
                (void)snprintf(d->reason, sizeof(d->reason),
                               "a CONNECT inside a tunnel (to %s): the proxy would relay its bytes to the "
                               "origin unread",
                               name ? name : "a host");
        else if (strcmp(l->f[ACL_DATA], ACL_DATA_SCHEME) == 0)
                (void)snprintf(d->reason, sizeof(d->reason),
                               "the scheme %s: only http and https are proxied", scheme ? scheme : "(none)");
        else if (strcmp(l->f[ACL_DATA], ACL_DATA_PLACEHOLDER) == 0)
                (void)snprintf(d->reason, sizeof(d->reason),
                               "the key broker's placeholder, to %s: it is worth nothing but to the broker, "
                               "which never sends it on",
                               name ? name : "a host");
        else if (strcmp(l->f[ACL_DATA], ACL_DATA_LOCAL) == 0)
                (void)snprintf(d->reason, sizeof(d->reason),
                               "a local destination: %s resolves to an address of this machine or its "
                               "networks (loopback, link-local, private, or one of its own)",
                               name ? name : "the host");
        else
                (void)snprintf(d->reason, sizeof(d->reason),
                               "the proxy's cache manager (/squid-internal-mgr/) is not reached through the "
                               "proxy");
}

int acl_handle_line(const EgressPolicy *policy, const EgressThreats *threats, char *line, size_t len,
                    bool truncated, AclOutcome *ret)
{
        /* connected holds the host of a bumped request's tag, which req.host points to until the end. */
        // cppcheck-suppress variableScope
        char connected[EGRESS_HOST_MAX], normalized[EGRESS_HOST_MAX], reason[512];
        _cleanup_free_ char *tag = NULL, *shown = NULL;
        EgressDecision d = { .verdict = EGRESS_DENY };
        EgressRequest req = { 0 };
        AjError e = { 0 };
        AclLine l;
        bool connect = false;
        int r;

        memset(ret, 0, sizeof(*ret));
        r = acl_line_parse(line, len, &l, &e);
        if (r >= 0 && truncated)
                r = aj_error(&e, EINVAL, 0, 0, "longer than %d bytes", ACL_LINE_MAX);
        else if (truncated)
                (void)aj_error(&e, EINVAL, 0, 0, "longer than %d bytes", ACL_LINE_MAX);
        if (r >= 0)
                r = acl_request_build(&l, &req, connected, &e);
        if (r >= 0) {
                egress_decide(policy, threats, &req, &d);
                squid_refusal(&l, &d);
                (void)snprintf(reason, sizeof(reason), "%s", d.reason);
                connect = strcmp(req.method, "CONNECT") == 0;
        } else {
                /* Fail closed, and say so in the log, with what could be read of the line. */
                d.verdict = EGRESS_DENY;
                (void)snprintf(reason, sizeof(reason), "malformed request line: %.400s", e.message);
                req.method = l.f[ACL_METHOD];
                req.host = l.f[ACL_HOST];
                req.path = l.f[ACL_PATH];
                connect = req.method && strcmp(req.method, "CONNECT") == 0;
        }

        shown = printable(reason, strlen(reason), false);
        if (!shown)
                return -ENOMEM;
        /* The tag is the plain line's to give: given before it, the plain line would see a CONNECT on a
         * tagged connection, a CONNECT inside a tunnel. */
        if (connect && d.verdict == EGRESS_ALLOW &&
            !(l.f[ACL_DATA] && strcmp(l.f[ACL_DATA], ACL_DATA_POLICY) == 0)) {
                const char *host = req.host;

                if (egress_host_normalize(req.host, normalized) >= 0)
                        host = normalized;
                if (asprintf(&tag, strchr(host, ':') ? "[%s]:%s" : "%s:%s", host, l.f[ACL_PORT]) < 0)
                        return -ENOMEM;
        }
        if (req.host && egress_host_normalize(req.host, normalized) >= 0)
                req.host = normalized;

        ret->answer = d.verdict == EGRESS_ALLOW ? answer_allow(l.channel, tag)
                                                : answer_deny(l.channel, connect, shown);
        ret->unlogged = answer_deny(l.channel, connect, "the egress log could not be written");
        /* The policy's answer before local_dst: an allowed request is logged by the plain line. */
        if (r >= 0 && l.f[ACL_DATA] && strcmp(l.f[ACL_DATA], ACL_DATA_POLICY) == 0 &&
            d.verdict == EGRESS_ALLOW)
                ret->log = strdup("");
        else
                ret->log = log_format(req.method, req.host, connect ? NULL : req.path,
                                      d.verdict == EGRESS_ALLOW, reason);
        if (!ret->answer || !ret->unlogged || !ret->log) {
                acl_outcome_done(ret);
                return -ENOMEM;
        }
        return 0;
}

void acl_outcome_done(AclOutcome *o)
{
        free(o->answer);
        free(o->log);
        free(o->unlogged);
        memset(o, 0, sizeof(*o));
}
