/* SPDX-License-Identifier: MIT */
/* run's key broker (agentic-job-profiles(5), API): the model's key stays in the runner's memory. The agent
 * holds a per-run placeholder and an http:// address on loopback inside its confinement; the broker takes
 * a request only with the placeholder in the API's key header and only for the API's paths, puts the key
 * in its place and sends the request upstream (libcurl, through the egress proxy, so that it is decided
 * and logged like any other request), streaming the answer back as it arrives. The agent's side of HTTP is
 * libmicrohttpd's: a parser of requests written by a hostile peer is not one to write again.
 *
 * The broker is a process of its own, forked by the runner side: it lives as long as the run and dies with
 * it (PR_SET_PDEATHSIG), is not dumpable, locks the key's pages and wipes them when it ends. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "price.h"

/* The largest request body the broker takes (a model request with a long context is a few MiB), and the
 * most all bodies being read hold together: the agent cannot make the runner's side hold more. */
#define BROKER_BODY_MAX   (32u << 20)
#define BROKER_BODIES_MAX (96u << 20)
/* The most connections served at once; more wait in the listen queue. */
#define BROKER_CONNECTIONS_MAX 64
/* An answer buffered towards a slow agent before upstream is paused. */
#define BROKER_BUFFER_MAX (4u << 20)
/* The most read from upstream in one step (the agent is written 64 KiB at a time). */
#define BROKER_PIECE_MAX (256u << 10)

typedef struct BrokerSettings {
        const char *upstream;    /* the API's origin: "https://api.anthropic.com" (scheme://host[:port]) */
        const char *key_header;  /* the header that carries the key: "x-api-key", or "authorization" (then
                                    the value is "Bearer " and the key) */
        const char *key;         /* the model's key */
        const char *placeholder; /* what the agent sends in the key's place */
        const char *proxy;       /* the egress proxy, "http://127.0.0.1:3128"; NULL: none (the unit tests) */
        const char *ca_file;     /* the certificates upstream's TLS is verified with (the proxy's authority
                                    when it inspects TLS); NULL: the system's */
        char *const *paths;      /* the API's path prefixes ("/v1/"), NULL-terminated, at least one */
        unsigned max_requests;   /* requests forwarded at most; 0: no bound */
        uint64_t budget;         /* picodollars the answers may cost; 0: no bound (then prices only count) */
        const Price *prices;     /* what each model's tokens cost, n_prices of them (price.h) */
        size_t n_prices;
} BrokerSettings;

/* Checks the settings: an http or https origin with no path, a header the broker knows, a key and a
 * placeholder of printable ASCII, path prefixes that start with '/', prices where there is a budget.
 * 0 or -EINVAL. */
int broker_settings_check(const BrokerSettings *s);

typedef struct Broker {
        pid_t pid;
        int report_fd; /* where it says, as it ends, what it did */
} Broker;

typedef struct BrokerReport {
        unsigned forwarded;                   /* requests sent upstream */
        unsigned refused;                     /* requests refused: wrong placeholder, path, method, size */
        unsigned over;                        /* requests refused because max_requests were forwarded */
        uint64_t input_tokens, output_tokens; /* what the answers said they used (broker-usage.h) */
        unsigned over_budget; /* requests refused because the budget was spent (or could not be kept) */
        unsigned unpriced;    /* requests forwarded whose cost is not known: their model has no price, or
                                 their answer stated no usage */
        uint64_t spent;       /* picodollars the priced answers cost */
} BrokerReport;

/* Forks the broker, serving connections accepted on listen_fd (a listening stream socket; the caller
 * keeps its copy, to close). Returns once the broker runs. 0 or -errno. */
int broker_start(const BrokerSettings *s, int listen_fd, Broker *ret);

/* Ends the broker (TERM: it wipes the key, says what it did and exits; KILL after two seconds) and waits
 * for it. 0 with *ret filled, or -errno when it did not say (-EPROTO). */
int broker_stop(Broker *b, BrokerReport *ret);

/* The answer to one request's key header, constant-time: true when value is the placeholder as the
 * settings' header carries it. */
bool broker_key_matches(const BrokerSettings *s, const char *value);

/* Whether target (a request's target as sent: path and query) is one the broker forwards: absolute, in
 * one of the API's prefixes, no dot segment, no percent-encoding or backslash in the path, no byte
 * outside printable ASCII. */
bool broker_target_allowed(const BrokerSettings *s, const char *target);
