/* SPDX-License-Identifier: MIT */
/* The egress policy (policy.toml) and the one decision every part uses: the proxy's external ACL helper,
 * `agentic-job policy test` and the check. Reads (GET, HEAD, OPTIONS without a body) go to any host not on
 * the threat list, or, with [egress] reads = "listed", to the hosts a [[read]] rule names; everything else
 * needs a [[write]] rule naming its host, method and path. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "error.h"

#define EGRESS_POLICY_PATH     "/opt/egress-proxy/policy/policy.toml"
#define EGRESS_THREATS_PATH    "/opt/egress-proxy/denylist.txt"
#define EGRESS_POLICY_MAX_SIZE (1024 * 1024)
/* The threat feed (HaGeZi's medium list) is a few MB; this leaves it room to grow tenfold. */
#define EGRESS_THREATS_MAX_SIZE (64 * 1024 * 1024)
/* squid's visible_hostname (squid.conf.in): the name it answers for itself, its cache manager's. */
#define EGRESS_PROXY_NAME "egress-proxy"
/* A normalized host name is at most this long (DNS: 253), plus its NUL. */
#define EGRESS_HOST_MAX 254

typedef struct EgressRule {
        bool read;      /* a [[read]] rule: name, why and hosts only (methods and paths NULL) */
        char *name;     /* non-empty, unique among the rules of both kinds */
        char *why;      /* non-empty */
        char **hosts;   /* NULL-terminated, non-empty; normalized, exact names, no wildcards */
        char **methods; /* NULL-terminated, non-empty; upper case; never GET/HEAD/OPTIONS; "WEBSOCKET"
                           allowed */
        char **paths;  /* NULL-terminated, non-empty; each starts with '/'; '*' within a segment, '**' across
                        */
        unsigned line; /* where the rule's [[write]] or [[read]] header is */
} EgressRule;

typedef struct EgressPolicy {
        EgressRule *rules; /* the [[write]] rules, then the [[read]] rules, each in the file's order */
        size_t n_rules;
        /* [egress] reads = "listed" (the configuration's, set by whoever loads the policy; false after a
         * parse): a read, and a tunnel, need a rule naming the host. */
        bool reads_listed;
} EgressPolicy;

/* Parses policy text: [[write]] tables with exactly the keys name, why, hosts, methods, paths, and
 * [[read]] tables with exactly name, why and hosts.
 * Unknown keys, a bare string where a list belongs, an empty list, a wildcard host, GET among the
 * methods, a path not starting with '/': -EINVAL with *reterr naming the rule (by name, or by its
 * number when it has none) and the line. The full list of refusals is in agentic-job-policy(5). */
int egress_policy_parse(const char *data, size_t size, EgressPolicy **ret_policy, AjError *reterr);
/* read_regular_nofollow() of path (at most EGRESS_POLICY_MAX_SIZE), then egress_policy_parse(); the
 * message is prefixed with the path. */
int egress_policy_load(const char *path, EgressPolicy **ret_policy, AjError *reterr);
void egress_policy_free(EgressPolicy *p);
static inline void egress_policy_freep(EgressPolicy **p)
{
        egress_policy_free(*p);
}

/* The threat list: host names refused with their subdomains, for reads too. A list built by hand (as the
 * tests do) must keep the promises of a loaded one, or a host on it may be missed. */
typedef struct EgressThreats {
        const char *const *hosts; /* n names, sorted by strcmp(), unique, as egress_host_normalize() writes
                                   * them */
        size_t n;
} EgressThreats;

/* The optional threat list: one host name per line; blank lines and '#' comments skipped; each name
 * normalized; returned sorted and without duplicates, in one allocation that egress_threats_free() frees.
 * -ENOENT when the file is absent (the caller decides what that means); -EINVAL with the line for a
 * malformed name. */
int egress_threats_load(const char *path, EgressThreats **ret_threats, AjError *reterr);
/* The same for text in memory (at most EGRESS_THREATS_MAX_SIZE bytes); the message names the line. */
int egress_threats_parse(const char *data, size_t size, EgressThreats **ret_threats, AjError *reterr);
/* Only for what egress_threats_load() or egress_threats_parse() returned. */
void egress_threats_free(EgressThreats *t);
static inline void egress_threats_freep(EgressThreats **t)
{
        egress_threats_free(*t);
}

/* One request as the proxy (or an operator) sees it. Strings are as received; NULL means absent. */
typedef struct EgressRequest {
        const char *method;      /* e.g. "GET", "POST", "CONNECT" */
        const char *host;        /* the host connected to: CONNECT target, or the URL's host */
        const char *host_header; /* the Host header; NULL when absent */
        const char *sni;         /* the TLS server name; NULL when not TLS or not sent */
        const char *path;        /* the request target's path; a query string is ignored; NULL on CONNECT */
        bool has_body;           /* Content-Length other than 0, or any Transfer-Encoding */
        bool upgrade;            /* an Upgrade header (WebSocket): decided as method "WEBSOCKET" */
        unsigned port;           /* the port connected to; 0 when unknown. Only a CONNECT needs it (here or
                                  * as host's ":port"): tunnels go to port 443 alone */
        const char *url_host;    /* inside a tunnel: the host the request's URL names (its absolute form,
                                  * or the Host header in the origin form); NULL outside a tunnel */
        unsigned url_port;       /* inside a tunnel: the URL's port (here or as url_host's ":port") */
        const char *scheme;      /* the URL's scheme as the proxy names it ("http", "https", "ftp", ...);
                                  * NULL when the caller knows it is http or https. Ignored on a CONNECT */
} EgressRequest;

typedef enum EgressVerdict {
        EGRESS_ALLOW,
        EGRESS_DENY,
} EgressVerdict;

typedef struct EgressDecision {
        EgressVerdict verdict;
        const EgressRule *rule; /* the rule that allowed a write; NULL otherwise */
        char reason[256];       /* one line, always set: "read", the rule's name, or why it was refused */
} EgressDecision;

/* The decision. threats may be NULL: no threat list (a lookup in one is a binary search per label of the
 * host). policy may be NULL: no rules, reads of any host. Never fails: anything malformed is refused, with
 * its reason. In order: a malformed method or host; a CONNECT inside a tunnel (it has a TLS server name or a
 * URL host: squid would relay its bytes to the origin unread); a scheme other than http and https; a control
 * byte encoded in the path (%00-%1F, %7F); the threat list; a local destination (localhost, the proxy's own
 * name, the addresses of local_ranges_contain(): loopback, private, link-local with cloud metadata among
 * them, unique local, ... also as IPv4-mapped, IPv4-compatible or NAT64 (64:ff9b::/96) IPv6 addresses, and
 * all of 64:ff9b:1::/48); a Host header or TLS server name other than the host connected
 * to; inside a tunnel, a URL naming another host or port than the tunnel's; then a CONNECT is allowed
 * ("tunnel") to port 443 only, and with reads_listed only to a host some rule of either kind names; a read
 * is allowed ("read"), or with reads_listed only where a [[read]] rule names its host (reason: the rule's
 * name); anything else needs a [[write]] rule (reason: its name). */
void egress_decide(const EgressPolicy *policy, const EgressThreats *threats, const EgressRequest *request,
                   EgressDecision *ret_decision);

const char *egress_verdict_to_string(EgressVerdict v); /* "allow", "deny" */

/* A URL as an operator (`policy test`) or the shared corpus of cases writes it: http:// or https://, a
 * host (an IPv6 address in brackets), an optional port, a path. No user information. */
typedef struct EgressUrl {
        bool https;
        unsigned port;              /* as written, else 443 or 80 */
        char host[EGRESS_HOST_MAX]; /* normalized */
        char *path;                 /* owned; up to '?' or '#' (never part of a decision); "/" when empty */
} EgressUrl;

/* -EINVAL with a one-line message for anything else; -ENOMEM. */
int egress_url_parse(const char *url, EgressUrl *ret_url, AjError *reterr);
void egress_url_done(EgressUrl *u);

/* A client's request through the proxy, as `policy test` and the shared corpus give it. */
typedef struct EgressClientRequest {
        const char *method;
        const EgressUrl *url;
        const char *authority;   /* https only: the request inside the tunnel is in absolute form and names
                                  * this HOST[:PORT] (port 443 when none is written), with no Host header
                                  * unless host_header is given, which squid rewrites to HOST[:PORT];
                                  * NULL: the origin form, the URL's host */
        const char *host_header; /* NULL: the URL's host */
        const char *sni;         /* https only; NULL: the URL's host, or none when that is an IP address */
        bool has_body;
        bool upgrade;
} EgressClientRequest;

/* What the proxy decides for a client's request, step by step as it sees it: an https URL (or the method
 * CONNECT) is first a tunnel, CONNECT host:port, decided before TLS begins; if that is allowed, the
 * request inside it is decided. An http URL is one request, decided whole. The decision is the last
 * step's. */
void egress_decide_client(const EgressPolicy *policy, const EgressThreats *threats,
                          const EgressClientRequest *request, EgressDecision *ret_decision);

/* Lower case, no trailing dot, no ":port", no IPv6 brackets, without the spaces and tabs around it (as
 * around a header's value). An IP address takes its canonical form, so that every spelling of one address
 * compares equal: IPv4 as a dotted quad (also from the forms inet_aton() reads, such as 127.1 or
 * 0x7f000001, which resolvers accept too), IPv6 as inet_ntop() writes it. -EINVAL for an empty or
 * malformed name: a byte other than a-z, 0-9, '-', '_' and '.' (so no control character, space, '/', '@',
 * '*' or '%'), an empty label or one over 63 bytes, a bad port, more than EGRESS_HOST_MAX - 1 bytes. */
int egress_host_normalize(const char *host, char ret_host[static EGRESS_HOST_MAX]);

/* Whether path (its query string ignored) matches glob: '*' matches within one '/'-separated segment,
 * '**' matches across segments (zero or more). */
bool egress_path_match(const char *glob, const char *path);
