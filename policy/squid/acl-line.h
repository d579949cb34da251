/* SPDX-License-Identifier: MIT */
/* One line of squid's external ACL protocol, as squid.conf.in's external_acl_type asks for it, turned into
 * one decision of egress_decide(), the answer squid reads back and the line for the egress log. Pure: the
 * program (egress-acl.c) does the reading and writing, so this part is unit-tested and fuzzed. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "egress-policy.h"

/* Longer lines are refused (ERR) and the rest of such a line is skipped. squid sends the request path
 * and headers here, each at most a few KiB under its own limits. */
#define ACL_LINE_MAX (64 * 1024)

/* The fields after the channel ID, in the order of the FORMAT in squid.conf.in:
 * %>rm %>rd %>rP %>rp %{Host}>h %ssl::>sni %{Content-Length}>h %{Transfer-Encoding}>h %{Upgrade}>h
 * %{clt_conn_tag}note %>rs, and the %DATA squid appends. */
typedef enum AclField {
        ACL_METHOD,
        ACL_HOST, /* the CONNECT target; else the URL's host: on a bumped request in origin form, the Host
                   * header's */
        ACL_PORT,
        ACL_PATH, /* with the query string, %-encoded as sent; absent on CONNECT */
        ACL_HOST_HEADER,
        ACL_SNI,
        ACL_CONTENT_LENGTH,
        ACL_TRANSFER_ENCODING,
        ACL_UPGRADE,
        ACL_CONN_TAG, /* what this helper answered as clt_conn_tag to the connection's CONNECT */
        ACL_SCHEME,   /* the URL's scheme, lower case: "http", "https" inside a tunnel, "authority_form" on
                       * a CONNECT, "ftp", "whois", "urn", ... */
        ACL_DATA,     /* the acl line's arguments, which squid appends: absent, ACL_DATA_POLICY, or one of
                       * the others for a request squid refuses itself */
        ACL_FIELDS,
} AclField;

/* The arguments of the acl lines in squid.conf.in that ask about a request squid refuses by its own ACLs,
 * so that the refusal is decided and logged here too: a destination whose resolved address is local
 * (local_dst), the cache manager (manager), a CONNECT inside a bumped tunnel (inner), a scheme other
 * than http and https (scheme) and the key broker's placeholder (placeholder). The decision's refusal keeps
 * its reason; a request it would allow is refused with squid's. */
#define ACL_DATA_LOCAL   "local"
#define ACL_DATA_MANAGER "manager"
#define ACL_DATA_INNER   "inner"
#define ACL_DATA_SCHEME  "scheme"
/* The key broker's placeholder (ajb- and 48 hexadecimal digits) in a key header or the URL: worth nothing
 * but to the broker, which never sends it on, so a request carrying it goes nowhere, whatever its host. */
#define ACL_DATA_PLACEHOLDER "placeholder"
/* The policy's decision before squid resolves the name for local_dst: a refusal is answered and logged as
 * always, an allowed request is answered without a log line (the plain line, asked last, logs it), so
 * that each request has one decision in the log and a name the policy refuses is never resolved. */
#define ACL_DATA_POLICY "policy"

typedef struct AclLine {
        char channel[21];          /* the concurrency channel ID, echoed back; "" when there is none */
        const char *f[ACL_FIELDS]; /* pointing into the line; NULL for "-" (absent) */
} AclLine;

/* Splits line (len bytes and a NUL, no newline; modified in place) into the channel ID and the fields, and
 * URL-unescapes each but the path, which stays %-encoded as on the wire. -EINVAL with *reterr for anything
 * but exactly a decimal ID and ACL_FIELDS non-empty fields separated by single spaces, each escape "%XX"
 * with hex digits and none of them "%00". The channel is set whenever the line starts with one, also when
 * the rest is refused. */
int acl_line_parse(char *line, size_t len, AclLine *ret, AjError *reterr);

/* The request egress_decide() is asked about: the CONNECT itself, or a request inside a bumped connection
 * (then the host connected to is the one in the connection tag, ret_host holds it, and the URL's host and
 * port are url_host and url_port), or a plain HTTP request. -EINVAL with *reterr for a line that cannot be a
 * request squid sends. */
int acl_request_build(const AclLine *l, EgressRequest *ret, char ret_host[static EGRESS_HOST_MAX],
                      AjError *reterr);

/* What one line comes to. Each string ends in a newline and is malloc()ed. */
typedef struct AclOutcome {
        char *answer; /* for squid: "ID OK", or "ID ERR message=..."; on a CONNECT with the connection tag */
        char *log;    /* the log line: one JSON object; "" when there is none (ACL_DATA_POLICY, allowed) */
        char *unlogged; /* the answer to give instead when the log line cannot be written: a refusal */
} AclOutcome;

/* Everything for one line (len bytes and a NUL): parse, build, decide, answer, log. truncated: the line was
 * longer than ACL_LINE_MAX and this is its start (refused). Never fails but for memory: -ENOMEM. */
int acl_handle_line(const EgressPolicy *policy, const EgressThreats *threats, char *line, size_t len,
                    bool truncated, AclOutcome *ret);
void acl_outcome_done(AclOutcome *o);
