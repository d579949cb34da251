/* SPDX-License-Identifier: MIT */
/* agentic-job run-inside clone|clone-agent|setup|profile|agent|confined|export|dispose|dispose-left ARGS:
 * the sandbox side of `run`, each run as the sandbox user through `helper enter` by the runner side (never
 * by hand: it is not in the usage). Nothing here has a privilege the sandbox user lacks; what it writes back
 * is read strictly by the runner side, which believes none of it beyond its form. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/openat2.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent-start.h"
#include "clone.h"
#include "config.h"
#include "confine-seccomp.h"
#include "confine.h"
#include "export-inside.h"
#include "key-probes.h"
#include "macro.h"
#include "parse.h"
#include "patch.h"
#include "pid-namespace.h"
#include "probe-home.h"
#include "profile.h"
#include "remove-tree.h"
#include "run-inside.h"
#include "run-plan.h"
#include "spawn.h"
#include "strv.h"
#include "token-probes.h"
#include "trusted-restore.h"
#include "write-all.h"

extern char **environ;

#define INSIDE_LIST_MAX 256
#define SH_PATH         "/bin/sh"

static const char *const prog = "agentic-job run-inside";

typedef struct InsideOptions {
        const char *run_dir, *url, *commit, *ref, *base, *setup, *confine, *profile;
        const char *base_commit; /* agent: the trusted paths are restored from it (after a setup command) */
        const char *container_image; /* profile: the image of the token's container probes */
        const char *broker_socket;   /* agent, with --broker: the key broker's socket on the host */
        const char *key_print;       /* profile, with --broker: the model's key by its print (key-print.h) */
        const char *control_url; /* profile, with --key-print: a read the policy allows, for broker-egress */
        const char *trusted[INSIDE_LIST_MAX];
        size_t n_trusted;
        const char *runner_dirs[TOKEN_RUNNER_DIRS_MAX]; /* profile: the runner's places token-runner-file
                                                           searches */
        size_t n_runner_dirs;
        uint64_t max_file_bytes, max_total_bytes, max_files;
        CloneLimits clone_limits;  /* clone: --clone-max-bytes, -object-bytes, -files, -checkout-bytes */
        uint64_t clone_max_memory; /* clone: RLIMIT_DATA of the clone; 0: none */
        bool dispose;              /* export: remove the run's directory once the stream has ended */
        bool bridge;               /* agent, confined: the egress proxy is on, so the bridge is made */
        bool broker; /* profile, agent, confined: the key broker holds the key; the token file holds the
                        run's placeholder, and ${API_URL} is the broker's address */
        bool token;  /* profile: the token comes on standard input; agent: it is in the run's token file */
        bool task_stdin; /* confined: the agent's standard input is the task */
        bool login;      /* confined: run the profile's login (rest) with the token file as standard input */
        bool agent;      /* confined: rest is the agent (not the setup command): its start is announced */
        char **rest;     /* after "--" */
} InsideOptions;

static int fail(const char *what, const char *detail)
{
        fprintf(stderr, "%s: %s%s%s\n", prog, what, detail ? ": " : "", detail ? detail : "");
        return 1;
}

/* The options every operation takes, each at most once (--trusted repeats); unknown ones refused. */
static int options_parse(int argc, char **argv, InsideOptions *o)
{
        for (int i = 2; i < argc; i++) {
                const char *a = argv[i];
                const char **slot = strcmp(a, "--run-dir") == 0           ? &o->run_dir
                                    : strcmp(a, "--url") == 0             ? &o->url
                                    : strcmp(a, "--commit") == 0          ? &o->commit
                                    : strcmp(a, "--ref") == 0             ? &o->ref
                                    : strcmp(a, "--base") == 0            ? &o->base
                                    : strcmp(a, "--setup") == 0           ? &o->setup
                                    : strcmp(a, "--confine") == 0         ? &o->confine
                                    : strcmp(a, "--profile") == 0         ? &o->profile
                                    : strcmp(a, "--base-commit") == 0     ? &o->base_commit
                                    : strcmp(a, "--container-image") == 0 ? &o->container_image
                                    : strcmp(a, "--broker-socket") == 0   ? &o->broker_socket
                                    : strcmp(a, "--key-print") == 0       ? &o->key_print
                                    : strcmp(a, "--control-url") == 0     ? &o->control_url
                                                                          : NULL;
                uint64_t *num =
                        strcmp(a, "--max-file-bytes") == 0             ? &o->max_file_bytes
                        : strcmp(a, "--max-total-bytes") == 0          ? &o->max_total_bytes
                        : strcmp(a, "--max-files") == 0                ? &o->max_files
                        : strcmp(a, "--clone-max-bytes") == 0          ? &o->clone_limits.max_bytes
                        : strcmp(a, "--clone-max-object-bytes") == 0   ? &o->clone_limits.max_object_bytes
                        : strcmp(a, "--clone-max-files") == 0          ? &o->clone_limits.max_files
                        : strcmp(a, "--clone-max-checkout-bytes") == 0 ? &o->clone_limits.max_checkout_bytes
                        : strcmp(a, "--clone-max-memory") == 0         ? &o->clone_max_memory
                                                                       : NULL;

                if (strcmp(a, "--") == 0) {
                        o->rest = argv + i + 1;
                        return 0;
                }
                bool *flag = strcmp(a, "--dispose") == 0      ? &o->dispose
                             : strcmp(a, "--bridge") == 0     ? &o->bridge
                             : strcmp(a, "--broker") == 0     ? &o->broker
                             : strcmp(a, "--token") == 0      ? &o->token
                             : strcmp(a, "--task-stdin") == 0 ? &o->task_stdin
                             : strcmp(a, "--login") == 0      ? &o->login
                             : strcmp(a, "--agent") == 0      ? &o->agent
                                                              : NULL;
                if (flag) {
                        if (*flag)
                                return -EINVAL;
                        *flag = true;
                        continue;
                }
                if (i + 1 >= argc)
                        return -EINVAL;
                if (strcmp(a, "--trusted") == 0) {
                        if (o->n_trusted >= INSIDE_LIST_MAX)
                                return -E2BIG;
                        o->trusted[o->n_trusted++] = argv[++i];
                } else if (strcmp(a, "--runner-dir") == 0) {
                        if (o->n_runner_dirs >= TOKEN_RUNNER_DIRS_MAX)
                                return -E2BIG;
                        o->runner_dirs[o->n_runner_dirs++] = argv[++i];
                } else if (slot) {
                        if (*slot)
                                return -EINVAL;
                        *slot = argv[++i];
                } else if (num) {
                        i++;
                        if (parse_decimal(argv[i], strlen(argv[i]), RUN_BYTES_MAX, num) < 0)
                                return -EINVAL;
                } else
                        return -EINVAL;
        }
        o->rest = argv + argc;
        return 0;
}

static long long now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* ---- clone ---- */

typedef struct Throttle {
        long long last;
} Throttle;

static void on_progress(const CloneProgress *p, void *userdata)
{
        Throttle *t = userdata;
        long long now = now_ms();

        /* At most ten lines a second; the last one comes with the result. */
        if (now - t->last < 100)
                return;
        t->last = now;
        printf("progress %u %u %llu\n", p->received_objects, p->total_objects,
               (unsigned long long)p->received_bytes);
        fflush(stdout);
}

/* --confine: "bubblewrap" or "none"; given to clone and agent (where it must be), to no other. */
static bool confine_valid(const InsideOptions *o)
{
        return o->confine && (strcmp(o->confine, "bubblewrap") == 0 || strcmp(o->confine, "none") == 0);
}

static bool confined(const InsideOptions *o)
{
        return o->confine && strcmp(o->confine, "bubblewrap") == 0;
}

static int make_private_dir(const char *parent, const char *name)
{
        _cleanup_free_ char *path = NULL;

        if (asprintf(&path, "%s/%s", parent, name) < 0)
                return -ENOMEM;
        return RET_NERRNO(mkdir(path, 0700));
}

/* What comes before the clone: the inner confinement able to run, the run's directories made. */
static int clone_prepare(const InsideOptions *o)
{
        if (!o->run_dir || !o->url || !o->base || (!o->commit == !o->ref) || !confine_valid(o))
                return fail("clone: usage", NULL);
        /* Before anything is made: the inner confinement must be able to run, or the run stops here. */
        if (confined(o)) {
                char reason[512];

                if (confine_preflight(reason, sizeof(reason)) < 0)
                        return fail("the inner confinement cannot run", reason);
        }
        /* The run's directory and its home, temp and profile directory (and the bridge's): the sandbox
         * user's own, closed to everyone else. */
        if (mkdir(o->run_dir, 0700) < 0)
                return fail("cannot make the run's directory", strerror(errno));
        if (make_private_dir(o->run_dir, "home") < 0 || make_private_dir(o->run_dir, "tmp") < 0 ||
            make_private_dir(o->run_dir, "profile") < 0 ||
            (confined(o) && make_private_dir(o->run_dir, "bridge") < 0))
                return fail("cannot make the run's home and temp", strerror(errno));
        return 0;
}

/* The clone itself, the part that reads the untrusted repository, and its report. */
static int clone_fetch(void *userdata)
{
        const InsideOptions *o = userdata;
        _cleanup_free_ char *work = NULL;
        const char *trusted[INSIDE_LIST_MAX + 1] = {};
        CloneResult res = {};
        Throttle t = {};
        AjError e = {};
        int r;

        if (asprintf(&work, "%s/" RUN_WORKSPACE, o->run_dir) < 0)
                return fail("out of memory", NULL);
        /* libgit2 inflates objects and resolves deltas in memory: a pack of a kilobyte can ask for a
         * gigabyte. RLIMIT_DATA counts the heap and every private writable mapping (not the read-only
         * mappings of the packs), so the clone fails cleanly where the kernel would pick a victim. This
         * process is the clone alone: in clone-agent it is a child the agent does not descend from. */
        if (o->clone_max_memory &&
            setrlimit(RLIMIT_DATA, &(struct rlimit){ o->clone_max_memory, o->clone_max_memory }) < 0)
                return fail("cannot bound the clone's memory", strerror(errno));
        for (size_t i = 0; i < o->n_trusted; i++)
                trusted[i] = o->trusted[i];

        r = workspace_clone(
                &(CloneRequest){
                        .url = o->url,
                        .commit = o->commit,
                        .ref = o->ref,
                        .base = o->base,
                        /* https goes through the egress proxy, which ends TLS: its authority is the
                         * one to trust (libgit2 with mbedTLS reads no SSL_CERT_FILE by itself). */
                        .proxy_url = o->url[0] == '/' ? NULL : getenv("https_proxy"),
                        .ca_file = o->url[0] == '/' ? NULL : getenv("SSL_CERT_FILE"),
                        .trusted_paths = (char *const *)trusted,
                        .dir = work,
                        .limits = o->clone_limits,
                },
                on_progress, &t, &res, &e);
        if (r == -ENOMEM && o->clone_max_memory) {
                char detail[sizeof(e.message) + 128];

                (void)snprintf(detail, sizeof(detail),
                               "%s (the clone's memory is at most [run] clone-max-memory, %" PRIu64
                               " bytes)",
                               e.message, o->clone_max_memory);
                return fail("clone", detail);
        }
        if (r < 0)
                return fail("clone", e.message);
        printf("cloned %s %s %s %u %u\n", res.commit, res.base_commit,
               res.fetched_by_id ? "by-id" : "by-branch", res.n_trusted_replaced, res.n_trusted_removed);
        return fflush(stdout) == 0 ? 0 : 1;
}

static int inside_clone(const InsideOptions *o)
{
        if (*o->rest)
                return fail("clone: usage", NULL);
        return clone_prepare(o) != 0 ? 1 : clone_fetch((void *)o);
}

/* ---- agent ---- */

/* Standard input: the named values, each "NAME=VALUE" and a NUL, an empty entry, then the task to its end.
 * Values never travel on a command line. */
static int read_stdin(char **ret, size_t *ret_size)
{
        size_t max = RUN_TASK_MAX + 256 * 1024;
        int r = read_pipe_bounded(STDIN_FILENO, max + 1, ret, ret_size);

        if (r >= 0 && *ret_size > max) {
                free(*ret);
                *ret = NULL;
                return -EFBIG;
        }
        return r;
}

/* The task, in run_fd's "task": whatever a setup command left at that name goes first. */
static int write_task(int run_fd, const char *run_dir, const char *data, size_t size, char **ret_path)
{
        _cleanup_free_ char *path = NULL;
        _cleanup_close_ int fd = -EBADF;
        int r;

        if (asprintf(&path, "%s/task", run_dir) < 0)
                return -ENOMEM;
        r = remove_tree_at(run_fd, "task");
        if (r < 0)
                return r;
        fd = openat(run_fd, "task", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
                return -errno;
        if (write_all(fd, data, size) < 0)
                return -EIO;
        *ret_path = TAKE_PTR(path);
        return 0;
}

static _printf_(2, 3) int env_setf(Strv *env, const char *fmt, ...)
{
        _cleanup_free_ char *entry = NULL;
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = vasprintf(&entry, fmt, ap);
        va_end(ap);
        if (r < 0) {
                entry = NULL; /* undefined after a failure */
                return -ENOMEM;
        }
        return strv_env_set(env, entry);
}

/* The run's own places, which the profile's strings name. */
typedef struct RunPlaces {
        char *home, *tmpdir, *workspace, *task, *token_dir, *token_file, *profile_dir;
        const char *api_url; /* the broker's address, or the profile's [api] base, or NULL */
} RunPlaces;

static void run_places_done(RunPlaces *p)
{
        free(p->home);
        free(p->tmpdir);
        free(p->workspace);
        free(p->task);
        free(p->token_dir);
        free(p->token_file);
        free(p->profile_dir);
}

static int run_places(const InsideOptions *o, const Profile *profile, RunPlaces *p)
{
        const char *run_dir = o->run_dir;

        p->api_url = o->broker ? CONFINE_BROKER_URL : profile->api_base;
        if (asprintf(&p->home, "%s/home", run_dir) < 0 || asprintf(&p->tmpdir, "%s/tmp", run_dir) < 0 ||
            asprintf(&p->workspace, "%s/" RUN_WORKSPACE, run_dir) < 0 ||
            asprintf(&p->task, "%s/task", run_dir) < 0 || asprintf(&p->token_dir, "%s/token", run_dir) < 0 ||
            asprintf(&p->token_file, "%s/token/token", run_dir) < 0 ||
            asprintf(&p->profile_dir, "%s/profile", run_dir) < 0)
                return -ENOMEM;
        return 0;
}

static ProfileVars places_vars(const RunPlaces *p)
{
        return (ProfileVars){ .home = p->home,
                              .tmpdir = p->tmpdir,
                              .workspace = p->workspace,
                              .task = p->task,
                              .token_file = p->token_file,
                              .profile_dir = p->profile_dir,
                              .api_url = p->api_url };
}

static int load_profile(const InsideOptions *o, Profile **ret)
{
        AjError e = {};

        if (profile_load(NULL, o->profile, ret, &e) < 0)
                return fail("the profile", e.message);
        return 0;
}

/* Each of the profile's words, expanded, then the caller's. */
static int expand_words(char *const *words, char *const *more, const ProfileVars *v, Strv *ret)
{
        for (char *const *w = words; w && *w; w++) {
                char *x = NULL;
                int r = profile_expand(*w, v, &x);

                if (r < 0 || (r = strv_push(ret, x)) < 0)
                        return r;
        }
        for (char *const *w = more; w && *w; w++)
                if (strv_push(ret, strdup(*w)) < 0)
                        return -ENOMEM;
        return 0;
}

/* The enter's environment (nothing of the runner's), then the named values, then the profile's values,
 * then the run's own places, which neither may move. */
static int agent_env(const InsideOptions *o, const Profile *p, const RunPlaces *pl, char *const *named,
                     Strv *env)
{
        ProfileVars v = places_vars(pl);
        int r = 0;

        for (char **e = environ; r >= 0 && *e; e++)
                r = strv_push(env, strdup(*e));
        for (char *const *e = named; r >= 0 && e && *e; e++)
                r = strv_env_set(env, *e);
        for (char **e = p->env; r >= 0 && e && *e; e++) {
                _cleanup_free_ char *x = NULL;

                r = profile_expand(*e, &v, &x);
                r = r < 0 ? r : strv_env_set(env, x);
        }
        r = r < 0 ? r : env_setf(env, "HOME=%s", pl->home);
        r = r < 0 ? r : env_setf(env, "TMPDIR=%s", pl->tmpdir);
        r = r < 0 ? r : env_setf(env, "GITHUB_WORKSPACE=%s", pl->workspace);
        if (!o->setup) /* the setup command comes before the task is written */
                r = r < 0 ? r : env_setf(env, "AGENTIC_JOB_TASK=%s", pl->task);
        if (o->token)
                r = r < 0 ? r : env_setf(env, "AGENTIC_JOB_TOKEN_FILE=%s", pl->token_file);
        return r;
}

static int open_stdin(const char *path)
{
        _cleanup_close_ int fd = open(path ? path : "/dev/null", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

        if (fd < 0 || dup2(fd, STDIN_FILENO) < 0)
                return -errno;
        return 0;
}

/* argv in place of this process (which does not return but on failure), its standard input stdin_path
 * (NULL: /dev/null). */
static int exec_command(char **env, char **argv, const char *stdin_path)
{
        if (open_stdin(stdin_path) < 0)
                return fail("cannot open the agent's standard input", strerror(errno));
        environ = env;
        execvp(argv[0], argv);
        fprintf(stderr, "%s: cannot run %s: %s\n", prog, argv[0], strerror(errno));
        return 127;
}

/* 0 when the agent's program is found in env's PATH; else the status to exit with, having said why: the
 * run then says the agent never started, and names the program. */
static int agent_installed(char **env, char **argv)
{
        _cleanup_free_ char *found = NULL;
        const char *path = NULL;
        int r;

        for (char **e = env; *e; e++)
                if (strncmp(*e, "PATH=", 5) == 0)
                        path = *e + 5;
        r = agent_program_find(argv[0], path, &found);
        if (r == -ENOENT) {
                fprintf(stderr, "%s: the agent's program %s is not installed: %s\n", prog, argv[0],
                        strchr(argv[0], '/') ? "no such executable file" : "not found in the agent's PATH");
                return 127;
        }
        if (r < 0)
                return fail("cannot look for the agent's program", strerror(-r));
        return 0;
}

/* The agent in place of this process, as exec_command, once its program is found (agent_installed) and
 * its start announced on standard output (agent-start.h). */
static int exec_agent(char **env, char **argv, const char *stdin_path)
{
        int r = agent_installed(env, argv);

        if (r != 0)
                return r;
        if (fflush(stdout) != 0)
                return fail("cannot write to the runner", strerror(errno));
        r = write_all(STDOUT_FILENO, AGENT_STARTED_LINE, strlen(AGENT_STARTED_LINE));
        if (r < 0)
                return fail("cannot write to the runner", strerror(-r));
        return exec_command(env, argv, stdin_path);
}

/* The host end of the bridge (unless login), then bubblewrap around `run-inside confined`, which runs
 * argv inside (the setup command's shell or the agent; with login, argv with the token as its standard
 * input); its status is theirs. The task is bound in for the agent alone: the setup command and the
 * login come before it is written. */
static int run_in_bubblewrap(const InsideOptions *o, char **env, char **args, bool login)
{
        _cleanup_(strv_clear) Strv argv = {};
        _cleanup_free_ char *self = NULL, *bridge_dir = NULL, *socket_path = NULL;
        _cleanup_close_ int filter = -EBADF;
        bool bridge_on = o->bridge && !login;
        /* The broker is the agent's: the setup command (before the profile phase) and the login never
         * reach it. */
        bool broker_on = bridge_on && o->broker && o->broker_socket && !o->setup;
        char **head = NULL;
        pid_t bridge = 0, pid = -1;
        int r, status;

        self = realpath("/proc/self/exe", NULL);
        if (!self || !path_is_plain_absolute(self))
                return fail("cannot find the client's own path", self ? self : strerror(errno));
        if (asprintf(&bridge_dir, "%s/bridge", o->run_dir) < 0 ||
            asprintf(&socket_path, "%s/" CONFINE_BRIDGE_SOCKET, bridge_dir) < 0)
                return fail("out of memory", NULL);
        r = confine_seccomp_fd(&filter);
        if (r < 0)
                return fail("cannot build the seccomp filter", strerror(-r));
        r = confine_bwrap_argv(&(ConfineLayout){ .run_dir = o->run_dir,
                                                 .bridge_dir = bridge_on ? bridge_dir : NULL,
                                                 .self = self,
                                                 .task = !login && !o->setup,
                                                 .token = o->token,
                                                 .profile = true,
                                                 .broker_socket = broker_on ? o->broker_socket : NULL },
                               NULL, &head);
        if (r < 0)
                return fail("cannot build bubblewrap's command line", strerror(-r));
        for (char **a = head; *a; a++) {
                r = r < 0 ? r : strv_push(&argv, *a);
                if (r < 0)
                        free(*a);
        }
        free(head);
        r = r < 0 ? r : strv_push(&argv, strdup(self));
        r = r < 0 ? r : strv_push(&argv, strdup("run-inside"));
        r = r < 0 ? r : strv_push(&argv, strdup("confined"));
        r = r < 0 ? r : strv_push(&argv, strdup("--run-dir"));
        r = r < 0 ? r : strv_push(&argv, strdup(o->run_dir));
        r = r < 0 || !bridge_on ? r : strv_push(&argv, strdup("--bridge"));
        r = r < 0 || !broker_on ? r : strv_push(&argv, strdup("--broker"));
        r = r < 0 || !login ? r : strv_push(&argv, strdup("--login"));
        r = r < 0 || login || !o->task_stdin ? r : strv_push(&argv, strdup("--task-stdin"));
        r = r < 0 || login || o->setup ? r : strv_push(&argv, strdup("--agent"));
        r = r < 0 ? r : strv_push(&argv, strdup("--"));
        for (char **a = args; r >= 0 && *a; a++)
                r = strv_push(&argv, strdup(*a));
        if (r < 0)
                return fail("out of memory", NULL);

        if (bridge_on) {
                r = confine_host_bridge_start(socket_path, &bridge);
                if (r < 0)
                        return fail("cannot start the bridge to the egress proxy", strerror(-r));
        }
        r = confine_spawn(argv.v, env, filter, STDOUT_FILENO, STDERR_FILENO, &pid);
        if (r < 0) {
                confine_bridge_stop(bridge);
                return fail("cannot start bubblewrap", strerror(-r));
        }
        status = wait_exit_status(pid);
        confine_bridge_stop(bridge);
        return status < 0 ? fail("cannot wait for bubblewrap", strerror(-status)) : status;
}

/* The run's directory, opened as a directory that is not a link: what a setup command may have replaced
 * is refused before anything is written there. */
static int open_run_dir(const InsideOptions *o, int *ret_fd)
{
        *ret_fd = open(o->run_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (*ret_fd < 0)
                return fail("the run's directory is not a directory", strerror(errno));
        return 0;
}

/* Standard input: the named values, each "NAME=VALUE" and a NUL, an empty entry, then (the agent's) the
 * task to its end. *named gets the values; *ret_pos is where the task starts. */
static int read_named(char **ret_input, size_t *ret_size, Strv *named, size_t *ret_pos)
{
        size_t pos = 0;
        int r = read_stdin(ret_input, ret_size);

        if (r < 0)
                return fail("cannot read the named values and the task", strerror(-r));
        for (;;) {
                const char *entry = *ret_input + pos;
                size_t n = strnlen(entry, *ret_size - pos);

                if (pos + n >= *ret_size)
                        return fail("the named values are not terminated", NULL);
                pos += n + 1;
                if (n == 0)
                        break;
                if (!strchr(entry, '=') || strv_push(named, strdup(entry)) < 0)
                        return fail("a named value is malformed", NULL);
        }
        *ret_pos = pos;
        return 0;
}

/* The setup command: `sh -c SETUP` with the agent's environment (but the task and the token, which come
 * after it), in the inner confinement unless it is off; standard input /dev/null. An enter of its own,
 * so that kill-user ends whatever it started before the profile's files, the token and the agent. */
static int inside_setup(const InsideOptions *o)
{
        _cleanup_(profile_freep) Profile *p = NULL;
        _cleanup_(run_places_done) RunPlaces pl = {};
        _cleanup_free_ char *input = NULL;
        _cleanup_(strv_clear) Strv env = {}, named = {};
        _cleanup_close_ int run_fd = -EBADF;
        char *argv[] = { (char *)SH_PATH, (char *)"-c", (char *)o->setup, NULL };
        size_t size = 0, pos = 0;
        int r;

        if (!o->run_dir || !o->profile || !o->setup || o->token || o->broker || o->base_commit || *o->rest ||
            !confine_valid(o))
                return fail("setup: usage", NULL);
        if (load_profile(o, &p) != 0 || open_run_dir(o, &run_fd) != 0)
                return 1;
        if (run_places(o, p, &pl) < 0)
                return fail("out of memory", NULL);
        if (read_named(&input, &size, &named, &pos) != 0)
                return 1;
        r = agent_env(o, p, &pl, named.v, &env);
        if (r < 0)
                return fail("cannot build the setup command's environment", strerror(-r));
        if (confined(o))
                return run_in_bubblewrap(o, env.v, argv, false);
        return exec_command(env.v, argv, NULL);
}

/* After a setup command (--base-commit): the base's trusted paths written again and read back, before
 * anything of the agent's. Nothing else of the sandbox user lives: the runner ended it all after the
 * setup command's enter. */
static int restore_trusted(const InsideOptions *o, const RunPlaces *pl)
{
        const char *trusted[INSIDE_LIST_MAX + 1] = {};
        TrustedRestore res = {};
        AjError e = {};

        for (size_t i = 0; i < o->n_trusted; i++)
                trusted[i] = o->trusted[i];
        if (trusted_paths_restore(pl->workspace, o->base_commit, (char *const *)trusted, &res, &e) < 0)
                return fail("cannot restore the trusted paths after the setup command", e.message);
        return 0;
}

/* The agent: the profile's command line and the caller's words, its environment and standard input, in the
 * inner confinement unless it is off. */
static int inside_agent(const InsideOptions *o)
{
        _cleanup_(profile_freep) Profile *p = NULL;
        _cleanup_(run_places_done) RunPlaces pl = {};
        _cleanup_free_ char *input = NULL, *task_path = NULL;
        _cleanup_(strv_clear) Strv env = {}, named = {}, argv = {};
        _cleanup_close_ int run_fd = -EBADF;
        ProfileVars v;
        size_t size = 0, pos = 0;
        int r;

        /* The broker is reached through the confinement's bridge only. */
        if (!o->run_dir || !o->profile || o->setup || !confine_valid(o) ||
            (o->broker && (!confined(o) || !o->bridge || !o->token || !o->broker_socket)) ||
            (o->broker_socket && !o->broker))
                return fail("agent: usage", NULL);
        if (load_profile(o, &p) != 0 || open_run_dir(o, &run_fd) != 0)
                return 1;
        if (run_places(o, p, &pl) < 0)
                return fail("out of memory", NULL);
        v = places_vars(&pl);
        if (o->base_commit && restore_trusted(o, &pl) != 0)
                return 1;
        if (read_named(&input, &size, &named, &pos) != 0)
                return 1;
        r = write_task(run_fd, o->run_dir, input + pos, size - pos, &task_path);
        if (r < 0)
                return fail("cannot write the task", strerror(-r));
        r = agent_env(o, p, &pl, named.v, &env);
        if (r < 0)
                return fail("cannot build the agent's environment", strerror(-r));
        r = expand_words(p->command, o->rest, &v, &argv);
        if (r < 0)
                return fail("cannot build the agent's command line", strerror(-r));
        if (!argv.v || !argv.v[0])
                return fail("agent: no command", NULL);
        if (confined(o)) {
                InsideOptions inner = *o;

                inner.task_stdin = p->stdin_from == PROFILE_STDIN_TASK;
                return run_in_bubblewrap(&inner, env.v, argv.v, false);
        }
        return exec_agent(env.v, argv.v, p->stdin_from == PROFILE_STDIN_TASK ? pl.task : NULL);
}

/* ---- clone-agent: the clone, then the agent, in one enter ---- */

/* Where nothing comes between the clone and the agent (no before-agent check, no profile work), one enter
 * does both, and saves one. The clone is made in a PID namespace of its own (pid-namespace.h): whatever it
 * might start while it reads the untrusted repository dies with it, as kill-user would end it between two
 * enters, before the agent's confinement. Then this process, which read nothing of the repository, waits
 * for the agent's input: the runner sends it only once it has taken the clone's report. */
static int inside_clone_agent(const InsideOptions *o)
{
        _cleanup_free_ char *work = NULL;
        _cleanup_close_ int fd = -EBADF;
        int r, status;

        /* The agent's words may be none (a profile's own command line): inside_agent() says so if none is
         * left. A token needs the profile phase, a separate enter. */
        if (!o->profile || o->token || o->setup || o->base_commit)
                return fail("clone-agent: usage", NULL);
        if (clone_prepare(o) != 0)
                return 1;
        r = run_in_pid_namespace(clone_fetch, (void *)o, &status);
        if (r < 0)
                return fail("cannot start the clone", strerror(-r));
        if (status != 0)
                return status;
        /* Into the clone, as the agent's own enter would start there: never through a link. */
        if (asprintf(&work, "%s/" RUN_WORKSPACE, o->run_dir) < 0)
                return fail("out of memory", NULL);
        fd = open(work, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 || fchdir(fd) < 0)
                return fail("cannot change into the clone", strerror(errno));
        return inside_agent(o);
}

/* ---- profile: the profile's files, the token, its login, the token probes ---- */

static int write_private_file(const char *path, const char *data, size_t size)
{
        _cleanup_close_ int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);

        if (fd < 0)
                return -errno;
        return write_all(fd, data, size) < 0 ? -EIO : 0;
}

/* A profile's dirs and token-files must be in the run's directory. */
static bool in_run_dir(const char *path, const char *run_dir)
{
        size_t n = strlen(run_dir);

        return path_is_plain_absolute(path) && strncmp(path, run_dir, n) == 0 && path[n] == '/';
}

static int run_login(const InsideOptions *o, const Profile *p, const RunPlaces *pl)
{
        _cleanup_(strv_clear) Strv env = {}, argv = {};
        ProfileVars v = places_vars(pl);
        pid_t pid;
        int r;

        r = agent_env(o, p, pl, NULL, &env);
        r = r < 0 ? r : expand_words(p->login, NULL, &v, &argv);
        if (r < 0)
                return fail("cannot build the profile's login", strerror(-r));
        if (confined(o))
                r = run_in_bubblewrap(o, env.v, argv.v, true);
        else {
                pid = fork();
                if (pid < 0)
                        return fail("cannot fork", strerror(errno));
                if (pid == 0) {
                        if (open_stdin(pl->token_file) < 0)
                                _exit(127);
                        environ = env.v;
                        execvp(argv.v[0], argv.v);
                        _exit(127);
                }
                r = wait_exit_status(pid);
        }
        if (r != 0) {
                fprintf(stderr, "%s: the profile's login (%s) failed (status %d)\n", prog, argv.v[0], r);
                return 1;
        }
        return 0;
}

/* With the key broker: the key probes, after the token's (key-probes.h). Returns how many failed. */
static int run_key_probes(const InsideOptions *o, const char *workspace, const char *placeholder)
{
        const struct passwd *pw = getpwuid(getuid());
        char run_user[64];
        char *roots[5 + TOKEN_RUNNER_DIRS_MAX + 1] = { pw ? pw->pw_dir : NULL, run_user, (char *)"/tmp",
                                                       (char *)"/var/tmp", (char *)"/dev/shm" };
        KeyPrint key;
        size_t k = 5;

        if (!pw)
                return fail("the sandbox user has no home in the user database", NULL);
        if (key_print_parse(o->key_print, &key) < 0)
                return fail("--key-print: not a print", NULL);
        (void)snprintf(run_user, sizeof(run_user), "/run/user/%u", (unsigned)getuid());
        for (size_t i = 0; i < o->n_runner_dirs; i++)
                roots[k++] = (char *)o->runner_dirs[i];
        roots[k] = NULL;
        return key_probes_run(&(KeyProbeInput){ .key = &key,
                                                .placeholder = placeholder,
                                                .control_url = o->control_url,
                                                .home = pw->pw_dir,
                                                .roots = roots,
                                                .workspace = workspace });
}

static int inside_profile(const InsideOptions *o)
{
        _cleanup_(profile_freep) Profile *p = NULL;
        _cleanup_(run_places_done) RunPlaces pl = {};
        _cleanup_(strv_clear) Strv holders = {};
        _cleanup_free_ char *token = NULL;
        _cleanup_close_ int run_fd = -EBADF;
        char probe_home[PATH_MAX];
        size_t token_size = 0;
        bool removed;
        ProfileVars v;
        int r;

        if (!o->run_dir || !o->profile || *o->rest || !confine_valid(o) ||
            (o->key_print && (!o->broker || !o->token || !o->control_url)))
                return fail("profile: usage", NULL);
        if (load_profile(o, &p) != 0 || open_run_dir(o, &run_fd) != 0)
                return 1;
        if (run_places(o, p, &pl) < 0)
                return fail("out of memory", NULL);
        v = places_vars(&pl);
        if (o->token) {
                r = read_pipe_bounded(STDIN_FILENO, TOKEN_MAX + 1, &token, &token_size);
                if (r < 0 || token_size == 0 || token_size > TOKEN_MAX || memchr(token, '\0', token_size))
                        return fail("cannot read the run token", r < 0 ? strerror(-r) : "empty or too long");
        }

        /* The profile's directories and files, the sandbox user's own, closed to everyone else: made anew,
         * whatever a setup command (which comes before) left at their names, never through a link. */
        r = remove_path_nofollow(run_fd, "profile", &removed);
        if (r < 0 || mkdirat(run_fd, "profile", 0700) < 0)
                return fail("cannot make the profile's directory", strerror(r < 0 ? -r : errno));
        for (size_t i = 0; i < profile_json_count(p); i++) {
                _cleanup_free_ char *name = NULL, *text = NULL, *path = NULL;

                r = profile_json_render(p, i, &v, &name, &text);
                if (r < 0)
                        return fail("cannot render the profile's file", strerror(-r));
                if (asprintf(&path, "%s/%s", pl.profile_dir, name) < 0)
                        return fail("out of memory", NULL);
                r = write_private_file(path, text, strlen(text));
                if (r < 0)
                        return fail(path, strerror(-r));
        }
        for (char **d = p->dirs; d && *d; d++) {
                _cleanup_free_ char *path = NULL;

                r = profile_expand(*d, &v, &path);
                if (r < 0 || !in_run_dir(path, o->run_dir))
                        return fail("a profile's directory is not in the run's directory", *d);
                r = remove_path_nofollow(run_fd, path + strlen(o->run_dir) + 1, &removed);
                if (r < 0)
                        return fail(path, strerror(-r));
                if (mkdir(path, 0700) < 0)
                        return fail(path, strerror(errno));
        }
        /* Standard output carries the token probes' lines alone: without a token, nothing. */
        if (!o->token)
                return 0;

        /* The token: one file of mode 0600 in a directory of mode 0700, written from the pipe. */
        r = remove_path_nofollow(run_fd, "token", &removed);
        if (r < 0 || mkdirat(run_fd, "token", 0700) < 0)
                return fail("cannot make the token's directory", strerror(r < 0 ? -r : errno));
        r = write_private_file(pl.token_file, token, token_size);
        if (r < 0)
                return fail("cannot write the token", strerror(-r));
        if (p->login && run_login(o, p, &pl) != 0)
                return 1;

        if (strv_push(&holders, strdup(pl.token_file)) < 0)
                return fail("out of memory", NULL);
        for (char **f = p->token_files; f && *f; f++) {
                char *path = NULL;

                r = profile_expand(*f, &v, &path);
                if (r < 0 || !in_run_dir(path, o->run_dir)) {
                        free(path);
                        return fail("a profile's token file is not in the run's directory", *f);
                }
                if (strv_push(&holders, path) < 0)
                        return fail("out of memory", NULL);
        }
        /* The probes' programs (podman, with the token file there to read) read no configuration of the
         * sandbox user's: a home of their own, removed after them. */
        r = probe_home_enter(getenv("TMPDIR"), probe_home, sizeof(probe_home));
        if (r < 0)
                return fail("cannot make the token probes' own home", strerror(-r));
        r = token_probes_run(&(TokenProbeInput){
                .token = token,
                .token_size = token_size,
                .holders = holders.v,
                .workspace = pl.workspace,
                .runner_dirs = (char *const *)o->runner_dirs,
                .n_runner_dirs = o->n_runner_dirs,
                .container_image = o->container_image,
        });
        /* The token is the placeholder here (--broker): the key probes send it to the proxy. */
        if (o->key_print && r >= 0)
                r += run_key_probes(o, pl.workspace, token);
        explicit_bzero(token, token_size);
        (void)probe_home_remove(probe_home);
        return r == 0 ? 0 : 1;
}

/* ---- confined: the launcher, inside bubblewrap ---- */

/* The inner end of the bridge on 127.0.0.1:3128 (the proxy variables already point there), then the setup
 * command and the agent; with --login, the profile's login with the token as its standard input. The
 * bridge is the agent's child: it ends with the confinement. */
static int inside_confined(const InsideOptions *o)
{
        _cleanup_free_ char *task = NULL, *token = NULL;
        pid_t bridge = -1, broker = -1;

        if (!o->run_dir || !o->rest[0] || o->confine || o->setup)
                return fail("confined: usage", NULL);
        if (asprintf(&task, "%s/task", o->run_dir) < 0 || asprintf(&token, "%s/token/token", o->run_dir) < 0)
                return fail("out of memory", NULL);
        if (o->login) {
                if (o->bridge || o->broker || o->task_stdin || o->agent)
                        return fail("confined: usage", NULL);
                return exec_command(environ, o->rest, token);
        }
        /* An agent that is not installed never starts, and nothing is started for it: the bridge's words
         * would come after the reason in what the run reads. */
        if (o->agent) {
                int r = agent_installed(environ, o->rest);
                if (r != 0)
                        return r;
        }
        if (o->bridge) {
                int r = confine_inner_bridge_start(CONFINE_PROXY_PORT,
                                                   CONFINE_BRIDGE_DIR "/" CONFINE_BRIDGE_SOCKET, &bridge);
                if (r < 0)
                        return fail("cannot start the bridge inside the confinement", strerror(-r));
        }
        /* The broker's end: like the proxy's, a child that ends with the confinement. */
        if (o->broker) {
                int r = !o->bridge || !o->agent ? -EINVAL
                                                : confine_inner_bridge_start(CONFINE_BROKER_PORT,
                                                                             CONFINE_BROKER_SOCKET, &broker);
                if (r < 0)
                        return fail("cannot start the key broker's bridge inside the confinement",
                                    strerror(-r));
        }
        if (o->agent)
                return exec_agent(environ, o->rest, o->task_stdin ? task : NULL);
        return exec_command(environ, o->rest, o->task_stdin ? task : NULL);
}

/* ---- dispose ---- */

/* One of the token's files, rel below the run's directory (run_fd), removed by name: the directories of
 * its path opened without following a link or crossing a mount, whatever stands at its name removed (a
 * directory whole), and its absence verified. 0 also when nothing is there by that name (a directory of
 * its path missing, or a link: the link goes with the rest); else -errno. */
static int remove_token_file(int run_fd, const char *rel)
{
        struct open_how how = { .flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
                                .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
                                           RESOLVE_NO_XDEV };
        _cleanup_close_ int dir_fd = -EBADF;
        _cleanup_free_ char *parent = NULL;
        const char *slash = strrchr(rel, '/'), *base = slash ? slash + 1 : rel;
        int r;

        if (slash) {
                parent = strndup(rel, (size_t)(slash - rel));
                if (!parent)
                        return -ENOMEM;
                dir_fd = (int)syscall(SYS_openat2, run_fd, parent, &how, sizeof(how));
                if (dir_fd < 0)
                        return errno == ENOENT || errno == ENOTDIR || errno == ELOOP || errno == EXDEV
                                       ? 0
                                       : -errno;
        }
        r = remove_tree_at(slash ? dir_fd : run_fd, base);
        if (r < 0)
                return r;
        r = tree_is_gone_at(slash ? dir_fd : run_fd, base);
        return r == 1 ? 0 : r < 0 ? r : -EEXIST;
}

/* The run's token (token/token) and the profile's token files, first and by name: whatever else of the
 * run's directory the agent made hard to remove, they go. 0, or 1 with what was not removed said. */
static int remove_token_files(const InsideOptions *o, int run_fd)
{
        _cleanup_(profile_freep) Profile *p = NULL;
        _cleanup_(run_places_done) RunPlaces pl = {};
        ProfileVars v;
        int r, failed = 0;

        r = remove_token_file(run_fd, "token/token");
        if (r < 0)
                failed = fail("dispose: cannot remove the run's token token/token", strerror(-r));
        if (!o->profile)
                return failed;
        if (load_profile(o, &p) != 0 || run_places(o, p, &pl) < 0)
                return 1;
        v = places_vars(&pl);
        for (char **f = p->token_files; f && *f; f++) {
                _cleanup_free_ char *path = NULL;

                if (profile_expand(*f, &v, &path) < 0 || !in_run_dir(path, o->run_dir)) {
                        failed = fail("dispose: a profile's token file is not in the run's directory", *f);
                        continue;
                }
                r = remove_token_file(run_fd, path + strlen(o->run_dir) + 1);
                if (r < 0) {
                        fprintf(stderr, "%s: dispose: cannot remove the profile's token file %s: %s\n", prog,
                                path + strlen(o->run_dir) + 1, strerror(-r));
                        failed = 1;
                }
        }
        return failed;
}

/* Removes the run's directory, never following a link nor crossing a mount, and verifies it is gone: the
 * token's files first, by name. What could not be removed is said on standard error, its first line
 * for the summary. */
static int dispose_run_dir(const InsideOptions *o)
{
        _cleanup_free_ char *parent = NULL;
        _cleanup_close_ int parent_fd = -EBADF, run_fd = -EBADF;
        const char *run_dir = o->run_dir, *name;
        int r, tokens = 0;

        if (!path_is_plain_absolute(run_dir))
                return fail("dispose: usage", NULL);
        name = strrchr(run_dir, '/') + 1;
        parent = strndup(run_dir, (size_t)(name - run_dir));
        if (!parent)
                return fail("out of memory", NULL);
        parent_fd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (parent_fd < 0)
                return fail("cannot open the run's parent", strerror(errno));
        run_fd = openat(parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (run_fd >= 0)
                tokens = remove_token_files(o, run_fd);
        else if (errno != ENOENT)
                tokens = fail("dispose: cannot open the run's directory to remove its token first",
                              strerror(errno));
        r = remove_tree_at(parent_fd, name);
        if (r < 0)
                return fail(tokens ? "cannot remove the run's directory, nor its token (above)"
                                   : "cannot remove the run's directory (its token files removed first, "
                                     "verified gone)",
                            strerror(-r));
        r = tree_is_gone_at(parent_fd, name);
        if (r <= 0)
                return fail("the run's directory is still there", r < 0 ? strerror(-r) : NULL);
        return tokens;
}

static int inside_dispose(const InsideOptions *o)
{
        if (!o->run_dir || *o->rest)
                return fail("dispose: usage", NULL);
        /* Nothing of the sandbox user outlives the runner: a huge tree's removal neither. */
        if (export_watch_caller(STDOUT_FILENO, 1) < 0)
                return fail("dispose: cannot watch the runner", NULL);
        if (dispose_run_dir(o) != 0)
                return 1;
        printf("disposed\n");
        return fflush(stdout) == 0 ? 0 : 1;
}

/* ---- dispose-left: the directories of runs that could not dispose of their own ---- */

/* A run ended by SIGKILL (the runner's last word on a cancelled step) disposes of nothing: its directory,
 * the model's token in it, stays in the sandbox user's home, where every later step could read it. Run
 * by `agentic-job sandbox end` once kill-user has ended every process of the sandbox user, from the home
 * (the helper's --chdir): each entry named like a run's directory, its token first and by name, then the
 * rest, each verified gone. Prints "disposed N"; what could not be removed on standard error, status 1. */
static int inside_dispose_left(const InsideOptions *o)
{
        _cleanup_(strv_clear) Strv names = {};
        _cleanup_close_ int home_fd = -EBADF;
        int failed = 0;
        DIR *d;

        if (o->run_dir || o->profile || *o->rest)
                return fail("dispose-left: usage", NULL);
        if (export_watch_caller(STDOUT_FILENO, 1) < 0)
                return fail("dispose-left: cannot watch the runner", NULL);
        home_fd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (home_fd < 0)
                return fail("dispose-left: cannot open the home", strerror(errno));
        d = fdopendir(fcntl(home_fd, F_DUPFD_CLOEXEC, 3));
        if (!d)
                return fail("dispose-left: cannot list the home", strerror(errno));
        /* Listed first, removed after: a directory is not changed while it is read. */
        for (struct dirent *de; (de = readdir(d));)
                if (strncmp(de->d_name, RUN_DIR_PREFIX, strlen(RUN_DIR_PREFIX)) == 0 &&
                    strv_push(&names, strdup(de->d_name)) < 0) {
                        closedir(d);
                        return fail("out of memory", NULL);
                }
        closedir(d);
        for (size_t i = 0; i < names.n; i++) {
                const char *name = names.v[i];
                _cleanup_close_ int run_fd =
                        openat(home_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                int r = run_fd < 0 ? 0 : remove_token_file(run_fd, "token/token");

                if (r < 0)
                        fprintf(stderr, "%s: dispose-left: %s: cannot remove its token: %s\n", prog, name,
                                strerror(-r));
                r = remove_tree_at(home_fd, name);
                if (r == 0)
                        r = tree_is_gone_at(home_fd, name) == 1 ? 0 : -EEXIST;
                if (r < 0) {
                        fprintf(stderr, "%s: dispose-left: %s: cannot remove it: %s\n", prog, name,
                                strerror(-r));
                        failed = 1;
                }
        }
        if (failed)
                return 1;
        printf("disposed %zu\n", names.n);
        return fflush(stdout) == 0 ? 0 : 1;
}

/* ---- export ---- */

static int inside_export(const InsideOptions *o)
{
        _cleanup_strv_free_ char **names = NULL;
        _cleanup_free_ char *work = NULL;
        _cleanup_close_ int run_fd = -EBADF;
        ExportLimits lim = {
                .max_file_bytes = o->max_file_bytes,
                .max_total_bytes = o->max_total_bytes,
                .max_files = (unsigned)o->max_files,
        };
        size_t n = strv_length(o->rest);
        int r;

        if (!o->run_dir || !o->max_file_bytes || !o->max_total_bytes || !o->max_files)
                return fail("export: usage", NULL);
        /* The exporter reads what the agent left: whatever holds it up, it ends with the runner. */
        if (export_watch_caller(STDOUT_FILENO, 1) < 0)
                return fail("export: cannot watch the runner", NULL);
        names = calloc(n + 1, sizeof(char *));
        if (!names || asprintf(&work, "%s/" RUN_WORKSPACE, o->run_dir) < 0)
                return fail("out of memory", NULL);
        for (size_t i = 0; i < n; i++)
                if (asprintf(&names[i], RUN_WORKSPACE "/%s", o->rest[i]) < 0)
                        return fail("out of memory", NULL);
        run_fd = open(o->run_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (run_fd < 0)
                return fail("cannot open the run's directory", strerror(errno));
        r = export_send(run_fd, names, &lim, STDOUT_FILENO);
        if (r < 0)
                return fail("export", strerror(-r));
        if (o->commit) {
                const char *exclude[INSIDE_LIST_MAX + 1] = {};
                _cleanup_free_ char *patch = NULL;
                size_t size = 0;
                AjError e = {};

                for (size_t i = 0; i < o->n_trusted; i++)
                        exclude[i] = o->trusted[i];
                r = patch_build(work, o->commit, (char *const *)exclude, lim.max_file_bytes, &patch, &size,
                                &e);
                if (r == -EFBIG)
                        r = export_write_refusal(STDOUT_FILENO, RUN_PATCH_NAME,
                                                 "larger than the per-file limit", true);
                else if (r < 0)
                        r = export_write_refusal(STDOUT_FILENO, RUN_PATCH_NAME, e.message, false);
                else
                        r = export_send_buffer(STDOUT_FILENO, RUN_PATCH_NAME, patch, size);
                if (r < 0)
                        return fail("export: cannot write the patch", strerror(-r));
        }
        r = export_send_end(STDOUT_FILENO);
        if (r < 0)
                return fail("export: cannot end the stream", strerror(-r));
        /* The stream is whole: the same enter disposes of the run, saving one (nothing else of the sandbox
         * user has lived since the runner's check before this enter). */
        return o->dispose ? dispose_run_dir(o) : 0;
}

int run_inside_main(int argc, char **argv)
{
        InsideOptions o = {};

        if (argc < 2)
                return fail("missing the operation", NULL);
        if (options_parse(argc, argv, &o) < 0)
                return fail("bad arguments", NULL);
        if (geteuid() == 0)
                return fail("refused as root", NULL);
        if (strcmp(argv[1], "clone") == 0)
                return inside_clone(&o);
        if (strcmp(argv[1], "profile") == 0)
                return inside_profile(&o);
        if (strcmp(argv[1], "setup") == 0)
                return inside_setup(&o);
        if (strcmp(argv[1], "agent") == 0)
                return inside_agent(&o);
        if (strcmp(argv[1], "clone-agent") == 0)
                return inside_clone_agent(&o);
        if (strcmp(argv[1], "confined") == 0)
                return inside_confined(&o);
        if (strcmp(argv[1], "export") == 0)
                return inside_export(&o);
        if (strcmp(argv[1], "dispose") == 0)
                return inside_dispose(&o);
        if (strcmp(argv[1], "dispose-left") == 0)
                return inside_dispose_left(&o);
        return fail("unknown operation", argv[1]);
}
