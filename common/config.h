/* SPDX-License-Identifier: MIT */
/* The configuration, /etc/agentic-job/config.toml: its keys, their defaults and their rules.
 * Unknown tables and keys are errors; so is a value of the wrong type. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "error.h"
#include "price.h"

#define CONFIG_PATH "/etc/agentic-job/config.toml"
/* What every command but setup says when CONFIG_PATH is not there. */
#define CONFIG_NOT_SET_UP                                                                                   \
        "this machine is not set up; run 'sudo agentic-job sandbox setup --config FILE' first"
#define CONFIG_MAX_SIZE (256 * 1024)

/* Every list of the configuration (groups, private-dirs, stop-services, allow-sockets, allow-tcp-ports,
 * trusted-paths, [run] env) holds at most this many entries: a longer one is refused at load, never cut,
 * so that what setup accepts, every later command (the check's sandbox side above all, whose argument
 * lists are bounded) takes whole. */
#define CONFIG_LIST_MAX 64

/* [sandbox] tasks-max: RLIMIT_NPROC of every enter. */
#define SANDBOX_TASKS_MAX_DEFAULT 8192
#define SANDBOX_TASKS_MAX_MIN     64
#define SANDBOX_TASKS_MAX_MAX     4194304 /* PID_MAX_LIMIT */

/* [sandbox] memory-max-percent: setup's MemoryMax= on user-UID.slice, a share of the machine's memory. */
#define SANDBOX_MEMORY_MAX_PERCENT_DEFAULT 75

/* [egress] log-max-bytes: the egress log's cap; a request whose line would pass it is refused. */
#define EGRESS_LOG_MAX_BYTES_DEFAULT (1ULL << 30)
#define EGRESS_LOG_MAX_BYTES_MIN     (1ULL << 20)
#define EGRESS_LOG_MAX_BYTES_MAX     (1ULL << 40)

/* [run]'s defaults and bounds. */
#define RUN_TIMEOUT_DEFAULT         3600
#define RUN_TIMEOUT_MAX             (7 * 24 * 3600)
#define RUN_MAX_FILE_BYTES_DEFAULT  (16ULL * 1024 * 1024)
#define RUN_MAX_TOTAL_BYTES_DEFAULT (64ULL * 1024 * 1024)
#define RUN_MAX_FILES_DEFAULT       100
#define RUN_BYTES_MAX               (1ULL << 40)
#define RUN_FILES_MAX               100000
#define RUN_REQUESTS_MAX            1000000 /* [run] max-requests at most */
#define RUN_TRUSTED_PATHS_MAX       64

/* [run] clone-*: the clone's bounds, so that a repository's bytes alone cannot spend the runner's memory
 * or disk (clone.h). */
#define RUN_CLONE_MAX_BYTES_DEFAULT          (4ULL << 30)   /* what the fetch receives */
#define RUN_CLONE_MAX_OBJECT_BYTES_DEFAULT   (256ULL << 20) /* any one object, inflated */
#define RUN_CLONE_MAX_FILES_DEFAULT          1000000ULL     /* entries checked out */
#define RUN_CLONE_MAX_CHECKOUT_BYTES_DEFAULT (8ULL << 30)   /* the files checked out, together */
#define RUN_CLONE_MAX_MEMORY_DEFAULT         (2ULL << 30)   /* RLIMIT_DATA of the clone */
#define RUN_CLONE_MAX_MEMORY_MIN             (64ULL << 20)
#define RUN_CLONE_MAX_FILES_MAX              100000000ULL

typedef enum EnterBackend {
        ENTER_AUTO,
        ENTER_RUN0,
        ENTER_SYSTEMD_RUN,
        ENTER_DIRECT,
} EnterBackend;

/* How run confines the setup command and the agent inside the sandbox user (man agentic-job.toml(5)). */
typedef enum RunConfine {
        RUN_CONFINE_BUBBLEWRAP, /* the default: bubblewrap, a private network, seccomp, the bridge */
        RUN_CONFINE_NONE,       /* the explicit opt-out, recorded in the run's summary */
} RunConfine;

typedef struct Config {
        /* [sandbox] */
        char *sandbox_user;       /* user; default "runner-sandbox" */
        char **sandbox_groups;    /* groups; default ["kvm"]; NULL-terminated */
        bool allow_existing_user; /* allow-existing-user; default false */
        char *runner_user;        /* runner-user; NULL when unset */
        bool lock_runner;         /* lock-runner; default true */
        char **private_dirs;      /* private-dirs; default []; each absolute, plainly spelled */
        char **stop_services;     /* stop-services; default []; each a unit name */
        char **env;               /* env; default {}; "NAME=VALUE" entries sorted by name */
        char **step_env; /* step-env; default []; names a script step passes from the runner's environment */
        EnterBackend enter;                   /* enter; "auto" (default), "run0", "systemd-run", "direct" */
        bool user_manager;                    /* user-manager; default false: setup masks user@UID.service */
        unsigned long long sandbox_tasks_max; /* tasks-max; default 8192: RLIMIT_NPROC of every enter */
        unsigned long long sandbox_memory_max_percent; /* memory-max-percent; 1 to 100, default 75 */

        /* [sandbox.check] */
        char *check_control_url;     /* control-url; default "https://github.com/"; http:// or https:// */
        char *check_fetch_repo;      /* fetch-repo; default "https://github.com/bootc-dev/bootc" */
        char *check_container_image; /* container-image; config_image_name_ok() */
        bool check_containers;       /* containers; default true */
        bool check_before_agent;     /* before-agent; default false (read by run) */
        char **check_allow_sockets;  /* allow-sockets; default []; each "/PATH", "/DIR/", "/PREFIX*" or
                                        "@NAME" */
        unsigned *check_allow_tcp_ports; /* allow-tcp-ports; default []; n_check_allow_tcp_ports entries */
        size_t n_check_allow_tcp_ports;

        /* [egress] */
        bool egress_proxy;                       /* proxy; default true */
        unsigned long long egress_log_max_bytes; /* log-max-bytes; default 1 GiB */
        bool egress_reads_listed; /* reads; "any" (false, the default) or "listed": a read needs a
                                   * [[read]] rule of the policy naming its host */

        /* [run] */
        char **run_trusted_paths;       /* trusted-paths; default [".agentic-job", ".claude", ".codex"]; each
                                           relative, plainly spelled, a trailing "/" dropped */
        char **run_env;                 /* env; default []; names of the runner's variables the agent gets */
        unsigned long long run_timeout; /* timeout; seconds of setup and agent together, default 3600 */
        unsigned long long run_max_file_bytes;  /* max-file-bytes; default 16 MiB */
        unsigned long long run_max_total_bytes; /* max-total-bytes; default 64 MiB */
        unsigned long long run_max_files;       /* max-files; default 100 */
        unsigned long long run_max_requests;    /* max-requests (the key broker's); 0: none */
        uint64_t run_budget;                    /* budget, micro-dollars (the key broker's); 0: none */
        Price *run_prices;                      /* [run.prices]; n_run_prices entries */
        size_t n_run_prices;
        RunConfine run_confine;                        /* confine; "bubblewrap" (default) or "none" */
        char *run_profile;                             /* profile; default "command"; profile_name_valid() */
        unsigned long long run_clone_max_bytes;        /* clone-max-bytes; default 4 GiB */
        unsigned long long run_clone_max_object_bytes; /* clone-max-object-bytes; default 256 MiB */
        unsigned long long run_clone_max_files;        /* clone-max-files; default 1,000,000 */
        unsigned long long run_clone_max_checkout_bytes; /* clone-max-checkout-bytes; default 8 GiB */
        unsigned long long run_clone_max_memory;         /* clone-max-memory; default 2 GiB */
} Config;

/* "bubblewrap" or "none". */
const char *run_confine_name(RunConfine c);

/* Parses and validates a configuration. On failure returns -EINVAL (or -ENOMEM) and fills *reterr with
 * a line, a column and a one-line message naming the table and key. */
int config_parse(const char *data, size_t size, Config **ret_config, AjError *reterr);

/* read_regular_nofollow() of path (at most CONFIG_MAX_SIZE) then config_parse(). The message in *reterr
 * is prefixed with the path (and line:column where known). The caller decides whether the file is to be
 * trusted (trusted_path_check()) before calling this. A missing CONFIG_PATH says the machine is not set up
 * (config_load_data(), which setup calls on the file it is given, does not). */
int config_load(const char *path, Config **ret_config, AjError *reterr);

/* config_load(), also handing over the file's bytes (NUL-terminated, size bytes): setup installs exactly
 * what it checked. ret_data and ret_size may be NULL. */
int config_load_data(const char *path, Config **ret_config, char **ret_data, size_t *ret_size,
                     AjError *reterr);

/* config_load_data() of a file trusted_path_check() accepts first (root's alone, up to /): what the
 * runner's commands read. A missing CONFIG_PATH says the machine is not set up. */
int config_load_trusted(const char *path, Config **ret_config, char **ret_data, size_t *ret_size,
                        AjError *reterr);

void config_free(Config *c);
static inline void config_freep(Config **c)
{
        config_free(*c);
}

const char *enter_backend_to_string(EnterBackend b);

/* An image's name as container-image takes it: 1 to 255 of letters, digits and "._-/:@", not beginning
 * '-' (podman reads it as a name, never as an option). */
bool config_image_name_ok(const char *name);

/* The rules, exported for the helper, setup and the tests. */
bool user_name_valid(const char *s);          /* ^[a-z_][a-z0-9_-]{0,31}$ */
bool group_name_valid(const char *s);         /* the same rule */
bool group_is_root_equivalent(const char *s); /* root, wheel, sudo, admin, adm, disk, shadow, docker, ... */
bool env_name_valid(const char *s);           /* ^[A-Za-z_][A-Za-z0-9_]*$ and not ACTIONS_* (in any case) */
bool env_value_valid(const char *s);          /* no newline, no carriage return (TOML strings hold no NUL) */
bool path_is_plain_absolute(
        const char *s); /* starts "/", no empty, "." or ".." component, no trailing "/" but "/" itself */
bool profile_name_valid(const char *s); /* ^[a-z][a-z0-9-]{0,31}$: an agent profile's name */
bool unit_name_valid(const char *s); /* contains ".", no leading "-", no whitespace or control character */
/* Relative, no empty, "." or ".." component, no control character, at most 4095 bytes; a single trailing "/"
 * is allowed when allow_trailing_slash. */
bool path_is_plain_relative(const char *s, bool allow_trailing_slash);
/* The job's command files and state (GITHUB_ENV, GITHUB_OUTPUT, GITHUB_PATH, GITHUB_STATE,
 * GITHUB_STEP_SUMMARY): names [run] env refuses, since writing them would act as the runner. */
bool env_name_is_job_command_file(const char *s);
