/* SPDX-License-Identifier: MIT */
/* run's key broker, as a process of its own between a client on its unix socket and a fake API on
 * loopback (plain HTTP: the unit tests have no proxy and no certificate authority; the e2e suite has
 * both). What the fake API received is the proof: the key, never the placeholder; nothing at all for a
 * refused request; the first streamed event reaching the client before the API sends the second. */
#include <check.h>

#include "check-run.h"
#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "broker-usage.h"
#include "broker.h"
#include "macro.h"

#define KEY         "sk-ant-REAL-KEY-0123456789abcdef"
#define PLACEHOLDER "ajp-placeholder-00112233445566778899"

/* ---- the checks that need no process ---- */

static char *const api_paths[] = { (char *)"/v1/", NULL };

static BrokerSettings settings_for(const char *upstream)
{
        return (BrokerSettings){ .upstream = upstream,
                                 .key_header = "x-api-key",
                                 .key = KEY,
                                 .placeholder = PLACEHOLDER,
                                 .paths = api_paths };
}

START_TEST(test_settings_check)
{
        BrokerSettings s = settings_for("https://api.anthropic.com");

        ck_assert_int_eq(broker_settings_check(&s), 0);
        s.upstream = "http://127.0.0.1:8080";
        ck_assert_int_eq(broker_settings_check(&s), 0);
        const char *bad_upstreams[] = { "ftp://api.example",      "https://",
                                        "https://api.example/v1", "https://user@api.example",
                                        "https://api.example?x",  "api.example",
                                        "https://api example" };
        for (size_t i = 0; i < ELEMENTSOF(bad_upstreams); i++) {
                s.upstream = bad_upstreams[i];
                ck_assert_msg(broker_settings_check(&s) == -EINVAL, "%s taken", bad_upstreams[i]);
        }
        s = settings_for("https://api.anthropic.com");
        s.key_header = "cookie";
        ck_assert_int_eq(broker_settings_check(&s), -EINVAL);
        s = settings_for("https://api.anthropic.com");
        s.key = "with\nnewline";
        ck_assert_int_eq(broker_settings_check(&s), -EINVAL);
        s = settings_for("https://api.anthropic.com");
        s.placeholder = "short";
        ck_assert_int_eq(broker_settings_check(&s), -EINVAL);
        s = settings_for("https://api.anthropic.com");
        s.paths = (char *[]){ (char *)"v1/", NULL };
        ck_assert_int_eq(broker_settings_check(&s), -EINVAL);
        s.paths = (char *[]){ NULL };
        ck_assert_int_eq(broker_settings_check(&s), -EINVAL);
}
END_TEST

START_TEST(test_key_matches)
{
        BrokerSettings s = settings_for("https://api.anthropic.com");

        ck_assert(broker_key_matches(&s, PLACEHOLDER));
        ck_assert(!broker_key_matches(&s, NULL));
        ck_assert(!broker_key_matches(&s, ""));
        ck_assert(!broker_key_matches(&s, PLACEHOLDER "x"));
        ck_assert(!broker_key_matches(&s, "ajp-placeholder-0011223344556677889"));
        ck_assert(!broker_key_matches(&s, KEY));
        ck_assert(!broker_key_matches(&s, "Bearer " PLACEHOLDER));
        s.key_header = "authorization";
        ck_assert(broker_key_matches(&s, "Bearer " PLACEHOLDER));
        ck_assert(broker_key_matches(&s, "bearer " PLACEHOLDER));
        ck_assert(!broker_key_matches(&s, PLACEHOLDER));
        ck_assert(!broker_key_matches(&s, "Basic " PLACEHOLDER));
}
END_TEST

START_TEST(test_target_allowed)
{
        BrokerSettings s = settings_for("https://api.anthropic.com");
        const char *good[] = { "/v1/messages",        "/v1/messages?beta=true",
                               "/v1/models/claude-x", "/v1/messages/count_tokens",
                               "/v1/a.b/c",           "/v1/..x",
                               "/v1/x?next=/../y" };
        const char *bad[] = { "/v1",        "/v2/messages",      "v1/messages", "/v1/../admin",
                              "/v1/./x",    "/v1/x/..",          "/v1/x/.",     "/v1/%2e%2e/admin",
                              "/v1\\..\\x", "/v1/x y",           "/v1/x#f",     "/v1/\xc3\xa9",
                              "",           "http://other/v1/x", "/V1/messages" };

        for (size_t i = 0; i < ELEMENTSOF(good); i++)
                ck_assert_msg(broker_target_allowed(&s, good[i]), "%s refused", good[i]);
        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                ck_assert_msg(!broker_target_allowed(&s, bad[i]), "%s taken", bad[i]);
}
END_TEST

/* ---- what the answers say they used ---- */

static BrokerUsage usage_in_pieces(const char *text, size_t cut)
{
        BrokerUsage u = { 0 };

        broker_usage_feed(&u, text, cut);
        broker_usage_feed(&u, text + cut, strlen(text) - cut);
        return u;
}

START_TEST(test_usage)
{
        static const char anthropic[] =
                "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":"
                "{\"input_tokens\":25,\"cache_read_input_tokens\":4000,\"output_tokens\":1}}}\n\n"
                "event: content_block_delta\ndata: {\"delta\":{\"text\":\"say \\\"output_tokens\\\": 99999 "
                "and \\\"input_tokens\\\":88888\"}}\n\n"
                "event: message_delta\ndata: {\"type\":\"message_delta\",\"usage\":{\"output_tokens\": "
                "1234}}\n\n";
        static const char openai[] =
                "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":12}}\n";
        BrokerUsage u;

        /* Cut anywhere, the same counts: a number split in two is read whole across the cut. */
        for (size_t cut = 0; cut <= strlen(anthropic); cut++) {
                u = usage_in_pieces(anthropic, cut);
                ck_assert_msg(u.input == 25 && u.output == 1234, "cut at %zu: %llu %llu", cut,
                              (unsigned long long)u.input, (unsigned long long)u.output);
        }
        /* A byte at a time. */
        u = (BrokerUsage){ 0 };
        for (size_t i = 0; anthropic[i]; i++)
                broker_usage_feed(&u, anthropic + i, 1);
        ck_assert_uint_eq(u.input, 25);
        ck_assert_uint_eq(u.output, 1234);
        u = usage_in_pieces(openai, 40);
        ck_assert_uint_eq(u.input, 9);
        ck_assert_uint_eq(u.output, 12);
        /* Nothing that is not a count: no digits, a string, a key of another name. */
        u = usage_in_pieces("{\"input_tokens\":\"12\",\"output_tokens\":,\"my_output_tokens\":5}", 7);
        ck_assert_uint_eq(u.input, 0);
        ck_assert_uint_eq(u.output, 0);
}
END_TEST

/* ---- a fake API on loopback ---- */

typedef struct Api {
        struct MHD_Daemon *d;
        int port;
        atomic_int requests;
        char key[256], authorization[256], target[256], body[256], placeholder_seen[8];
        int release[2];       /* the client writes here once it has the first event */
        atomic_bool released; /* the second event waited for the client, not for the time bound */
        pthread_mutex_t lock;
} Api;

typedef struct Stream {
        Api *api;
        int step;
} Stream;

static ssize_t stream_read(void *cls, uint64_t pos, char *out, size_t max)
{
        Stream *st = cls;
        const char *piece;

        (void)pos;
        if (st->step == 0)
                piece = "event: one\ndata: {\"n\":1}\n\n";
        else if (st->step == 1) {
                struct pollfd p = { .fd = st->api->release[0], .events = POLLIN };

                /* Bounded: a broker that holds the answer back fails the test, it does not hang it. */
                if (poll(&p, 1, 10000) == 1)
                        atomic_store(&st->api->released, true);
                piece = "event: two\ndata: {\"n\":2,\"usage\":{\"output_tokens\":7}}\n\n";
        } else
                return MHD_CONTENT_READER_END_OF_STREAM;
        st->step++;
        if (strlen(piece) > max)
                return MHD_CONTENT_READER_END_WITH_ERROR;
        memcpy(out, piece, strlen(piece));
        return (ssize_t)strlen(piece);
}

static void copy_value(char *dst, size_t size, const char *v)
{
        (void)snprintf(dst, size, "%s", v ? v : "");
}

static enum MHD_Result api_step(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                const char *version, const char *upload, size_t *upload_size, void **con_cls)
{
        Api *api = cls;
        struct MHD_Response *r;
        enum MHD_Result ret;

        (void)version, (void)method;
        if (!*con_cls) {
                *con_cls = api;
                pthread_mutex_lock(&api->lock);
                api->body[0] = '\0';
                pthread_mutex_unlock(&api->lock);
                return MHD_YES;
        }
        if (*upload_size) {
                pthread_mutex_lock(&api->lock);
                strncat(api->body, upload,
                        *upload_size < sizeof(api->body) - strlen(api->body) - 1
                                ? *upload_size
                                : sizeof(api->body) - strlen(api->body) - 1);
                pthread_mutex_unlock(&api->lock);
                *upload_size = 0;
                return MHD_YES;
        }
        atomic_fetch_add(&api->requests, 1);
        pthread_mutex_lock(&api->lock);
        copy_value(api->key, sizeof(api->key), MHD_lookup_connection_value(c, MHD_HEADER_KIND, "x-api-key"));
        copy_value(api->authorization, sizeof(api->authorization),
                   MHD_lookup_connection_value(c, MHD_HEADER_KIND, "authorization"));
        copy_value(api->target, sizeof(api->target), url);
        pthread_mutex_unlock(&api->lock);
        if (strcmp(url, "/v1/stream") == 0) {
                Stream *st = calloc(1, sizeof(*st));

                st->api = api;
                r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 1024, stream_read, st, free);
                (void)MHD_add_response_header(r, "Content-Type", "text/event-stream");
        } else if (strcmp(url, "/v1/no-usage") == 0) {
                static const char answer[] = "{\"id\":\"msg_2\"}";

                r = MHD_create_response_from_buffer(strlen(answer), (void *)answer, MHD_RESPMEM_PERSISTENT);
        } else {
                static const char answer[] = "{\"id\":\"msg_1\",\"usage\":{\"input_tokens\":3}}";

                r = MHD_create_response_from_buffer(strlen(answer), (void *)answer, MHD_RESPMEM_PERSISTENT);
                (void)MHD_add_response_header(r, "Content-Type", "application/json");
                (void)MHD_add_response_header(r, "request-id", "req_fake_1");
        }
        ret = MHD_queue_response(c, 200, r);
        MHD_destroy_response(r);
        return ret;
}

/* The API's socket, bound before the broker forks: the threads that serve it start after the fork. */
static int api_listen(int *ret_port)
{
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t len = sizeof(a);
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
        ck_assert_int_eq(listen(fd, 16), 0);
        ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
        *ret_port = ntohs(a.sin_port);
        return fd;
}

static void api_start(Api *api, int fd)
{
        ck_assert_int_eq(pipe(api->release), 0);
        pthread_mutex_init(&api->lock, NULL);
        api->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION, 0, NULL,
                                  NULL, api_step, api, MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_END);
        ck_assert_ptr_nonnull(api->d);
}

/* ---- a client on the broker's socket ---- */

typedef struct Harness {
        char dir[64], path[128];
        int listen_fd;
        Broker broker;
        Api api;
        int api_fd;
} Harness;

/* A budget and its prices, for the harness's broker. */
typedef struct HarnessPrices {
        const Price *prices;
        size_t n_prices;
        uint64_t budget;
} HarnessPrices;

static void harness_start_priced(Harness *h, const char *key_header, unsigned max_requests,
                                 const HarnessPrices *priced)
{
        struct sockaddr_un sun = { .sun_family = AF_UNIX };
        char upstream[64];
        int port;

        memset(h, 0, sizeof(*h));
        strcpy(h->dir, "/tmp/test-broker.XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(h->dir));
        (void)snprintf(h->path, sizeof(h->path), "%s/broker.sock", h->dir);
        strcpy(sun.sun_path, h->path);
        h->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        ck_assert_int_eq(bind(h->listen_fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
        ck_assert_int_eq(listen(h->listen_fd, 16), 0);
        h->api_fd = api_listen(&port);
        (void)snprintf(upstream, sizeof(upstream), "http://127.0.0.1:%d", port);
        BrokerSettings s = settings_for(upstream);
        s.key_header = key_header;
        s.max_requests = max_requests;
        if (priced) {
                s.prices = priced->prices;
                s.n_prices = priced->n_prices;
                s.budget = priced->budget;
        }
        ck_assert_int_eq(broker_start(&s, h->listen_fd, &h->broker), 0);
        api_start(&h->api, h->api_fd);
}

static void harness_start(Harness *h, const char *key_header, unsigned max_requests)
{
        harness_start_priced(h, key_header, max_requests, NULL);
}

static BrokerReport harness_stop(Harness *h)
{
        BrokerReport report;

        ck_assert_int_eq(broker_stop(&h->broker, &report), 0);
        if (h->api.d)
                MHD_stop_daemon(h->api.d);
        close(h->listen_fd);
        unlink(h->path);
        rmdir(h->dir);
        return report;
}

static int client_connect(Harness *h)
{
        struct sockaddr_un sun = { .sun_family = AF_UNIX };
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

        strcpy(sun.sun_path, h->path);
        ck_assert_int_eq(connect(fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
        return fd;
}

/* Reads until the answer holds want (or, want NULL, until the broker closes), 20 s at most. */
static void client_read(int fd, char *buf, size_t size, const char *want)
{
        size_t got = 0;

        buf[0] = '\0';
        while (got < size - 1 && (!want || !strstr(buf, want))) {
                struct pollfd p = { .fd = fd, .events = POLLIN };
                ssize_t n;

                ck_assert_int_eq(poll(&p, 1, 20000), 1);
                n = read(fd, buf + got, size - 1 - got);
                ck_assert_int_ge(n, 0);
                if (n == 0)
                        break;
                got += (size_t)n;
                buf[got] = '\0';
        }
}

/* One request over HTTP/1.0 (the answer ends where the connection does). */
static void exchange(Harness *h, const char *request, char *answer, size_t size)
{
        int fd = client_connect(h);

        ck_assert_int_eq(write(fd, request, strlen(request)), (ssize_t)strlen(request));
        client_read(fd, answer, size, NULL);
        close(fd);
}

#define POST_MESSAGES(key_line)                                                                             \
        "POST /v1/messages?beta=true HTTP/1.0\r\nHost: 127.0.0.1:3129\r\n" key_line                         \
        "Content-Type: application/json\r\nContent-Length: 16\r\n\r\n{\"model\":\"fake\"}"

START_TEST(test_forwards_with_key)
{
        Harness h;
        char answer[4096];
        BrokerReport report;

        harness_start(&h, "x-api-key", 0);
        exchange(&h,
                 POST_MESSAGES("x-api-key: " PLACEHOLDER "\r\nAuthorization: Bearer " PLACEHOLDER "\r\n"),
                 answer, sizeof(answer));
        ck_assert_msg(strncmp(answer, "HTTP/1.0 200", 12) == 0 || strncmp(answer, "HTTP/1.1 200", 12) == 0,
                      "answer: %s", answer);
        ck_assert_ptr_nonnull(strstr(answer, "{\"id\":\"msg_1\",\"usage\":{\"input_tokens\":3}}"));
        ck_assert_ptr_nonnull(strstr(answer, "req_fake_1"));
        ck_assert_int_eq(atomic_load(&h.api.requests), 1);
        /* The key went upstream in the key header; the placeholder went nowhere, not even in another
         * header that the agent filled with it. */
        ck_assert_str_eq(h.api.key, KEY);
        ck_assert_str_eq(h.api.authorization, "");
        ck_assert_str_eq(h.api.target, "/v1/messages");
        ck_assert_str_eq(h.api.body, "{\"model\":\"fake\"}");
        report = harness_stop(&h);
        ck_assert_uint_eq(report.forwarded, 1);
        ck_assert_uint_eq(report.refused, 0);
        /* The API's answer said it used 3 input tokens. */
        ck_assert_uint_eq(report.input_tokens, 3);
        ck_assert_uint_eq(report.output_tokens, 0);
}
END_TEST

START_TEST(test_bearer_header)
{
        Harness h;
        char answer[4096];

        harness_start(&h, "authorization", 0);
        exchange(&h, POST_MESSAGES("Authorization: Bearer " PLACEHOLDER "\r\n"), answer, sizeof(answer));
        ck_assert_ptr_nonnull(strstr(answer, "msg_1"));
        ck_assert_str_eq(h.api.authorization, "Bearer " KEY);
        ck_assert_str_eq(h.api.key, "");
        (void)harness_stop(&h);
}
END_TEST

START_TEST(test_refusals_reach_nothing)
{
        const char *requests[] = {
                POST_MESSAGES(""),
                POST_MESSAGES("x-api-key: wrong-placeholder-0011223344556677\r\n"),
                POST_MESSAGES("x-api-key: " KEY "\r\n"),
                POST_MESSAGES("Authorization: Bearer " PLACEHOLDER "\r\n"),
                "POST /v2/messages HTTP/1.0\r\nx-api-key: " PLACEHOLDER "\r\nContent-Length: 0\r\n\r\n",
                "POST /v1/../admin HTTP/1.0\r\nx-api-key: " PLACEHOLDER "\r\nContent-Length: 0\r\n\r\n",
                "POST /v1/%2e%2e/admin HTTP/1.0\r\nx-api-key: " PLACEHOLDER "\r\nContent-Length: 0\r\n\r\n",
                "DELETE /v1/files/x HTTP/1.0\r\nx-api-key: " PLACEHOLDER "\r\n\r\n",
                "CONNECT 127.0.0.1:22 HTTP/1.0\r\nx-api-key: " PLACEHOLDER "\r\n\r\n",
                "GET http://127.0.0.1:22/v1/x HTTP/1.0\r\nx-api-key: " PLACEHOLDER "\r\n\r\n",
        };
        const char *statuses[] = { " 401 ", " 401 ", " 401 ", " 401 ", " 404 ",
                                   " 404 ", " 404 ", " 405 ", NULL,    NULL };
        Harness h;
        char answer[4096];
        BrokerReport report;

        harness_start(&h, "x-api-key", 0);
        for (size_t i = 0; i < ELEMENTSOF(requests); i++) {
                exchange(&h, requests[i], answer, sizeof(answer));
                if (statuses[i])
                        ck_assert_msg(strstr(answer, statuses[i]) && strstr(answer, "agentic_job_broker"),
                                      "request %zu: %s", i, answer);
                else
                        ck_assert_msg(!strstr(answer, " 200 "), "request %zu: %s", i, answer);
        }
        ck_assert_int_eq(atomic_load(&h.api.requests), 0);
        report = harness_stop(&h);
        ck_assert_uint_eq(report.forwarded, 0);
        ck_assert_uint_ge(report.refused, 8);
}
END_TEST

START_TEST(test_streams_as_it_comes)
{
        static const char request[] =
                "POST /v1/stream HTTP/1.0\r\nx-api-key: " PLACEHOLDER "\r\nContent-Length: 2\r\n\r\n{}";
        Harness h;
        char answer[4096];
        int fd;

        harness_start(&h, "x-api-key", 0);
        fd = client_connect(&h);
        ck_assert_int_eq(write(fd, request, strlen(request)), (ssize_t)strlen(request));
        /* The first event arrives while the API still holds the second back... */
        client_read(fd, answer, sizeof(answer), "event: one");
        ck_assert_ptr_nonnull(strstr(answer, "text/event-stream"));
        ck_assert_ptr_null(strstr(answer, "event: two"));
        ck_assert_int_eq(write(h.api.release[1], "x", 1), 1);
        /* ...which the client's having the first released. */
        client_read(fd, answer + strlen(answer), sizeof(answer) - strlen(answer), NULL);
        ck_assert_ptr_nonnull(strstr(answer, "event: two"));
        ck_assert(atomic_load(&h.api.released));
        close(fd);
        /* The stream's last event said 7 output tokens. */
        ck_assert_uint_eq(harness_stop(&h).output_tokens, 7);
}
END_TEST

START_TEST(test_max_requests)
{
        Harness h;
        char answer[4096];
        BrokerReport report;

        harness_start(&h, "x-api-key", 2);
        for (int i = 0; i < 2; i++) {
                exchange(&h, POST_MESSAGES("x-api-key: " PLACEHOLDER "\r\n"), answer, sizeof(answer));
                ck_assert_msg(strstr(answer, "msg_1"), "request %d: %s", i, answer);
        }
        exchange(&h, POST_MESSAGES("x-api-key: " PLACEHOLDER "\r\n"), answer, sizeof(answer));
        ck_assert_msg(strstr(answer, " 429 ") && strstr(answer, "max-requests"), "%s", answer);
        ck_assert_int_eq(atomic_load(&h.api.requests), 2);
        report = harness_stop(&h);
        ck_assert_uint_eq(report.forwarded, 2);
        ck_assert_uint_eq(report.over, 1);
}
END_TEST

/* A POST naming a model of 4 or 5 letters (the body is 12 bytes and the name). */
#define POST_MODEL(path, model, length)                                                                     \
        "POST " path " HTTP/1.0\r\nx-api-key: " PLACEHOLDER "\r\nContent-Type: application/json\r\n"        \
        "Content-Length: " length "\r\n\r\n{\"model\":\"" model "\"}"
#define POST_MODEL_4(path, model) POST_MODEL(path, model, "16")
#define POST_MODEL_5(path, model) POST_MODEL(path, model, "17")

/* Three input tokens an answer at 1 per million: 3 micro-dollars each. A budget of 5 lets two requests
 * through (the second starts at 3, under 5) and refuses the third (at 6); a model with no price is refused
 * (and costs nothing); a GET passes until the budget is spent. */
START_TEST(test_budget)
{
        static const Price prices[] = { { (char *)"fake", 1000000, 0 }, { (char *)"fake-big*", 9, 9 } };
        HarnessPrices priced = { prices, ELEMENTSOF(prices), 5 * PRICE_PICO_PER_MICRO };
        Harness h;
        char answer[4096];
        BrokerReport report;

        harness_start_priced(&h, "x-api-key", 0, &priced);
        exchange(&h, "GET /v1/models HTTP/1.0\r\nx-api-key: " PLACEHOLDER "\r\n\r\n", answer,
                 sizeof(answer));
        ck_assert_msg(strstr(answer, " 200 "), "%s", answer);
        exchange(&h, POST_MODEL_4("/v1/messages", "fake"), answer, sizeof(answer));
        ck_assert_msg(strstr(answer, "msg_1"), "%s", answer);
        exchange(&h, POST_MODEL_5("/v1/messages", "other"), answer, sizeof(answer));
        ck_assert_msg(strstr(answer, " 400 ") && strstr(answer, "[run.prices]"), "%s", answer);
        exchange(&h, POST_MODEL_4("/v1/messages", "fake"), answer, sizeof(answer));
        ck_assert_msg(strstr(answer, "msg_1"), "%s", answer);
        exchange(&h, POST_MODEL_4("/v1/messages", "fake"), answer, sizeof(answer));
        ck_assert_msg(strstr(answer, " 429 ") && strstr(answer, "budget was spent"), "%s", answer);
        /* Once spent, nothing more goes: not even what costs nothing. */
        exchange(&h, "GET /v1/models HTTP/1.0\r\nx-api-key: " PLACEHOLDER "\r\n\r\n", answer,
                 sizeof(answer));
        ck_assert_msg(strstr(answer, " 429 "), "%s", answer);
        ck_assert_int_eq(atomic_load(&h.api.requests), 3);
        report = harness_stop(&h);
        ck_assert_uint_eq(report.forwarded, 3);
        ck_assert_uint_eq(report.refused, 1);
        ck_assert_uint_eq(report.over_budget, 2);
        ck_assert_uint_eq(report.spent, 6 * PRICE_PICO_PER_MICRO);
        ck_assert_uint_eq(report.unpriced, 0);
}
END_TEST

/* POSTs body (a string) to path with the placeholder; the answer in answer. */
static void post_body(Harness *h, const char *path, const char *body, char *answer, size_t size)
{
        char *request = NULL;

        ck_assert_int_ge(asprintf(&request,
                                  "POST %s HTTP/1.0\r\nx-api-key: " PLACEHOLDER
                                  "\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
                                  path, strlen(body), body),
                         0);
        exchange(h, request, answer, size);
        free(request);
}

/* The model is read from the body with jansson, whose tree of a body of many small values is many times
 * its size: a 4 MiB array of zeros (some 100 MiB as a tree) is past the broker's bound and names no model
 * (refused under a budget), while a request of a coding agent's shape (forty tools with their schemas, a
 * long conversation) of the same size is read and priced. */
START_TEST(test_budget_body_bounds)
{
        static const Price prices[] = { { (char *)"fake", 1, 1 } };
        HarnessPrices priced = { prices, ELEMENTSOF(prices), 1000 * PRICE_PICO_PER_MICRO };
        size_t cap = 5u << 20, n;
        char *body = malloc(cap), answer[4096];
        Harness h;

        ck_assert_ptr_nonnull(body);
        harness_start_priced(&h, "x-api-key", 0, &priced);
        n = (size_t)snprintf(body, cap, "{\"model\":\"fake\",\"tools\":[");
        for (int t = 0; t < 40; t++) {
                n += (size_t)snprintf(body + n, cap - n,
                                      "%s{\"name\":\"tool_%d\",\"description\":\"%0400d\",\"input_schema\":{"
                                      "\"type\":\"object\",\"properties\":{",
                                      t ? "," : "", t, 0);
                for (int a = 0; a < 12; a++)
                        n += (size_t)snprintf(
                                body + n, cap - n,
                                "%s\"arg_%d\":{\"type\":\"string\",\"description\":\"an argument\"}",
                                a ? "," : "", a);
                n += (size_t)snprintf(body + n, cap - n, "},\"required\":[\"arg_0\"]}}");
        }
        n += (size_t)snprintf(body + n, cap - n, "],\"messages\":[");
        for (int m = 0; n < (4u << 20) - 5000; m++)
                n += (size_t)snprintf(body + n, cap - n, "%s{\"role\":\"%s\",\"content\":\"%04000d\"}",
                                      m ? "," : "", m % 2 ? "assistant" : "user", m);
        (void)snprintf(body + n, cap - n, "]}");
        post_body(&h, "/v1/messages", body, answer, sizeof(answer));
        ck_assert_msg(strstr(answer, "msg_1"), "a coding agent's request of %zu bytes: %s", strlen(body),
                      answer);

        n = (size_t)snprintf(body, cap, "{\"model\":\"fake\",\"x\":[0");
        while (n < (4u << 20) - 8)
                n += (size_t)snprintf(body + n, cap - n, ",0");
        (void)snprintf(body + n, cap - n, "]}");
        post_body(&h, "/v1/messages", body, answer, sizeof(answer));
        ck_assert_msg(strstr(answer, " 400 ") && strstr(answer, "[run.prices]"), "%s", answer);
        ck_assert_int_eq(atomic_load(&h.api.requests), 1);
        harness_stop(&h);
        free(body);
}
END_TEST

/* An answer that states no usage leaves its cost unknown: under a budget nothing more is forwarded;
 * without one, it is counted as unpriced, as is a model with no price. */
START_TEST(test_budget_no_usage)
{
        static const Price prices[] = { { (char *)"fake", 1000000, 0 } };
        HarnessPrices priced = { prices, ELEMENTSOF(prices), 1000 * PRICE_PICO_PER_MICRO };
        HarnessPrices counted = { prices, ELEMENTSOF(prices), 0 };
        Harness h;
        char answer[4096];
        BrokerReport report;

        harness_start_priced(&h, "x-api-key", 0, &priced);
        exchange(&h, POST_MODEL_4("/v1/no-usage", "fake"), answer, sizeof(answer));
        ck_assert_msg(strstr(answer, "msg_2"), "%s", answer);
        exchange(&h, POST_MODEL_4("/v1/messages", "fake"), answer, sizeof(answer));
        ck_assert_msg(strstr(answer, " 429 ") && strstr(answer, "stated no usage"), "%s", answer);
        report = harness_stop(&h);
        ck_assert_uint_eq(report.forwarded, 1);
        ck_assert_uint_eq(report.over_budget, 1);
        ck_assert_uint_eq(report.unpriced, 1);

        harness_start_priced(&h, "x-api-key", 0, &counted);
        exchange(&h, POST_MODEL_5("/v1/messages", "other"), answer, sizeof(answer));
        ck_assert_msg(strstr(answer, "msg_1"), "%s", answer);
        exchange(&h, POST_MODEL_4("/v1/messages", "fake"), answer, sizeof(answer));
        ck_assert_msg(strstr(answer, "msg_1"), "%s", answer);
        report = harness_stop(&h);
        ck_assert_uint_eq(report.forwarded, 2);
        ck_assert_uint_eq(report.unpriced, 1);
        ck_assert_uint_eq(report.spent, 3 * PRICE_PICO_PER_MICRO);
}
END_TEST

START_TEST(test_upstream_unreachable)
{
        Harness h;
        char answer[4096];

        harness_start(&h, "x-api-key", 0);
        /* Nothing answers any more where the API was. */
        MHD_stop_daemon(h.api.d);
        h.api.d = NULL;
        exchange(&h, POST_MESSAGES("x-api-key: " PLACEHOLDER "\r\n"), answer, sizeof(answer));
        ck_assert_msg(strstr(answer, " 502 ") && strstr(answer, "could not be reached"), "%s", answer);
        (void)harness_stop(&h);
}
END_TEST

/* Writes size bytes of 'x' to fd. */
static void write_body(int fd, size_t size)
{
        static char chunk[1 << 16];

        memset(chunk, 'x', sizeof(chunk));
        while (size > 0) {
                size_t n = size < sizeof(chunk) ? size : sizeof(chunk);
                ssize_t w = write(fd, chunk, n);

                ck_assert_int_gt(w, 0);
                size -= (size_t)w;
        }
}

/* A body over BROKER_BODY_MAX is refused (413); bodies that would together hold more than
 * BROKER_BODIES_MAX at once are refused past the bound (503): the agent cannot make the runner's side hold
 * what it likes. Neither reaches the API. */
START_TEST(test_body_bounds)
{
        const size_t each = 29u << 20;
        char head[512], answer[4096];
        int fds[4], n_ok = 0, n_busy = 0;
        Harness h;

        harness_start(&h, "x-api-key", 0);
        fds[0] = client_connect(&h);
        (void)snprintf(head, sizeof(head),
                       "POST /v1/messages HTTP/1.0\r\nx-api-key: " PLACEHOLDER
                       "\r\nContent-Length: %u\r\n\r\n",
                       BROKER_BODY_MAX + 1);
        ck_assert_int_eq(write(fds[0], head, strlen(head)), (ssize_t)strlen(head));
        write_body(fds[0], BROKER_BODY_MAX + 1);
        client_read(fds[0], answer, sizeof(answer), NULL);
        ck_assert_msg(strstr(answer, " 413 ") && strstr(answer, "too large"), "%s", answer);
        close(fds[0]);

        /* Four bodies held at once, each but its last byte sent: 116 MiB, over the 96 MiB bound. */
        (void)snprintf(head, sizeof(head),
                       "POST /v1/messages HTTP/1.0\r\nx-api-key: " PLACEHOLDER
                       "\r\nContent-Length: %zu\r\n\r\n",
                       each);
        for (int i = 0; i < 4; i++) {
                fds[i] = client_connect(&h);
                ck_assert_int_eq(write(fds[i], head, strlen(head)), (ssize_t)strlen(head));
                write_body(fds[i], each - 1);
        }
        for (int i = 0; i < 4; i++) {
                write_body(fds[i], 1);
                client_read(fds[i], answer, sizeof(answer), NULL);
                n_ok += strstr(answer, " 200 ") != NULL;
                n_busy += strstr(answer, " 503 ") && strstr(answer, "too many request bodies");
                close(fds[i]);
        }
        ck_assert_int_eq(n_ok, 3);
        ck_assert_int_eq(n_busy, 1);
        ck_assert_int_eq(atomic_load(&h.api.requests), 3);
        (void)harness_stop(&h);
}
END_TEST

static Suite *broker_suite(void)
{
        Suite *s = suite_create("broker");
        TCase *t = tcase_create("rules");

        tcase_add_test(t, test_settings_check);
        tcase_add_test(t, test_key_matches);
        tcase_add_test(t, test_target_allowed);
        tcase_add_test(t, test_usage);
        suite_add_tcase(s, t);
        t = tcase_create("forwarding");
        tcase_set_timeout(t, 60);
        tcase_add_test(t, test_forwards_with_key);
        tcase_add_test(t, test_bearer_header);
        tcase_add_test(t, test_refusals_reach_nothing);
        tcase_add_test(t, test_streams_as_it_comes);
        tcase_add_test(t, test_max_requests);
        tcase_add_test(t, test_budget);
        tcase_add_test(t, test_budget_no_usage);
        tcase_add_test(t, test_budget_body_bounds);
        tcase_add_test(t, test_upstream_unreachable);
        tcase_add_test(t, test_body_bounds);
        suite_add_tcase(s, t);
        return s;
}

int main(void)
{
        return check_run(broker_suite());
}
