/* SPDX-License-Identifier: MIT */
/* The key broker's own cost: a model API's streamed answer fetched by libcurl straight from a fake API on
 * loopback, and the same request through the broker (its unix socket, the placeholder, the key put in its
 * place upstream), side by side in one run: the time to the first byte of the answer and the throughput
 * of a long answer, medians of each, and their ratios. Upstream is plain HTTP on loopback for both: in a
 * real run both paths go on through the egress proxy and TLS alike, so what differs is the broker alone
 * (the confinement's socat hop in front of it is tests/bench/confine-throughput.sh's). Asserts nothing.
 *
 * usage: bench-broker [--rounds N] [--mib N] */
#define BENCH_NAME "bench-broker"
#define BENCH_SEED 0x62726f6bULL

#include "bench.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "broker.h"

#define PLACEHOLDER "ajb-0123456789abcdef0123456789abcdef0123456789abcdef"

static size_t answer_bytes;

typedef struct Stream {
        size_t sent;
} Stream;

/* The first event at once (the time to first byte), then answer_bytes of data in 64 KiB pieces. */
static ssize_t stream_read(void *cls, uint64_t pos, char *out, size_t max)
{
        static const char first[] = "event: message_start\ndata: {}\n\n";
        Stream *st = cls;
        size_t n;

        (void)pos;
        if (st->sent == 0) {
                memcpy(out, first, sizeof(first) - 1);
                st->sent = 1;
                return (ssize_t)(sizeof(first) - 1);
        }
        if (st->sent > answer_bytes)
                return MHD_CONTENT_READER_END_OF_STREAM;
        n = answer_bytes + 1 - st->sent;
        if (n > max)
                n = max;
        memset(out, 'x', n);
        st->sent += n;
        return (ssize_t)n;
}

static enum MHD_Result api_step(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                const char *version, const char *upload, size_t *upload_size, void **con_cls)
{
        struct MHD_Response *r;
        enum MHD_Result ret;
        Stream *st;

        (void)cls, (void)url, (void)method, (void)version, (void)upload;
        if (!*con_cls) {
                *con_cls = (void *)1;
                return MHD_YES;
        }
        if (*upload_size) {
                *upload_size = 0;
                return MHD_YES;
        }
        st = calloc(1, sizeof(*st));
        if (!st)
                return MHD_NO;
        r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 64 * 1024, stream_read, st, free);
        (void)MHD_add_response_header(r, "Content-Type", "text/event-stream");
        ret = MHD_queue_response(c, 200, r);
        MHD_destroy_response(r);
        return ret;
}

static size_t discard(char *data, size_t size, size_t n, void *userdata)
{
        size_t *got = userdata;

        (void)data;
        *got += size * n;
        return size * n;
}

/* One request: its time to the first byte of the answer and its whole time, in ms. */
static void fetch(const char *url, const char *unix_path, double *ret_first_ms, double *ret_total_ms)
{
        CURL *c = curl_easy_init();
        struct curl_slist *h = curl_slist_append(NULL, "x-api-key: " PLACEHOLDER);
        size_t got = 0;
        double first = 0, total = 0;

        if (!c || !h)
                die("curl: out of memory");
        (void)curl_easy_setopt(c, CURLOPT_URL, url);
        (void)curl_easy_setopt(c, CURLOPT_PROXY, "");
        if (unix_path)
                (void)curl_easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, unix_path);
        (void)curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
        (void)curl_easy_setopt(c, CURLOPT_POSTFIELDS, "{\"model\":\"bench\",\"stream\":true}");
        (void)curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
        (void)curl_easy_setopt(c, CURLOPT_WRITEDATA, &got);
        if (curl_easy_perform(c) != CURLE_OK || got != answer_bytes + 31)
                die("%s: the answer did not come whole (%zu bytes)", url, got);
        (void)curl_easy_getinfo(c, CURLINFO_STARTTRANSFER_TIME, &first);
        (void)curl_easy_getinfo(c, CURLINFO_TOTAL_TIME, &total);
        *ret_first_ms = first * 1000;
        *ret_total_ms = total * 1000;
        curl_slist_free_all(h);
        curl_easy_cleanup(c);
}

static int compare(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;

        return x < y ? -1 : x > y;
}

static double median(double *v, unsigned n)
{
        qsort(v, n, sizeof(*v), compare);
        return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
        static char *const paths[] = { (char *)"/v1/", NULL };
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        struct sockaddr_un sun = { .sun_family = AF_UNIX };
        socklen_t len = sizeof(a);
        unsigned rounds = 21, mib = 64;
        char dir[] = "/tmp/bench-broker.XXXXXX", upstream[64], direct[96];
        int api_fd, broker_fd;
        struct MHD_Daemon *d;
        Broker broker;
        BrokerReport report;

        for (int i = 1; i + 1 < argc; i += 2)
                if (strcmp(argv[i], "--rounds") == 0)
                        rounds = (unsigned)strtoul(argv[i + 1], NULL, 10);
                else if (strcmp(argv[i], "--mib") == 0)
                        mib = (unsigned)strtoul(argv[i + 1], NULL, 10);
                else
                        die("usage: bench-broker [--rounds N] [--mib N]");
        if (rounds < 1 || rounds > 1000 || mib < 1 || mib > 4096)
                die("usage: bench-broker [--rounds N] [--mib N]");
        answer_bytes = (size_t)mib << 20;
        double first_direct[1000], first_broker[1000], rate_direct[1000], rate_broker[1000];

        /* Both sockets before the broker's fork; the API's threads after it. */
        api_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (api_fd < 0 || bind(api_fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(api_fd, 64) < 0 ||
            getsockname(api_fd, (struct sockaddr *)&a, &len) < 0)
                die("the API's socket: %s", strerror(errno));
        if (!mkdtemp(dir))
                die("mkdtemp: %s", strerror(errno));
        (void)snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/broker.sock", dir);
        broker_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (broker_fd < 0 || bind(broker_fd, (struct sockaddr *)&sun, sizeof(sun)) < 0 ||
            listen(broker_fd, 64) < 0)
                die("the broker's socket: %s", strerror(errno));
        (void)snprintf(upstream, sizeof(upstream), "http://127.0.0.1:%d", ntohs(a.sin_port));
        (void)snprintf(direct, sizeof(direct), "%s/v1/messages", upstream);
        if (broker_start(&(BrokerSettings){ .upstream = upstream,
                                            .key_header = "x-api-key",
                                            .key = "sk-bench-0123456789",
                                            .placeholder = PLACEHOLDER,
                                            .paths = paths },
                         broker_fd, &broker) < 0)
                die("the broker did not start");
        d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION, 0, NULL, NULL,
                             api_step, NULL, MHD_OPTION_LISTEN_SOCKET, api_fd, MHD_OPTION_END);
        if (!d)
                die("the fake API did not start");
        curl_global_init(CURL_GLOBAL_DEFAULT);
        double t0 = now_ns();

        /* Interleaved, in an order of their own each round, so that a slow moment falls on either. */
        for (unsigned i = 0; i < rounds; i++) {
                double f1, t1, f2, t2;

                if (pick(2)) {
                        fetch(direct, NULL, &f1, &t1);
                        fetch("http://localhost/v1/messages", sun.sun_path, &f2, &t2);
                } else {
                        fetch("http://localhost/v1/messages", sun.sun_path, &f2, &t2);
                        fetch(direct, NULL, &f1, &t1);
                }
                first_direct[i] = f1;
                first_broker[i] = f2;
                rate_direct[i] = (double)mib / (t1 / 1000);
                rate_broker[i] = (double)mib / (t2 / 1000);
        }
        double fd = median(first_direct, rounds), fb = median(first_broker, rounds);
        double rd = median(rate_direct, rounds), rb = median(rate_broker, rounds);

        printf("# %u rounds, an answer of %u MiB streamed, medians\n", rounds, mib);
        printf("first byte: straight %.3f ms, through the broker %.3f ms (+%.3f ms, %.2fx)\n", fd, fb,
               fb - fd, fb / fd);
        printf("throughput: straight %.0f MiB/s, through the broker %.0f MiB/s (%.2fx)\n", rd, rb, rb / rd);
        if (broker_stop(&broker, &report) < 0)
                die("the broker did not report");
        printf("broker: %u forwarded, %u refused; %.1f s in all\n", report.forwarded, report.refused,
               (now_ns() - t0) / 1e9);
        MHD_stop_daemon(d);
        close(broker_fd);
        unlink(sun.sun_path);
        rmdir(dir);
        curl_global_cleanup();
        return 0;
}
