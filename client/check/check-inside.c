/* SPDX-License-Identifier: MIT */
#include "check-inside.h"

#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "macro.h"
#include "parse.h"
#include "probes.h"

/* In the order of the table (probe-table.c); a unit test holds the two to each other. */
static const char *const fixed_names[] = {
        "groups-control",
        "groups",
        "sudo-control",
        "sudo",
        "ptrace-scope-control",
        "ptrace-scope",
        "environ-runner",
        "proc-mem",
        "ptrace-runner",
        "signal-runner",
        "tiocsti",
        "environ-sandbox-control",
        "environ-canary",
        "environ-job-variables",
        "env-job-variables",
        "state-write-control",
        "state-write",
        "user-manager-control",
        "user-manager",
        "polkit-control",
        "polkit",
        "linger-control",
        "linger",
        "run0-control",
        "run0",
        "userns-restricted-control",
        "userns-restricted",
        "resources-control",
        "oom-score",
        "tasks-budget",
        "memory-budget",
        "network-control",
        "metadata",
        "egress-post",
        "egress-read",
        "egress-fronting",
        "egress-proxy-metadata",
        "egress-proxy-local",
        "egress-direct",
        "egress-tcp",
        "egress-udp",
        "egress-dns",
        "egress-ipv6",
        "egress-resolve",
        "userns-net-control",
        "userns-net",
        "local-tcp-control",
        "local-tcp",
        "local-abstract-control",
        "local-abstract",
        "local-sockets-control",
        "local-sockets",
        "local-udp",
        "cron",
        "at",
        "service-control",
        "container-pull",
        "container-build",
        "container-built-run",
        "container-control",
        "container-metadata",
        "egress-container-post",
        "egress-container-direct",
        "egress-container-own-network",
};

static int number(const char *s, uint64_t max, unsigned long *ret)
{
        uint64_t v;
        int r = parse_decimal(s, strlen(s), max, &v);

        if (r < 0)
                return r;
        *ret = (unsigned long)v;
        return 0;
}

/* A planned probe's name without "-refused": each of the four at most once, in either form. */
static size_t base_length(const char *name)
{
        size_t n = strlen(name);

        return n > 8 && strcmp(name + n - 8, "-refused") == 0 ? n - 8 : n;
}

static bool ip_literal(const char *s)
{
        unsigned char buf[16];

        return inet_pton(AF_INET, s, buf) == 1 || inet_pton(AF_INET6, s, buf) == 1;
}

bool inside_front_name_ok(const char *name)
{
        size_t len = strlen(name);

        return len > 0 && len <= 253 && name[0] != '-' && name[0] != '.' &&
               strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-") == len &&
               strspn(name, "0123456789.") != len;
}

int inside_args_parse(int argc, char **argv, InsideArgs *ret, AjError *reterr)
{
        InsideArgs a = {};
        bool have_post = false, have_manager = false, have_proxy = false, have_tcp = false, have_udp = false;
        unsigned long v;

        assert(ret);

        for (int i = 1; i < argc; i += 2) {
                const char *o = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;

                if (!val)
                        return aj_error(reterr, EINVAL, 0, 0, "%s needs a value", o);
                if (strcmp(o, "--proxy-port") == 0 && !have_proxy) {
                        if (number(val, 65535, &v) < 0)
                                return aj_error(reterr, EINVAL, 0, 0, "--proxy-port: not a port or 0");
                        a.proxy_port = (unsigned)v;
                        have_proxy = true;
                } else if (strcmp(o, "--user-manager") == 0 && !have_manager) {
                        if (strcmp(val, "kept") != 0 && strcmp(val, "masked") != 0)
                                return aj_error(reterr, EINVAL, 0, 0, "--user-manager: not kept or masked");
                        a.user_manager_kept = strcmp(val, "kept") == 0;
                        have_manager = true;
                } else if (strcmp(o, "--tasks-max") == 0 && !a.tasks_max) {
                        if (number(val, SANDBOX_TASKS_MAX_MAX, &v) < 0 || v < SANDBOX_TASKS_MAX_MIN)
                                return aj_error(reterr, EINVAL, 0, 0, "--tasks-max: not a tasks-max");
                        a.tasks_max = v;
                } else if (strcmp(o, "--post") == 0 && !have_post) {
                        if (strcmp(val, "refused") == 0)
                                a.post = INSIDE_POST_REFUSED;
                        else if (strcmp(val, "admitted") == 0)
                                a.post = INSIDE_POST_ADMITTED;
                        else if (strcmp(val, "none") == 0)
                                a.post = INSIDE_POST_NONE;
                        else
                                return aj_error(reterr, EINVAL, 0, 0,
                                                "--post: not refused, admitted or none");
                        have_post = true;
                } else if (strcmp(o, "--tcp-control") == 0 && !have_tcp) {
                        if (number(val, 65535, &v) < 0 || v == 0)
                                return aj_error(reterr, EINVAL, 0, 0, "--tcp-control: not a port");
                        a.tcp_control = (unsigned)v;
                        have_tcp = true;
                } else if (strcmp(o, "--udp-target") == 0 && !have_udp) {
                        if (number(val, 65535, &v) < 0 || v == 0)
                                return aj_error(reterr, EINVAL, 0, 0, "--udp-target: not a port");
                        a.udp_target = (unsigned)v;
                        have_udp = true;
                } else if (strcmp(o, "--control-url") == 0 && !a.control_url) {
                        _cleanup_(egress_url_done) EgressUrl url = {};
                        AjError e = {};

                        if ((strncmp(val, "http://", 7) != 0 && strncmp(val, "https://", 8) != 0) ||
                            egress_url_parse(val, &url, &e) < 0)
                                return aj_error(reterr, EINVAL, 0, 0, "--control-url: not an http(s) URL");
                        (void)snprintf(a.control_host, sizeof(a.control_host),
                                       strchr(url.host, ':') ? "[%s]" : "%s", url.host);
                        a.control_port = url.port;
                        a.control_url = val;
                } else if (strcmp(o, "--abstract") == 0 && !a.abstract) {
                        if (strncmp(val, PROBE_ABSTRACT_PREFIX, strlen(PROBE_ABSTRACT_PREFIX)) != 0 ||
                            strlen(val) > 100)
                                return aj_error(reterr, EINVAL, 0, 0, "--abstract: not the check's name");
                        a.abstract = val;
                } else if (strcmp(o, "--socket-control") == 0 && !a.socket_control) {
                        if (strncmp(val, "/tmp/" PROBE_ABSTRACT_PREFIX,
                                    strlen("/tmp/" PROBE_ABSTRACT_PREFIX)) != 0 ||
                            strlen(val) > 100 || strstr(val, "/.."))
                                return aj_error(reterr, EINVAL, 0, 0,
                                                "--socket-control: not the check's socket");
                        a.socket_control = val;
                } else if (strcmp(o, "--private") == 0 && a.n_private < INSIDE_MAX_LIST) {
                        if (val[0] != '/' || strlen(val) >= 200)
                                return aj_error(reterr, EINVAL, 0, 0, "--private: not an absolute path");
                        a.private[a.n_private++] = val;
                } else if (strcmp(o, "--allow-tcp") == 0 && a.n_allow_tcp < INSIDE_MAX_LIST) {
                        if (number(val, 65535, &v) < 0 || v == 0)
                                return aj_error(reterr, EINVAL, 0, 0, "--allow-tcp: not a port");
                        a.allow_tcp[a.n_allow_tcp++] = (unsigned)v;
                } else if (strcmp(o, "--allow-socket") == 0 && a.n_allow_socket < INSIDE_MAX_LIST) {
                        a.allow_socket[a.n_allow_socket++] = val;
                } else if (strcmp(o, "--decoy") == 0 && a.decoy == 0) {
                        if (number(val, INT32_MAX, &v) < 0 || v < 2)
                                return aj_error(reterr, EINVAL, 0, 0, "--decoy: not a process id");
                        a.decoy = (pid_t)v;
                } else if (strcmp(o, "--decoy-tty") == 0 && !a.decoy_tty) {
                        const char *n = val + strlen("/dev/pts/");
                        if (strncmp(val, "/dev/pts/", strlen("/dev/pts/")) != 0 ||
                            number(n, 1U << 20, &v) < 0)
                                return aj_error(reterr, EINVAL, 0, 0, "--decoy-tty: not /dev/pts/N");
                        a.decoy_tty = val;
                } else if (strcmp(o, "--canary") == 0 && !a.canary) {
                        if (strlen(val) != 32 || strspn(val, "0123456789abcdef") != 32)
                                return aj_error(reterr, EINVAL, 0, 0, "--canary: not 32 hex digits");
                        a.canary = val;
                } else if (strcmp(o, "--secret") == 0 && a.n_secrets < ENVIRON_MAX_SECRETS) {
                        if (environ_secret_parse(val, &a.secrets[a.n_secrets]) < 0)
                                return aj_error(reterr, EINVAL, 0, 0, "--secret: not NAME=SIZE:SHA256");
                        for (size_t k = 0; k < a.n_secrets; k++)
                                if (strcmp(a.secrets[k].name, a.secrets[a.n_secrets].name) == 0)
                                        return aj_error(reterr, EINVAL, 0, 0, "--secret: %s twice",
                                                        a.secrets[k].name);
                        a.n_secrets++;
                } else if (strcmp(o, "--egress-addr") == 0 && !a.egress_addr) {
                        if (!ip_literal(val))
                                return aj_error(reterr, EINVAL, 0, 0, "--egress-addr: not an IP address");
                        a.egress_addr = val;
                } else if (strcmp(o, "--egress-port") == 0 && a.egress_port == 0) {
                        if (number(val, 65535, &v) < 0 || v == 0)
                                return aj_error(reterr, EINVAL, 0, 0, "--egress-port: not a port");
                        a.egress_port = (unsigned)v;
                } else if (strcmp(o, "--egress-addr6") == 0 && !a.egress_addr6) {
                        unsigned char buf[16];

                        if (inet_pton(AF_INET6, val, buf) != 1)
                                return aj_error(reterr, EINVAL, 0, 0, "--egress-addr6: not an IPv6 address");
                        a.egress_addr6 = val;
                } else if (strcmp(o, "--front") == 0 && !a.front) {
                        if (!inside_front_name_ok(val))
                                return aj_error(reterr, EINVAL, 0, 0, "--front: not a host name");
                        a.front = val;
                } else if (strcmp(o, "--resolve-name") == 0 && !a.resolve_name) {
                        if (strlen(val) > 253 ||
                            strspn(val, "abcdefghijklmnopqrstuvwxyz0123456789.-_") != strlen(val) ||
                            strncmp(val, "agentic-job-check-", 18) != 0)
                                return aj_error(reterr, EINVAL, 0, 0,
                                                "--resolve-name: not the check's name");
                        a.resolve_name = val;
                } else if (strcmp(o, "--nameserver") == 0 && a.n_nameserver < INSIDE_MAX_LIST) {
                        if (!ip_literal(val))
                                return aj_error(reterr, EINVAL, 0, 0, "--nameserver: not an IP address");
                        a.nameserver[a.n_nameserver++] = val;
                } else if (strcmp(o, "--walk") == 0 && !a.walk_dir) {
                        if (strncmp(val, "/tmp/" PROBE_ABSTRACT_PREFIX,
                                    strlen("/tmp/" PROBE_ABSTRACT_PREFIX)) != 0 ||
                            strlen(val) > 100 || strchr(val + 5, '/'))
                                return aj_error(reterr, EINVAL, 0, 0, "--walk: not the check's directory");
                        a.walk_dir = val;
                } else if (strcmp(o, "--service") == 0 && a.n_service < INSIDE_MAX_LIST) {
                        if (!unit_name_valid(val) || strlen(val) > 255)
                                return aj_error(reterr, EINVAL, 0, 0, "--service: not a unit name");
                        a.service[a.n_service++] = val;
                } else if (strcmp(o, "--fetch-repo") == 0 && !a.fetch_repo) {
                        if ((strncmp(val, "http://", 7) != 0 && strncmp(val, "https://", 8) != 0) ||
                            strlen(val) >= EGRESS_PLAN_URL_MAX || strpbrk(val, " \t\r\n"))
                                return aj_error(reterr, EINVAL, 0, 0, "--fetch-repo: not an http(s) URL");
                        a.fetch_repo = val;
                } else if (strcmp(o, "--container-image") == 0 && !a.container_image) {
                        if (!config_image_name_ok(val))
                                return aj_error(reterr, EINVAL, 0, 0,
                                                "--container-image: not an image name");
                        a.container_image = val;
                } else if (strcmp(o, "--egress") == 0 && a.n_planned < EGRESS_PLANNED) {
                        EgressPlanned *p = &a.planned[a.n_planned];

                        if (egress_planned_parse(val, p) < 0)
                                return aj_error(reterr, EINVAL, 0, 0, "--egress: not a planned probe: %s",
                                                val);
                        for (size_t k = 0; k < a.n_planned; k++)
                                if (base_length(a.planned[k].name) == base_length(p->name) &&
                                    strncmp(a.planned[k].name, p->name, base_length(p->name)) == 0)
                                        return aj_error(reterr, EINVAL, 0, 0, "--egress: %s twice", p->name);
                        a.n_planned++;
                } else if (strcmp(o, "--only") == 0 && a.n_only < INSIDE_MAX_LIST) {
                        if (!probe_group_known(val))
                                return aj_error(reterr, EINVAL, 0, 0, "--only: no group %s", val);
                        a.only[a.n_only++] = val;
                } else
                        return aj_error(reterr, EINVAL, 0, 0, "unknown, repeated or one too many: %s", o);
        }
        if (!have_proxy || !have_manager || !have_post || !have_tcp || !have_udp || !a.control_url ||
            !a.abstract || !a.socket_control || !a.decoy || !a.decoy_tty || !a.canary || !a.fetch_repo)
                return aj_error(reterr, EINVAL, 0, 0,
                                "--proxy-port, --user-manager, --post, --tcp-control, --udp-target, "
                                "--control-url, --fetch-repo, --abstract, --socket-control, --decoy, "
                                "--decoy-tty and "
                                "--canary are needed");
        if ((a.egress_addr || a.egress_addr6) && !a.egress_port)
                return aj_error(reterr, EINVAL, 0, 0, "--egress-addr and --egress-addr6 need --egress-port");
        if (a.egress_port && !a.egress_addr && !a.egress_addr6)
                return aj_error(reterr, EINVAL, 0, 0, "--egress-port needs --egress-addr or --egress-addr6");
        *ret = a;
        return 0;
}

int inside_expected_names(char *const *dirs, size_t n, char *const *secrets, size_t n_secrets,
                          char *const *services, const EgressPlanned *planned, size_t n_planned, bool walk,
                          char ***ret_names)
{
        static const char *const walk_names[] = { INSIDE_WALK_NAMES };
        size_t n_services = strv_length(services);
        _cleanup_strv_free_ char **v = calloc(ELEMENTSOF(fixed_names) + n + n_secrets + n_services +
                                                      n_planned + ELEMENTSOF(walk_names) + 1,
                                              sizeof(char *));
        size_t k = 0;

        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < ELEMENTSOF(fixed_names); i++)
                if (!(v[k++] = strdup(fixed_names[i])))
                        return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                if (asprintf(&v[k++], "private-dir:%s", dirs[i]) < 0) {
                        v[k - 1] = NULL;
                        return -ENOMEM;
                }
        for (size_t i = 0; i < n_secrets; i++)
                if (asprintf(&v[k++], "oidc-value:%s", secrets[i]) < 0) {
                        v[k - 1] = NULL;
                        return -ENOMEM;
                }
        for (size_t i = 0; i < n_services; i++)
                if (asprintf(&v[k++], "service:%s", services[i]) < 0) {
                        v[k - 1] = NULL;
                        return -ENOMEM;
                }
        for (size_t i = 0; i < n_planned; i++)
                if (!(v[k++] = strdup(planned[i].name)))
                        return -ENOMEM;
        for (size_t i = 0; walk && i < ELEMENTSOF(walk_names); i++)
                if (!(v[k++] = strdup(walk_names[i])))
                        return -ENOMEM;
        *ret_names = TAKE_PTR(v);
        return 0;
}
