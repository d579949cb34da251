/* SPDX-License-Identifier: MIT */
/* agentic-job run-inside clone|agent|confined|export|dispose ARGS: the sandbox side of `run`, each run as
 * the sandbox user through `helper enter` by the runner side (never by hand: it is not in the usage).
 * Nothing here has a privilege the sandbox user lacks; what it writes back is read strictly by the runner
 * side, which believes none of it beyond its form. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clone.h"
#include "config.h"
#include "confine-seccomp.h"
#include "confine.h"
#include "export-inside.h"
#include "macro.h"
#include "parse.h"
#include "patch.h"
#include "remove-tree.h"
#include "run-inside.h"
#include "run-plan.h"
#include "spawn.h"
#include "strv.h"
#include "write-all.h"

extern char **environ;

#define INSIDE_LIST_MAX 256
#define SH_PATH         "/bin/sh"

static const char *const prog = "agentic-job run-inside";

typedef struct InsideOptions {
        const char *run_dir, *url, *commit, *ref, *base, *setup, *confine;
        const char *trusted[INSIDE_LIST_MAX];
        size_t n_trusted;
        uint64_t max_file_bytes, max_total_bytes, max_files;
        bool dispose; /* export: remove the run's directory once the stream has ended */
        bool bridge;  /* agent, confined: the egress proxy is on, so the bridge is made */
        char **rest;  /* after "--" */
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
                const char **slot = strcmp(a, "--run-dir") == 0   ? &o->run_dir
                                    : strcmp(a, "--url") == 0     ? &o->url
                                    : strcmp(a, "--commit") == 0  ? &o->commit
                                    : strcmp(a, "--ref") == 0     ? &o->ref
                                    : strcmp(a, "--base") == 0    ? &o->base
                                    : strcmp(a, "--setup") == 0   ? &o->setup
                                    : strcmp(a, "--confine") == 0 ? &o->confine
                                                                  : NULL;
                uint64_t *num = strcmp(a, "--max-file-bytes") == 0    ? &o->max_file_bytes
                                : strcmp(a, "--max-total-bytes") == 0 ? &o->max_total_bytes
                                : strcmp(a, "--max-files") == 0       ? &o->max_files
                                                                      : NULL;

                if (strcmp(a, "--") == 0) {
                        o->rest = argv + i + 1;
                        return 0;
                }
                if (strcmp(a, "--dispose") == 0 && !o->dispose) {
                        o->dispose = true;
                        continue;
                }
                if (strcmp(a, "--bridge") == 0 && !o->bridge) {
                        o->bridge = true;
                        continue;
                }
                if (i + 1 >= argc)
                        return -EINVAL;
                if (strcmp(a, "--trusted") == 0) {
                        if (o->n_trusted >= INSIDE_LIST_MAX)
                                return -E2BIG;
                        o->trusted[o->n_trusted++] = argv[++i];
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

static int inside_clone(const InsideOptions *o)
{
        _cleanup_free_ char *work = NULL;
        const char *trusted[INSIDE_LIST_MAX + 1] = {};
        CloneResult res = {};
        Throttle t = {};
        AjError e = {};
        int r;

        if (!o->run_dir || !o->url || !o->base || (!o->commit == !o->ref) || *o->rest || !confine_valid(o))
                return fail("clone: usage", NULL);
        /* Before anything is made: the inner confinement must be able to run, or the run stops here. */
        if (confined(o)) {
                char reason[512];

                if (confine_preflight(reason, sizeof(reason)) < 0)
                        return fail("the inner confinement cannot run", reason);
        }
        /* The run's directory and its home and temp (and the bridge's directory): the sandbox user's own,
         * closed to everyone else. */
        if (mkdir(o->run_dir, 0700) < 0)
                return fail("cannot make the run's directory", strerror(errno));
        if (make_private_dir(o->run_dir, "home") < 0 || make_private_dir(o->run_dir, "tmp") < 0 ||
            (confined(o) && make_private_dir(o->run_dir, "bridge") < 0))
                return fail("cannot make the run's home and temp", strerror(errno));
        if (asprintf(&work, "%s/" RUN_WORKSPACE, o->run_dir) < 0)
                return fail("out of memory", NULL);
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
                },
                on_progress, &t, &res, &e);
        if (r < 0)
                return fail("clone", e.message);
        printf("cloned %s %s %s %u %u\n", res.commit, res.base_commit,
               res.fetched_by_id ? "by-id" : "by-branch", res.n_trusted_replaced, res.n_trusted_removed);
        return fflush(stdout) == 0 ? 0 : 1;
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

static int write_task(const char *run_dir, const char *data, size_t size, char **ret_path)
{
        _cleanup_free_ char *path = NULL;
        _cleanup_close_ int fd = -EBADF;

        if (asprintf(&path, "%s/task", run_dir) < 0)
                return -ENOMEM;
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
                return -errno;
        if (write_all(fd, data, size) < 0)
                return -EIO;
        *ret_path = TAKE_PTR(path);
        return 0;
}

static int run_setup(const char *setup, char **env)
{
        pid_t pid = fork();

        if (pid < 0)
                return -errno;
        if (pid == 0) {
                char *argv[] = { (char *)SH_PATH, (char *)"-c", (char *)setup, NULL };
                int null = open("/dev/null", O_RDONLY | O_CLOEXEC);

                if (null < 0 || dup2(null, STDIN_FILENO) < 0)
                        _exit(127);
                execve(argv[0], argv, env);
                _exit(127);
        }
        return wait_exit_status(pid);
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

/* The setup command, then the agent in place of this process (which does not return but on failure). */
static int setup_then_agent(const InsideOptions *o, char **env)
{
        int null;

        if (o->setup) {
                int r = run_setup(o->setup, env);
                if (r < 0)
                        return fail("cannot start the setup command", strerror(-r));
                if (r != 0) {
                        fprintf(stderr, "%s: the setup command failed (status %d)\n", prog, r);
                        return r;
                }
        }
        null = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (null < 0 || dup2(null, STDIN_FILENO) < 0)
                return fail("cannot open /dev/null", strerror(errno));
        environ = env;
        execvp(o->rest[0], o->rest);
        fprintf(stderr, "%s: cannot run the agent %s: %s\n", prog, o->rest[0], strerror(errno));
        return 127;
}

/* The host end of the bridge, then bubblewrap around `run-inside confined`, which runs the setup command
 * and the agent inside; its status is the agent's. */
static int agent_in_bubblewrap(const InsideOptions *o, char **env)
{
        _cleanup_(strv_clear) Strv argv = {};
        _cleanup_free_ char *self = NULL, *bridge_dir = NULL, *socket_path = NULL;
        _cleanup_close_ int filter = -EBADF;
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
                                                 .bridge_dir = o->bridge ? bridge_dir : NULL,
                                                 .self = self },
                               NULL, &head);
        if (r < 0)
                return fail("cannot build bubblewrap's command line", strerror(-r));
        for (char **a = head; *a; a++)
                if (strv_push(&argv, TAKE_PTR(*a)) < 0)
                        return fail("out of memory", NULL);
        free(head);
        r = strv_push(&argv, strdup(self));
        r = r < 0 ? r : strv_push(&argv, strdup("run-inside"));
        r = r < 0 ? r : strv_push(&argv, strdup("confined"));
        r = r < 0 ? r : strv_push(&argv, strdup("--run-dir"));
        r = r < 0 ? r : strv_push(&argv, strdup(o->run_dir));
        r = r < 0 || !o->bridge ? r : strv_push(&argv, strdup("--bridge"));
        r = r < 0 || !o->setup ? r : strv_push(&argv, strdup("--setup"));
        r = r < 0 || !o->setup ? r : strv_push(&argv, strdup(o->setup));
        r = r < 0 ? r : strv_push(&argv, strdup("--"));
        for (char **a = o->rest; r >= 0 && *a; a++)
                r = strv_push(&argv, strdup(*a));
        if (r < 0)
                return fail("out of memory", NULL);

        if (o->bridge) {
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

static int inside_agent(const InsideOptions *o)
{
        _cleanup_free_ char *input = NULL, *task_path = NULL;
        _cleanup_(strv_clear) Strv env = {};
        size_t size = 0, pos = 0;
        int r;

        if (!o->run_dir || !o->rest[0] || !confine_valid(o))
                return fail("agent: usage", NULL);
        r = read_stdin(&input, &size);
        if (r < 0)
                return fail("cannot read the named values and the task", strerror(-r));

        /* The enter's environment (nothing of the runner's), then the named values, then the run's own
         * places, which no named value may move. */
        for (char **v = environ; *v; v++)
                if (strv_push(&env, strdup(*v)) < 0)
                        return fail("out of memory", NULL);
        for (;;) {
                const char *entry = input + pos;
                size_t n = strnlen(entry, size - pos);

                if (pos + n >= size)
                        return fail("the named values are not terminated", NULL);
                pos += n + 1;
                if (n == 0)
                        break;
                if (!strchr(entry, '=') || strv_env_set(&env, entry) < 0)
                        return fail("a named value is malformed", NULL);
        }
        r = write_task(o->run_dir, input + pos, size - pos, &task_path);
        if (r < 0)
                return fail("cannot write the task", strerror(-r));
        if (env_setf(&env, "HOME=%s/home", o->run_dir) < 0 ||
            env_setf(&env, "TMPDIR=%s/tmp", o->run_dir) < 0 ||
            env_setf(&env, "GITHUB_WORKSPACE=%s/" RUN_WORKSPACE, o->run_dir) < 0 ||
            env_setf(&env, "AGENTIC_JOB_TASK=%s", task_path) < 0)
                return fail("out of memory", NULL);
        if (confined(o))
                return agent_in_bubblewrap(o, env.v);
        return setup_then_agent(o, env.v);
}

/* ---- confined: the launcher, inside bubblewrap ---- */

/* The inner end of the bridge on 127.0.0.1:3128 (the proxy variables already point there), then the setup
 * command and the agent. The bridge is the agent's child: it ends with the confinement. */
static int inside_confined(const InsideOptions *o)
{
        pid_t bridge = -1;

        if (!o->run_dir || !o->rest[0] || o->confine)
                return fail("confined: usage", NULL);
        if (o->bridge) {
                int r = confine_inner_bridge_start(&bridge);
                if (r < 0)
                        return fail("cannot start the bridge inside the confinement", strerror(-r));
        }
        return setup_then_agent(o, environ);
}

/* ---- dispose ---- */

/* Removes the run's directory, never following a link nor crossing a mount, and verifies it is gone. */
static int dispose_run_dir(const char *run_dir)
{
        _cleanup_free_ char *parent = NULL;
        _cleanup_close_ int parent_fd = -EBADF;
        const char *name;
        int r;

        if (!path_is_plain_absolute(run_dir))
                return fail("dispose: usage", NULL);
        name = strrchr(run_dir, '/') + 1;
        parent = strndup(run_dir, (size_t)(name - run_dir));
        if (!parent)
                return fail("out of memory", NULL);
        parent_fd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (parent_fd < 0)
                return fail("cannot open the run's parent", strerror(errno));
        r = remove_tree_at(parent_fd, name);
        if (r < 0)
                return fail("cannot remove the run's directory", strerror(-r));
        r = tree_is_gone_at(parent_fd, name);
        if (r <= 0)
                return fail("the run's directory is still there", r < 0 ? strerror(-r) : NULL);
        return 0;
}

static int inside_dispose(const InsideOptions *o)
{
        if (!o->run_dir || *o->rest)
                return fail("dispose: usage", NULL);
        if (dispose_run_dir(o->run_dir) != 0)
                return 1;
        printf("disposed\n");
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
        return o->dispose ? dispose_run_dir(o->run_dir) : 0;
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
        if (strcmp(argv[1], "agent") == 0)
                return inside_agent(&o);
        if (strcmp(argv[1], "confined") == 0)
                return inside_confined(&o);
        if (strcmp(argv[1], "export") == 0)
                return inside_export(&o);
        if (strcmp(argv[1], "dispose") == 0)
                return inside_dispose(&o);
        return fail("unknown operation", argv[1]);
}
