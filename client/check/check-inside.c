/* SPDX-License-Identifier: MIT */
#include "check-inside.h"

#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "parse.h"
#include "probes.h"

/* In the order of the table (probe-table.c); a unit test holds the two to each other. */
static const char *const fixed_names[] = {
        "groups-control",
        "groups",
        "ptrace-scope-control",
        "ptrace-scope",
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
        "network-control",
        "metadata",
        "egress-post",
        "egress-direct",
        "local-tcp-control",
        "local-tcp",
        "local-abstract-control",
        "local-abstract",
        "local-udp",
        "cron",
        "at",
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
                        if (strncmp(val, "http://", 7) != 0 && strncmp(val, "https://", 8) != 0)
                                return aj_error(reterr, EINVAL, 0, 0, "--control-url: not an http(s) URL");
                        a.control_url = val;
                } else if (strcmp(o, "--abstract") == 0 && !a.abstract) {
                        if (strncmp(val, PROBE_ABSTRACT_PREFIX, strlen(PROBE_ABSTRACT_PREFIX)) != 0 ||
                            strlen(val) > 100)
                                return aj_error(reterr, EINVAL, 0, 0, "--abstract: not the check's name");
                        a.abstract = val;
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
                } else
                        return aj_error(reterr, EINVAL, 0, 0, "unknown, repeated or one too many: %s", o);
        }
        if (!have_proxy || !have_manager || !have_post || !have_tcp || !have_udp || !a.control_url ||
            !a.abstract)
                return aj_error(reterr, EINVAL, 0, 0,
                                "--proxy-port, --user-manager, --tcp-control, --control-url and --abstract "
                                "are needed");
        *ret = a;
        return 0;
}

int inside_expected_names(char *const *dirs, size_t n, char ***ret_names)
{
        _cleanup_strv_free_ char **v = calloc(ELEMENTSOF(fixed_names) + n + 1, sizeof(char *));
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
        *ret_names = TAKE_PTR(v);
        return 0;
}
