/* SPDX-License-Identifier: MIT */
/* run's key broker: see broker.h. One thread per agent connection (libmicrohttpd's); each request that
 * passes is one libcurl transfer driven from that thread, its answer handed to the agent as it arrives. */
#include "broker.h"
#include "broker-usage.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <limits.h>
#include <microhttpd.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "macro.h"
#include "parse.h"
#include "write-all.h"

/* How long the broker may take to start (libmicrohttpd's threads, libcurl's set-up): it waits on nothing. */
#define BROKER_START_MS 5000
/* The report's line: eight numbers of at most 20 digits and their names. */
#define BROKER_REPORT_MAX 320

typedef struct BrokerState {
        const BrokerSettings *s;
        char *key_line; /* "x-api-key: KEY": the header upstream gets, locked in memory */
        size_t key_line_size;
        atomic_uint forwarded, refused, over;
        atomic_size_t bodies; /* bytes of request bodies held now, at most BROKER_BODIES_MAX */
        _Atomic uint64_t input_tokens, output_tokens; /* what the answers said they used, so far */
        _Atomic uint64_t spent;                       /* what the priced answers cost, so far */
        atomic_uint over_budget, unpriced;
        atomic_bool usage_missing; /* a priced answer stated no usage: a budget cannot be kept */
} BrokerState;

/* One request of the agent's, from its first line to its last byte of answer. */
typedef struct Request {
        BrokerState *b;
        char *target;            /* as sent: path and query */
        bool started;            /* its headers were looked at */
        unsigned status_refused; /* non-zero: answer this refusal once the body is in */
        const char *why;
        char *body;
        size_t body_size, body_cap;
        /* the upstream transfer */
        CURL *easy;
        CURLM *multi;
        struct curl_slist *headers_out;
        char errbuf[CURL_ERROR_SIZE];
        long status;
        char **headers_in; /* upstream's answer headers, "Name: value" */
        size_t n_headers_in;
        bool headers_done, finished, paused;
        CURLcode result;
        char *buf;
        size_t buf_size, buf_start, buf_end;
        BrokerUsage usage;  /* what this answer says it used */
        const Price *price; /* what its model's tokens cost; NULL: not known (or a GET) */
} Request;

/* Headers that describe one hop, or that the broker sets itself: never passed on either way. */
static const char *const hop_headers[] = {
        "host",
        "connection",
        "keep-alive",
        "proxy-authorization",
        "proxy-authenticate",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "content-length",
        "expect",
        "accept-encoding",
        "x-api-key",
        "authorization",
};

static bool is_hop_header(const char *name, size_t size)
{
        for (size_t i = 0; i < ELEMENTSOF(hop_headers); i++)
                if (strlen(hop_headers[i]) == size && strncasecmp(hop_headers[i], name, size) == 0)
                        return true;
        return false;
}

static bool printable_ascii(const char *s)
{
        for (; *s; s++)
                if ((unsigned char)*s < 0x21 || (unsigned char)*s > 0x7e)
                        return false;
        return true;
}

int broker_settings_check(const BrokerSettings *s)
{
        const char *host;

        if (!s->upstream || !s->key_header || !s->key || !s->placeholder || !s->paths || !s->paths[0])
                return -EINVAL;
        if (strncmp(s->upstream, "https://", 8) == 0)
                host = s->upstream + 8;
        else if (strncmp(s->upstream, "http://", 7) == 0)
                host = s->upstream + 7;
        else
                return -EINVAL;
        /* An origin: a host and perhaps a port, no path, no user, nothing curl would read as options. */
        if (!*host || strpbrk(host, "/?#@\\") || !printable_ascii(host))
                return -EINVAL;
        if (strcasecmp(s->key_header, "x-api-key") != 0 && strcasecmp(s->key_header, "authorization") != 0)
                return -EINVAL;
        if (!*s->key || !printable_ascii(s->key) || strlen(s->placeholder) < 16 ||
            !printable_ascii(s->placeholder))
                return -EINVAL;
        for (char *const *p = s->paths; *p; p++)
                if ((*p)[0] != '/' || !printable_ascii(*p) || strstr(*p, "..") || strpbrk(*p, "%\\?#"))
                        return -EINVAL;
        if (s->budget && (!s->prices || s->n_prices == 0))
                return -EINVAL;
        return 0;
}

/* Compares all of a and all of b whatever they hold, so that the time taken tells nothing of where they
 * differ (only of their lengths, which the placeholder's format makes public anyway). */
static bool equal_constant_time(const char *a, const char *b)
{
        size_t na = strlen(a), nb = strlen(b);
        unsigned char d = na != nb;

        for (size_t i = 0; i < na; i++)
                d |= (unsigned char)(a[i] ^ b[i % (nb ? nb : 1)]);
        return d == 0;
}

bool broker_key_matches(const BrokerSettings *s, const char *value)
{
        if (!value)
                return false;
        if (strcasecmp(s->key_header, "authorization") == 0) {
                if (strncasecmp(value, "Bearer ", 7) != 0)
                        return false;
                value += 7;
        }
        return equal_constant_time(value, s->placeholder);
}

bool broker_target_allowed(const BrokerSettings *s, const char *target)
{
        size_t path_size = strcspn(target, "?");
        bool prefixed = false;

        if (target[0] != '/' || !printable_ascii(target) || strchr(target, '#'))
                return false;
        /* In the path, nothing a server could read two ways: no escapes, no backslash, no dot segment. */
        for (size_t i = 0; i < path_size; i++) {
                if (target[i] == '%' || target[i] == '\\')
                        return false;
                if (target[i] == '/' && target[i + 1] == '.' &&
                    (target[i + 2] == '/' || target[i + 2] == '?' || target[i + 2] == '\0' ||
                     (target[i + 2] == '.' &&
                      (target[i + 3] == '/' || target[i + 3] == '?' || target[i + 3] == '\0'))))
                        return false;
        }
        for (char *const *p = s->paths; *p; p++)
                if (strncmp(target, *p, strlen(*p)) == 0 && strlen(*p) <= path_size)
                        prefixed = true;
        return prefixed;
}

/* The agent's answer to a refusal: an error in the shape the model APIs give theirs, so the agent's own
 * client reports it as it would any other. */
static enum MHD_Result answer_refusal(struct MHD_Connection *c, unsigned status, const char *why)
{
        char body[512];
        struct MHD_Response *r;
        enum MHD_Result ret;
        int n = snprintf(
                body, sizeof(body),
                "{\"type\":\"error\",\"error\":{\"type\":\"agentic_job_broker\",\"message\":\"%s\"}}\n",
                why);

        r = MHD_create_response_from_buffer((size_t)n, body, MHD_RESPMEM_MUST_COPY);
        if (!r)
                return MHD_NO;
        (void)MHD_add_response_header(r, "Content-Type", "application/json");
        ret = MHD_queue_response(c, status, r);
        MHD_destroy_response(r);
        return ret;
}

/* A priced answer that came whole and stated no usage leaves its cost unknown; under a budget, no later
 * request is forwarded (the budget could not be kept). */
static void request_account(Request *q)
{
        if (q->price && q->finished && q->result == CURLE_OK && q->status >= 200 && q->status < 300 &&
            q->usage.input == 0 && q->usage.output == 0) {
                atomic_fetch_add(&q->b->unpriced, 1);
                atomic_store(&q->b->usage_missing, true);
        }
}

static void request_free(Request *q)
{
        if (!q)
                return;
        request_account(q);
        if (q->multi && q->easy)
                (void)curl_multi_remove_handle(q->multi, q->easy);
        if (q->easy)
                curl_easy_cleanup(q->easy);
        if (q->multi)
                (void)curl_multi_cleanup(q->multi);
        curl_slist_free_all(q->headers_out);
        atomic_fetch_sub(&q->b->bodies, q->body_size);
        for (size_t i = 0; i < q->n_headers_in; i++)
                free(q->headers_in[i]);
        free(q->headers_in);
        free(q->target);
        free(q->body);
        free(q->buf);
        free(q);
}

static void *request_new(void *cls, const char *uri, struct MHD_Connection *c)
{
        Request *q = calloc(1, sizeof(*q));

        (void)c;
        if (!q)
                return NULL;
        q->b = cls;
        q->target = strdup(uri);
        if (!q->target) {
                free(q);
                return NULL;
        }
        return q;
}

static void request_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                              enum MHD_RequestTerminationCode how)
{
        (void)cls, (void)c, (void)how;
        request_free(*con_cls);
        *con_cls = NULL;
}

static size_t upstream_header(char *data, size_t size, size_t n, void *userdata)
{
        Request *q = userdata;
        size_t len = size * n, name;
        char **grown, *line;

        if (len >= 5 && strncmp(data, "HTTP/", 5) == 0) {
                /* A new answer (after an interim one): its headers replace what came before. */
                for (size_t i = 0; i < q->n_headers_in; i++)
                        free(q->headers_in[i]);
                q->n_headers_in = 0;
                q->headers_done = false;
                return len;
        }
        if (len <= 2 && (data[0] == '\r' || data[0] == '\n')) {
                (void)curl_easy_getinfo(q->easy, CURLINFO_RESPONSE_CODE, &q->status);
                /* An interim answer (100 Continue) ends in an empty line too; its real one follows. */
                if (q->status >= 200)
                        q->headers_done = true;
                return len;
        }
        while (len > 0 && (data[len - 1] == '\r' || data[len - 1] == '\n'))
                len--;
        name = strcspn(data, ":");
        if (name >= len || is_hop_header(data, name) || q->n_headers_in >= 128)
                return size * n;
        grown = realloc(q->headers_in, (q->n_headers_in + 1) * sizeof(*grown));
        if (!grown)
                return 0;
        q->headers_in = grown;
        line = strndup(data, len);
        if (!line)
                return 0;
        q->headers_in[q->n_headers_in++] = line;
        return size * n;
}

static size_t upstream_body(char *data, size_t size, size_t n, void *userdata)
{
        Request *q = userdata;
        size_t len = size * n;

        if (q->buf_end - q->buf_start + len > BROKER_BUFFER_MAX) {
                q->paused = true;
                return CURL_WRITEFUNC_PAUSE;
        }
        if (q->buf_end + len > q->buf_size) {
                size_t kept = q->buf_end - q->buf_start, want = kept + len;
                char *grown;

                if (kept > 0)
                        memmove(q->buf, q->buf + q->buf_start, kept);
                q->buf_start = 0;
                q->buf_end = kept;
                if (want > q->buf_size) {
                        grown = realloc(q->buf, want);
                        if (!grown)
                                return 0;
                        q->buf = grown;
                        q->buf_size = want;
                }
        }
        memcpy(q->buf + q->buf_end, data, len);
        q->buf_end += len;
        /* Counted as it passes, each increase at once: a run stopped mid-answer has what was said. */
        {
                uint64_t in = q->usage.input, out = q->usage.output;

                broker_usage_feed(&q->usage, data, len);
                atomic_fetch_add(&q->b->input_tokens, q->usage.input - in);
                atomic_fetch_add(&q->b->output_tokens, q->usage.output - out);
                if (q->price) {
                        uint64_t cost = price_cost(q->price, q->usage.input - in, q->usage.output - out);
                        uint64_t was = atomic_load(&q->b->spent);

                        while (!atomic_compare_exchange_weak(&q->b->spent, &was, amount_add(was, cost)))
                                ;
                }
        }
        return len;
}

/* Moves the transfer on: waits for the network at most timeout_ms, then lets curl work. */
static void upstream_pump(Request *q, int timeout_ms)
{
        int running = 0;
        CURLMsg *m;
        int left;

        (void)curl_multi_poll(q->multi, NULL, 0, timeout_ms, NULL);
        (void)curl_multi_perform(q->multi, &running);
        while ((m = curl_multi_info_read(q->multi, &left)))
                if (m->msg == CURLMSG_DONE) {
                        q->result = m->data.result;
                        q->finished = true;
                }
        if (running == 0 && !q->finished) {
                q->result = CURLE_RECV_ERROR;
                q->finished = true;
        }
}

static enum MHD_Result add_header_out(void *cls, enum MHD_ValueKind kind, const char *name,
                                      const char *value)
{
        Request *q = cls;
        _cleanup_free_ char *line = NULL;
        struct curl_slist *l;

        (void)kind;
        if (is_hop_header(name, strlen(name)))
                return MHD_YES;
        if (asprintf(&line, "%s: %s", name, value ? value : "") < 0)
                return MHD_NO;
        l = curl_slist_append(q->headers_out, line);
        if (!l)
                return MHD_NO;
        q->headers_out = l;
        return MHD_YES;
}

static int upstream_start(Request *q, struct MHD_Connection *c, const char *method)
{
        const BrokerSettings *s = q->b->s;
        _cleanup_free_ char *url = NULL;
        struct curl_slist *l;
        bool https = strncmp(s->upstream, "https://", 8) == 0;

        if (asprintf(&url, "%s%s", s->upstream, q->target) < 0)
                return -ENOMEM;
        (void)MHD_get_connection_values(c, MHD_HEADER_KIND, add_header_out, q);
        /* No Expect: 100-continue round trip; the key, from locked memory. */
        if (!(l = curl_slist_append(q->headers_out, "Expect:")))
                return -ENOMEM;
        q->headers_out = l;
        if (!(l = curl_slist_append(q->headers_out, q->b->key_line)))
                return -ENOMEM;
        q->headers_out = l;

        q->easy = curl_easy_init();
        q->multi = curl_multi_init();
        if (!q->easy || !q->multi)
                return -ENOMEM;
        if (curl_easy_setopt(q->easy, CURLOPT_URL, url) != CURLE_OK ||
            curl_easy_setopt(q->easy, CURLOPT_PROTOCOLS_STR, https ? "https" : "http") != CURLE_OK ||
            /* "" and not NULL: NULL would let curl take a proxy from the environment. */
            curl_easy_setopt(q->easy, CURLOPT_PROXY, s->proxy ? s->proxy : "") != CURLE_OK ||
            curl_easy_setopt(q->easy, CURLOPT_SUPPRESS_CONNECT_HEADERS, 1L) != CURLE_OK ||
            curl_easy_setopt(q->easy, CURLOPT_HTTPHEADER, q->headers_out) != CURLE_OK ||
            curl_easy_setopt(q->easy, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1) != CURLE_OK ||
            curl_easy_setopt(q->easy, CURLOPT_FOLLOWLOCATION, 0L) != CURLE_OK ||
            curl_easy_setopt(q->easy, CURLOPT_NOSIGNAL, 1L) != CURLE_OK ||
            curl_easy_setopt(q->easy, CURLOPT_CONNECTTIMEOUT, 30L) != CURLE_OK ||
            /* An answer that streams may pause between events; one silent for ten minutes is dead. */
            curl_easy_setopt(q->easy, CURLOPT_LOW_SPEED_LIMIT, 1L) != CURLE_OK ||
            curl_easy_setopt(q->easy, CURLOPT_LOW_SPEED_TIME, 600L) != CURLE_OK ||
            /* Large reads upstream: a long answer moves in few steps. */
            curl_easy_setopt(q->easy, CURLOPT_BUFFERSIZE, (long)BROKER_PIECE_MAX) != CURLE_OK ||
            curl_easy_setopt(q->easy, CURLOPT_HEADERFUNCTION, upstream_header) != CURLE_OK ||
            curl_easy_setopt(q->easy, CURLOPT_HEADERDATA, q) != CURLE_OK ||
            curl_easy_setopt(q->easy, CURLOPT_WRITEFUNCTION, upstream_body) != CURLE_OK ||
            curl_easy_setopt(q->easy, CURLOPT_WRITEDATA, q) != CURLE_OK ||
            curl_easy_setopt(q->easy, CURLOPT_ERRORBUFFER, q->errbuf) != CURLE_OK)
                return -EINVAL;
        if (s->ca_file && curl_easy_setopt(q->easy, CURLOPT_CAINFO, s->ca_file) != CURLE_OK)
                return -EINVAL;
        if (strcmp(method, "POST") == 0 &&
            (curl_easy_setopt(q->easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)q->body_size) != CURLE_OK ||
             curl_easy_setopt(q->easy, CURLOPT_POSTFIELDS, q->body ? q->body : "") != CURLE_OK))
                return -EINVAL;
        if (curl_multi_add_handle(q->multi, q->easy) != CURLM_OK)
                return -EINVAL;
        return 0;
}

/* libmicrohttpd asks for the next piece of the answer: hand over what upstream sent, waiting for more
 * (this connection's thread is this request's alone). */
static ssize_t answer_read(void *cls, uint64_t pos, char *out, size_t max)
{
        Request *q = cls;
        size_t n;

        (void)pos;
        while (q->buf_end == q->buf_start && !q->finished)
                upstream_pump(q, 1000);
        if (q->buf_end == q->buf_start)
                /* An answer cut short must not look whole to the agent: the connection is closed. */
                return q->result == CURLE_OK ? MHD_CONTENT_READER_END_OF_STREAM
                                             : MHD_CONTENT_READER_END_WITH_ERROR;
        n = q->buf_end - q->buf_start;
        if (n > max)
                n = max;
        memcpy(out, q->buf + q->buf_start, n);
        q->buf_start += n;
        if (q->paused && q->buf_end - q->buf_start < BROKER_BUFFER_MAX / 2) {
                q->paused = false;
                (void)curl_easy_pause(q->easy, CURLPAUSE_CONT);
        }
        return (ssize_t)n;
}

static enum MHD_Result answer_upstream(Request *q, struct MHD_Connection *c, const char *method)
{
        struct MHD_Response *r;
        enum MHD_Result ret;

        if (upstream_start(q, c, method) < 0)
                return answer_refusal(c, MHD_HTTP_INTERNAL_SERVER_ERROR,
                                      "the broker could not start the request");
        while (!q->headers_done && !q->finished)
                upstream_pump(q, 1000);
        if (!q->headers_done)
                return answer_refusal(c, MHD_HTTP_BAD_GATEWAY,
                                      "the API could not be reached through the egress proxy");
        r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 65536, answer_read, q, NULL);
        if (!r)
                return MHD_NO;
        for (size_t i = 0; i < q->n_headers_in; i++) {
                char *colon = strchr(q->headers_in[i], ':');
                const char *value = colon + 1;

                *colon = '\0';
                value += strspn(value, " \t");
                (void)MHD_add_response_header(r, q->headers_in[i], value);
                *colon = ':';
        }
        ret = MHD_queue_response(c, (unsigned)q->status, r);
        MHD_destroy_response(r);
        return ret;
}

/* jansson's allocations in the broker, bounded: a body the agent wrote is read into a tree many times its
 * size when it holds many small values (a 32 MiB array of zeros is some 700 MiB of json_t), so one parse
 * at a time may allocate at most BROKER_JSON_FACTOR times the body and a MiB, and fails past that. */
#define BROKER_JSON_FACTOR 8
static pthread_mutex_t json_lock = PTHREAD_MUTEX_INITIALIZER;
static size_t json_left; /* bytes the parse under way may still allocate; under json_lock */

static void *json_malloc_bounded(size_t n)
{
        if (n > json_left)
                return NULL;
        json_left -= n;
        return malloc(n);
}

/* The price of the model a request body names ({"model": "..."}, as both APIs have it); NULL when the
 * body is not a JSON object naming a model, the model has none, or reading it would take more memory
 * than the bound above: such a body names no model the broker knows. */
static const Price *request_price(const BrokerSettings *s, const char *body, size_t size)
{
        const Price *p = NULL;
        json_t *root;

        if (!body)
                return NULL;
        (void)pthread_mutex_lock(&json_lock);
        json_left = BROKER_JSON_FACTOR * size + (1u << 20);
        root = json_loadb(body, size, JSON_REJECT_DUPLICATES, NULL);
        if (json_is_string(json_object_get(root, "model")))
                p = price_find(s->prices, s->n_prices, json_string_value(json_object_get(root, "model")));
        json_decref(root);
        (void)pthread_mutex_unlock(&json_lock);
        return p;
}

static enum MHD_Result request_step(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                    const char *version, const char *upload_data, size_t *upload_data_size,
                                    void **con_cls)
{
        BrokerState *b = cls;
        Request *q = *con_cls;

        (void)url, (void)version;
        if (!q)
                return MHD_NO;
        if (!q->started) {
                q->started = true;
                if (strcmp(method, "POST") != 0 && strcmp(method, "GET") != 0)
                        q->status_refused = MHD_HTTP_METHOD_NOT_ALLOWED,
                        q->why = "only GET and POST are forwarded";
                else if (!broker_key_matches(
                                 b->s, MHD_lookup_connection_value(c, MHD_HEADER_KIND, b->s->key_header)))
                        q->status_refused = MHD_HTTP_UNAUTHORIZED,
                        q->why = "this run's placeholder key is not in the request";
                else if (!broker_target_allowed(b->s, q->target))
                        q->status_refused = MHD_HTTP_NOT_FOUND, q->why = "the path is not one of the API's";
                return MHD_YES;
        }
        if (*upload_data_size > 0) {
                /* The body is read whole (and dropped when refused) before the answer: a client that is
                 * answered while it still sends may see its connection reset instead of the reason. */
                if (!q->status_refused && q->body_size + *upload_data_size > BROKER_BODY_MAX)
                        q->status_refused = MHD_HTTP_CONTENT_TOO_LARGE,
                        q->why = "the request body is too large";
                /* Counted before it is held: two requests cannot both pass the bound. */
                if (!q->status_refused &&
                    atomic_fetch_add(&b->bodies, *upload_data_size) + *upload_data_size >
                            BROKER_BODIES_MAX) {
                        atomic_fetch_sub(&b->bodies, *upload_data_size);
                        q->status_refused = MHD_HTTP_SERVICE_UNAVAILABLE,
                        q->why = "the broker holds too many request bodies at once";
                }
                if (!q->status_refused && q->body_size + *upload_data_size > q->body_cap) {
                        /* Doubled as it grows: a body of many pieces is not copied once per piece. */
                        size_t cap = q->body_cap ? q->body_cap : 64 * 1024;
                        char *grown;

                        while (cap < q->body_size + *upload_data_size)
                                cap *= 2;
                        grown = realloc(q->body, cap);
                        if (!grown) {
                                atomic_fetch_sub(&b->bodies, *upload_data_size);
                                return MHD_NO;
                        }
                        q->body = grown;
                        q->body_cap = cap;
                }
                if (!q->status_refused) {
                        memcpy(q->body + q->body_size, upload_data, *upload_data_size);
                        q->body_size += *upload_data_size;
                }
                *upload_data_size = 0;
                return MHD_YES;
        }
        if (q->status_refused) {
                atomic_fetch_add(&b->refused, 1);
                return answer_refusal(c, q->status_refused, q->why);
        }
        if (strcmp(method, "POST") == 0 && b->s->n_prices > 0) {
                q->price = request_price(b->s, q->body, q->body_size);
                if (!q->price && !b->s->budget)
                        atomic_fetch_add(&b->unpriced, 1);
        }
        if (b->s->budget) {
                const char *why = NULL;

                if (strcmp(method, "POST") == 0 && !q->price) {
                        atomic_fetch_add(&b->refused, 1);
                        return answer_refusal(c, MHD_HTTP_BAD_REQUEST,
                                              "the request names no model with a price in [run.prices]: "
                                              "under a budget, only priced models are forwarded");
                }
                if (atomic_load(&b->usage_missing))
                        why = "an answer stated no usage: this run's budget cannot be kept";
                else if (atomic_load(&b->spent) >= b->s->budget)
                        why = "this run's budget was spent";
                if (why) {
                        atomic_fetch_add(&b->over_budget, 1);
                        return answer_refusal(c, MHD_HTTP_TOO_MANY_REQUESTS, why);
                }
        }
        if (b->s->max_requests && atomic_fetch_add(&b->forwarded, 1) >= b->s->max_requests) {
                atomic_fetch_sub(&b->forwarded, 1);
                atomic_fetch_add(&b->over, 1);
                return answer_refusal(c, MHD_HTTP_TOO_MANY_REQUESTS,
                                      "this run's max-requests were all used");
        }
        if (!b->s->max_requests)
                atomic_fetch_add(&b->forwarded, 1);
        return answer_upstream(q, c, method);
}

/* libmicrohttpd's own messages are for its developers; the broker's refusals go to the agent. */
static void log_nothing(void *cls, const char *fmt, va_list ap)
{
        (void)cls, (void)fmt, (void)ap;
}

static _noreturn_ void broker_main(const BrokerSettings *s, int listen_fd, int report_fd)
{
        BrokerState b = { .s = s };
        struct MHD_Daemon *d;
        sigset_t term;
        char report[BROKER_REPORT_MAX];
        int sig, n;

        (void)prctl(PR_SET_DUMPABLE, 0);
        /* Under memory pressure the broker goes before the runner's own processes (the sandbox's, at
         * 1000, before it): a run may fail, the runner must not. */
        {
                int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);

                if (fd >= 0) {
                        (void)write_all(fd, "500", 3);
                        (void)close(fd);
                }
        }
        if (asprintf(&b.key_line, "%s: %s%s",
                     strcasecmp(s->key_header, "authorization") == 0 ? "Authorization" : s->key_header,
                     strcasecmp(s->key_header, "authorization") == 0 ? "Bearer " : "", s->key) < 0)
                _exit(1);
        b.key_line_size = strlen(b.key_line);
        (void)mlock(b.key_line, b.key_line_size + 1);
        if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
                _exit(1);
        /* Before any thread: the broker's only use of jansson is request_price(). */
        json_set_alloc_funcs(json_malloc_bounded, free);
        /* The logger first: options before it would be reported by libmicrohttpd's own. */
        d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION, 0, NULL, NULL,
                             request_step, &b, MHD_OPTION_EXTERNAL_LOGGER, log_nothing, NULL,
                             MHD_OPTION_LISTEN_SOCKET, listen_fd, MHD_OPTION_URI_LOG_CALLBACK, request_new,
                             &b, MHD_OPTION_NOTIFY_COMPLETED, request_completed, &b,
                             MHD_OPTION_CONNECTION_LIMIT, (unsigned)BROKER_CONNECTIONS_MAX,
                             MHD_OPTION_CONNECTION_TIMEOUT, 900u, MHD_OPTION_EXTERNAL_LOGGER, log_nothing,
                             NULL, MHD_OPTION_END, MHD_OPTION_END);
        if (!d)
                _exit(1);
        /* Ready: the parent waits for this byte. */
        if (write_all(report_fd, "r", 1) < 0)
                _exit(1);
        /* TERM was blocked before the fork, in every thread since: this is where it is taken. */
        sigemptyset(&term);
        sigaddset(&term, SIGTERM);
        while (sigwait(&term, &sig) != 0)
                ;
        explicit_bzero(b.key_line, b.key_line_size);
        n = snprintf(report, sizeof(report),
                     "forwarded %u refused %u over %u input %" PRIu64 " output %" PRIu64
                     " over-budget %u unpriced %u spent %" PRIu64 "\n",
                     atomic_load(&b.forwarded), atomic_load(&b.refused), atomic_load(&b.over),
                     atomic_load(&b.input_tokens), atomic_load(&b.output_tokens),
                     atomic_load(&b.over_budget), atomic_load(&b.unpriced), atomic_load(&b.spent));
        (void)write_all(report_fd, report, (size_t)n);
        _exit(0);
}

int broker_start(const BrokerSettings *s, int listen_fd, Broker *ret)
{
        int pipe_fds[2], r;
        sigset_t term, old;
        pid_t parent = getpid(), pid;
        char ready;

        r = broker_settings_check(s);
        if (r < 0)
                return r;
        if (pipe2(pipe_fds, O_CLOEXEC) < 0)
                return -errno;
        /* TERM is blocked from the fork on, so that the broker's sigwait() is the one to take it. */
        sigemptyset(&term);
        sigaddset(&term, SIGTERM);
        (void)sigprocmask(SIG_BLOCK, &term, &old);
        pid = fork();
        if (pid < 0) {
                r = -errno;
                (void)sigprocmask(SIG_SETMASK, &old, NULL);
                (void)close(pipe_fds[0]);
                (void)close(pipe_fds[1]);
                return r;
        }
        if (pid == 0) {
                (void)close(pipe_fds[0]);
                if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
                        _exit(1);
                broker_main(s, listen_fd, pipe_fds[1]);
        }
        (void)sigprocmask(SIG_SETMASK, &old, NULL);
        (void)close(pipe_fds[1]);
        /* Bounded: the broker says it is ready, or exits (EOF), within what a daemon's start takes. */
        do
                r = poll(&(struct pollfd){ .fd = pipe_fds[0], .events = POLLIN }, 1, BROKER_START_MS);
        while (r < 0 && errno == EINTR);
        if (r != 1 || read(pipe_fds[0], &ready, 1) != 1) {
                (void)kill(pid, SIGKILL);
                (void)waitpid(pid, NULL, 0);
                (void)close(pipe_fds[0]);
                return -ECHILD;
        }
        *ret = (Broker){ .pid = pid, .report_fd = pipe_fds[0] };
        return 0;
}

/* "forwarded N refused N over N input N output N over-budget N unpriced N spent N\n", as broker_main()
 * writes it. */
static int report_parse(const char *report, BrokerReport *ret)
{
        static const char *const names[] = { "forwarded ", " refused ",     " over ",     " input ",
                                             " output ",   " over-budget ", " unpriced ", " spent " };
        static const bool counts[] = { true, true, true, false, false, true, true, false };
        uint64_t v[ELEMENTSOF(names)];
        const char *p = report;

        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                size_t digits;

                if (strncmp(p, names[i], strlen(names[i])) != 0)
                        return -EPROTO;
                p += strlen(names[i]);
                digits = strspn(p, "0123456789");
                if (parse_decimal(p, digits, counts[i] ? UINT_MAX : UINT64_MAX, &v[i]) < 0)
                        return -EPROTO;
                p += digits;
        }
        if (strcmp(p, "\n") != 0)
                return -EPROTO;
        *ret = (BrokerReport){ .forwarded = (unsigned)v[0],
                               .refused = (unsigned)v[1],
                               .over = (unsigned)v[2],
                               .input_tokens = v[3],
                               .output_tokens = v[4],
                               .over_budget = (unsigned)v[5],
                               .unpriced = (unsigned)v[6],
                               .spent = v[7] };
        return 0;
}

int broker_stop(Broker *b, BrokerReport *ret)
{
        char report[BROKER_REPORT_MAX] = { 0 };
        size_t got = 0;
        int status;

        if (b->pid <= 0)
                return -ESRCH;
        (void)kill(b->pid, SIGTERM);
        for (int tries = 0; tries < 200; tries++) {
                if (waitpid(b->pid, &status, WNOHANG) == b->pid) {
                        b->pid = -1;
                        break;
                }
                (void)nanosleep(&(struct timespec){ .tv_nsec = 10 * 1000 * 1000 }, NULL);
        }
        if (b->pid > 0) {
                (void)kill(b->pid, SIGKILL);
                (void)waitpid(b->pid, &status, 0);
                b->pid = -1;
        }
        /* The broker has exited: what it wrote is all there is, and read() cannot block. */
        for (ssize_t n; got < sizeof(report) - 1 &&
                        (n = read(b->report_fd, report + got, sizeof(report) - 1 - got)) > 0;)
                got += (size_t)n;
        (void)close(b->report_fd);
        b->report_fd = -1;
        *ret = (BrokerReport){ 0 };
        return report_parse(report, ret);
}
