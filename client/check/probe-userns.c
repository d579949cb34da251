/* SPDX-License-Identifier: MIT */
/* userns-net: a user and network namespace of the sandbox user's own, made to get around the rules.
 * unshare(2) alone gives a namespace with no link out. pasta (passt) gives it one: a process in the
 * original namespace that makes the connections the namespace asks for, as the sandbox user, so the
 * nftables rules on its uid must refuse them as they refuse its own.
 *
 * userns-restricted: where AppArmor restricts user namespaces (apparmor-userns.h), setup's profile lets
 * bubblewrap alone make one with capabilities in it. The control: bubblewrap makes one. The probe: this
 * program, which no profile names, as any of the sandbox user's, tries what only a capability in a user
 * namespace of its own allows (its uid map, then a mount in a mount namespace of its own). */
#include "probe-userns.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "apparmor-userns.h"
#include "bwrap.h"
#include "egress-attempt.h"
#include "macro.h"
#include "probe-emit.h"
#include "probe-run.h"

#define PASTA       "/usr/bin/pasta"
#define SLIRP4NETNS "/usr/bin/slirp4netns"
#define ROUTE_PATH  "/proc/net/route"

/* In a child, a new user and network namespace, then the connection: 0 it connected, else errno (the
 * namespace's, where unshare failed: then with UNSHARE_FAILED added). */
#define UNSHARE_FAILED 1000

static int try_in_new_namespace(const struct sockaddr *sa, socklen_t len)
{
        int status;
        pid_t pid = fork();

        if (pid < 0)
                return -errno;
        if (pid == 0) {
                /* Only system calls here, as a threaded parent requires; the result in the exit status. */
                if (unshare(CLONE_NEWUSER | CLONE_NEWNET) < 0)
                        _exit(errno == EPERM ? 200 : errno == EINVAL ? 201 : errno == ENOSPC ? 202 : 203);
                int r = egress_try_tcp(sa, len);
                _exit(r == 0 ? 0 : r == -ENETUNREACH ? 1 : r == -ETIMEDOUT ? 2 : 3);
        }
        if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
                return -ECHILD;
        switch (WEXITSTATUS(status)) {
        case 0:
                return 0;
        case 1:
                return ENETUNREACH;
        case 2:
                return ETIMEDOUT;
        case 3:
                return ECONNREFUSED;
        case 200:
                return UNSHARE_FAILED + EPERM;
        case 201:
                return UNSHARE_FAILED + EINVAL;
        case 202:
                return UNSHARE_FAILED + ENOSPC;
        default:
                return UNSHARE_FAILED + EIO;
        }
}

/* The default route's gateway (IPv4), which pasta maps to the host's loopback inside its namespace. */
static int default_gateway(char *buf, size_t size)
{
        FILE *f = fopen(ROUTE_PATH, "re");
        char line[256];
        int r = -ENOENT;

        if (!f)
                return -errno;
        while (r < 0 && fgets(line, sizeof(line), f)) {
                /* Iface, Destination, Gateway, Flags: hexadecimal but the first. */
                unsigned long v[3];
                char *save = NULL, *field;
                struct in_addr a;
                size_t k = 0;

                (void)strtok_r(line, " \t\n", &save); /* the interface */
                for (field = strtok_r(NULL, " \t\n", &save); field && k < 3;
                     field = strtok_r(NULL, " \t\n", &save)) {
                        char *end;

                        errno = 0;
                        v[k] = strtoul(field, &end, 16);
                        if (errno || *end || end == field || v[k] > UINT32_MAX)
                                break;
                        k++;
                }
                if (k < 3 || v[0] != 0 || !(v[2] & 0x2) || v[1] == 0)
                        continue;
                a.s_addr = (uint32_t)v[1]; /* the kernel prints the address's bytes as a native integer */
                r = inet_ntop(AF_INET, &a, buf, (socklen_t)size) ? 0 : -errno;
        }
        fclose(f);
        return r;
}

/* pasta's namespace: the control reaches the proxy through the gateway (the host's loopback), the probe
 * connects to control-url's address without it. "" or what went wrong in *why. */
static void through_pasta(const InsideArgs *a, bool *ret_control, bool *ret_reached, char *why, size_t size)
{
        char gw[INET_ADDRSTRLEN], proxy[64], connect_to[600], out[1024] = "";
        const char *code;
        int r;

        *ret_control = *ret_reached = false;
        if (default_gateway(gw, sizeof(gw)) < 0) {
                (void)snprintf(why, size, "no default route for pasta to copy");
                return;
        }
        (void)snprintf(proxy, sizeof(proxy), "http://%s:%u", gw, a->proxy_port);
        /* pasta's own complaints on standard error, curl's code last. */
        r = probe_run_capture((char *const[]){ (char *)PASTA, (char *)"--config-net", (char *)"--quiet",
                                               (char *)"--", (char *)PROBE_CURL, (char *)"-q", (char *)"-s",
                                               (char *)"-o", (char *)"/dev/null", (char *)"-w",
                                               (char *)"\\n%{http_code}", (char *)"-m", (char *)"5",
                                               (char *)"--noproxy", (char *)"", (char *)"-x", proxy,
                                               (char *)a->control_url, NULL },
                              environ, out, sizeof(out), true);
        code = strrchr(out, '\n') ? strrchr(out, '\n') + 1 : out;
        if (r != 0 || code[0] < '1' || code[0] > '3') {
                out[strcspn(out, "\n")] = '\0';
                (void)snprintf(why, size, "in pasta's namespace, the proxy at %s: status %d: %.160s", proxy,
                               r, out[0] ? out : "no answer");
                return;
        }
        *ret_control = true;
        /* The address the runner resolved, not the name: nothing resolves names for the namespace. */
        (void)snprintf(connect_to, sizeof(connect_to),
                       strchr(a->egress_addr, ':') ? "%s:%u:[%s]:%u" : "%s:%u:%s:%u", a->control_host,
                       a->egress_port, a->egress_addr, a->egress_port);
        out[0] = '\0';
        /* The connection within EGRESS_TRY_MS, as egress-tcp's: pasta of Debian 12 does not pass a refused
         * connection on to the namespace, whose connect() then waits. */
        r = probe_run((char *const[]){ (char *)PASTA,
                                       (char *)"--config-net",
                                       (char *)"--quiet",
                                       (char *)"--",
                                       (char *)PROBE_CURL,
                                       (char *)"-q",
                                       (char *)"-s",
                                       (char *)"-o",
                                       (char *)"/dev/null",
                                       (char *)"-w",
                                       (char *)"%{http_code}",
                                       (char *)"--connect-timeout",
                                       (char *)"2",
                                       (char *)"-m",
                                       (char *)"5",
                                       (char *)"--noproxy",
                                       (char *)"*",
                                       (char *)"--connect-to",
                                       connect_to,
                                       (char *)a->control_url,
                                       NULL },
                      environ, out, sizeof(out));
        /* Not reached only where curl said so itself: a curl that a signal ended, or that never ran,
         * tells nothing (pasta passes curl's status on, or 0). */
        *ret_reached = r < 0 || r == 127 || r >= PROBE_SIGNALLED || strcmp(out, "000") != 0;
        (void)snprintf(why, size, "from pasta's namespace, %s (%s) port %u: %s", a->control_host,
                       a->egress_addr, a->egress_port, *ret_reached ? "answered" : "not reached");
}

void probe_userns_net(const InsideArgs *a)
{
        struct sockaddr_storage ss;
        socklen_t len = 0;
        long long t = probe_now_ms();
        char pasta_why[512] = "";
        bool have_pasta = access(PASTA, X_OK) == 0, pasta_control = false, pasta_reached = false;
        int r;

        if (a->proxy_port == 0) {
                probe_emit("userns-net-control", "note", t, "[egress] proxy = false: not probed");
                probe_emit("userns-net", "note", t,
                           "[egress] proxy = false: the sandbox reaches the network directly");
                return;
        }
        if (!a->egress_addr || egress_sockaddr(a->egress_addr, a->egress_port, &ss, &len) < 0) {
                probe_emit("userns-net-control", "note", t,
                           "not probed: control-url's host did not resolve for the runner");
                probe_emit("userns-net", "note", t,
                           "not probed: control-url's host did not resolve for the runner");
                return;
        }
        r = try_in_new_namespace((struct sockaddr *)&ss, len);
        if (r < 0 || r > UNSHARE_FAILED) {
                probe_emit("userns-net-control", "note", t,
                           "the sandbox user may not make a user namespace: %s",
                           strerror(r < 0 ? -r : r - UNSHARE_FAILED));
                probe_emit("userns-net", "note", t, "not probed: no user namespace for the sandbox user");
                return;
        }
        if (have_pasta)
                through_pasta(a, &pasta_control, &pasta_reached, pasta_why, sizeof(pasta_why));
        if (have_pasta && !pasta_control)
                probe_emit("userns-net-control", "fail", t, "%s", pasta_why);
        else
                probe_emit("userns-net-control", "ok", t,
                           "the sandbox user makes a user and network namespace%s",
                           have_pasta ? "; pasta's reaches the proxy through its gateway" : " (no pasta)");
        t = probe_now_ms();
        if (r == 0)
                probe_emit("userns-net", "fail", t, "from a namespace of unshare(2), %s port %u answered",
                           a->egress_addr, a->egress_port);
        else if (have_pasta && pasta_reached)
                probe_emit("userns-net", "fail", t, "%s", pasta_why);
        else if (have_pasta && !pasta_control)
                probe_emit("userns-net", "note", t, "not probed through pasta: its control failed");
        else
                probe_emit("userns-net", "ok", t,
                           "from a namespace of unshare(2), %s port %u not reached (%s)%s%s%s",
                           a->egress_addr, a->egress_port, strerror(r), have_pasta ? "; " : "; no pasta",
                           pasta_why, access(SLIRP4NETNS, X_OK) == 0 ? "; slirp4netns not probed" : "");
}

/* ---- userns-restricted ---- */

/* bubblewrap, which setup's profile names, makes a user namespace. */
static void userns_restricted_control(long long t)
{
        char *bwrap[] = { (char *)BWRAP_PATH,
                          (char *)"--unshare-user",
                          (char *)"--ro-bind",
                          (char *)"/",
                          (char *)"/",
                          (char *)"/bin/true",
                          NULL };
        char *env[] = { (char *)"PATH=/usr/bin:/bin", NULL };
        char out[512] = "";
        int r;

        if (access(BWRAP_PATH, X_OK) < 0) {
                probe_emit("userns-restricted-control", "note", t, "%s is not installed", BWRAP_PATH);
                return;
        }
        r = probe_run_capture(bwrap, env, out, sizeof(out), true);
        if (r == 0) {
                probe_emit("userns-restricted-control", "ok", t,
                           "%s, which setup's AppArmor profile names, makes a user namespace", BWRAP_PATH);
        } else {
                char how[64];

                probe_emit("userns-restricted-control", "fail", t,
                           "%s --unshare-user: %s: %s (its AppArmor profile, "
                           "/etc/apparmor.d/agentic-job-bwrap, "
                           "missing or not loaded?)",
                           BWRAP_PATH, probe_status_text(r, how, sizeof(how)), probe_last_line(out));
        }
}

void probe_userns_restricted(void)
{
        static const char *const steps[] = { [USERNS_STEP_UNSHARE] = "unshare(CLONE_NEWUSER)",
                                             [USERNS_STEP_UID_MAP] = "writing its uid map",
                                             [USERNS_STEP_MOUNT_NS] = "unshare(CLONE_NEWNS)",
                                             [USERNS_STEP_MOUNT] = "mounting a tmpfs" };
        long long t = probe_now_ms();
        int restricted = apparmor_userns_restricted(APPARMOR_USERNS_SYSCTL), r, e = 0;

        if (restricted <= 0) {
                const char *why =
                        restricted == 0
                                ? "AppArmor does not restrict user namespaces here (" APPARMOR_USERNS_SYSCTL
                                  " is not 1): nothing to prove"
                                : "cannot read " APPARMOR_USERNS_SYSCTL;

                probe_emit("userns-restricted-control", "note", t, "%s", why);
                probe_emit("userns-restricted", "note", t, "%s", why);
                return;
        }
        userns_restricted_control(t);
        t = probe_now_ms();
        r = userns_capability_try(&e);
        if (r < 0)
                probe_emit("userns-restricted", "fail", t, "cannot tell: %s", strerror(-r));
        else if (r == 0)
                probe_emit(
                        "userns-restricted", "fail", t,
                        "a program no AppArmor profile names made a user namespace, wrote its uid map and "
                        "mounted a tmpfs in it");
        else if (r > USERNS_STEP_MOUNT)
                probe_emit("userns-restricted", "fail", t, "cannot tell: the child ended with %d", r);
        else
                probe_emit("userns-restricted", "ok", t,
                           "a program no AppArmor profile names gets no capability in a user namespace: %s "
                           "refused (%s)",
                           steps[r], strerror(e));
}
