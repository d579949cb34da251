/* SPDX-License-Identifier: MIT */
/* The egress policy: policy.toml read into rules (every value checked, every refusal naming its rule and
 * line), the threat list, and the one decision. squid's ACL helper, `policy test` and the check all call
 * egress_decide(), so they cannot disagree. It fails closed: what it cannot read, it refuses. */
#include "egress-policy.h"

#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "local-ranges.h"
#include "macro.h"
#include "parse.h"
#include "read-file.h"
#include "toml.h"

/* s escaped for a message (see toml_escape()), in a buffer that lives until the end of the enclosing
 * block. */
#define QUOTE_MAX 96
#define QUOTE(s)  toml_escape((s), (char[QUOTE_MAX]){ 0 }, QUOTE_MAX)

#define RULE_NAME_MAX  64
#define RULE_NAME_RULE "^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"
#define METHOD_MAX     32
#define LABEL_MAX      63
#define TUNNEL_PORT    443

static const char *const read_methods[] = { "GET", "HEAD", "OPTIONS" };
static const char *const rule_keys[] = { "name", "why", "hosts", "methods", "paths" };
static const char *const read_rule_keys[] = { "name", "why", "hosts" };

static bool is_lower(char c)
{
        return c >= 'a' && c <= 'z';
}

static bool is_upper(char c)
{
        return c >= 'A' && c <= 'Z';
}

static bool is_digit(char c)
{
        return c >= '0' && c <= '9';
}

static bool is_ows(char c)
{
        return c == ' ' || c == '\t';
}

/* A byte that may stand in a request path as sent: printable ASCII but for the space. Anything else is
 * refused in a write rather than guessed at, since origins differ in what they make of it. */
static bool is_path_byte(char c)
{
        return c > ' ' && c < 0x7f;
}

static bool strv_contains(char *const *v, const char *s)
{
        for (; v && *v; v++)
                if (strcmp(*v, s) == 0)
                        return true;
        return false;
}

static bool is_read_method(const char *m)
{
        for (size_t i = 0; i < ELEMENTSOF(read_methods); i++)
                if (strcmp(m, read_methods[i]) == 0)
                        return true;
        return false;
}

/* An HTTP method as the request line may carry it: a token (RFC 9110, 5.6.2). */
static bool method_is_token(const char *m)
{
        if (!m || !m[0])
                return false;
        for (const char *c = m; *c; c++)
                if (!(is_lower(*c) || is_upper(*c) || is_digit(*c) || strchr("!#$%&'*+-.^_`|~", *c)))
                        return false;
        return true;
}

/* What a rule may name: upper case, so that a request's method, which is case-sensitive, is compared
 * with the spelling every client sends. */
static bool rule_method_valid(const char *m)
{
        size_t n;

        if (!is_upper(m[0]))
                return false;
        for (n = 1; m[n]; n++)
                if (!(is_upper(m[n]) || is_digit(m[n]) || m[n] == '_' || m[n] == '-'))
                        return false;
        return n <= METHOD_MAX;
}

static bool rule_name_valid(const char *s)
{
        size_t n;

        if (!(is_lower(s[0]) || is_upper(s[0]) || is_digit(s[0])))
                return false;
        for (n = 1; s[n]; n++)
                if (!(is_lower(s[n]) || is_upper(s[n]) || is_digit(s[n]) || strchr("._-", s[n])))
                        return false;
        return n <= RULE_NAME_MAX;
}

/* ---- Host names ---- */

/* Splits "name", "name:port", "[v6]", "[v6]:port" or a bare IPv6 address (more than one ':', so no
 * port) into the name, without brackets, and the port (0 when none is written). */
static int split_host_port(const char *s, size_t n, const char **ret_name, size_t *ret_len,
                           bool *ret_bracketed, unsigned *ret_port)
{
        const char *port = NULL;
        size_t len = n, port_len = 0;
        bool bracketed = false;

        if (n > 0 && s[0] == '[') {
                const char *close = memchr(s, ']', n);
                size_t after;

                if (!close)
                        return -EINVAL;
                len = (size_t)(close - s) - 1;
                after = n - (size_t)(close - s) - 1;
                if (after > 0) {
                        if (close[1] != ':')
                                return -EINVAL;
                        port = close + 2;
                        port_len = after - 1;
                }
                bracketed = true;
                s++;
        } else {
                const char *colon = memchr(s, ':', n);

                if (colon && !memchr(colon + 1, ':', n - (size_t)(colon - s) - 1)) {
                        len = (size_t)(colon - s);
                        port = colon + 1;
                        port_len = n - len - 1;
                }
        }

        *ret_port = 0;
        if (port) {
                uint64_t v;

                if (parse_decimal(port, port_len, 65535, &v) < 0 || v == 0)
                        return -EINVAL;
                *ret_port = (unsigned)v;
        }
        *ret_name = s;
        *ret_len = len;
        *ret_bracketed = bracketed;
        return 0;
}

static bool labels_valid(const char *name)
{
        for (const char *c = name;;) {
                size_t n = strcspn(c, ".");

                if (n == 0 || n > LABEL_MAX)
                        return false;
                if (c[n] == '\0')
                        return true;
                c += n + 1;
        }
}

/* egress_host_normalize(), also telling the port (0 when none is written). */
static int host_normalize_port(const char *host, char ret_host[static EGRESS_HOST_MAX], unsigned *ret_port)
{
        char buf[EGRESS_HOST_MAX + 1]; /* room for a trailing dot */
        struct in_addr a4;
        struct in6_addr a6;
        const char *name;
        size_t n, len;
        bool bracketed;
        int r;

        if (!host)
                return -EINVAL;
        while (is_ows(*host))
                host++;
        n = strlen(host);
        while (n > 0 && is_ows(host[n - 1]))
                n--;
        r = split_host_port(host, n, &name, &len, &bracketed, ret_port);
        if (r < 0)
                return r;
        if (len == 0 || len >= sizeof(buf))
                return -EINVAL;
        for (size_t i = 0; i < len; i++) {
                char c = name[i];

                if (is_upper(c))
                        c = (char)(c - 'A' + 'a');
                if (!(is_lower(c) || is_digit(c) || c == '-' || c == '_' || c == '.' || c == ':'))
                        return -EINVAL;
                buf[i] = c;
        }
        buf[len] = '\0';

        if (bracketed || memchr(buf, ':', len)) {
                if (inet_pton(AF_INET6, buf, &a6) != 1)
                        return -EINVAL;
                return inet_ntop(AF_INET6, &a6, ret_host, EGRESS_HOST_MAX) ? 0 : -EINVAL;
        }

        if (len > 1 && buf[len - 1] == '.')
                buf[--len] = '\0';
        if (len >= EGRESS_HOST_MAX || !labels_valid(buf))
                return -EINVAL;
        /* The forms a resolver takes for an IPv4 address (127.1, 0x7f000001, 017700000001) are that
         * address: written as a dotted quad, they meet the threat list, the local check and the rules. */
        if (inet_aton(buf, &a4) != 0)
                return inet_ntop(AF_INET, &a4, ret_host, EGRESS_HOST_MAX) ? 0 : -EINVAL;
        memcpy(ret_host, buf, len + 1);
        return 0;
}

int egress_host_normalize(const char *host, char ret_host[static EGRESS_HOST_MAX])
{
        unsigned port;

        return host_normalize_port(host, ret_host, &port);
}

static bool is_ip_address(const char *host)
{
        unsigned char a[sizeof(struct in6_addr)];

        return inet_pton(AF_INET, host, a) == 1 || inet_pton(AF_INET6, host, a) == 1;
}

/* Where a request would reach the machine itself, its networks or its cloud's metadata service: the proxy
 * must not be the sandbox's way to what nftables keeps from it. The ranges are local-ranges.c's, the one
 * list nftables and squid's local_dst are written from. A name that merely resolves there is for the
 * proxy's own destination rules (squid.conf's local_dst, which asks this code again with "local"): this
 * code never resolves names. The proxy's own name is local too: squid answers it itself (its cache
 * manager). */
static bool is_local_destination(const char *host)
{
        static const char localhost[] = "localhost";
        size_t n = strlen(host), m = sizeof(localhost) - 1;
        struct in_addr a4;
        struct in6_addr a6;

        if (strcmp(host, localhost) == 0 || strcmp(host, EGRESS_PROXY_NAME) == 0 ||
            (n > m && host[n - m - 1] == '.' && strcmp(host + n - m, localhost) == 0))
                return true;
        if (inet_pton(AF_INET, host, &a4) == 1)
                return local_ranges_contain(AF_INET, &a4);
        if (inet_pton(AF_INET6, host, &a6) == 1) {
                static const unsigned char nat64[12] = { 0x00, 0x64, 0xff, 0x9b };

                /* An IPv4 address mapped into IPv6, or in NAT64's well-known prefix (64:ff9b::127.0.0.1,
                 * which a NAT64 gateway makes 127.0.0.1 again); the IPv4-compatible form (::127.0.0.1)
                 * and 64:ff9b:1::/48 are local ranges whole. */
                if (IN6_IS_ADDR_V4MAPPED(&a6) || memcmp(a6.s6_addr, nat64, 12) == 0)
                        return local_ranges_contain(AF_INET, a6.s6_addr + 12);
                return local_ranges_contain(AF_INET6, &a6);
        }
        return false;
}

/* ---- Paths ---- */

/* Whether the path (up to the query string) holds %XX for a control byte, which a server decoding it would
 * take for the end of a line or of a string. */
static bool encoded_control(const char *path)
{
        size_t n = strcspn(path, "?");

        for (size_t i = 0; i + 2 < n; i++) {
                int hi, lo;

                if (path[i] != '%')
                        continue;
                hi = hex_digit_value(path[i + 1]);
                lo = hex_digit_value(path[i + 2]);
                if (hi >= 0 && lo >= 0 && (hi < 2 || (hi == 7 && lo == 15)))
                        return true;
        }
        return false;
}

static size_t path_length(const char *path)
{
        return strcspn(path, "?");
}

/* The length of the segment that starts at s, up to the next '/' or end. */
static size_t segment_length(const char *s, const char *end)
{
        const char *slash = memchr(s, '/', (size_t)(end - s));

        return (size_t)((slash ? slash : end) - s);
}

static bool is_double_star(const char *s, size_t n)
{
        return n == 2 && s[0] == '*' && s[1] == '*';
}

/* Within one segment, '*' matches any run of bytes. The classic loop, which retries only from the last
 * '*' seen: never more than quadratic, whatever the glob. */
static bool segment_match(const char *g, size_t gn, const char *s, size_t sn)
{
        size_t i = 0, j = 0, star = SIZE_MAX, mark = 0;

        while (j < sn) {
                if (i < gn && g[i] == '*') {
                        star = i++;
                        mark = j;
                } else if (i < gn && g[i] == s[j]) {
                        i++;
                        j++;
                } else if (star != SIZE_MAX) {
                        i = star + 1;
                        j = ++mark;
                } else
                        return false;
        }
        while (i < gn && g[i] == '*')
                i++;
        return i == gn;
}

bool egress_path_match(const char *glob, const char *path)
{
        const char *gend, *pend, *g, *p, *star_g = NULL, *star_p = NULL;

        if (!glob || !path || glob[0] != '/' || path[0] != '/')
                return false;
        gend = glob + strlen(glob);
        pend = path + path_length(path);

        /* The same loop one level up: a '**' segment is the star, and any other glob segment matches
         * exactly one path segment. g and p point at the '/' before a segment. */
        for (g = glob, p = path; p < pend;) {
                size_t pn = segment_length(p + 1, pend);

                if (g < gend) {
                        size_t gn = segment_length(g + 1, gend);

                        if (is_double_star(g + 1, gn)) {
                                star_g = g;
                                star_p = p;
                                g += 1 + gn;
                                continue;
                        }
                        if (segment_match(g + 1, gn, p + 1, pn)) {
                                g += 1 + gn;
                                p += 1 + pn;
                                continue;
                        }
                }
                if (!star_g)
                        return false;
                star_p += 1 + segment_length(star_p + 1, pend);
                p = star_p;
                g = star_g + 3;
        }
        while (g < gend && is_double_star(g + 1, segment_length(g + 1, gend)))
                g += 3;
        return g == gend;
}

static bool is_encoded(const char *s, size_t n, char hi, char lo)
{
        return n >= 3 && s[0] == '%' && s[1] == hi && (s[2] == lo || s[2] == (char)(lo - 'a' + 'A'));
}

/* A segment that is '.' or '..', also spelt with %2e, and also when followed by ';' parameters, which
 * some servers strip before resolving it. */
static bool segment_is_dots(const char *s, size_t n)
{
        const char *semicolon = memchr(s, ';', n);
        size_t dots = 0;

        if (semicolon)
                n = (size_t)(semicolon - s);
        for (size_t i = 0; i < n;) {
                if (s[i] == '.')
                        i++;
                else if (is_encoded(s + i, n - i, '2', 'e'))
                        i += 3;
                else
                        return false;
                dots++;
        }
        return dots == 1 || dots == 2;
}

/* Whether every origin reads path[0..n) as the glob does: no dot segment, no '\' (a separator to some
 * servers), no encoded '/' or '\' (one to servers that decode before routing). Otherwise a rule for
 * everything under /upload would let "/upload/../admin" through to whatever the origin resolves it to. */
static bool path_is_plain(const char *path, size_t n)
{
        const char *end = path + n;

        for (size_t i = 0; i < n; i++)
                if (path[i] == '\\' || is_encoded(path + i, n - i, '2', 'f') ||
                    is_encoded(path + i, n - i, '5', 'c'))
                        return false;
        for (const char *p = path; p < end;) {
                size_t m = segment_length(p + 1, end);

                if (segment_is_dots(p + 1, m))
                        return false;
                p += 1 + m;
        }
        return true;
}

/* ---- The parser ---- */

/* The rule being read, for its messages: 'rule "NAME"', or 'rule N' when it has no valid name. */
typedef struct RuleContext {
        AjError *error;
        char label[RULE_NAME_MAX + 16];
        const EgressPolicy *policy; /* the rules read so far */
} RuleContext;

static int rule_error(const RuleContext *c, unsigned line, unsigned column, const char *fmt, ...)
        _printf_(4, 5);
static int rule_error(const RuleContext *c, unsigned line, unsigned column, const char *fmt, ...)
{
        char detail[sizeof(c->error->message)];
        va_list ap;

        va_start(ap, fmt);
        (void)vsnprintf(detail, sizeof(detail), fmt, ap);
        va_end(ap);
        return aj_error(c->error, EINVAL, line, column, "%s: %s", c->label, detail);
}

static int value_error(const RuleContext *c, const TomlValue *v, const char *key, const char *fmt, ...)
        _printf_(4, 5);
static int value_error(const RuleContext *c, const TomlValue *v, const char *key, const char *fmt, ...)
{
        char detail[sizeof(c->error->message)];
        va_list ap;

        va_start(ap, fmt);
        (void)vsnprintf(detail, sizeof(detail), fmt, ap);
        va_end(ap);
        return rule_error(c, toml_line(v), toml_column(v), "%s: %s", key, detail);
}

static int oom(const RuleContext *c)
{
        return aj_error(c->error, ENOMEM, 0, 0, "out of memory");
}

static int check_name(const RuleContext *c, const TomlValue *v, const char *s)
{
        if (!rule_name_valid(s))
                return value_error(c, v, "name", "\"%s\" is not a valid rule name (it must match %s)",
                                   QUOTE(s), RULE_NAME_RULE);
        for (size_t i = 0; i < c->policy->n_rules; i++)
                if (strcmp(c->policy->rules[i].name, s) == 0)
                        return value_error(c, v, "name", "\"%s\" is also the name of the rule at line %u", s,
                                           c->policy->rules[i].line);
        return 0;
}

static int check_why(const RuleContext *c, const TomlValue *v, const char *s)
{
        bool blank = true;

        for (const char *p = s; *p; p++) {
                if ((unsigned char)*p < ' ' || *p == 0x7f)
                        return value_error(c, v, "why", "holds a control character");
                blank = blank && *p == ' ';
        }
        if (blank)
                return value_error(c, v, "why", "is empty: say why the rule is needed");
        return 0;
}

static int parse_string(const RuleContext *c, const char *key, const TomlValue *v, char **target,
                        int (*check)(const RuleContext *c, const TomlValue *v, const char *s))
{
        int r;

        if (toml_type(v) != TOML_STRING)
                return value_error(c, v, key, "expected a string, found %s",
                                   toml_type_description(toml_type(v)));
        r = check(c, v, toml_string(v));
        if (r < 0)
                return r;
        *target = strdup(toml_string(v));
        return *target ? 0 : oom(c);
}

/* Checks one element of a list and returns what to store (a copy, or its normalized form) in *ret. */
typedef int (*ElementCheck)(const RuleContext *c, const TomlValue *item, char *const *earlier, char **ret);

static int check_host(const RuleContext *c, const TomlValue *item, char *const *earlier, char **ret)
{
        const char *s = toml_string(item);
        char host[EGRESS_HOST_MAX];
        unsigned port;

        if (strchr(s, '*'))
                return value_error(c, item, "hosts",
                                   "\"%s\" is refused: hosts are exact names, without wildcards (one write "
                                   "host on a shared CDN would open all of it)",
                                   QUOTE(s));
        if (host_normalize_port(s, host, &port) < 0)
                return value_error(c, item, "hosts", "\"%s\" is not a valid host name", QUOTE(s));
        if (port != 0)
                return value_error(c, item, "hosts",
                                   "\"%s\" has a port: ports are not matched, name the host alone",
                                   QUOTE(s));
        if (strv_contains(earlier, host))
                return value_error(c, item, "hosts", "\"%s\" is listed twice", QUOTE(s));
        *ret = strdup(host);
        return *ret ? 0 : oom(c);
}

static int check_method(const RuleContext *c, const TomlValue *item, char *const *earlier, char **ret)
{
        const char *s = toml_string(item);

        if (is_read_method(s))
                return value_error(
                        c, item, "methods",
                        "\"%s\" is refused: reads need no rule (a %s with a body is always refused)", s, s);
        if (strcmp(s, "CONNECT") == 0)
                return value_error(c, item, "methods",
                                   "\"CONNECT\" is refused: tunnels are decided by host and port, and each "
                                   "request inside one by the rules");
        if (!rule_method_valid(s))
                return value_error(
                        c, item, "methods",
                        "\"%s\" is not a method name (upper-case letters, digits, '-' and '_', at "
                        "most %d)",
                        QUOTE(s), METHOD_MAX);
        if (strv_contains(earlier, s))
                return value_error(c, item, "methods", "\"%s\" is listed twice", s);
        *ret = strdup(s);
        return *ret ? 0 : oom(c);
}

static int check_path(const RuleContext *c, const TomlValue *item, char *const *earlier, char **ret)
{
        const char *s = toml_string(item), *end = s + strlen(s);

        if (s[0] != '/')
                return value_error(c, item, "paths", "\"%s\" does not start with \"/\"", QUOTE(s));
        for (const char *p = s; *p; p++) {
                if (*p == '?')
                        return value_error(c, item, "paths",
                                           "\"%s\" holds '?': the query string is never matched", QUOTE(s));
                if (*p == '#')
                        return value_error(c, item, "paths",
                                           "\"%s\" holds '#': a fragment is never sent to the server",
                                           QUOTE(s));
                if (!is_path_byte(*p))
                        return value_error(
                                c, item, "paths",
                                "\"%s\" holds a space, a control character or a byte outside ASCII "
                                "(write it percent-encoded)",
                                QUOTE(s));
        }
        for (const char *p = s; p < end;) {
                size_t n = segment_length(p + 1, end);
                const char *stars = memmem(p + 1, n, "**", 2);

                if (stars && !is_double_star(p + 1, n))
                        return value_error(c, item, "paths", "\"%s\": '**' must be a whole segment",
                                           QUOTE(s));
                p += 1 + n;
        }
        if (!path_is_plain(s, strlen(s)))
                return value_error(c, item, "paths",
                                   "\"%s\" holds a '.' or '..' segment, a '\\' or an encoded '/' or '\\': a "
                                   "request with one is refused, so the rule could never match",
                                   QUOTE(s));
        if (strv_contains(earlier, s))
                return value_error(c, item, "paths", "\"%s\" is listed twice", QUOTE(s));
        *ret = strdup(s);
        return *ret ? 0 : oom(c);
}

static int parse_list(const RuleContext *c, const char *key, const TomlValue *v, ElementCheck check,
                      char ***target)
{
        _cleanup_strv_free_ char **list = NULL;
        size_t n;

        if (toml_type(v) == TOML_STRING)
                return value_error(c, v, key,
                                   "expected an array of strings, found a string (write [\"%s\"])",
                                   QUOTE(toml_string(v)));
        if (toml_type(v) != TOML_ARRAY)
                return value_error(c, v, key, "expected an array of strings, found %s",
                                   toml_type_description(toml_type(v)));
        n = toml_array_length(v);
        if (n == 0)
                return value_error(c, v, key, "the list is empty: a rule that matches nothing is a mistake");
        list = calloc(n + 1, sizeof(char *));
        if (!list)
                return oom(c);
        for (size_t i = 0; i < n; i++) {
                const TomlValue *item = toml_array_get(v, i);
                int r;

                if (toml_type(item) != TOML_STRING)
                        return value_error(c, item, key,
                                           "expected an array of strings, found %s in the array",
                                           toml_type_description(toml_type(item)));
                r = check(c, item, list, &list[i]);
                if (r < 0)
                        return r;
        }
        *target = TAKE_PTR(list);
        return 0;
}

static void rule_done(EgressRule *rule)
{
        free(rule->name);
        free(rule->why);
        strv_free(rule->hosts);
        strv_free(rule->methods);
        strv_free(rule->paths);
        *rule = (EgressRule){};
}

/* Fills rule from the table t, the policy's rule number index (1-based) of its kind. */
static int parse_rule(AjError *e, const EgressPolicy *policy, const TomlValue *t, size_t index, bool read,
                      EgressRule *rule)
{
        const TomlValue *name = toml_table_get(t, "name");
        RuleContext c = { .error = e, .policy = policy };
        const char *kind = read ? "read rule" : "rule";
        int r;

        if (name && toml_type(name) == TOML_STRING && rule_name_valid(toml_string(name)))
                (void)snprintf(c.label, sizeof(c.label), "%s \"%s\"", kind, toml_string(name));
        else
                (void)snprintf(c.label, sizeof(c.label), "%s %zu", kind, index);
        rule->line = toml_line(t);
        rule->read = read;

        for (size_t i = 0; i < toml_table_length(t); i++) {
                const char *key = toml_table_key(t, i);
                const TomlValue *v = toml_table_value(t, i);

                if (strcmp(key, "name") == 0)
                        r = parse_string(&c, key, v, &rule->name, check_name);
                else if (strcmp(key, "why") == 0)
                        r = parse_string(&c, key, v, &rule->why, check_why);
                else if (strcmp(key, "hosts") == 0)
                        r = parse_list(&c, key, v, check_host, &rule->hosts);
                else if (!read && strcmp(key, "methods") == 0)
                        r = parse_list(&c, key, v, check_method, &rule->methods);
                else if (!read && strcmp(key, "paths") == 0)
                        r = parse_list(&c, key, v, check_path, &rule->paths);
                else if (read)
                        r = rule_error(&c, toml_table_key_line(t, i), toml_table_key_column(t, i),
                                       "unknown key \"%s\" (a read rule has name, why and hosts: every read "
                                       "method and path of its hosts)",
                                       QUOTE(key));
                else
                        r = rule_error(&c, toml_table_key_line(t, i), toml_table_key_column(t, i),
                                       "unknown key \"%s\" (a rule has name, why, hosts, methods and paths)",
                                       QUOTE(key));
                if (r < 0)
                        return r;
        }

        const char *const *keys = read ? read_rule_keys : rule_keys;
        size_t n_keys = read ? ELEMENTSOF(read_rule_keys) : ELEMENTSOF(rule_keys);

        for (size_t i = 0; i < n_keys; i++)
                if (!toml_table_get(t, keys[i]))
                        return rule_error(&c, toml_line(t), toml_column(t), "missing key \"%s\"", keys[i]);
        return 0;
}

void egress_policy_free(EgressPolicy *p)
{
        if (!p)
                return;
        for (size_t i = 0; i < p->n_rules; i++)
                rule_done(&p->rules[i]);
        free(p->rules);
        free(p);
}

/* The [[write]] (read false) or [[read]] tables of v, appended to p's rules. */
static int parse_rules(AjError *e, const TomlValue *v, bool read, EgressPolicy *p)
{
        const char *kind = read ? "read" : "write";
        EgressRule *rules;
        size_t n;

        if (toml_type(v) != TOML_ARRAY)
                return aj_error(e, EINVAL, toml_line(v), toml_column(v),
                                "%s: expected [[%s]] tables, found %s", kind, kind,
                                toml_type_description(toml_type(v)));
        n = toml_array_length(v);
        if (n > 0 && toml_type(toml_array_get(v, 0)) != TOML_TABLE)
                return aj_error(e, EINVAL, toml_line(v), toml_column(v),
                                "%s: expected [[%s]] tables, found an array of %ss", kind, kind,
                                toml_type_name(toml_type(toml_array_get(v, 0))));
        if (n == 0)
                return 0;
        rules = reallocarray(p->rules, p->n_rules + n, sizeof(EgressRule));
        if (!rules)
                return aj_error(e, ENOMEM, 0, 0, "out of memory");
        p->rules = rules;
        for (size_t i = 0; i < n; i++) {
                EgressRule *rule = &p->rules[p->n_rules];
                int r;

                *rule = (EgressRule){};
                /* The name check sees the rules before it, of both kinds; the rule is counted before its
                 * result is checked, so that a half-read rule is freed with the rest. */
                r = parse_rule(e, p, toml_array_get(v, i), i + 1, read, rule);
                p->n_rules++;
                if (r < 0)
                        return r;
        }
        return 0;
}

int egress_policy_parse(const char *data, size_t size, EgressPolicy **ret_policy, AjError *reterr)
{
        _cleanup_(toml_freep) TomlValue *root = NULL;
        _cleanup_(egress_policy_freep) EgressPolicy *p = NULL;
        int r;

        assert(data || size == 0);
        assert(ret_policy);

        if (size > EGRESS_POLICY_MAX_SIZE)
                return aj_error(reterr, EFBIG, 0, 0, "larger than %d bytes", EGRESS_POLICY_MAX_SIZE);
        r = toml_parse(data, size, &root, reterr);
        if (r < 0)
                return r;
        p = calloc(1, sizeof(*p));
        if (!p)
                return aj_error(reterr, ENOMEM, 0, 0, "out of memory");

        for (size_t i = 0; i < toml_table_length(root); i++) {
                const char *key = toml_table_key(root, i);
                const TomlValue *v = toml_table_value(root, i);
                unsigned line = toml_table_key_line(root, i), column = toml_table_key_column(root, i);

                if (strcmp(key, "write") == 0 || strcmp(key, "read") == 0)
                        r = parse_rules(reterr, v, strcmp(key, "read") == 0, p);
                else if (toml_type(v) == TOML_TABLE)
                        r = aj_error(reterr, EINVAL, line, column,
                                     "unknown table [%s]: a policy holds only [[write]] and [[read]] tables",
                                     QUOTE(key));
                else if (toml_type(v) == TOML_ARRAY && toml_array_length(v) > 0 &&
                         toml_type(toml_array_get(v, 0)) == TOML_TABLE)
                        r = aj_error(
                                reterr, EINVAL, line, column,
                                "unknown table [[%s]]: a policy holds only [[write]] and [[read]] tables",
                                QUOTE(key));
                else
                        r = aj_error(
                                reterr, EINVAL, line, column,
                                "unknown key \"%s\" outside any table: a policy holds only [[write]] and "
                                "[[read]] tables",
                                QUOTE(key));
                if (r < 0)
                        return r;
        }
        *ret_policy = TAKE_PTR(p);
        return 0;
}

int egress_policy_load(const char *path, EgressPolicy **ret_policy, AjError *reterr)
{
        _cleanup_free_ char *data = NULL;
        AjError inner = {};
        size_t size = 0;
        int r;

        assert(path);
        assert(ret_policy);

        r = read_file_for_parse(path, EGRESS_POLICY_MAX_SIZE, &data, &size, reterr);
        if (r < 0)
                return r;
        r = egress_policy_parse(data, size, ret_policy, &inner);
        return r < 0 ? aj_error_in_file(reterr, r, path, &inner) : 0;
}

/* ---- The threat list ---- */

static int compare_strings(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

/* One line of the list, data[0..n) without its newline, normalized into ret_host (empty for a blank or
 * comment line). */
static int threat_line(const char *data, size_t n, unsigned line, char ret_host[static EGRESS_HOST_MAX],
                       AjError *e)
{
        char name[EGRESS_HOST_MAX + 1];
        const char *hash = memchr(data, '#', n);
        unsigned port;

        ret_host[0] = '\0';
        if (memchr(data, '\0', n))
                return aj_error(e, EINVAL, line, 0, "a NUL byte");
        if (hash)
                n = (size_t)(hash - data);
        while (n > 0 && (is_ows(data[n - 1]) || data[n - 1] == '\r'))
                n--;
        while (n > 0 && is_ows(*data)) {
                data++;
                n--;
        }
        if (n == 0)
                return 0;
        if (n >= sizeof(name))
                return aj_error(e, EINVAL, line, 0, "a name longer than %d bytes", EGRESS_HOST_MAX - 1);
        memcpy(name, data, n);
        name[n] = '\0';
        if (host_normalize_port(name, ret_host, &port) < 0 || port != 0) {
                ret_host[0] = '\0';
                return aj_error(e, EINVAL, line, 0, "\"%s\" is not a host name", QUOTE(name));
        }
        return 0;
}

/* A loaded list is one allocation: the EgressThreats, the pointers, then the names they point to. */
typedef struct ThreatsBlock {
        EgressThreats threats; /* first: its address is the block's */
        const char *hosts[];
} ThreatsBlock;

int egress_threats_parse(const char *data, size_t size, EgressThreats **ret_threats, AjError *reterr)
{
        /* The names as read, each with its NUL, back to back; offsets[i] is where the i-th starts. */
        _cleanup_free_ char *names = NULL;
        _cleanup_free_ size_t *offsets = NULL;
        size_t lines = 1, n = 0, used = 0, allocated = 0, kept = 0;
        ThreatsBlock *b;
        char *storage;
        unsigned line = 0;

        assert(data || size == 0);
        assert(ret_threats);

        if (size > EGRESS_THREATS_MAX_SIZE)
                return aj_error(reterr, EFBIG, 0, 0, "larger than %d bytes", EGRESS_THREATS_MAX_SIZE);
        for (size_t i = 0; i < size; i++)
                lines += data[i] == '\n';
        offsets = calloc(lines, sizeof(size_t));
        if (!offsets)
                return aj_error(reterr, ENOMEM, 0, 0, "out of memory");

        for (const char *p = data, *end = data + size; p < end;) {
                const char *nl = memchr(p, '\n', (size_t)(end - p));
                size_t len = (size_t)((nl ? nl : end) - p), m;
                char host[EGRESS_HOST_MAX];
                int r;

                line++;
                r = threat_line(p, len, line, host, reterr);
                if (r < 0)
                        return r;
                p += len + 1;
                if (host[0] == '\0')
                        continue;
                m = strlen(host) + 1;
                /* A name may be longer than its line (127.1 is 127.0.0.1): grown as needed. */
                if (used + m > allocated) {
                        size_t want = allocated > 0 ? allocated * 2 : 4096;
                        char *grown = realloc(names, want);

                        if (!grown)
                                return aj_error(reterr, ENOMEM, 0, 0, "out of memory");
                        names = grown;
                        allocated = want;
                }
                memcpy(names + used, host, m);
                offsets[n++] = used;
                used += m;
        }

        b = malloc(offsetof(ThreatsBlock, hosts) + n * sizeof(char *) + used);
        if (!b)
                return aj_error(reterr, ENOMEM, 0, 0, "out of memory");
        storage = (char *)&b->hosts[n];
        if (used > 0)
                memcpy(storage, names, used);
        for (size_t i = 0; i < n; i++)
                b->hosts[i] = storage + offsets[i];
        qsort(b->hosts, n, sizeof(char *), compare_strings);
        for (size_t i = 0; i < n; i++)
                if (kept == 0 || strcmp(b->hosts[kept - 1], b->hosts[i]) != 0)
                        b->hosts[kept++] = b->hosts[i];
        b->threats = (EgressThreats){ .hosts = b->hosts, .n = kept };
        *ret_threats = &b->threats;
        return 0;
}

int egress_threats_load(const char *path, EgressThreats **ret_threats, AjError *reterr)
{
        _cleanup_free_ char *data = NULL;
        AjError inner = {};
        size_t size = 0;
        int r;

        assert(path);
        assert(ret_threats);

        r = read_file_for_parse(path, EGRESS_THREATS_MAX_SIZE, &data, &size, reterr);
        if (r < 0)
                return r;
        r = egress_threats_parse(data, size, ret_threats, &inner);
        return r < 0 ? aj_error_in_file(reterr, r, path, &inner) : 0;
}

void egress_threats_free(EgressThreats *t)
{
        /* The block's first member: the same address, and one allocation holds everything. */
        free(t);
}

/* The entry of the list that host, or a domain above it, is; NULL when none. An address matches only
 * itself: "1.2.3.4" is not under "3.4". */
static const char *threat_match(const EgressThreats *threats, const char *host)
{
        bool address;

        if (!threats || threats->n == 0)
                return NULL;
        address = is_ip_address(host);
        for (const char *h = host; h;) {
                const char *const *hit =
                        bsearch(&h, threats->hosts, threats->n, sizeof(char *), compare_strings);

                if (hit)
                        return *hit;
                if (address)
                        return NULL;
                h = strchr(h, '.');
                if (h)
                        h++;
        }
        return NULL;
}

/* ---- The decision ---- */

const char *egress_verdict_to_string(EgressVerdict v)
{
        return v == EGRESS_ALLOW ? "allow" : "deny";
}

/* s[0..n) for a reason: printable ASCII as it is, any other byte as %XX, so that a reason is one line,
 * safe in a header; '?' too, so that no reason can carry what looks like a query string, even from a
 * malformed method or host. Cut with "..." to fit buf. */
static const char *shown(const char *s, size_t n, char *buf, size_t size)
{
        static const char hex[] = "0123456789ABCDEF";
        size_t o = 0;

        assert(size >= 8);
        for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char)s[i];
                bool plain = c > ' ' && c < 0x7f && c != '?';

                if (o + (plain ? 1 : 3) > size - 4) {
                        memcpy(buf + o, "...", 3);
                        o += 3;
                        break;
                }
                if (plain)
                        buf[o++] = (char)c;
                else {
                        buf[o++] = '%';
                        buf[o++] = hex[c >> 4];
                        buf[o++] = hex[c & 15];
                }
        }
        buf[o] = '\0';
        return buf;
}

#define SHOWN_MAX 112
#define SHOWN(s)  shown((s), strlen(s), (char[SHOWN_MAX]){ 0 }, SHOWN_MAX)

/* A normalized host as a reason shows it: an IPv6 address in brackets, so that a path after it reads. */
static const char *host_shown(const char *host, char buf[static EGRESS_HOST_MAX + 2])
{
        (void)snprintf(buf, EGRESS_HOST_MAX + 2, strchr(host, ':') ? "[%s]" : "%s", host);
        return buf;
}

static void decide(EgressDecision *d, EgressVerdict verdict, const EgressRule *rule, const char *fmt, ...)
        _printf_(4, 5);
static void decide(EgressDecision *d, EgressVerdict verdict, const EgressRule *rule, const char *fmt, ...)
{
        va_list ap;
        int n;

        d->verdict = verdict;
        d->rule = rule;
        va_start(ap, fmt);
        n = vsnprintf(d->reason, sizeof(d->reason), fmt, ap);
        va_end(ap);
        if (n < 0)
                (void)snprintf(d->reason, sizeof(d->reason), "%s", "the reason could not be written");
        else if ((size_t)n >= sizeof(d->reason))
                memcpy(d->reason + sizeof(d->reason) - 4, "...", 4);
        /* Every part was made printable already; this keeps the promise should one have slipped. */
        for (char *c = d->reason; *c; c++)
                if ((unsigned char)*c < ' ' || (unsigned char)*c >= 0x7f)
                        *c = '_';
}

static bool rule_matches(const EgressRule *rule, const char *method, const char *host, const char *path)
{
        if (rule->read || !strv_contains(rule->methods, method) || !strv_contains(rule->hosts, host))
                return false;
        for (char **g = rule->paths; *g; g++)
                if (egress_path_match(*g, path))
                        return true;
        return false;
}

/* Host header and TLS server name: each, when present, must name the host connected to, or the request
 * could reach one host (the connection) while claiming another (domain fronting). */
static bool fronted(EgressDecision *d, const char *what, const char *value, const char *host)
{
        char other[EGRESS_HOST_MAX], a[EGRESS_HOST_MAX + 2], b[EGRESS_HOST_MAX + 2];

        if (!value)
                return false;
        if (egress_host_normalize(value, other) < 0) {
                decide(d, EGRESS_DENY, NULL, "malformed request: the %s %s is not a valid host name", what,
                       SHOWN(value));
                return true;
        }
        if (strcmp(other, host) == 0)
                return false;
        decide(d, EGRESS_DENY, NULL, "domain fronting: the %s names %s, but the connection is to %s", what,
               host_shown(other, a), host_shown(host, b));
        return true;
}

/* Inside a tunnel the request's URL is a third name, besides the Host header and the server name: squid
 * sends the request over the tunnel whatever host or port its URL names, and an origin serving several
 * names (a wildcard or shared certificate) answers for the one the URL names. */
static bool url_elsewhere(EgressDecision *d, const EgressRequest *q, const char *host, unsigned port)
{
        char other[EGRESS_HOST_MAX], a[EGRESS_HOST_MAX + 2], b[EGRESS_HOST_MAX + 2];
        unsigned written, url_port;

        if (!q->url_host)
                return false;
        if (host_normalize_port(q->url_host, other, &written) < 0) {
                decide(d, EGRESS_DENY, NULL, "malformed request: the URL's host %s is not a valid host name",
                       SHOWN(q->url_host));
                return true;
        }
        url_port = q->url_port != 0 ? q->url_port : written;
        if ((q->url_port != 0 && written != 0 && q->url_port != written) || url_port == 0 || port == 0) {
                decide(d, EGRESS_DENY, NULL, "malformed request: the URL's port or the tunnel's is unknown");
                return true;
        }
        if (strcmp(other, host) == 0 && url_port == port)
                return false;
        decide(d, EGRESS_DENY, NULL, "domain fronting: the URL names %s:%u, but the tunnel is to %s:%u",
               host_shown(other, a), url_port, host_shown(host, b), port);
        return true;
}

static void decide_connect(const EgressRequest *q, unsigned written_port, EgressDecision *d)
{
        unsigned port = q->port != 0 ? q->port : written_port;

        if (q->port != 0 && written_port != 0 && q->port != written_port)
                decide(d, EGRESS_DENY, NULL, "malformed request: a CONNECT to port %u and to port %u",
                       q->port, written_port);
        else if (port == 0)
                decide(d, EGRESS_DENY, NULL, "malformed request: a CONNECT without a port");
        else if (port != TUNNEL_PORT)
                decide(d, EGRESS_DENY, NULL, "a tunnel (CONNECT) to port %u: tunnels go to port %d only",
                       port, TUNNEL_PORT);
        else
                decide(d, EGRESS_ALLOW, NULL, "tunnel");
}

static void decide_write(const EgressPolicy *policy, const EgressRequest *q, const char *host,
                         EgressDecision *d)
{
        const char *method = q->upgrade ? "WEBSOCKET" : q->method;
        char where[EGRESS_HOST_MAX + 2], what[SHOWN_MAX], body[32] = "";
        size_t n;

        if (!q->path || q->path[0] != '/') {
                decide(d, EGRESS_DENY, NULL, "malformed request: a %s to %s without a path", method,
                       host_shown(host, where));
                return;
        }
        n = path_length(q->path);
        shown(q->path, n, what, sizeof(what));
        for (size_t i = 0; i < n; i++)
                if (!is_path_byte(q->path[i]) || q->path[i] == '#') {
                        decide(d, EGRESS_DENY, NULL,
                               "malformed request: the path holds a space, a control character, '#' or a "
                               "byte "
                               "outside ASCII: %s %s%s",
                               method, host_shown(host, where), what);
                        return;
                }
        if (!path_is_plain(q->path, n)) {
                decide(d, EGRESS_DENY, NULL,
                       "a write to a path an origin may resolve elsewhere ('.' or '..' segment, '\\' or an "
                       "encoded '/' or '\\'): %s %s%s",
                       method, host_shown(host, where), what);
                return;
        }
        for (size_t i = 0; policy && i < policy->n_rules; i++)
                if (rule_matches(&policy->rules[i], method, host, q->path)) {
                        decide(d, EGRESS_ALLOW, &policy->rules[i], "%s", policy->rules[i].name);
                        return;
                }
        if (!q->upgrade && q->has_body && is_read_method(q->method))
                (void)snprintf(body, sizeof(body), " (with a body)");
        decide(d, EGRESS_DENY, NULL, "a write to an endpoint not in the write allowlist: %s %s%s%s", method,
               host_shown(host, where), what, body);
}

/* The first rule of the kind asked (reads, or both kinds) that names host; NULL if none. */
static const EgressRule *rule_naming(const EgressPolicy *policy, const char *host, bool reads_only)
{
        for (size_t i = 0; policy && i < policy->n_rules; i++)
                if ((!reads_only || policy->rules[i].read) && strv_contains(policy->rules[i].hosts, host))
                        return &policy->rules[i];
        return NULL;
}

static void decide_read(const EgressPolicy *policy, const char *host, EgressDecision *d)
{
        const EgressRule *rule;

        if (!policy || !policy->reads_listed) {
                decide(d, EGRESS_ALLOW, NULL, "read");
                return;
        }
        rule = rule_naming(policy, host, true);
        if (rule) {
                decide(d, EGRESS_ALLOW, rule, "%s", rule->name);
        } else {
                char where[EGRESS_HOST_MAX + 2];

                decide(d, EGRESS_DENY, NULL,
                       "a read of a host no [[read]] rule names: %s ([egress] reads = listed)",
                       host_shown(host, where));
        }
}

void egress_decide(const EgressPolicy *policy, const EgressThreats *threats, const EgressRequest *request,
                   EgressDecision *ret_decision)
{
        const EgressRequest *q = request;
        EgressDecision *d = ret_decision;
        char host[EGRESS_HOST_MAX], a[EGRESS_HOST_MAX + 2];
        const char *listed;
        unsigned port;

        assert(q);
        assert(d);
        *d = (EgressDecision){ .verdict = EGRESS_DENY };

        if (!method_is_token(q->method)) {
                decide(d, EGRESS_DENY, NULL, "malformed request: the method %s is not an HTTP token",
                       q->method ? SHOWN(q->method) : "(none)");
                return;
        }
        if (strcmp(q->method, "CONNECT") != 0 && q->scheme && strcmp(q->scheme, "http") != 0 &&
            strcmp(q->scheme, "https") != 0) {
                decide(d, EGRESS_DENY, NULL,
                       "the scheme %s: only http and https are proxied (another protocol would turn the "
                       "URL into commands no policy reads)",
                       SHOWN(q->scheme));
                return;
        }
        if (host_normalize_port(q->host, host, &port) < 0) {
                decide(d, EGRESS_DENY, NULL, "malformed request: the host %s is not a valid host name",
                       q->host ? SHOWN(q->host) : "(none)");
                return;
        }
        if (strcmp(q->method, "CONNECT") == 0 && (q->sni || q->url_host)) {
                /* squid would switch the connection to a blind relay over its TLS connection to the
                 * origin: nothing after it would be asked about. */
                decide(d, EGRESS_DENY, NULL,
                       "a CONNECT inside a tunnel (to %s): the proxy would relay its bytes to the origin "
                       "unread",
                       host_shown(host, a));
                return;
        }
        if (strcmp(q->method, "CONNECT") != 0 && q->path && encoded_control(q->path)) {
                char what[SHOWN_MAX];

                shown(q->path, path_length(q->path), what, sizeof(what));
                decide(d, EGRESS_DENY, NULL,
                       "a control character encoded in the path (%%00-%%1F or %%7F): %s %s%s", q->method,
                       host_shown(host, a), what);
                return;
        }
        listed = threat_match(threats, host);
        if (listed && strcmp(listed, host) == 0) {
                decide(d, EGRESS_DENY, NULL, "a host on the threat list: %s", host_shown(host, a));
                return;
        }
        if (listed) {
                decide(d, EGRESS_DENY, NULL, "a host on the threat list: %s, under %s", host, listed);
                return;
        }
        if (is_local_destination(host)) {
                decide(d, EGRESS_DENY, NULL,
                       "a local destination: %s (loopback, private, link-local and metadata addresses "
                       "and the proxy's own name are never reached through the proxy)",
                       host_shown(host, a));
                return;
        }
        if (fronted(d, "Host header", q->host_header, host) || fronted(d, "TLS server name", q->sni, host) ||
            url_elsewhere(d, q, host, q->port != 0 ? q->port : port))
                return;

        if (strcmp(q->method, "CONNECT") == 0) {
                decide_connect(q, port, d);
                /* A tunnel is as wide as what may go through it: with listed reads, only to a host some rule
                 * names, read or write. */
                if (d->verdict == EGRESS_ALLOW && policy && policy->reads_listed &&
                    !rule_naming(policy, host, false))
                        decide(d, EGRESS_DENY, NULL,
                               "a tunnel to a host no rule names: %s ([egress] reads = listed)",
                               host_shown(host, a));
        } else if (!q->upgrade && !q->has_body && is_read_method(q->method))
                decide_read(policy, host, d);
        else
                decide_write(policy, q, host, d);
}

/* ---- URLs and a client's requests ---- */

int egress_url_parse(const char *url, EgressUrl *ret_url, AjError *reterr)
{
        _cleanup_free_ char *authority = NULL, *path = NULL;
        const char *rest, *path_end;
        EgressUrl u = {};
        size_t n;

        assert(url);
        assert(ret_url);

        if (strncasecmp(url, "https://", 8) == 0) {
                u.https = true;
                rest = url + 8;
        } else if (strncasecmp(url, "http://", 7) == 0)
                rest = url + 7;
        else
                return aj_error(reterr, EINVAL, 0, 0, "%s: not an http:// or https:// URL", SHOWN(url));

        n = strcspn(rest, "/?#");
        if (memchr(rest, '@', n))
                return aj_error(reterr, EINVAL, 0, 0, "%s: user information (before '@') is not supported",
                                SHOWN(url));
        authority = strndup(rest, n);
        if (!authority)
                return aj_error(reterr, ENOMEM, 0, 0, "out of memory");
        if (authority[0] != '[' && strchr(authority, ':') &&
            strchr(authority, ':') != strrchr(authority, ':'))
                return aj_error(reterr, EINVAL, 0, 0, "%s: an IPv6 address must be in brackets", SHOWN(url));
        if (host_normalize_port(authority, u.host, &u.port) < 0)
                return aj_error(reterr, EINVAL, 0, 0,
                                "%s: \"%s\" is not a valid host, or its port is not one", SHOWN(url),
                                SHOWN(authority));
        if (u.port == 0)
                u.port = u.https ? 443 : 80;

        rest += n;
        path_end = rest + strcspn(rest, "?#");
        for (const char *c = rest; c < path_end; c++)
                if ((unsigned char)*c <= ' ' || *c == 0x7f)
                        return aj_error(reterr, EINVAL, 0, 0,
                                        "%s: the path holds a space or a control character", SHOWN(url));
        path = rest == path_end ? strdup("/") : strndup(rest, (size_t)(path_end - rest));
        if (!path)
                return aj_error(reterr, ENOMEM, 0, 0, "out of memory");
        u.path = TAKE_PTR(path);
        *ret_url = u;
        return 0;
}

void egress_url_done(EgressUrl *u)
{
        if (!u)
                return;
        free(u->path);
        u->path = NULL;
}

void egress_decide_client(const EgressPolicy *policy, const EgressThreats *threats,
                          const EgressClientRequest *request, EgressDecision *ret_decision)
{
        const EgressClientRequest *c = request;
        const EgressUrl *u;
        bool connect;

        assert(c);
        assert(c->url);
        assert(ret_decision);
        u = c->url;
        connect = c->method && strcmp(c->method, "CONNECT") == 0;

        char url_host[EGRESS_HOST_MAX];
        unsigned url_port = 0;

        if (u->https || connect) {
                /* A client's CONNECT carries the target as its Host header, whatever it sends inside. */
                EgressRequest tunnel = {
                        .method = "CONNECT",
                        .host = u->host,
                        .host_header = connect ? c->host_header : NULL,
                        .port = u->port,
                };

                egress_decide(policy, threats, &tunnel, ret_decision);
                if (connect || ret_decision->verdict != EGRESS_ALLOW)
                        return;
                /* Inside the tunnel, the URL squid sees: the absolute form's, else the Host header's,
                 * else the URL's (a malformed Host header is refused for itself). */
                if (c->authority) {
                        if (host_normalize_port(c->authority, url_host, &url_port) < 0) {
                                decide(ret_decision, EGRESS_DENY, NULL,
                                       "malformed request: the URL's host %s is not a valid host name",
                                       SHOWN(c->authority));
                                return;
                        }
                } else if (host_normalize_port(c->host_header ? c->host_header : u->host, url_host,
                                               &url_port) < 0)
                        (void)snprintf(url_host, sizeof(url_host), "%s", u->host);
                if (url_port == 0)
                        url_port = TUNNEL_PORT; /* https's own, whatever the tunnel's */
        }

        egress_decide(policy, threats,
                      &(EgressRequest){
                              .method = c->method,
                              .host = u->host,
                              /* In absolute form, squid rewrites a Host header to the URL's
                               * authority, as on plain HTTP, and adds none. */
                              .host_header = c->authority     ? (c->host_header ? c->authority : NULL)
                                             : c->host_header ? c->host_header
                                                              : u->host,
                              /* Clients send no server name for an address (RFC 6066, 3). */
                              .sni = !u->https                ? NULL
                                     : c->sni                 ? c->sni
                                     : is_ip_address(u->host) ? NULL
                                                              : u->host,
                              .path = u->path,
                              .has_body = c->has_body,
                              .upgrade = c->upgrade,
                              .port = u->port,
                              .url_host = u->https ? url_host : NULL,
                              .url_port = url_port,
                      },
                      ret_decision);
}
