/* SPDX-License-Identifier: MIT */
/* What the runner side tells the sandbox side, on its command line (nothing secret), and the names of the
 * results the sandbox side owes. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "config.h"
#include "egress-plan.h"
#include "egress-policy.h"
#include "environ-scan.h"
#include "error.h"

/* Each list the sandbox side takes: one of the configuration's whole (config.c refuses a longer one), and
 * one more for --private, whose first entry is the runner's home. */
#define INSIDE_MAX_LIST (CONFIG_LIST_MAX + 1)

typedef enum InsidePost {
        INSIDE_POST_NONE,     /* no proxy */
        INSIDE_POST_REFUSED,  /* the policy refuses a POST with a body to control-url */
        INSIDE_POST_ADMITTED, /* it admits one: not probed */
} InsidePost;

typedef struct InsideArgs {
        unsigned proxy_port;     /* --proxy-port N: 0 without the proxy */
        const char *control_url; /* --control-url URL */
        /* control-url's host as a URL, a Host header and curl's --connect-to write it (an IPv6 address in
         * brackets), and its port: egress_url_parse() of it, once. */
        char control_host[EGRESS_HOST_MAX + 2];
        unsigned control_port;
        unsigned tcp_control; /* --tcp-control PORT: the runner's listener on 127.0.0.1 */
        unsigned udp_target;  /* --udp-target PORT: the runner's echoing UDP socket on 127.0.0.1 and ::1 */
        const char *abstract; /* --abstract NAME: the runner's abstract socket, without '@' */
        const char *socket_control; /* --socket-control PATH: the runner's socket on a path, in /tmp */
        bool user_manager_kept;     /* --user-manager kept|masked: [sandbox] user-manager */
        unsigned long tasks_max;    /* --tasks-max N: [sandbox] tasks-max; 0 where not given */
        InsidePost post;            /* --post refused|admitted|none: the policy on a POST to control-url */
        const char *private[INSIDE_MAX_LIST]; /* --private DIR, each */
        size_t n_private;
        unsigned allow_tcp[INSIDE_MAX_LIST]; /* --allow-tcp PORT, each */
        size_t n_allow_tcp;
        const char *allow_socket[INSIDE_MAX_LIST]; /* --allow-socket S, each */
        size_t n_allow_socket;
        pid_t decoy;           /* --decoy PID: a process of the runner's */
        const char *decoy_tty; /* --decoy-tty /dev/pts/N: its controlling terminal */
        const char *canary;    /* --canary HEX: in the decoy's environment (32 hex digits) */
        EnvironSecret secrets[ENVIRON_MAX_SECRETS]; /* --secret NAME=SIZE:SHA256, each */
        size_t n_secrets;
        const char *egress_addr;  /* --egress-addr IP: control-url's host, as the runner resolved it */
        unsigned egress_port;     /* --egress-port N: and its port */
        const char *egress_addr6; /* --egress-addr6 IP: its IPv6 address, where the runner reaches it */
        const char *front;        /* --front NAME: another name of control-url's certificate */
        /* --resolve-name NAME: a fresh name, where a resolver answers the runner */
        const char *resolve_name;
        const char *nameserver[INSIDE_MAX_LIST]; /* --nameserver IP, each: /etc/resolv.conf's */
        size_t n_nameserver;
        const char *walk_dir; /* --walk DIR: walk the root filesystem; DIR the runner's, holding a file that
                                 all may write (the walk's control) */
        const char *service[INSIDE_MAX_LIST]; /* --service UNIT, each: one of [sandbox] stop-services */
        size_t n_service;
        const char *fetch_repo; /* --fetch-repo URL: [sandbox.check] fetch-repo */
        /* --container-image IMAGE: [sandbox.check] container-image; none with containers = false */
        const char *container_image;
        EgressPlanned planned[EGRESS_PLANNED]; /* --egress PLAN, each (egress_planned_parse()) */
        size_t n_planned;
        const char *only[INSIDE_MAX_LIST]; /* --only GROUP, each: the probes of these groups alone (the
                                              removal tests run the side by hand); none: all */
        size_t n_only;
} InsideArgs;

/* A name to front with: a DNS name (no address, no wildcard) curl and a Host header take as it is. */
bool inside_front_name_ok(const char *name);

/* argv[0] is "probe-inside". Every option but the lists exactly once. -EINVAL with *reterr. */
int inside_args_parse(int argc, char **argv, InsideArgs *ret, AjError *reterr);

/* The names the sandbox side owes for private directories dirs (n of them), the runner's values named
 * secrets (n_secrets), the units of services (NULL-terminated), the planned egress probes and, with walk,
 * the walk's, NULL-terminated, in *ret_names (each owned). -ENOMEM. */
int inside_expected_names(char *const *dirs, size_t n, char *const *secrets, size_t n_secrets,
                          char *const *services, const EgressPlanned *planned, size_t n_planned, bool walk,
                          char ***ret_names);

/* The walk's names, on the sandbox side: made with --walk alone. */
#define INSIDE_WALK_NAMES                                                                                   \
        "world-writable-control", "world-writable", "sandbox-writable-control", "sandbox-writable",         \
                "setuid-control", "setuid-unowned"

int sandbox_probe_inside_main(int argc, char **argv);
