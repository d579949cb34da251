/* SPDX-License-Identifier: MIT */
/* The egress proxy's install and start, as root: squid, run as the proxy user with no capabilities,
 * asking agentic-job-egress-acl about every request. Setup calls these; `agentic-job egress start|stop`
 * exposes them. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "error.h"

#define EGRESS_PROXY_USER "egress-proxy"
#define EGRESS_STATE_DIR  "/var/lib/egress-proxy" /* 0700, the proxy user's: CA key, certificate DB, pid */
#define EGRESS_LOG_DIR    "/var/log/egress-proxy" /* 0750, the proxy user's: access.jsonl, squid's logs */
#define EGRESS_SQUID_CONF "/etc/egress-proxy/squid.conf"
/* The policy and threat list the proxy's helpers load: the installed ones as they were at start, so that
 * every helper squid starts later decides by the same rules, whatever happens to the installed files. */
#define EGRESS_POLICY_SNAPSHOT  "/etc/egress-proxy/policy.toml"
#define EGRESS_THREATS_SNAPSHOT "/etc/egress-proxy/denylist.txt"
#define EGRESS_ERRORS_DIR       "/etc/egress-proxy/errors"
#define EGRESS_UNIT             "egress-proxy.service"
#define EGRESS_PIDFILE          "/run/agentic-job-egress-proxy.pid" /* the supervisor, where systemd does not run */
#define EGRESS_LISTEN_PORT      3128

/* Makes the proxy user (if missing), its state and log directories, its certificate authority (key
 * generated as that user, kept in the state directory), publishes the authority and a bundle of the
 * system's roots plus it in /etc/egress-proxy/, writes squid's configuration, starts squid as the proxy
 * user (a transient systemd service where systemd runs, a supervisor process otherwise) and waits until
 * it listens on 127.0.0.1:3128. The egress log's cap is log_max_bytes ([egress] log-max-bytes); with
 * reads_listed ([egress] reads = "listed") a read needs a [[read]] rule naming its host. Returns 0,
 * or -errno with *reterr; *ret_changed says whether anything was changed (false: refused before the first
 * change, e.g. -EPERM not root, -EALREADY already running, -EADDRINUSE the port is taken, -ENOENT a program
 * or the policy is missing, -EINVAL the policy is invalid). After a failure past the first change, whatever
 * was started is stopped again. */
int egress_proxy_start(uint64_t log_max_bytes, bool reads_listed, bool *ret_changed, AjError *reterr);

/* The checks egress_proxy_start() makes before its first change, with the policy at policy_path (setup
 * installs the shipped one later): 0, or -errno with *reterr. Changes nothing. With owners_only, our own
 * files (the ACL helper, squid's template and error page, the policy and the threat list) and the
 * directories above them need only be root's: setup makes them root's alone before it starts the proxy. */
int egress_proxy_check(const char *policy_path, bool owners_only, AjError *reterr);

/* Stops the proxy, whichever way it was started, and waits until it is gone. *ret_stopped is false
 * when it was not running. 0, or -errno with *reterr. */
int egress_proxy_stop(bool *ret_stopped, AjError *reterr);

/* `agentic-job egress start|stop`: argv[0] is "start" or "stop" (main.c dispatches no other). Returns the
 * exit status. */
int egress_main(int argc, char **argv);
