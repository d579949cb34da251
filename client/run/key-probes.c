/* SPDX-License-Identifier: MIT */
#include "key-probes.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "egress-env.h"
#include "macro.h"
#include "probe-emit.h"
#include "proxy-answer.h"
#include "random-hex.h"
#include "token-probes.h"
#include "token-scan.h"
#include "write-all.h"

const char *const key_probe_names[] = { "api-key-control",       "api-key-files", "api-key-processes",
                                        "broker-egress-control", "broker-egress", NULL };

#define SCAN_FILES    200000
#define SCAN_BYTES    (8ULL << 30)
#define SCAN_DEPTH    64
#define DECOY_WAIT_MS 5000 /* for the decoy's process to show its command line */
#define SLEEP_PATH    "/bin/sleep"

static const TokenScanLimits limits = { SCAN_FILES, SCAN_BYTES, SCAN_DEPTH };

/* Every root searched for the print; the first find in *scan. */
static int scan_roots(const KeyProbeInput *in, const KeyPrint *print, TokenScan *scan)
{
        struct stat skip;
        size_t n_skip = in->workspace && lstat(in->workspace, &skip) == 0;
        int r = 0;

        for (char *const *root = in->roots; r >= 0 && *root && !scan->found; root++)
                r = key_scan_tree(*root, print, &skip, n_skip, &limits, scan);
        return r;
}

/* A process whose command line is the decoy: sleep, with the decoy as its argv[0] (free text to it).
 * Returns its pid once /proc shows that command line, or -errno. */
static pid_t decoy_process(const char *decoy)
{
        char path[64], c;
        int p[2], err = 0;
        pid_t pid;

        if (pipe2(p, O_CLOEXEC) < 0)
                return -errno;
        pid = fork();
        if (pid < 0) {
                err = errno;
                (void)close(p[0]);
                (void)close(p[1]);
                return -err;
        }
        if (pid == 0) {
                char *argv[] = { (char *)decoy, (char *)"60", NULL };
                char *envp[] = { NULL };

                (void)close(p[0]);
                execve(SLEEP_PATH, argv, envp);
                err = errno;
                _exit(write(p[1], &err, sizeof(err)) == (ssize_t)sizeof(err) ? 127 : 126);
        }
        (void)close(p[1]);
        if (read(p[0], &err, sizeof(err)) != 0) {
                (void)close(p[0]);
                (void)waitpid(pid, NULL, 0);
                return -(err ? err : EIO);
        }
        (void)close(p[0]);
        /* exec() has happened (the pipe closed); the new command line shows once it is read back. */
        (void)snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
        for (int waited = 0; waited < DECOY_WAIT_MS; waited++) {
                _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);

                if (fd >= 0 && read(fd, &c, 1) == 1 && c == decoy[0])
                        return pid;
                (void)nanosleep(&(struct timespec){ .tv_nsec = 1000 * 1000 }, NULL);
        }
        (void)kill(pid, SIGKILL);
        (void)waitpid(pid, NULL, 0);
        return -ETIMEDOUT;
}

/* A decoy of the key's length (random hexadecimal, in decoy[size + 1]) and its print with the key's base. */
static int decoy_make(const KeyPrint *key, char *decoy, KeyPrint *ret)
{
        for (size_t i = 0; i < key->size; i += 2 * RANDOM_HEX_MAX) {
                char chunk[2 * RANDOM_HEX_MAX + 1];
                size_t n = key->size - i < 2 * RANDOM_HEX_MAX ? key->size - i : 2 * RANDOM_HEX_MAX;
                int r = random_hex(chunk, RANDOM_HEX_MAX);

                if (r < 0)
                        return r;
                memcpy(decoy + i, chunk, n);
        }
        decoy[key->size] = '\0';
        return key_print_make_with_base(decoy, key->size, key->base, ret);
}

/* The control: a decoy, planted in a file of the home and as a process's command line, is found in both
 * by its print; else the two searches below prove nothing. */
static bool probe_control(const KeyProbeInput *in)
{
        _cleanup_free_ char *file = NULL, *decoy = malloc(in->key->size + 1);
        char want[64];
        TokenScan files = {}, procs = {};
        long long t0 = probe_now_ms();
        KeyPrint print;
        bool ok = false;
        pid_t pid;
        int fd, r;

        if (!decoy || asprintf(&file, "%s/.agentic-job-key-control.XXXXXX", in->home) < 0)
                return probe_emit_ok("api-key-control", false, t0, "out of memory");
        r = decoy_make(in->key, decoy, &print);
        if (r < 0)
                return probe_emit_ok("api-key-control", false, t0, "cannot make the decoy: %s",
                                     strerror(-r));
        fd = mkostemp(file, O_CLOEXEC);
        if (fd < 0)
                return probe_emit_ok("api-key-control", false, t0, "cannot make %s: %s", file,
                                     strerror(errno));
        r = write_all(fd, decoy, in->key->size);
        (void)close(fd);
        pid = r < 0 ? r : decoy_process(decoy);
        if (pid < 0) {
                (void)unlink(file);
                return probe_emit_ok("api-key-control", false, t0, "cannot plant the decoy: %s",
                                     strerror((int)-pid));
        }
        r = scan_roots(in, &print, &files);
        if (r >= 0)
                r = key_scan_processes("/proc", &print, &procs);
        (void)kill(pid, SIGKILL);
        (void)waitpid(pid, NULL, 0);
        (void)unlink(file);
        (void)snprintf(want, sizeof(want), "pid %d cmdline", (int)pid);
        if (r < 0)
                probe_emit_ok("api-key-control", false, t0, "the search failed: %s", strerror(-r));
        else if (!files.found || strcmp(files.found, file) != 0)
                probe_emit_ok("api-key-control", false, t0,
                              "the decoy planted in %s was not found by its print (found: %s)", file,
                              files.found ? files.found : "nothing");
        else if (!procs.found || strcmp(procs.found, want) != 0)
                probe_emit_ok(
                        "api-key-control", false, t0,
                        "the decoy in the command line of pid %d was not found by its print (found: %s)",
                        (int)pid, procs.found ? procs.found : "nothing");
        else
                ok = probe_emit_ok(
                        "api-key-control", true, t0,
                        "a decoy of the key's length (%zu bytes) found by its print in a file and a process",
                        in->key->size);
        explicit_bzero(decoy, in->key->size);
        token_scan_done(&files);
        token_scan_done(&procs);
        return ok;
}

static bool probe_files(const KeyProbeInput *in)
{
        TokenScan s = {};
        long long t0 = probe_now_ms();
        int r = scan_roots(in, in->key, &s);
        bool ok = token_scan_report(
                "api-key-files", t0, r, &s, "the model's key",
                "any file below the home (but the workspace), /run/user/UID, /tmp, /var/tmp, "
                "/dev/shm or the runner's places");

        token_scan_done(&s);
        return ok;
}

static bool probe_processes(const KeyProbeInput *in)
{
        TokenScan s = {};
        long long t0 = probe_now_ms();
        int r = key_scan_processes("/proc", in->key, &s);
        bool ok = token_scan_report("api-key-processes", t0, r, &s, "the model's key",
                                    "any environment or command line");

        token_scan_done(&s);
        return ok;
}

/* GET url through the egress proxy (its authority for TLS), with the header x-api-key: key and the same
 * in the query; 20 s at most. 0 with *ret filled, or -EIO with why. */
static int proxied_get(const char *url, const char *key, ProxyAnswer *ret, char *why, size_t why_size)
{
        _cleanup_free_ char *header = NULL, *target = NULL;

        *ret = (ProxyAnswer){ 0 };
        if (asprintf(&header, "x-api-key: %s", key) < 0 ||
            asprintf(&target, "%s%sagentic-job-key=%s", url, strchr(url, '?') ? "&" : "?", key) < 0) {
                (void)snprintf(why, why_size, "out of memory");
                return -ENOMEM;
        }
        return proxy_answer_get(target, EGRESS_PROXY_URL, EGRESS_CA_BUNDLE, header, 20, ret, why, why_size);
}

#define PLACEHOLDER_REASON "the key broker's placeholder"

/* The control: the same request with a string one digit short of the placeholder's shape is answered by
 * the origin, not by squid (squid decides a request inside a tunnel only once it reaches the origin: an
 * origin it cannot reach, or a read the policy refuses, would leave the placeholder's refusal unproven);
 * then the placeholder itself must be refused. */
static int probe_egress(const KeyProbeInput *in)
{
        _cleanup_free_ char *short_key = strdup(in->placeholder);
        char why[CURL_ERROR_SIZE + 64];
        long long t0 = probe_now_ms();
        ProxyAnswer a;
        bool refused;

        if (!short_key || strlen(short_key) < 2)
                return !probe_emit_ok("broker-egress-control", false, t0, "no placeholder to send") +
                       !probe_emit_ok("broker-egress", false, probe_now_ms(),
                                      "broker-egress-control failed");
        short_key[strlen(short_key) - 1] = '\0';
        if (proxied_get(in->control_url, short_key, &a, why, sizeof(why)) < 0 || a.squid_error[0]) {
                char answer[512];
                int failed;

                if (a.squid_error[0])
                        (void)snprintf(answer, sizeof(answer), "status %ld, the proxy's own answer (%s)%s%s",
                                       a.status, a.squid_error, a.denied[0] ? ": " : "", a.denied);
                else
                        (void)snprintf(answer, sizeof(answer), "%s", why);
                failed = !probe_emit_ok("broker-egress-control", false, t0,
                                        "%s with a string one digit short of the placeholder's shape: %s "
                                        "([sandbox.check] control-url must be a read the proxy makes)",
                                        in->control_url, answer);
                failed += !probe_emit_ok("broker-egress", false, probe_now_ms(),
                                         "broker-egress-control failed");
                return failed;
        }
        probe_emit_ok(
                "broker-egress-control", true, t0,
                "%s with a string one digit short of the placeholder's shape: status %ld, from the origin",
                in->control_url, a.status);
        t0 = probe_now_ms();
        if (proxied_get(in->control_url, in->placeholder, &a, why, sizeof(why)) < 0)
                return !probe_emit_ok("broker-egress", false, t0, "%s with the placeholder: %s",
                                      in->control_url, why);
        refused = a.status == 403 && strstr(a.denied, PLACEHOLDER_REASON);
        /* A proxy started before its configuration had the rule lets it pass: say what mends that. */
        return !probe_emit_ok(
                "broker-egress", refused, t0,
                "%s with the placeholder in x-api-key and the query: status %ld, X-Egress-Denied: "
                "%s%s",
                in->control_url, a.status, a.denied[0] ? a.denied : "(none)",
                refused ? ""
                        : " (a proxy started from an older configuration: agentic-job egress "
                          "stop, then egress start)");
}

int key_probes_run(const KeyProbeInput *in)
{
        int failed = 0;

        failed += !probe_control(in);
        failed += !probe_files(in);
        failed += !probe_processes(in);
        failed += probe_egress(in);
        return failed;
}
