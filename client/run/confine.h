/* SPDX-License-Identifier: MIT */
/* run's inner confinement ([run] confine = "bubblewrap"): bubblewrap's command line, the two ends of the
 * network bridge (socat), and the preflight that proves both run as the sandbox user. All of it runs as
 * the sandbox user, inside the run's one `helper enter`; nothing here has a privilege that user lacks.
 *
 * The shape (agentic-job(1), RUN): new user, pid, ipc, uts, cgroup and network namespaces; the host
 * read-only; an empty, read-only tmpfs over every directory that can hold sockets or secrets (a read-only
 * bind does not stop a connect(2) to a unix socket); the run's workspace, home and temp bound writable at
 * their own paths, the temp also at /tmp and /var/tmp; the bridge's directory at CONFINE_BRIDGE_DIR; the
 * seccomp filter of confine-seccomp.h. The only way out of the private network is the bridge (and, for the
 * agent with the key broker, the broker's socket, whose requests go on through the proxy): a unix
 * socket in the run's directory, which the host end forwards to the egress proxy. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "bwrap.h"

#define SOCAT_PATH            "/usr/bin/socat"
#define CONFINE_BRIDGE_DIR    "/run/agentic-job"
#define CONFINE_BRIDGE_SOCKET "proxy.sock"
#define CONFINE_PROXY_PORT    3128
/* run's key broker (broker.h): its socket on the host, bound here; the agent's address for it. */
#define CONFINE_BROKER_SOCKET "/run/agentic-job-broker.sock"
#define CONFINE_BROKER_PORT   3129
#define CONFINE_BROKER_URL    "http://127.0.0.1:3129"
/* The descriptor bubblewrap reads the filter from. */
#define CONFINE_SECCOMP_FD 3

typedef struct ConfineLayout {
        const char *run_dir;       /* the run's directory: plain, absolute */
        const char *bridge_dir;    /* the bridge's directory on the host, bound at CONFINE_BRIDGE_DIR; NULL
                                      when the proxy is off (then there is no way out at all) */
        const char *self;          /* the client's own path: the launcher inside */
        bool task;                 /* the run's task file is bound, read-only (it exists) */
        bool token;                /* the run's token directory is bound, read-only (it exists) */
        bool profile;              /* the run's profile directory is bound, read-only (it exists) */
        const char *broker_socket; /* the key broker's socket on the host, bound at CONFINE_BROKER_SOCKET;
                                      NULL when the broker is off */
} ConfineLayout;

/* bubblewrap's command line up to and including its "--" (the caller appends what runs inside). is_dir
 * says which of the hidden directories exist (a tmpfs needs its mount point; NULL: stat(2)). -errno. */
int confine_bwrap_argv(const ConfineLayout *l, bool (*is_dir)(const char *path), char ***ret_argv);

/* The host end: socat listening on socket_path (mode 0600, so only the sandbox user may connect), each
 * connection forwarded to the egress proxy on 127.0.0.1. Returns once the socket accepts; *ret_pid is
 * socat's, to be ended by confine_bridge_stop(). The bridge dies with its caller (PR_SET_PDEATHSIG). */
int confine_host_bridge_start(const char *socket_path, pid_t *ret_pid);

/* An inner end, inside the confinement: socat on 127.0.0.1:port forwarding to the unix socket at
 * socket_path (CONFINE_PROXY_PORT to the bridge's socket; CONFINE_BROKER_PORT to the broker's). Returns
 * once it listens. */
int confine_inner_bridge_start(int port, const char *socket_path, pid_t *ret_pid);

/* Ends one end of the bridge (SIGKILL, then waited for). */
void confine_bridge_stop(pid_t pid);

/* Forks bubblewrap (argv) with environment env, the filter at CONFINE_SECCOMP_FD, standard input from
 * /dev/null and standard output and error to out_fd and err_fd; every other descriptor closed. */
int confine_spawn(char *const *argv, char *const *env, int filter_fd, int out_fd, int err_fd,
                  pid_t *ret_pid);

/* Proves that bubblewrap, with the confinement's namespaces and filter, runs socat as this user. 0, or
 * -errno with a one-line reason in reason (bubblewrap's first line of error and the kernel's settings
 * that decide whether an unprivileged user namespace may be made). */
int confine_preflight(char *reason, size_t size);
