/* SPDX-License-Identifier: MIT */
/* The containers of the sandbox user's own: rootless podman, run by the sandbox user, must be held by the
 * rules that hold the user. A container on the host's network sends as the sandbox uid (the proxy, the
 * nftables rules); one with a network of its own has it from slirp4netns or pasta, which connect for it
 * as the sandbox uid. Where podman cannot start for the sandbox user at all (under enter's no_new_privs,
 * newuidmap cannot map subordinate uids), nothing here can run: every probe says so in a note. */
#include "probe-containers.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "egress-env.h"
#include "macro.h"
#include "probe-emit.h"
#include "probe-run.h"

#define CA_INSIDE       "/run/agentic-job-check-ca.pem"
#define METADATA_URL    "http://169.254.169.254/"
#define BUILD_MS        20000
#define OUT_MAX         2048
#define CONTAINER_NAMES 8

static const char *const names[CONTAINER_NAMES] = {
        "container-pull",          "container-build",
        "container-built-run",     "container-control",
        "container-metadata",      "egress-container-post",
        "egress-container-direct", "egress-container-own-network",
};

extern char **environ;

/* The image's id in the check's own store, once container-pull has pulled it (one thread runs them all). */
static char image_id[65];

/* Every name from first on, as notes. */
static void notes_from(size_t first, long long t, const char *why)
{
        for (size_t i = first; i < CONTAINER_NAMES; i++)
                probe_emit(names[i], "note", t, "not probed: %s", why);
}

/* podman ARGS... with our environment (its proxy variables for a pull), standard error merged. */
static int podman(char *out, size_t size, long long ms, const char *const *args)
{
        const char *argv[48] = { PROBE_PODMAN };
        size_t k = 1;

        for (size_t i = 0; args[i] && k < ELEMENTSOF(argv) - 1; i++)
                argv[k++] = args[i];
        argv[k] = NULL;
        out[0] = '\0';
        return probe_run_timed((char *const *)argv, environ, out, size, true, ms);
}

typedef struct Fetched {
        char code[4];   /* curl's HTTP code ("000" for none); "" where curl did not run */
        bool connected; /* curl's connection was made (its time_connect is not 0) */
        int curl;       /* curl's status, where it ran */
        char why[320];  /* curl's status, or podman's and its last words */
} Fetched;

/* curl in a container of the image: on the host's network (host) or on one of its own, the proxy's
 * certificate authority mounted (ca), no proxy variable passed in; curl's options in curl_args. */
static void container_curl(bool host, bool ca, const char *const *curl_args, Fetched *ret)
{
        const char *args[40] = { "run", "--rm", "--pull=never", "--http-proxy=false" };
        char out[OUT_MAX], *nl, *end;
        size_t k = 4;
        int r;

        if (host)
                args[k++] = "--network=host";
        if (ca) {
                args[k++] = "-v";
                args[k++] = EGRESS_CA_PATH ":" CA_INSIDE ":ro";
        }
        args[k++] = image_id;
        args[k++] = "curl";
        args[k++] = "-q";
        args[k++] = "-s";
        args[k++] = "-o";
        args[k++] = "/dev/null";
        args[k++] = "-w";
        args[k++] = "\\n%{http_code} %{time_connect}";
        for (size_t i = 0; curl_args[i] && k < ELEMENTSOF(args) - 1; i++)
                args[k++] = curl_args[i];
        args[k] = NULL;
        r = podman(out, sizeof(out), PROBE_PROGRAM_MS, args);
        nl = strrchr(out, '\n');
        *ret = (Fetched){};
        /* curl's last line is "CODE SECONDS", and curl ran only where podman's status is curl's (podman's
         * own failures are 125, 126 and 127). */
        if (nl && strlen(nl + 1) > 4 && strspn(nl + 1, "0123456789") == 3 && nl[4] == ' ' && r >= 0 &&
            r < 125) {
                double connect;

                errno = 0;
                connect = strtod(nl + 5, &end);
                if (errno == 0 && *end == '\0' && end != nl + 5) {
                        memcpy(ret->code, nl + 1, 3);
                        ret->connected = connect > 0;
                        ret->curl = r;
                        (void)snprintf(ret->why, sizeof(ret->why), "curl status %d%s", r,
                                       ret->connected ? ", connected" : "");
                        return;
                }
        }
        (void)snprintf(ret->why, sizeof(ret->why), "podman status %d: %.200s", r, probe_last_line(out));
}

static bool answered(const char code[4])
{
        return code[0] >= '1' && code[0] <= '5';
}

/* Whether a fetch around the proxy got anywhere: an answer, or a connection. */
static bool reached(const Fetched *f)
{
        return answered(f->code) || f->connected;
}

/* Whether it was stopped where it should be: no connection, curl's "could not connect" (7) or its
 * timeout (28). Anything else (a curl that failed before it tried, say for want of roots to check a
 * certificate with, as the curl of Debian 12 does) proves nothing. */
static bool refused(const Fetched *f)
{
        return !reached(f) && (f->curl == 7 || f->curl == 28);
}

/* A result around the proxy: fail where it got anywhere or proves nothing. */
static void emit_around(const char *name, long long t, const Fetched *f, const char *what)
{
        if (!f->code[0])
                probe_emit(name, "fail", t, "%s: curl did not run in the container: %s", what, f->why);
        else
                probe_emit(name, refused(f) ? "ok" : "fail", t, "%s: %s (%s)", what,
                           reached(f)   ? "reached"
                           : refused(f) ? "not reached"
                                        : "neither reached nor refused",
                           f->why);
}

/* container-pull: the image pulled into the check's own store (probe_podman_pull()), never taken from the
 * sandbox user's, where an earlier step may have stored anything under the image's name: a curl that
 * answers as refused would forge every probe below. Its id, for them, in image_id. */
static int pull(const InsideArgs *a)
{
        long long t = probe_now_ms();
        char why[512];
        int r;

        r = probe_podman_pull(a->container_image, image_id, why, sizeof(why));
        if (r != 0) {
                probe_emit("container-pull", "fail", t, "%s", why);
                return -ENOENT;
        }
        probe_emit("container-pull", "ok", t, "podman pull %s into the check's own store: %.12s",
                   a->container_image, image_id);
        return 0;
}

/* container-build and container-built-run: an image built FROM the image with RUN true, without a network
 * and without pulling, then run, then removed. */
static void build_and_run(const InsideArgs *a)
{
        char dir[] = "/tmp/agentic-job-check-build.XXXXXX", file[64], tag[80], out[OUT_MAX];
        long long t = probe_now_ms();
        FILE *f;
        int r;

        (void)snprintf(tag, sizeof(tag), "localhost/agentic-job-check-built:%ld", (long)getpid());
        if (!mkdtemp(dir)) {
                probe_emit("container-build", "fail", t, "cannot make a directory for the recipe: %s",
                           strerror(errno));
                probe_emit("container-built-run", "fail", t, "not run: the build did not run");
                return;
        }
        (void)snprintf(file, sizeof(file), "%s/Containerfile", dir);
        f = fopen(file, "wxe");
        r = f && fprintf(f, "FROM %s\nRUN true\n", image_id) > 0 ? 0 : -EIO;
        if (f && fclose(f) != 0)
                r = -EIO;
        if (r == 0)
                r = podman(out, sizeof(out), BUILD_MS,
                           (const char *const[]){ "build", "-q", "--network=none", "--pull=never", "-t", tag,
                                                  "-f", file, dir, NULL });
        else
                (void)snprintf(out, sizeof(out), "cannot write %s", file);
        (void)unlink(file);
        (void)rmdir(dir);
        if (r != 0) {
                probe_emit("container-build", "fail", t,
                           "FROM %s, RUN true, without a network: status %d: %.200s", a->container_image, r,
                           probe_last_line(out));
                probe_emit("container-built-run", "fail", probe_now_ms(), "not run: the build failed");
                return;
        }
        probe_emit("container-build", "ok", t, "FROM %s, RUN true, without a network and without a pull",
                   a->container_image);
        t = probe_now_ms();
        r = podman(
                out, sizeof(out), PROBE_PROGRAM_MS,
                (const char *const[]){ "run", "--rm", "--pull=never", "--network=none", tag, "true", NULL });
        if (r == 0)
                probe_emit("container-built-run", "ok", t, "the image built ran true");
        else
                probe_emit("container-built-run", "fail", t, "the image built, run: status %d: %.200s", r,
                           probe_last_line(out));
        (void)podman(out, sizeof(out), PROBE_PROGRAM_MS, (const char *const[]){ "rmi", "-f", tag, NULL });
}

void probe_containers(const InsideArgs *a)
{
        char out[OUT_MAX], why[320], proxy[40], resolve[EGRESS_HOST_MAX + 80], plain[EGRESS_HOST_MAX + 20],
                what[EGRESS_HOST_MAX + 160];
        Fetched f;
        long long t = probe_now_ms();
        bool have_proxy = a->proxy_port != 0;
        int r;

        if (!a->container_image) {
                notes_from(0, t, "[sandbox.check] containers = false");
                return;
        }
        if (access(PROBE_PODMAN, X_OK) < 0) {
                notes_from(0, t, "no " PROBE_PODMAN " that the sandbox user may run");
                return;
        }
        if (probe_podman_info("{{.Host.Security.Rootless}}", out, sizeof(out), why, sizeof(why)) != 0) {
                notes_from(0, t, why);
                return;
        }
        if (pull(a) < 0) {
                notes_from(1, probe_now_ms(), "container-pull failed");
                return;
        }
        build_and_run(a);

        /* The control: control-url from a container on the host's network, through the proxy (its
         * authority mounted), or directly without one. */
        t = probe_now_ms();
        (void)snprintf(proxy, sizeof(proxy), "http://127.0.0.1:%u", a->proxy_port);
        if (have_proxy)
                container_curl(true, true,
                               (const char *const[]){ "-m", "5", "--cacert", CA_INSIDE, "--noproxy", "",
                                                      "-x", proxy, "--", a->control_url, NULL },
                               &f);
        else
                container_curl(
                        true, false,
                        (const char *const[]){ "-m", "5", "--noproxy", "*", "--", a->control_url, NULL },
                        &f);
        if (!answered(f.code) || f.code[0] == '4' || f.code[0] == '5') {
                probe_emit("container-control", "fail", t,
                           "%s from a container on the host's network%s: %s%s (%s)", a->control_url,
                           have_proxy ? ", through the proxy" : "", f.code[0] ? "HTTP " : "curl did not run",
                           f.code, f.why);
                notes_from(4, probe_now_ms(), "container-control failed");
                return;
        }
        probe_emit("container-control", "ok", t, "%s answered %s to a container on the host's network%s",
                   a->control_url, f.code, have_proxy ? ", through the proxy" : "");

        /* The metadata service, directly, from the host's network. */
        t = probe_now_ms();
        container_curl(true, false,
                       (const char *const[]){ "--connect-timeout", "2", "-m", "4", "--noproxy", "*", "--",
                                              METADATA_URL, NULL },
                       &f);
        emit_around("container-metadata", t, &f,
                    METADATA_URL " from a container on the host's network, around the proxy");

        /* A write through the proxy, which the policy refuses with its mark. */
        t = probe_now_ms();
        if (a->post == INSIDE_POST_NONE)
                probe_emit("egress-container-post", "note", t,
                           "[egress] proxy = false: no proxy to refuse a write");
        else if (a->post == INSIDE_POST_ADMITTED)
                probe_emit("egress-container-post", "note", t,
                           "not probed: the egress policy admits a POST to %s", a->control_url);
        else {
                const char *args[] = { "run",
                                       "--rm",
                                       "--pull=never",
                                       "--http-proxy=false",
                                       "--network=host",
                                       "-v",
                                       EGRESS_CA_PATH ":" CA_INSIDE ":ro",
                                       image_id,
                                       "curl",
                                       "-q",
                                       "-s",
                                       "-o",
                                       "/dev/null",
                                       "-D",
                                       "-",
                                       "-m",
                                       "5",
                                       "--cacert",
                                       CA_INSIDE,
                                       "--noproxy",
                                       "",
                                       "-x",
                                       proxy,
                                       "-d",
                                       "agentic-job-check",
                                       "--",
                                       a->control_url,
                                       NULL };
                unsigned status;
                bool denied;

                r = podman(out, sizeof(out), PROBE_PROGRAM_MS, args);
                probe_last_response(out, &status, &denied);
                if (status == 403 && denied)
                        probe_emit("egress-container-post", "ok", t,
                                   "POST %s from a container, through the proxy: 403 with X-Egress-Denied",
                                   a->control_url);
                else
                        probe_emit("egress-container-post", "fail", t,
                                   "POST %s from a container, which the policy refuses: %s %u (status %d)",
                                   a->control_url, denied ? "HTTP" : "HTTP, without X-Egress-Denied,",
                                   status, r);
        }

        /* control-url's address around the proxy: from the host's network, then from a network of the
         * container's own (slirp4netns or pasta). The runner's address, so that no resolver decides. */
        t = probe_now_ms();
        if (!have_proxy) {
                probe_emit("egress-container-direct", "note", t,
                           "[egress] proxy = false: the sandbox reaches the network directly");
                probe_emit("egress-container-own-network", "note", t,
                           "[egress] proxy = false: the sandbox reaches the network directly");
                return;
        }
        if (!a->egress_addr) {
                notes_from(6, t, "control-url's host did not resolve for the runner");
                return;
        }
        (void)snprintf(resolve, sizeof(resolve),
                       strchr(a->egress_addr, ':') ? "%s:%u:[%s]:%u" : "%s:%u:%s:%u", a->control_host,
                       a->egress_port, a->egress_addr, a->egress_port);
        /* Plain HTTP to control-url's port: the connection is the question, and no TLS of the image's
         * curl stands before it. */
        (void)snprintf(plain, sizeof(plain), "http://%s:%u/", a->control_host, a->egress_port);
        for (size_t i = 6; i < CONTAINER_NAMES; i++) {
                bool host = i == 6;

                t = probe_now_ms();
                container_curl(host, false,
                               (const char *const[]){ "--connect-timeout", "2", "-m", "5", "--noproxy", "*",
                                                      "--connect-to", resolve, "--", plain, NULL },
                               &f);
                (void)snprintf(what, sizeof(what), "%s (%s) port %u from a container %s, around the proxy",
                               a->control_host, a->egress_addr, a->egress_port,
                               host ? "on the host's network" : "with a network of its own");
                if (!host && !f.code[0])
                        probe_emit(names[i], "note", t,
                                   "not probed: no container with a network of its own "
                                   "started: %s",
                                   f.why);
                else
                        emit_around(names[i], t, &f, what);
        }
}
