/* SPDX-License-Identifier: MIT */
/* agentic-job run: the supervisor of one agent run, as the runner user. Plan (everything refused before
 * anything is made), then: the record removed and the sandbox user emptied; the clone made by the sandbox
 * user (run-inside clone); setup and agent in one enter (run-inside agent), or clone, setup and agent in one
 * where nothing comes between them (run-inside clone-agent); every process of the sandbox
 * user ended and the end verified from /proc; the named outputs exported by a fresh enter (run-inside
 * export) and received with the limits enforced here; the egress log of the run saved; the run's
 * directories removed by the sandbox user (run-inside dispose) and that verified; the summary written. */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "agent-start.h"
#include "broker.h"
#include "check-line.h"
#include "check-record.h"
#include "check-text.h"
#include "client.h"
#include "config.h"
#include "confine.h"
#include "egress-env.h"
#include "export-receive.h"
#include "helper-call.h"
#include "key-print.h"
#include "key-probes.h"
#include "macro.h"
#include "parse.h"
#include "profile.h"
#include "random-hex.h"
#include "read-file.h"
#include "run-inside.h"
#include "run-output.h"
#include "run-plan.h"
#include "run-summary.h"
#include "secret-scan.h"
#include "spawn.h"
#include "subid.h"
#include "token-probes.h"
#include "write-all.h"

/* Exit statuses: agentic-job(1), RUN. */
#define RUN_EXIT_OK      0
#define RUN_EXIT_FAILED  1 /* the agent failed, or the run was cancelled */
#define RUN_EXIT_CLEANUP 2 /* usage, or the cleanup failed */
#define RUN_EXIT_LIMIT   3 /* an export limit or [run] max-requests was hit */
#define RUN_EXIT_NOT_RUN 4 /* never started: safe to retry */
#define RUN_EXIT_TIMEOUT 124
#define CLONE_LINE_MAX   512
#define STDERR_KEEP      2048
#define EGRESS_LOG_MAX   (64ULL * 1024 * 1024)
#define EXPORT_MS        600000 /* the export's enter: the outputs, the patch and the disposal */
#define SETTLE_MS        10000  /* after kill-user, how long the entered command may take to be reaped */

static const char *const prog = "agentic-job run";

static long long now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* What no line of the run's may show: the run's own lines (say()), the agent's and the setup command's
 * output, the summary. Set once the run token is read. */
static const SecretSet *run_secrets;

static _printf_(1, 2) void say(const char *fmt, ...)
{
        char line[2 * SUMMARY_TEXT_MAX];
        va_list ap;

        va_start(ap, fmt);
        (void)vsnprintf(line, sizeof(line), fmt, ap);
        va_end(ap);
        if (run_secrets)
                (void)secret_redact_string(run_secrets, line);
        fprintf(stderr, "%s: %s\n", prog, line);
}

/* ---- the run's state ---- */

typedef struct Run {
        RunPlan plan;
        Config *config;
        Profile *profile;
        char *token; /* the run token, from standard input (--token-stdin), or NULL */
        size_t token_size;
        Summary summary;
        SecretSet secrets;  /* the run token, the runner's secret variables, the patterns */
        int sigfd;          /* SIGTERM, SIGINT, SIGHUP */
        int cancel_signal;  /* the first one that came, or 0 */
        long long deadline; /* of setup and agent together */
        uid_t sandbox_uid;
        UidRange ranges[SUBID_MAX_RANGES];
        size_t n_ranges;
        char *sandbox_home, *run_dir, *work_dir;
        int out_fd;           /* the output directory */
        uint64_t log_offset;  /* of the egress log when the run began */
        bool log_taken;       /* the offset was asked for: the sandbox was prepared */
        int log_offset_error; /* 0, or -errno: why it could not be taken */
        bool disposed;        /* by the exporter, once its stream had ended */
        bool ended; /* the last end_sandbox() succeeded, and nothing has entered the sandbox user since */
        char ended_detail[SUMMARY_TEXT_MAX]; /* what it reported */
        char clone_bounds[5][24];            /* clone_args()'s numbers, decimal */
        bool clone_http_error; /* the clone's error was an HTTP status (libgit2: "... status code ...") */
        /* The key broker (broker.h): on with a token, a profile with [api], the inner confinement and the
         * egress proxy. The agent's token file then holds the placeholder; the key stays here. */
        bool broker_on;
        char placeholder[64];
        char broker_dir[64];    /* the socket's directory, made for this run; "" when none */
        char broker_socket[96]; /* in it */
        Broker broker;
} Run;

static void phase_start(const char *name)
{
        say("%s: started", name);
}

/* detail may quote the sandbox side (a clone's error from the server): one line, no control character,
 * and no workflow command, on the job's log and in the summary. */
static void phase_end(Run *run, const char *name, long long t0, bool ok, const char *detail)
{
        double s = (double)(now_ms() - t0) / 1000.0;
        char safe[SUMMARY_TEXT_MAX], plain[SUMMARY_TEXT_MAX];

        /* Before the escape too: an escaped secret would no longer be found after it. */
        (void)snprintf(plain, sizeof(plain), "%s", detail);
        if (run_secrets)
                (void)secret_redact_string(run_secrets, plain);
        (void)check_escape(plain, safe, sizeof(safe));
        say("%s: %s in %.3f s%s%s", name, ok ? "ok" : "FAILED", s, safe[0] ? ": " : "", safe);
        (void)summary_phase(&run->summary, name, s, ok, "%s", safe);
}

static bool cancel_pending(Run *run)
{
        struct signalfd_siginfo si;

        while (read(run->sigfd, &si, sizeof(si)) == sizeof(si))
                if (!run->cancel_signal)
                        run->cancel_signal = (int)si.ssi_signo;
        return run->cancel_signal != 0;
}

/* ---- ending the sandbox user ---- */

/* helper kill-user, then the runner's own look at /proc: 0 when nothing of the sandbox user is alive. */
static int end_sandbox(Run *run, char *detail, size_t size)
{
        char line[256];
        unsigned left = 0;
        int r;

        run->ended = false;
        r = helper_kill_user(line, sizeof(line));
        if (r != 0) {
                (void)snprintf(detail, size, "helper kill-user failed (status %d): %s", r, line);
                return -EIO;
        }
        r = count_sandbox_processes(run->sandbox_uid, run->ranges, run->n_ranges, &left);
        if (r < 0) {
                (void)snprintf(detail, size, "cannot scan /proc: %s", strerror(-r));
                return r;
        }
        if (left > 0) {
                (void)snprintf(detail, size, "%u process(es) of the sandbox user survived kill-user", left);
                return -EBUSY;
        }
        (void)snprintf(detail, size, "%s; /proc shows no process of uid %u or its subordinate uids", line,
                       (unsigned)run->sandbox_uid);
        (void)snprintf(run->ended_detail, sizeof(run->ended_detail), "%s", detail);
        run->ended = true;
        return 0;
}

/* That nothing of the sandbox user lives, where the last command's end (end_sandbox() as it exited) has
 * just shown it and nothing entered since: the runner's own look at /proc again, without a second
 * kill-user. Anything found there, or no such end, and it is end_sandbox() after all. */
static int verify_ended(Run *run, char *detail, size_t size)
{
        unsigned left = 0;

        if (run->ended &&
            count_sandbox_processes(run->sandbox_uid, run->ranges, run->n_ranges, &left) == 0 && left == 0) {
                (void)snprintf(detail, size, "%.400s (as the last command ended; /proc again shows none)",
                               run->ended_detail);
                return 0;
        }
        return end_sandbox(run, detail, size);
}

/* Every enter goes through here: from now on, only a new end_sandbox() shows that nothing lives. */
static int enter_sandbox(Run *run, const char *dir, char *const *args, Entered *e)
{
        run->ended = false;
        return helper_enter_self(dir, args, e);
}

/* ---- one enter, pumped ---- */

typedef enum EnterEnd {
        ENTER_EXITED,    /* status holds the exit status */
        ENTER_CANCELLED, /* a signal came: the sandbox user was ended */
        ENTER_TIMED_OUT, /* the deadline passed: the sandbox user was ended */
        ENTER_STOPPED,   /* a handler refused what the command wrote: the sandbox user was ended */
} EnterEnd;

typedef struct Pump {
        Run *run;
        const char *input; /* written to the command's standard input, then closed */
        size_t input_size, input_done;
        long long deadline;
        bool cancellable; /* a signal to run ends it (not the disposal, which must finish) */
        bool stop;        /* set by a handler: the command is ended at once, as at a cancel */
        /* What standard output and error carry, given to these (NULL: dropped). */
        int (*on_out)(const char *data, size_t n, void *userdata);
        int (*on_err)(const char *data, size_t n, void *userdata);
        void *userdata;
        int status;
        char ended[SUMMARY_TEXT_MAX]; /* what ending the sandbox user reported, once the command ended */
} Pump;

static void shut_fd(int *fd)
{
        closep(fd);
        *fd = -EBADF;
}

/* Pumps until the entered command has exited, or until a cancel or the deadline: then kill-user ends it,
 * and what is left of its output is read until it closes (bounded by SETTLE_MS). */
static int pump_entered(Pump *p, Entered *e, EnterEnd *ret_end)
{
        EnterEnd end = ENTER_EXITED;
        bool exited = false, ended = false;
        long long settle = 0;

        /* A write to a command that does not read must not hold up the pump (a handler may give the input
         * later). */
        if (e->in_fd >= 0 && fcntl(e->in_fd, F_SETFL, O_NONBLOCK) < 0)
                return -errno;
        for (;;) {
                struct pollfd pf[5] = {
                        { e->out_fd, POLLIN, 0 },
                        { e->err_fd, POLLIN, 0 },
                        { exited ? -1 : e->pidfd, POLLIN, 0 },
                        { ended || !p->cancellable ? -1 : p->run->sigfd, POLLIN, 0 },
                        { p->input && e->in_fd >= 0 ? e->in_fd : -1, POLLOUT, 0 },
                };
                long long now = now_ms(), until = ended ? settle : p->deadline;
                int timeout = until > now ? (int)(until - now > 1000 ? 1000 : until - now) : 0;

                if (exited && e->out_fd < 0 && e->err_fd < 0)
                        break;
                if (ended && now >= settle)
                        break; /* what still holds a stream open is no longer the sandbox user's concern */
                if (!ended &&
                    (p->stop || now >= p->deadline || (p->cancellable && cancel_pending(p->run)))) {
                        end = p->stop             ? ENTER_STOPPED
                              : now < p->deadline ? ENTER_CANCELLED
                                                  : ENTER_TIMED_OUT;
                        ended = true;
                        settle = now_ms() + SETTLE_MS;
                        if (end == ENTER_STOPPED)
                                say("the sandbox side's report is refused: ending every process of the "
                                    "sandbox user");
                        else if (end == ENTER_CANCELLED)
                                say("cancelled by signal %d: ending every process of the sandbox user",
                                    p->run->cancel_signal);
                        else
                                say("out of time: ending every process of the sandbox user");
                        (void)end_sandbox(p->run, p->ended, sizeof(p->ended));
                        continue;
                }
                if (poll(pf, ELEMENTSOF(pf), timeout) < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                for (int i = 0; i < 2; i++) {
                        int *fd = i == 0 ? &e->out_fd : &e->err_fd;
                        char buf[65536];
                        ssize_t n;

                        if (*fd < 0 || !(pf[i].revents & (POLLIN | POLLHUP | POLLERR)))
                                continue;
                        n = read(*fd, buf, sizeof(buf));
                        if (n < 0 && errno == EINTR)
                                continue;
                        if (n <= 0) {
                                shut_fd(fd);
                                continue;
                        }
                        if (i == 0 && p->on_out && p->on_out(buf, (size_t)n, p->userdata) < 0)
                                shut_fd(fd);
                        if (i == 1 && p->on_err && p->on_err(buf, (size_t)n, p->userdata) < 0)
                                shut_fd(fd);
                }
                if (pf[4].fd >= 0 && (pf[4].revents & (POLLOUT | POLLERR | POLLHUP))) {
                        ssize_t n = (pf[4].revents & POLLOUT) ? write(e->in_fd, p->input + p->input_done,
                                                                      p->input_size - p->input_done)
                                                              : -1;
                        if (n > 0)
                                p->input_done += (size_t)n;
                        if ((n < 0 && errno != EINTR && errno != EAGAIN) || p->input_done == p->input_size)
                                shut_fd(&e->in_fd);
                }
                if (!exited && (pf[2].revents & POLLIN)) {
                        exited = true;
                        p->status = wait_exit_status(e->pid);
                        if (!ended) {
                                /* The command is gone, and nothing it left may go on: a daemon of its
                                 * would hold the streams open, or write on. The rest is read as it
                                 * closes. */
                                ended = true;
                                (void)end_sandbox(p->run, p->ended, sizeof(p->ended));
                                settle = now_ms() + SETTLE_MS;
                        }
                }
        }
        if (!exited) {
                (void)kill(e->pid, SIGKILL);
                p->status = wait_exit_status(e->pid);
        }
        *ret_end = end;
        return 0;
}

/* ---- clone ---- */

typedef struct CloneOut {
        Run *run;
        char line[CLONE_LINE_MAX + 1];
        size_t len;
        bool cloned, bad, tty;
        long long last_print;
        char err[STDERR_KEEP + 1];
        size_t n_err;
} CloneOut;

static int keep_err(char *keep, size_t *n, const char *data, size_t size)
{
        size_t take = size < STDERR_KEEP - *n ? size : STDERR_KEEP - *n;

        memcpy(keep + *n, data, take);
        *n += take;
        keep[*n] = '\0';
        return 0;
}

/* Splits line at single spaces into at most n words (no empty one): how many, or -1. */
static int split_words(char *line, char **words, int n)
{
        int k = 0;

        for (char *w = line; k < n;) {
                char *sp = strchr(w, ' ');

                if (*w == '\0' || *w == ' ')
                        return -1;
                words[k++] = w;
                if (!sp)
                        return k;
                *sp = '\0';
                w = sp + 1;
        }
        return -1;
}

static bool word_number(const char *w, uint64_t max, uint64_t *ret)
{
        return parse_decimal(w, strlen(w), max, ret) == 0;
}

/* "progress RECEIVED TOTAL BYTES" or, once, "cloned COMMIT BASE by-id|by-branch REPLACED REMOVED". */
static void clone_line(CloneOut *c)
{
        Summary *s = &c->run->summary;
        uint64_t a, b, bytes, rep, rem;
        char *w[7];
        int n = split_words(c->line, w, 7);

        if (n == 4 && strcmp(w[0], "progress") == 0 && word_number(w[1], UINT32_MAX, &a) &&
            word_number(w[2], UINT32_MAX, &b) && word_number(w[3], UINT64_MAX, &bytes)) {
                long long now = now_ms();
                if (c->tty) {
                        fprintf(stderr, "\r%s: clone: %llu/%llu objects, %llu bytes", prog,
                                (unsigned long long)a, (unsigned long long)b, (unsigned long long)bytes);
                        c->last_print = now;
                } else if (now - c->last_print >= 5000) {
                        say("clone: %llu/%llu objects, %llu bytes", (unsigned long long)a,
                            (unsigned long long)b, (unsigned long long)bytes);
                        c->last_print = now;
                }
                return;
        }
        if (!c->cloned && n == 6 && strcmp(w[0], "cloned") == 0 && run_commit_valid(w[1]) &&
            run_commit_valid(w[2]) && (strcmp(w[3], "by-id") == 0 || strcmp(w[3], "by-branch") == 0) &&
            word_number(w[4], RUN_FILES_MAX, &rep) && word_number(w[5], RUN_FILES_MAX, &rem)) {
                memcpy(s->commit, w[1], sizeof(s->commit));
                memcpy(s->base_commit, w[2], sizeof(s->base_commit));
                s->fetched_by_id = strcmp(w[3], "by-id") == 0;
                s->trusted_replaced = (unsigned)rep;
                s->trusted_removed = (unsigned)rem;
                c->cloned = true;
                return;
        }
        c->bad = true;
}

static int clone_on_out(const char *data, size_t n, void *userdata)
{
        CloneOut *c = userdata;

        for (size_t i = 0; i < n; i++) {
                if (data[i] != '\n') {
                        if (c->len >= CLONE_LINE_MAX) {
                                c->bad = true;
                                return -EINVAL;
                        }
                        c->line[c->len++] = data[i];
                        continue;
                }
                c->line[c->len] = '\0';
                clone_line(c);
                c->len = 0;
        }
        return 0;
}

static int clone_on_err(const char *data, size_t n, void *userdata)
{
        CloneOut *c = userdata;

        return keep_err(c->err, &c->n_err, data, n);
}

static char *first_line(char *s)
{
        s[strcspn(s, "\n")] = '\0';
        return s;
}

/* The last line that is not empty: where the sandbox side stopped, it said why last. */
static char *last_line(char *s)
{
        char *nl;

        for (size_t n = strlen(s); n > 0 && s[n - 1] == '\n'; n--)
                s[n - 1] = '\0';
        nl = strrchr(s, '\n');
        return nl ? nl + 1 : s;
}

/* run-inside OP and the clone's arguments, into args (room for CLONE_ARGS_MAX); how many. The bounds'
 * numbers are in run->clone_bounds. */
#define CLONE_ARGS_MAX (24 + 2 * RUN_TRUSTED_PATHS_MAX)
static size_t clone_args(Run *run, const char *op, char **args)
{
        const RunPlan *p = &run->plan;
        const Config *c = run->config;
        const struct {
                const char *option;
                unsigned long long value;
        } bounds[] = {
                { "--clone-max-bytes", c->run_clone_max_bytes },
                { "--clone-max-object-bytes", c->run_clone_max_object_bytes },
                { "--clone-max-files", c->run_clone_max_files },
                { "--clone-max-checkout-bytes", c->run_clone_max_checkout_bytes },
                { "--clone-max-memory", c->run_clone_max_memory },
        };
        size_t k = 0;

        args[k++] = (char *)"run-inside";
        args[k++] = (char *)op;
        args[k++] = (char *)"--run-dir";
        args[k++] = run->run_dir;
        args[k++] = (char *)"--url";
        args[k++] = (char *)p->repo;
        args[k++] = (char *)(p->commit ? "--commit" : "--ref");
        args[k++] = (char *)(p->commit ? p->commit : p->ref);
        args[k++] = (char *)"--base";
        args[k++] = (char *)p->base;
        args[k++] = (char *)"--confine";
        args[k++] = (char *)run_confine_name(run->config->run_confine);
        static_assert(ELEMENTSOF(bounds) == ELEMENTSOF(run->clone_bounds), "one buffer per bound");
        for (size_t i = 0; i < ELEMENTSOF(bounds); i++) {
                (void)snprintf(run->clone_bounds[i], sizeof(run->clone_bounds[i]), "%llu", bounds[i].value);
                args[k++] = (char *)bounds[i].option;
                args[k++] = run->clone_bounds[i];
        }
        for (char **t = run->config->run_trusted_paths; *t; t++) {
                assert(k + 2 < CLONE_ARGS_MAX);
                args[k++] = (char *)"--trusted";
                args[k++] = *t;
        }
        return k;
}

/* The clone's report as it ended: RUN_EXIT_OK, or the status the run ends with; the phase ended either
 * way. status is the sandbox side's exit status, or 0 where it still runs (clone-agent). */
static int clone_outcome(Run *run, const CloneOut *out, int status, bool one_enter, long long t0)
{
        const RunPlan *p = &run->plan;
        char detail[SUMMARY_TEXT_MAX];

        if (status != 0 || !out->cloned || out->bad) {
                char err[STDERR_KEEP + 1];

                memcpy(err, out->err, sizeof(err));
                (void)snprintf(detail, sizeof(detail), "%.400s",
                               out->n_err ? first_line(err)
                               : out->bad ? "the sandbox side wrote what is not a clone's report"
                                          : "the clone did not report its commit");
                if (status != 0 && !out->n_err)
                        (void)snprintf(detail, sizeof(detail), "the sandbox side ended with status %d",
                                       status);
                phase_end(run, "clone", t0, false, detail);
                run->clone_http_error = strcasestr(out->err, "status code") != NULL;
                return RUN_EXIT_NOT_RUN;
        }
        if (p->commit && strcmp(run->summary.commit, p->commit) != 0) {
                phase_end(run, "clone", t0, false,
                          "the clone reports another commit than the one asked for");
                return RUN_EXIT_NOT_RUN;
        }
        (void)snprintf(
                detail, sizeof(detail), "%s (%s), base %s; trusted paths: %u from the base, %u removed%s",
                run->summary.commit, run->summary.fetched_by_id ? "fetched by id" : "fetched with the base",
                run->summary.base_commit, run->summary.trusted_replaced, run->summary.trusted_removed,
                one_enter ? "; made in a PID namespace of its own, in the agent's enter" : "");
        phase_end(run, "clone", t0, true, detail);
        return RUN_EXIT_OK;
}

/* A clone that did not get to its report: the pump's own failure, a cancel, the deadline. (A refused
 * report has ended its phase already.) */
static int clone_interrupted(Run *run, int r, EnterEnd end, long long t0)
{
        if (r < 0) {
                phase_end(run, "clone", t0, false, strerror(-r));
                return RUN_EXIT_NOT_RUN;
        }
        phase_end(run, "clone", t0, false, end == ENTER_CANCELLED ? "cancelled" : "out of time");
        return end == ENTER_CANCELLED ? RUN_EXIT_FAILED : RUN_EXIT_TIMEOUT;
}

/* The clone, as the sandbox user. RUN_EXIT_OK, or the status the run ends with. */
static int phase_clone(Run *run)
{
        char *args[CLONE_ARGS_MAX] = {};
        CloneOut out = { .run = run, .tty = isatty(STDERR_FILENO) == 1 };
        Pump pump = { .run = run,
                      .deadline = run->deadline,
                      .cancellable = true,
                      .on_out = clone_on_out,
                      .on_err = clone_on_err,
                      .userdata = &out };
        Entered e = { .pidfd = -EBADF, .in_fd = -EBADF, .out_fd = -EBADF, .err_fd = -EBADF };
        long long t0 = now_ms();
        EnterEnd end = ENTER_EXITED;
        int r;

        phase_start("clone");
        (void)clone_args(run, "clone", args);
        r = enter_sandbox(run, run->sandbox_home, args, &e);
        if (r < 0) {
                phase_end(run, "clone", t0, false, strerror(-r));
                return RUN_EXIT_NOT_RUN;
        }
        r = pump_entered(&pump, &e, &end);
        entered_done(&e);
        if (out.tty && out.last_print)
                fputc('\n', stderr);
        if (r < 0 || end != ENTER_EXITED)
                return clone_interrupted(run, r, end, t0);
        return clone_outcome(run, &out, pump.status, false, t0);
}

/* ---- the before-agent check ---- */

/* [sandbox.check] before-agent: every probe of `sandbox check` again, after the clone and before the
 * token and the agent, by this same program as the runner; its lines pass through. */
static int phase_check(Run *run)
{
        char detail[SUMMARY_TEXT_MAX];
        long long t0 = now_ms();
        pid_t pid;
        int status;

        phase_start("check");
        run->ended = false; /* sandbox check enters the sandbox user itself */
        pid = fork();
        if (pid < 0) {
                phase_end(run, "check", t0, false, strerror(errno));
                return RUN_EXIT_NOT_RUN;
        }
        if (pid == 0) {
                char *argv[] = { (char *)"agentic-job", (char *)"sandbox", (char *)"check", NULL };
                sigset_t mask;
                int null = open("/dev/null", O_RDONLY | O_CLOEXEC);

                sigemptyset(&mask);
                (void)sigprocmask(SIG_SETMASK, &mask, NULL);
                if (null < 0 || dup2(null, STDIN_FILENO) < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
                        _exit(127);
                execv("/proc/self/exe", argv);
                _exit(127);
        }
        status = wait_exit_status(pid);
        (void)snprintf(detail, sizeof(detail), "%s",
                       status == 0  ? "every probe of sandbox check passed"
                       : status < 0 ? strerror(-status)
                                    : "sandbox check failed: the agent does not start");
        phase_end(run, "check", t0, status == 0, detail);
        return status == 0 ? RUN_EXIT_OK : RUN_EXIT_NOT_RUN;
}

/* ---- the profile: its files, the token, its login, the token probes ---- */

typedef struct ProfileOut {
        CheckStream stream;
        bool seen[16]; /* one per probe expected: the token's (9), the key's (5) with the broker */
        unsigned ok, notes, failed;
        char first_fail[SUMMARY_TEXT_MAX];
        bool bad;
        AjError e;
        char err[STDERR_KEEP + 1];
        size_t n_err;
} ProfileOut;

static void profile_on_line(const CheckLine *l, void *userdata)
{
        ProfileOut *o = userdata;
        char n_esc[CHECK_NAME_MAX * 4], d_esc[CHECK_DETAIL_MAX * 4], plain[CHECK_DETAIL_MAX + 1];

        /* The sandbox side wrote the line: what it says of the token is redacted before the escape. */
        (void)snprintf(plain, sizeof(plain), "%s", l->detail);
        (void)secret_redact_string(run_secrets, plain);
        check_escape(l->name, n_esc, sizeof(n_esc));
        check_escape(plain, d_esc, sizeof(d_esc));
        fprintf(stderr, "%s [%s] %s\n", check_status_to_string(l->status), n_esc, d_esc);
        if (l->status == CHECK_OK) {
                o->ok++;
                return;
        }
        /* Only the container probes may be notes (no podman the sandbox user can start, no subordinate
         * uid, containers off): every other token probe can always be made, and one that is not fails. */
        if (l->status == CHECK_NOTE && strncmp(l->name, "token-container-", 16) == 0) {
                o->notes++;
                return;
        }
        if (!o->failed++)
                (void)snprintf(o->first_fail, sizeof(o->first_fail), "%s [%.60s] %.400s",
                               check_status_to_string(l->status), n_esc, d_esc);
}

static int profile_on_out(const char *data, size_t n, void *userdata)
{
        ProfileOut *o = userdata;

        if (!o->bad && check_stream_feed(&o->stream, data, n, profile_on_line, o, &o->e) < 0)
                o->bad = true;
        return 0;
}

static int profile_on_err(const char *data, size_t n, void *userdata)
{
        ProfileOut *o = userdata;

        return keep_err(o->err, &o->n_err, data, n);
}

static bool profile_has_work(const Run *run)
{
        const Profile *p = run->profile;

        return run->token || (p->dirs && p->dirs[0]) || profile_json_count(p) > 0;
}

/* The runner's places token-runner-file searches: its home, RUNNER_TEMP, GITHUB_WORKSPACE (each that is a
 * directory). */
static size_t runner_dirs(char **dirs, size_t max)
{
        const struct passwd *pw = getpwuid(getuid());
        const char *candidates[] = { pw ? pw->pw_dir : NULL, getenv("RUNNER_TEMP"),
                                     getenv("GITHUB_WORKSPACE") };
        size_t n = 0;

        for (size_t i = 0; i < ELEMENTSOF(candidates) && n < max; i++) {
                struct stat st;

                if (candidates[i] && path_is_plain_absolute(candidates[i]) &&
                    stat(candidates[i], &st) == 0 && S_ISDIR(st.st_mode))
                        dirs[n++] = (char *)candidates[i];
        }
        return n;
}

/* The key probes' input (key-probes.h): the key's print, never the key. */
static int key_print_arg(const Run *run, char *key_print)
{
        KeyPrint k;
        int r = key_print_make(run->token, run->token_size, &k);

        return r < 0 ? r : key_print_format(&k, key_print, KEY_PRINT_TEXT_MAX);
}

static int phase_profile(Run *run)
{
        char *args[20 + 2 * TOKEN_RUNNER_DIRS_MAX] = {};
        char *names[16] = {};
        char key_print[KEY_PRINT_TEXT_MAX];
        char *dirs[TOKEN_RUNNER_DIRS_MAX];
        char detail[SUMMARY_TEXT_MAX];
        ProfileOut out = {};
        Pump pump = { .run = run,
                      .deadline = run->deadline,
                      .cancellable = true,
                      .input = run->broker_on ? run->placeholder : run->token,
                      .input_size = run->broker_on ? strlen(run->placeholder)
                                    : run->token   ? run->token_size
                                                   : 0,
                      .on_out = profile_on_out,
                      .on_err = profile_on_err,
                      .userdata = &out };
        Entered e = { .pidfd = -EBADF, .in_fd = -EBADF, .out_fd = -EBADF, .err_fd = -EBADF };
        long long t0 = now_ms();
        EnterEnd end = ENTER_EXITED;
        size_t k = 0, n_dirs = runner_dirs(dirs, ELEMENTSOF(dirs)), n_names = 0;
        int r;

        phase_start("profile");
        for (size_t i = 0; token_probe_names[i]; i++)
                names[n_names++] = (char *)token_probe_names[i];
        for (size_t i = 0; run->broker_on && key_probe_names[i]; i++)
                names[n_names++] = (char *)key_probe_names[i];
        check_stream_init(&out.stream, names, out.seen);
        args[k++] = (char *)"run-inside";
        args[k++] = (char *)"profile";
        args[k++] = (char *)"--run-dir";
        args[k++] = run->run_dir;
        args[k++] = (char *)"--confine";
        args[k++] = (char *)run_confine_name(run->config->run_confine);
        args[k++] = (char *)"--profile";
        args[k++] = (char *)run->plan.profile;
        if (run->token && run->config->check_before_agent && run->config->check_containers) {
                args[k++] = (char *)"--container-image";
                args[k++] = run->config->check_container_image;
        }
        if (run->broker_on) {
                r = key_print_arg(run, key_print);
                if (r < 0) {
                        phase_end(run, "profile", t0, false, "cannot make the key probes' print");
                        return RUN_EXIT_NOT_RUN;
                }
                args[k++] = (char *)"--broker";
                args[k++] = (char *)"--key-print";
                args[k++] = key_print;
                args[k++] = (char *)"--control-url";
                args[k++] = run->config->check_control_url;
        }
        if (run->token) {
                args[k++] = (char *)"--token";
                for (size_t i = 0; i < n_dirs; i++) {
                        args[k++] = (char *)"--runner-dir";
                        args[k++] = dirs[i];
                }
        }
        r = enter_sandbox(run, run->work_dir, args, &e);
        if (r < 0) {
                phase_end(run, "profile", t0, false, strerror(-r));
                return RUN_EXIT_NOT_RUN;
        }
        r = pump_entered(&pump, &e, &end);
        entered_done(&e);
        if (r < 0) {
                phase_end(run, "profile", t0, false, strerror(-r));
                return RUN_EXIT_NOT_RUN;
        }
        if (end != ENTER_EXITED) {
                phase_end(run, "profile", t0, false, end == ENTER_CANCELLED ? "cancelled" : "out of time");
                return end == ENTER_CANCELLED ? RUN_EXIT_FAILED : RUN_EXIT_TIMEOUT;
        }
        if (!out.bad && check_stream_end(&out.stream, &out.e) < 0)
                out.bad = true;
        if (out.bad)
                (void)snprintf(detail, sizeof(detail),
                               "the sandbox side wrote what is not a probe's result: %.300s", out.e.message);
        else if (out.failed)
                (void)snprintf(detail, sizeof(detail), "%s", out.first_fail);
        else if (pump.status != 0)
                (void)snprintf(detail, sizeof(detail), "%.400s",
                               out.n_err ? first_line(out.err) : "the sandbox side failed");
        else if (run->token && out.ok + out.notes != n_names)
                (void)snprintf(detail, sizeof(detail), "%u of the token probes reported",
                               out.ok + out.notes);
        else {
                (void)snprintf(detail, sizeof(detail), "profile %s ready%s%s", run->plan.profile,
                               run->token ? "; the token in place, no token probe failed" : "",
                               run->token && out.notes ? " (the container ones notes)" : "");
                phase_end(run, "profile", t0, true, detail);
                return RUN_EXIT_OK;
        }
        phase_end(run, "profile", t0, false, detail);
        return RUN_EXIT_NOT_RUN;
}

/* ---- setup and agent ---- */

/* The agent's output as it comes: its start line taken out of standard output (agent-start.h), the
 * beginning of its standard error kept to say why, where it never started. */
typedef struct AgentOut {
        SecretLines out_lines, err_lines; /* first the secrets go, then the workflow commands */
        OutputFilter out, err;
        AgentStartReader start;
        char first_err[STDERR_KEEP + 1];
        size_t n_first_err;
} AgentOut;

static int write_stdout(const char *data, size_t n, void *userdata)
{
        (void)userdata;
        return write_all(STDOUT_FILENO, data, n);
}

static int write_stderr(const char *data, size_t n, void *userdata)
{
        (void)userdata;
        return write_all(STDERR_FILENO, data, n);
}

static int filter_stdout(const char *data, size_t n, void *userdata)
{
        AgentOut *a = userdata;

        return output_filter_feed(&a->out, data, n, write_stdout, NULL);
}

static int filter_stderr(const char *data, size_t n, void *userdata)
{
        AgentOut *a = userdata;

        return output_filter_feed(&a->err, data, n, write_stderr, NULL);
}

/* The sandbox's output to the job's log: redacted a line at a time, then filtered. */
static void agent_print(AgentOut *a, bool err, const char *data, size_t n)
{
        SecretLines *l = err ? &a->err_lines : &a->out_lines;

        assert(run_secrets);
        l->set = run_secrets;
        (void)secret_lines_feed(l, data, n, err ? filter_stderr : filter_stdout, a);
}

static void agent_print_end(AgentOut *a)
{
        a->out_lines.set = a->err_lines.set = run_secrets;
        (void)secret_lines_flush(&a->out_lines, filter_stdout, a);
        (void)secret_lines_flush(&a->err_lines, filter_stderr, a);
        (void)output_filter_flush(&a->out, write_stdout, NULL);
        (void)output_filter_flush(&a->err, write_stderr, NULL);
}

static int agent_on_out(const char *data, size_t n, void *userdata)
{
        AgentOut *a = userdata;
        size_t replay, skip = agent_start_feed(&a->start, data, n, &replay);

        if (replay > 0)
                agent_print(a, false, AGENT_STARTED_LINE, replay);
        if (skip < n)
                agent_print(a, false, data + skip, n - skip);
        return 0;
}

static int agent_on_err(const char *data, size_t n, void *userdata)
{
        AgentOut *a = userdata;

        (void)keep_err(a->first_err, &a->n_first_err, data, n);
        agent_print(a, true, data, n);
        return 0;
}

/* What goes on the agent's standard input: the named values, an empty entry, the task. */
static int agent_input(const Run *run, const char *task, size_t task_size, char **ret, size_t *ret_size)
{
        _cleanup_free_ char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);

        if (!f)
                return -ENOMEM;
        for (char **name = run->config->run_env; *name; name++) {
                const char *v = getenv(*name);
                if (v && env_value_valid(v))
                        fprintf(f, "%s=%s%c", *name, v, '\0');
        }
        fputc('\0', f);
        fwrite(task, 1, task_size, f);
        if (fclose(f) != 0)
                return -ENOMEM;
        *ret = TAKE_PTR(buf);
        *ret_size = size;
        return 0;
}

/* The agent's arguments after run-inside OP's, from args[k]; how many in all. args has room for
 * AGENT_ARGS_MAX more than the agent's words. After a setup command, the agent's enter first writes the
 * base's trusted paths again (the setup command could rewrite them). */
#define AGENT_ARGS_MAX (24 + 2 * RUN_TRUSTED_PATHS_MAX)
static size_t agent_args(const Run *run, char **args, size_t k)
{
        const RunPlan *p = &run->plan;

        if (run->config->run_confine == RUN_CONFINE_BUBBLEWRAP && run->config->egress_proxy)
                args[k++] = (char *)"--bridge";
        args[k++] = (char *)"--profile";
        args[k++] = (char *)p->profile;
        if (run->token)
                args[k++] = (char *)"--token";
        if (run->broker_on) {
                args[k++] = (char *)"--broker";
                args[k++] = (char *)"--broker-socket";
                args[k++] = (char *)run->broker_socket;
        }
        if (p->setup) {
                args[k++] = (char *)"--base-commit";
                args[k++] = (char *)run->summary.base_commit;
                for (char **t = run->config->run_trusted_paths; *t; t++) {
                        args[k++] = (char *)"--trusted";
                        args[k++] = *t;
                }
        }
        args[k++] = (char *)"--";
        for (char **a = p->agent; a && *a; a++)
                args[k++] = *a;
        return k;
}

/* How the agent (or the setup command: phase) ended: the phase ended, and the status the run ends
 * with. */
static int agent_outcome(Run *run, const char *phase, const Pump *pump, int r, EnterEnd end, AgentOut *out,
                         long long t0)
{
        char detail[SUMMARY_TEXT_MAX];
        size_t held = agent_start_end(&out->start);

        if (held > 0)
                agent_print(out, false, AGENT_STARTED_LINE, held);
        agent_print_end(out);
        if (r < 0) {
                phase_end(run, phase, t0, false, strerror(-r));
                return RUN_EXIT_FAILED;
        }
        if (end == ENTER_CANCELLED) {
                (void)snprintf(detail, sizeof(detail), "cancelled by signal %d", run->cancel_signal);
                phase_end(run, phase, t0, false, detail);
                return RUN_EXIT_FAILED;
        }
        if (end == ENTER_TIMED_OUT) {
                (void)snprintf(detail, sizeof(detail), "out of time after %u s", run->plan.timeout);
                phase_end(run, phase, t0, false, detail);
                return RUN_EXIT_TIMEOUT;
        }
        if (strcmp(phase, "agent") == 0 && !out->start.started && !out->start.other) {
                (void)snprintf(
                        detail, sizeof(detail), "the agent did not start (status %d): %.400s", pump->status,
                        out->n_first_err ? last_line(out->first_err) : "the sandbox side said nothing");
                phase_end(run, phase, t0, false, detail);
                return RUN_EXIT_NOT_RUN;
        }
        (void)snprintf(detail, sizeof(detail), "%sexit status %d; then %.400s",
                       strcmp(phase, "setup") == 0 && pump->status != 0 ? "the setup command failed: " : "",
                       pump->status, pump->ended);
        phase_end(run, phase, t0, pump->status == 0, detail);
        return pump->status == 0 ? RUN_EXIT_OK : RUN_EXIT_FAILED;
}

/* The setup command (run --setup), in an enter of its own before the before-agent check, the profile's
 * files, the token and the agent: whatever it starts is ended with it, and it never sees the token. */
static int phase_setup(Run *run)
{
        char *args[16] = {};
        _cleanup_free_ char *input = NULL;
        AgentOut out = {};
        Pump pump = { .run = run,
                      .deadline = run->deadline,
                      .cancellable = true,
                      .on_out = agent_on_out,
                      .on_err = agent_on_err,
                      .userdata = &out };
        Entered e = { .pidfd = -EBADF, .in_fd = -EBADF, .out_fd = -EBADF, .err_fd = -EBADF };
        long long t0 = now_ms();
        size_t k = 0;
        EnterEnd end = ENTER_EXITED;
        int r;

        phase_start("setup");
        r = agent_input(run, "", 0, &input, &pump.input_size);
        if (r < 0) {
                phase_end(run, "setup", t0, false, strerror(-r));
                return RUN_EXIT_NOT_RUN;
        }
        pump.input = input;
        args[k++] = (char *)"run-inside";
        args[k++] = (char *)"setup";
        args[k++] = (char *)"--run-dir";
        args[k++] = run->run_dir;
        args[k++] = (char *)"--confine";
        args[k++] = (char *)run_confine_name(run->config->run_confine);
        if (run->config->run_confine == RUN_CONFINE_BUBBLEWRAP && run->config->egress_proxy)
                args[k++] = (char *)"--bridge";
        args[k++] = (char *)"--profile";
        args[k++] = (char *)run->plan.profile;
        args[k++] = (char *)"--setup";
        args[k++] = (char *)run->plan.setup;
        r = enter_sandbox(run, run->work_dir, args, &e);
        if (r < 0) {
                phase_end(run, "setup", t0, false, strerror(-r));
                return RUN_EXIT_NOT_RUN;
        }
        r = pump_entered(&pump, &e, &end);
        entered_done(&e);
        return agent_outcome(run, "setup", &pump, r, end, &out, t0);
}

/* ---- the key broker ---- */

/* The run's placeholder: what the agent holds instead of the key, worth nothing once the broker ends. */
static int make_placeholder(Run *run)
{
        strcpy(run->placeholder, "ajb-");
        return random_hex(run->placeholder + 4, 24);
}

/* The broker's socket in a directory of this run's (the sandbox user may pass it, not list it), the
 * broker forked on it. The socket is anyone's to connect to: the placeholder is what lets a request
 * through, and the sandbox user is the only one who holds it. */
static int broker_up(Run *run, char *detail, size_t size)
{
        struct sockaddr_un sun = { .sun_family = AF_UNIX };
        _cleanup_close_ int fd = -EBADF;
        BrokerSettings s = { .upstream = run->profile->api_base,
                             .key_header = run->profile->api_header,
                             .key = run->token,
                             .placeholder = run->placeholder,
                             .proxy = EGRESS_PROXY_URL,
                             .ca_file = EGRESS_CA_BUNDLE,
                             .paths = run->profile->api_paths,
                             .max_requests = (unsigned)run->config->run_max_requests,
                             .budget = run->config->run_budget * PRICE_PICO_PER_MICRO,
                             .prices = run->config->run_prices,
                             .n_prices = run->config->n_run_prices };
        int r;

        strcpy(run->broker_dir, "/tmp/agentic-job-broker.XXXXXX");
        if (!mkdtemp(run->broker_dir)) {
                r = -errno;
                run->broker_dir[0] = '\0';
                (void)snprintf(detail, size, "cannot make the key broker's directory: %s", strerror(-r));
                return r;
        }
        (void)snprintf(run->broker_socket, sizeof(run->broker_socket), "%s/broker.sock", run->broker_dir);
        strcpy(sun.sun_path, run->broker_socket);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0 || bind(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0 ||
            chmod(run->broker_socket, 0666) < 0 || chmod(run->broker_dir, 0711) < 0 ||
            listen(fd, BROKER_CONNECTIONS_MAX) < 0) {
                r = -errno;
                (void)snprintf(detail, size, "cannot make the key broker's socket: %s", strerror(-r));
                return r;
        }
        r = broker_start(&s, fd, &run->broker);
        if (r < 0)
                (void)snprintf(detail, size, "cannot start the key broker: %s", strerror(-r));
        return r;
}

/* Ends the broker (the placeholder is worthless from here on) and removes its socket. */
static void broker_down(Run *run)
{
        BrokerReport report;

        if (run->broker.pid > 0 && broker_stop(&run->broker, &report) == 0) {
                run->summary.broker_reported = true;
                run->summary.api_forwarded = report.forwarded;
                run->summary.api_refused = report.refused + report.over;
                run->summary.api_over = report.over;
                run->summary.api_input_tokens = report.input_tokens;
                run->summary.api_output_tokens = report.output_tokens;
                run->summary.api_max = (unsigned)run->config->run_max_requests;
                run->summary.api_over_budget = report.over_budget;
                run->summary.api_refused += report.over_budget;
                run->summary.api_unpriced = report.unpriced;
                run->summary.api_spent = report.spent;
                run->summary.api_priced = run->config->n_run_prices > 0;
                run->summary.api_budget = run->config->run_budget * PRICE_PICO_PER_MICRO;
        }
        if (run->broker_dir[0]) {
                (void)unlink(run->broker_socket);
                (void)rmdir(run->broker_dir);
                run->broker_dir[0] = '\0';
        }
}

static int phase_agent(Run *run, const char *task, size_t task_size)
{
        _cleanup_free_ char **args = NULL;
        _cleanup_free_ char *input = NULL;
        AgentOut out = {};
        Pump pump = { .run = run,
                      .deadline = run->deadline,
                      .cancellable = true,
                      .on_out = agent_on_out,
                      .on_err = agent_on_err,
                      .userdata = &out };
        Entered e = { .pidfd = -EBADF, .in_fd = -EBADF, .out_fd = -EBADF, .err_fd = -EBADF };
        long long t0 = now_ms();
        size_t k = 0;
        EnterEnd end = ENTER_EXITED;
        int r;

        phase_start("agent");
        r = agent_input(run, task, task_size, &input, &pump.input_size);
        if (r < 0) {
                phase_end(run, "agent", t0, false, strerror(-r));
                return RUN_EXIT_NOT_RUN;
        }
        pump.input = input;
        args = calloc(strv_length(run->plan.agent) + AGENT_ARGS_MAX, sizeof(char *));
        if (!args) {
                phase_end(run, "agent", t0, false, "out of memory");
                return RUN_EXIT_NOT_RUN;
        }
        if (run->broker_on) {
                char detail[SUMMARY_TEXT_MAX];

                r = broker_up(run, detail, sizeof(detail));
                if (r < 0) {
                        broker_down(run);
                        phase_end(run, "agent", t0, false, detail);
                        return RUN_EXIT_NOT_RUN;
                }
        }
        args[k++] = (char *)"run-inside";
        args[k++] = (char *)"agent";
        args[k++] = (char *)"--run-dir";
        args[k++] = run->run_dir;
        args[k++] = (char *)"--confine";
        args[k++] = (char *)run_confine_name(run->config->run_confine);
        (void)agent_args(run, args, k);
        r = enter_sandbox(run, run->work_dir, args, &e);
        if (r < 0) {
                broker_down(run);
                phase_end(run, "agent", t0, false, strerror(-r));
                return RUN_EXIT_NOT_RUN;
        }
        r = pump_entered(&pump, &e, &end);
        entered_done(&e);
        broker_down(run);
        r = agent_outcome(run, "agent", &pump, r, end, &out, t0);
        /* The agent hit [run] max-requests: that is how the run ended, whatever the agent made of the
         * refusal (an agent may well exit 0 or 1 after it). */
        if (run->summary.api_over && (r == RUN_EXIT_OK || r == RUN_EXIT_FAILED)) {
                say("agent: [run] max-requests (%u) reached: the key broker refused %u more request%s",
                    run->summary.api_max, run->summary.api_over, run->summary.api_over == 1 ? "" : "s");
                r = RUN_EXIT_LIMIT;
        }
        if (run->summary.api_over_budget && (r == RUN_EXIT_OK || r == RUN_EXIT_FAILED)) {
                char budget[AMOUNT_TEXT_MAX], spent[AMOUNT_TEXT_MAX];

                say("agent: [run] budget (%s) reached (the answers cost %s): the key broker refused %u more "
                    "request%s",
                    amount_format(run->summary.api_budget, budget),
                    amount_format(run->summary.api_spent, spent), run->summary.api_over_budget,
                    run->summary.api_over_budget == 1 ? "" : "s");
                r = RUN_EXIT_LIMIT;
        }
        return r;
}

/* ---- clone and agent in one enter ---- */

/* What the one enter writes: the clone's lines up to its report, then the agent's output. */
typedef struct CloneAgentOut {
        CloneOut clone;
        AgentOut agent;
        Pump *pump;
        const char *input; /* the agent's, given to the pump once the clone's report is taken */
        size_t input_size;
        long long t0; /* of the clone, then of the agent */
        int clone_status;
        bool agent_started;
} CloneAgentOut;

/* The clone's report came (or what is not one): taken, the clone phase ends and the agent's input goes
 * out; refused, the command is stopped before the agent can start (it waits for that input). */
static void clone_agent_report(CloneAgentOut *c)
{
        if (c->clone.tty && c->clone.last_print)
                fputc('\n', stderr);
        c->clone_status = clone_outcome(c->clone.run, &c->clone, 0, true, c->t0);
        if (c->clone_status != RUN_EXIT_OK) {
                c->pump->stop = true;
                return;
        }
        c->agent_started = true;
        c->t0 = now_ms();
        phase_start("agent");
        c->pump->input = c->input;
        c->pump->input_size = c->input_size;
}

static int clone_agent_on_out(const char *data, size_t n, void *userdata)
{
        CloneAgentOut *c = userdata;
        size_t i = 0;

        /* A line at a time while the clone speaks, so that not a byte after its report is taken for it. */
        while (!c->agent_started && !c->pump->stop && i < n) {
                const char *nl = memchr(data + i, '\n', n - i);
                size_t len = nl ? (size_t)(nl - (data + i)) + 1 : n - i;

                if (clone_on_out(data + i, len, &c->clone) < 0 || c->clone.bad || c->clone.cloned)
                        clone_agent_report(c);
                i += len;
        }
        if (c->agent_started && i < n)
                (void)agent_on_out(data + i, n - i, &c->agent);
        return 0;
}

static int clone_agent_on_err(const char *data, size_t n, void *userdata)
{
        CloneAgentOut *c = userdata;

        if (c->agent_started)
                return agent_on_err(data, n, &c->agent);
        return keep_err(c->clone.err, &c->clone.n_err, data, n);
}

/* Where nothing comes between them (no setup command, before-agent check or profile work): the clone
 * and then the agent in one enter (run-inside clone-agent), which saves an enter and a kill-user. The
 * sandbox side makes the clone in a PID namespace of its own, so that nothing the clone might start outlives
 * it (what the kill-user between two enters ensures), and waits for the agent's input, which goes out only
 * once the clone's report is taken here. Both phases are reported as they are when apart. */
static int phase_clone_agent(Run *run, const char *task, size_t task_size)
{
        _cleanup_free_ char **args = NULL;
        _cleanup_free_ char *input = NULL;
        Pump pump = { .run = run,
                      .deadline = run->deadline,
                      .cancellable = true,
                      .on_out = clone_agent_on_out,
                      .on_err = clone_agent_on_err };
        CloneAgentOut out = { .clone = { .run = run, .tty = isatty(STDERR_FILENO) == 1 }, .pump = &pump };
        Entered e = { .pidfd = -EBADF, .in_fd = -EBADF, .out_fd = -EBADF, .err_fd = -EBADF };
        EnterEnd end = ENTER_EXITED;
        size_t k;
        int r;

        pump.userdata = &out;
        out.t0 = now_ms();
        phase_start("clone");
        r = agent_input(run, task, task_size, &input, &out.input_size);
        args = r < 0 ? NULL
                     : calloc(CLONE_ARGS_MAX + strv_length(run->plan.agent) + AGENT_ARGS_MAX,
                              sizeof(char *));
        if (!args) {
                phase_end(run, "clone", out.t0, false, "out of memory");
                return RUN_EXIT_NOT_RUN;
        }
        out.input = input;
        k = clone_args(run, "clone-agent", args);
        (void)agent_args(run, args, k);
        r = enter_sandbox(run, run->sandbox_home, args, &e);
        if (r < 0) {
                phase_end(run, "clone", out.t0, false, strerror(-r));
                return RUN_EXIT_NOT_RUN;
        }
        r = pump_entered(&pump, &e, &end);
        entered_done(&e);
        if (out.agent_started)
                return agent_outcome(run, "agent", &pump, r, end, &out.agent, out.t0);
        if (out.clone.tty && out.clone.last_print && !out.clone.cloned && !out.clone.bad)
                fputc('\n', stderr);
        if (end == ENTER_STOPPED)
                return out.clone_status; /* the clone's phase ended with the report refused */
        if (r < 0 || end != ENTER_EXITED)
                return clone_interrupted(run, r, end, out.t0);
        /* It exited without a report, or with one after its status said it failed. */
        return clone_outcome(run, &out.clone, pump.status != 0 ? pump.status : 1, true, out.t0);
}

/* ---- export ---- */

typedef struct ExportOut {
        ExportReceiver *receiver;
        Pump *pump;
        char err[STDERR_KEEP + 1];
        size_t n_err;
} ExportOut;

/* The stream, to the receiver as it comes; a broken one ends the exporter at once. */
static int export_on_out(const char *data, size_t n, void *userdata)
{
        ExportOut *x = userdata;

        if (export_receiver_feed(x->receiver, data, n) < 0) {
                x->pump->stop = true;
                return -EBADMSG;
        }
        return 0;
}

static int export_on_err(const char *data, size_t n, void *userdata)
{
        ExportOut *x = userdata;

        return keep_err(x->err, &x->n_err, data, n);
}

static int phase_export(Run *run)
{
        const RunPlan *p = &run->plan;
        _cleanup_free_ char **args = NULL;
        _cleanup_strv_free_ char **names = NULL;
        char num[3][24], detail[SUMMARY_TEXT_MAX];
        Entered e = { .pidfd = -EBADF, .in_fd = -EBADF, .out_fd = -EBADF, .err_fd = -EBADF };
        ExportOut out = {};
        /* Bounded like every other enter, and ended by a cancel: the exporter reads what the agent left. */
        Pump pump = { .run = run,
                      .deadline = now_ms() + EXPORT_MS,
                      .cancellable = true,
                      .on_out = export_on_out,
                      .on_err = export_on_err,
                      .userdata = &out };
        EnterEnd end = ENTER_EXITED;
        ExportLimits lim = { .max_file_bytes = p->max_file_bytes,
                             .max_total_bytes = p->max_total_bytes,
                             .max_files = p->max_files };
        ExportResult res = {};
        long long t0 = now_ms();
        size_t k = 0, n = strv_length(p->outputs), kn = 0;
        AjError err = {};
        int r;

        phase_start("export");
        args = calloc(n + 2 * RUN_TRUSTED_PATHS_MAX + 20, sizeof(char *));
        names = calloc(n + 2, sizeof(char *));
        if (!args || !names) {
                phase_end(run, "export", t0, false, "out of memory");
                return RUN_EXIT_CLEANUP;
        }
        for (size_t i = 0; i < n; i++)
                if (asprintf(&names[kn++], RUN_WORKSPACE "/%s", p->outputs[i]) < 0) {
                        phase_end(run, "export", t0, false, "out of memory");
                        return RUN_EXIT_CLEANUP;
                }
        if (p->patch && !(names[kn++] = strdup(RUN_PATCH_NAME))) {
                phase_end(run, "export", t0, false, "out of memory");
                return RUN_EXIT_CLEANUP;
        }
        (void)snprintf(num[0], sizeof(num[0]), "%llu", p->max_file_bytes);
        (void)snprintf(num[1], sizeof(num[1]), "%llu", p->max_total_bytes);
        (void)snprintf(num[2], sizeof(num[2]), "%u", p->max_files);
        args[k++] = (char *)"run-inside";
        args[k++] = (char *)"export";
        args[k++] = (char *)"--run-dir";
        args[k++] = run->run_dir;
        args[k++] = (char *)"--max-file-bytes";
        args[k++] = num[0];
        args[k++] = (char *)"--max-total-bytes";
        args[k++] = num[1];
        args[k++] = (char *)"--max-files";
        args[k++] = num[2];
        args[k++] = (char *)"--dispose";
        /* The disposal removes the run's token and the profile's token files first, by name. */
        args[k++] = (char *)"--profile";
        args[k++] = (char *)run->plan.profile;
        if (p->patch) {
                args[k++] = (char *)"--commit";
                args[k++] = run->summary.commit;
                for (char **t = run->config->run_trusted_paths; *t; t++) {
                        args[k++] = (char *)"--trusted";
                        args[k++] = *t;
                }
        }
        args[k++] = (char *)"--";
        for (size_t i = 0; i < n; i++)
                args[k++] = p->outputs[i];

        r = export_receiver_new(run->out_fd, names, &lim, &run->secrets, &out.receiver, &err);
        if (r < 0) {
                phase_end(run, "export", t0, false, err.message);
                return RUN_EXIT_CLEANUP;
        }
        /* cppcheck-suppress unreadVariable ; the handlers read it through pump.userdata */
        out.pump = &pump;
        r = enter_sandbox(run, run->run_dir, args, &e);
        if (r < 0) {
                export_receiver_free(out.receiver);
                phase_end(run, "export", t0, false, strerror(-r));
                return RUN_EXIT_CLEANUP;
        }
        closep(&e.in_fd);
        e.in_fd = -EBADF;
        r = pump_entered(&pump, &e, &end);
        entered_done(&e);
        /* A signal that came while the exporter ended cancels the run all the same: nothing is kept. */
        if (r >= 0 && end == ENTER_EXITED && cancel_pending(run))
                end = ENTER_CANCELLED;
        if (r < 0 || end == ENTER_CANCELLED || end == ENTER_TIMED_OUT) {
                /* Whatever came of the stream is removed again. */
                export_receiver_free(out.receiver);
                if (r < 0)
                        (void)snprintf(detail, sizeof(detail), "%s", strerror(-r));
                else if (end == ENTER_CANCELLED)
                        (void)snprintf(detail, sizeof(detail), "cancelled by signal %d; nothing exported",
                                       run->cancel_signal);
                else
                        (void)snprintf(detail, sizeof(detail),
                                       "out of time after %d s; nothing exported; the exporter: %.300s",
                                       EXPORT_MS / 1000, out.n_err ? first_line(out.err) : "said nothing");
                phase_end(run, "export", t0, false, detail);
                return r >= 0 && end == ENTER_CANCELLED ? RUN_EXIT_FAILED : RUN_EXIT_CLEANUP;
        }
        r = export_receiver_end(out.receiver, &res);
        for (size_t i = 0; i < res.n_entries; i++)
                (void)summary_add_export(
                        &run->summary,
                        strncmp(res.entries[i].name, RUN_WORKSPACE "/", strlen(RUN_WORKSPACE "/")) == 0
                                ? res.entries[i].name + strlen(RUN_WORKSPACE "/")
                                : res.entries[i].name,
                        res.entries[i].state == EXPORT_EXPORTED  ? "exported"
                        : res.entries[i].state == EXPORT_REFUSED ? "refused"
                                                                 : "missing",
                        res.entries[i].bytes, res.entries[i].reason);
        if (r < 0 || pump.status != 0) {
                /* Both sides of a broken stream: what the receiver saw, and how the exporter ended. */
                if (r < 0)
                        (void)snprintf(detail, sizeof(detail), "%.200s; the exporter: status %d%s%.200s",
                                       err.message, pump.status, out.n_err ? ": " : "",
                                       out.n_err ? first_line(out.err) : "");
                else
                        (void)snprintf(detail, sizeof(detail), "%.400s",
                                       out.n_err ? first_line(out.err) : "the exporter failed");
                export_result_done(&res);
                phase_end(run, "export", t0, false, detail);
                return RUN_EXIT_CLEANUP;
        }
        run->disposed = true;
        (void)snprintf(detail, sizeof(detail), "%zu exported (%llu bytes), %zu refused, %zu missing%s%s%s",
                       res.n_exported, (unsigned long long)res.total_bytes, res.n_refused, res.n_missing,
                       res.limit_hit ? "; a limit was hit" : "",
                       res.n_failed ? "; the runner could not write some (see each)" : "",
                       res.n_secret ? "; some held a secret (see each)" : "");
        /* An output the runner could not write (a full disk) is lost: the run failed, not the agent. */
        phase_end(run, "export", t0, !res.limit_hit && res.n_failed == 0, detail);
        r = res.n_failed ? RUN_EXIT_CLEANUP : res.limit_hit ? RUN_EXIT_LIMIT : RUN_EXIT_OK;
        export_result_done(&res);
        return r;
}

/* ---- the egress log ---- */

static void take_log_offset(Run *run)
{
        uint64_t n = 0;

        if (!run->config->egress_proxy)
                return;
        run->log_taken = true;
        run->log_offset_error = helper_proxy_log_end(&n);
        run->log_offset = n;
}

/* A clone that failed on an HTTP status: libgit2 says only "unexpected http status code: 403", so
 * the run's egress log says what the proxy did: the first request it denied and why, or that it denied
 * none (then the refusal was squid's own, such as a name that does not resolve). The log's fields are
 * the sandbox side's requests: escaped as a detail is. */
static void explain_clone(Run *run)
{
        const Summary *s = &run->summary;
        char line[2 * PATH_MAX], safe[2 * SUMMARY_TEXT_MAX];

        if (s->n_denied > 0)
                (void)snprintf(
                        line, sizeof(line),
                        "the egress proxy denied %u of the run's requests, the first: %.16s %.200s%.200s: "
                        "%.200s (each request in %s/" RUN_EGRESS_NAME ")",
                        s->egress_denied, s->denied[0].method, s->denied[0].host, s->denied[0].path,
                        s->denied[0].reason, run->plan.out_dir);
        else
                (void)snprintf(
                        line, sizeof(line),
                        "the egress proxy denied none of the run's %u requests: an error status came from "
                        "squid itself or from the server (a name that does not resolve, a host that does "
                        "not answer: 502, 503, 504) (each request in %s/" RUN_EGRESS_NAME ")",
                        s->egress_requests, run->plan.out_dir);
        (void)check_escape(line, safe, sizeof(safe));
        say("clone: %s", safe);
}

static void phase_egress_log(Run *run)
{
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *data = NULL;
        char detail[SUMMARY_TEXT_MAX];
        long long t0 = now_ms();
        uint64_t n = 0;
        size_t size = 0, redacted;
        int r;

        if (!run->config->egress_proxy || !run->log_taken)
                return;
        phase_start("egress-log");
        /* Without its start, the log cannot be told apart from the earlier steps': said, not guessed. */
        if (run->log_offset_error < 0) {
                (void)snprintf(detail, sizeof(detail), "helper proxy-log --from end at the start: %s",
                               strerror(-run->log_offset_error));
                phase_end(run, "egress-log", t0, false, detail);
                return;
        }
        fd = openat(run->out_fd, RUN_EGRESS_NAME, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0) {
                phase_end(run, "egress-log", t0, false, strerror(errno));
                return;
        }
        r = helper_proxy_log(run->log_offset, fd, EGRESS_LOG_MAX, &n);
        if (r < 0 && r != -EFBIG) {
                (void)snprintf(detail, sizeof(detail), "helper proxy-log --from %llu: %s",
                               (unsigned long long)run->log_offset, strerror(-r));
                phase_end(run, "egress-log", t0, false, detail);
                return;
        }
        /* A request's URL is the sandbox's to choose: the token in a query goes into the log. */
        if (lseek(fd, 0, SEEK_SET) != 0 || read_regular_fd(fd, EGRESS_LOG_MAX, &data, &size) < 0) {
                (void)unlinkat(run->out_fd, RUN_EGRESS_NAME, 0);
                phase_end(run, "egress-log", t0, false,
                          "cannot read back what the helper wrote, to redact its secrets: removed");
                return;
        }
        redacted = secret_redact(&run->secrets, data, &size);
        if (redacted > 0 &&
            (ftruncate(fd, 0) < 0 || lseek(fd, 0, SEEK_SET) != 0 || write_all(fd, data, size) < 0)) {
                (void)unlinkat(run->out_fd, RUN_EGRESS_NAME, 0);
                phase_end(run, "egress-log", t0, false, "cannot write it redacted: removed");
                return;
        }
        summary_read_egress(&run->summary, data, size);
        (void)snprintf(detail, sizeof(detail), "%llu bytes from offset %llu%s; %u requests, %u denied%s",
                       (unsigned long long)n, (unsigned long long)run->log_offset,
                       r == -EFBIG ? " (cut at 64 MiB)" : "", run->summary.egress_requests,
                       run->summary.egress_denied, redacted > 0 ? "; it held secrets, redacted" : "");
        phase_end(run, "egress-log", t0, true, detail);
        if (run->clone_http_error)
                explain_clone(run);
}

/* ---- disposal ---- */

static int dispose_on_err(const char *data, size_t n, void *userdata)
{
        CloneOut *c = userdata;

        return keep_err(c->err, &c->n_err, data, n);
}

static int dispose_on_out(const char *data, size_t n, void *userdata)
{
        CloneOut *c = userdata;

        return keep_err(c->line, &c->len, data, n < CLONE_LINE_MAX - c->len ? n : CLONE_LINE_MAX - c->len);
}

static int phase_dispose(Run *run)
{
        char *args[] = { (char *)"run-inside",
                         (char *)"dispose",
                         (char *)"--run-dir",
                         run->run_dir,
                         (char *)"--profile",
                         (char *)run->plan.profile,
                         NULL };
        char detail[SUMMARY_TEXT_MAX];
        CloneOut out = { .run = run };
        Pump pump = { .run = run,
                      .deadline = now_ms() + 600000,
                      .on_out = dispose_on_out,
                      .on_err = dispose_on_err,
                      .userdata = &out };
        Entered e = { .pidfd = -EBADF, .in_fd = -EBADF, .out_fd = -EBADF, .err_fd = -EBADF };
        long long t0 = now_ms();
        EnterEnd end = ENTER_EXITED;
        int r;

        phase_start("dispose");
        /* Refused while anything of the sandbox user lives: it could write back into what is removed. */
        r = verify_ended(run, detail, sizeof(detail));
        if (r < 0) {
                phase_end(run, "dispose", t0, false, detail);
                return RUN_EXIT_CLEANUP;
        }
        r = enter_sandbox(run, run->sandbox_home, args, &e);
        if (r < 0) {
                phase_end(run, "dispose", t0, false, strerror(-r));
                return RUN_EXIT_CLEANUP;
        }
        r = pump_entered(&pump, &e, &end);
        entered_done(&e);
        if (r < 0 || end != ENTER_EXITED || pump.status != 0 || strcmp(out.line, "disposed\n") != 0) {
                (void)snprintf(detail, sizeof(detail), "%.400s",
                               out.n_err ? first_line(out.err)
                                         : "the sandbox side did not report the removal");
                phase_end(run, "dispose", t0, false, detail);
                return RUN_EXIT_CLEANUP;
        }
        /* The disposer's own process, too, must be gone. */
        r = verify_ended(run, detail, sizeof(detail));
        if (r < 0) {
                phase_end(run, "dispose", t0, false, detail);
                return RUN_EXIT_CLEANUP;
        }
        phase_end(run, "dispose", t0, true,
                  "the run's directory removed, and verified gone by the sandbox user");
        return RUN_EXIT_OK;
}

/* The exporter removed the run's directory and verified it gone; its own process must be gone too. */
static int phase_disposed_by_exporter(Run *run)
{
        char detail[SUMMARY_TEXT_MAX];
        long long t0 = now_ms();
        int r;

        phase_start("dispose");
        r = verify_ended(run, detail, sizeof(detail));
        if (r < 0) {
                phase_end(run, "dispose", t0, false, detail);
                return RUN_EXIT_CLEANUP;
        }
        phase_end(run, "dispose", t0, true,
                  "the run's directory removed by the exporter, and verified gone by the sandbox user");
        return RUN_EXIT_OK;
}

/* ---- the command ---- */

static int usage_error(const char *msg)
{
        fprintf(stderr, "%s: %s\n", prog, msg);
        fputs("usage: agentic-job run --repo URL|PATH (--commit SHA | --ref REF) --base BRANCH --task FILE\n"
              "                       --out DIR (--output NAME)... [--patch] [--setup CMD] [--timeout S]\n"
              "                       [--max-file-bytes N] [--max-total-bytes N] [--max-files N]\n"
              "                       [--profile NAME] [--token-stdin] [-- AGENT...]\n",
              stderr);
        return RUN_EXIT_CLEANUP;
}

/* What the profile needs of the call: a command line where it has none, the token where it needs one. */
static int check_profile_call(const Run *run, AjError *e)
{
        const Profile *p = run->profile;

        if (!p->command[0] && !run->plan.agent[0])
                return aj_error(e, EINVAL, 0, 0,
                                "missing '--' and the agent's command: the profile \"%s\" runs the caller's "
                                "command line",
                                p->name);
        if (p->token == PROFILE_TOKEN_REQUIRED && !run->plan.token_stdin)
                return aj_error(e, EINVAL, 0, 0,
                                "the profile \"%s\" needs the run token: give --token-stdin and the token "
                                "on standard input",
                                p->name);
        if (p->token == PROFILE_TOKEN_NONE && run->plan.token_stdin)
                return aj_error(e, EINVAL, 0, 0, "--token-stdin: the profile \"%s\" takes no run token",
                                p->name);
        return 0;
}

static int check_token(const char *t, size_t n, AjError *e)
{
        if (n == 0)
                return aj_error(e, EINVAL, 0, 0, "--token-stdin: the run token is empty");
        if (n > TOKEN_MAX)
                return aj_error(e, EINVAL, 0, 0, "--token-stdin: the run token is longer than %d bytes",
                                TOKEN_MAX);
        for (size_t i = 0; i < n; i++)
                if (t[i] <= ' ' || t[i] > '~')
                        return aj_error(e, EINVAL, 0, 0,
                                        "--token-stdin: byte %zu of the run token is not printable ASCII "
                                        "(or is a space)",
                                        i + 1);
        if (n < TOKEN_MIN)
                return aj_error(e, EINVAL, 0, 0,
                                "--token-stdin: the run token is %zu bytes, fewer than %d: the token probes "
                                "would find text that short anywhere",
                                n, TOKEN_MIN);
        return 0;
}

/* The run token: standard input to its end (a pipe or a file, never a terminal), one trailing newline
 * dropped; printable ASCII without spaces, at most TOKEN_MAX bytes. It is never printed. */
static int read_token(Run *run, AjError *e)
{
        _cleanup_free_ char *buf = NULL;
        size_t size = 0, n;
        int r;

        if (isatty(STDIN_FILENO) == 1)
                return aj_error(e, EINVAL, 0, 0,
                                "--token-stdin: standard input is a terminal; give the token on a pipe");
        r = read_pipe_bounded(STDIN_FILENO, TOKEN_MAX + 3, &buf, &size);
        if (r < 0)
                return aj_error(e, EINVAL, 0, 0, "--token-stdin: cannot read standard input: %s",
                                strerror(-r));
        n = size;
        if (n > 0 && buf[n - 1] == '\n')
                n--;
        if (n > 0 && buf[n - 1] == '\r')
                n--;
        r = check_token(buf, n, e);
        if (r == 0 && n > 0) {
                /* One more byte, a NUL: the broker takes the key as a string. */
                run->token = calloc(1, n + 1);
                if (!run->token)
                        r = aj_error(e, ENOMEM, 0, 0, "out of memory");
                else {
                        memcpy(run->token, buf, n);
                        run->token_size = n;
                }
        }
        explicit_bzero(buf, size);
        return r;
}

static int prepare(Run *run, char *detail, size_t size)
{
        struct passwd *pw = getpwnam(run->config->sandbox_user);
        char hex[17];
        int r;

        if (!pw) {
                (void)snprintf(detail, size, "the sandbox user %s does not exist",
                               run->config->sandbox_user);
                return -ENOENT;
        }
        run->sandbox_uid = pw->pw_uid;
        run->sandbox_home = strdup(pw->pw_dir);
        r = subid_load(SUBUID_PATH, pw->pw_name, pw->pw_uid, run->ranges, &run->n_ranges);
        if (r < 0) {
                (void)snprintf(detail, size, "%s: %s", SUBUID_PATH, strerror(-r));
                return r;
        }
        if (random_hex(hex, (sizeof(hex) - 1) / 2) < 0)
                return -EIO;
        if (!run->sandbox_home || asprintf(&run->run_dir, "%s/" RUN_DIR_PREFIX "%s", pw->pw_dir, hex) < 0 ||
            asprintf(&run->work_dir, "%s/" RUN_WORKSPACE, run->run_dir) < 0)
                return -ENOMEM;
        r = end_sandbox(run, detail, size);
        if (r < 0)
                return r;
        take_log_offset(run);
        return 0;
}

static int open_signals(void)
{
        sigset_t mask;

        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGHUP);
        if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
                return -errno;
        return RET_NERRNO(signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC));
}

static const char *result_word(int status, bool cancelled)
{
        switch (status) {
        case RUN_EXIT_OK:
                return "succeeded";
        case RUN_EXIT_FAILED:
                return cancelled ? "cancelled" : "agent-failed";
        case RUN_EXIT_CLEANUP:
                return "cleanup-failed";
        case RUN_EXIT_LIMIT:
                return "limit-hit";
        case RUN_EXIT_NOT_RUN:
                return "not-started";
        case RUN_EXIT_TIMEOUT:
                return "timed-out";
        default:
                return "unknown";
        }
}

/* The worse of two outcomes: a failed cleanup above all, then how the agent ended, then a limit. */
static int worse(int a, int b)
{
        static const int order[] = { RUN_EXIT_CLEANUP, RUN_EXIT_NOT_RUN, RUN_EXIT_TIMEOUT,
                                     RUN_EXIT_FAILED,  RUN_EXIT_LIMIT,   RUN_EXIT_OK };

        for (size_t i = 0; i < ELEMENTSOF(order); i++)
                if (a == order[i] || b == order[i])
                        return order[i];
        return RUN_EXIT_CLEANUP;
}

static void run_done(Run *run)
{
        broker_down(run);
        explicit_bzero(run->placeholder, sizeof(run->placeholder));
        if (run->token)
                explicit_bzero(run->token, run->token_size);
        free(run->token);
        run_secrets = NULL;
        secret_set_done(&run->secrets);
        profile_free(run->profile);
        run_plan_done(&run->plan);
        config_free(run->config);
        summary_done(&run->summary);
        free(run->sandbox_home);
        free(run->run_dir);
        free(run->work_dir);
        closep(&run->out_fd);
        closep(&run->sigfd);
}

int run_main(int argc, char **argv)
{
        _cleanup_(run_done) Run run = { .sigfd = -EBADF,
                                        .out_fd = -EBADF,
                                        .broker = { .pid = -1, .report_fd = -EBADF } };
        _cleanup_free_ char *task = NULL;
        char detail[SUMMARY_TEXT_MAX] = "";
        size_t task_size = 0;
        AjError e = {};
        int r, status = RUN_EXIT_OK;
        bool disposable = false, one_enter;
        long long t0;

        if (geteuid() == 0 || getuid() == 0)
                return usage_error("refused as root: run it as the runner's user");
        r = config_load_trusted(CONFIG_PATH, &run.config, NULL, NULL, &e);
        if (r < 0) {
                say("%s", e.message);
                return RUN_EXIT_CLEANUP;
        }
        r = run_plan_parse(argc, argv, run.config, &run.plan, &e);
        if (r < 0)
                return usage_error(e.message);
        if (!run.plan.profile)
                run.plan.profile = run.config->run_profile;
        r = profile_load(NULL, run.plan.profile, &run.profile, &e);
        if (r < 0) {
                say("--profile: %s", e.message);
                return RUN_EXIT_CLEANUP;
        }
        r = check_profile_call(&run, &e);
        if (r < 0)
                return usage_error(e.message);
        r = read_file_for_parse(run.plan.task, RUN_TASK_MAX, &task, &task_size, &e);
        if (r < 0)
                return usage_error(e.message);
        if (run.plan.token_stdin) {
                r = read_token(&run, &e);
                if (r < 0)
                        return usage_error(e.message);
        }
        secret_set_init(&run.secrets);
        r = run.token ? secret_set_add(&run.secrets, run.token, run.token_size, "the run token") : 0;
        if (r >= 0)
                r = secret_set_add_environment(&run.secrets, environ);
        if (r < 0) {
                if (r == -E2BIG)
                        say("cannot take the secrets no output may hold: more than %d secret variables",
                            SECRET_SET_MAX);
                else
                        say("cannot take the secrets no output may hold: %s", strerror(-r));
                return RUN_EXIT_CLEANUP;
        }
        run.broker_on = run.token && run.profile->api_base &&
                        run.config->run_confine == RUN_CONFINE_BUBBLEWRAP && run.config->egress_proxy;
        /* A budget only the broker can keep: without it, refused before anything is changed. */
        if (run.config->run_budget && !run.broker_on)
                return usage_error("[run] budget is kept by the key broker, and this run has none (it needs "
                                   "--token-stdin, a profile with [api], confine = \"bubblewrap\" and the "
                                   "egress proxy)");
        if (run.broker_on) {
                r = make_placeholder(&run);
                r = r < 0 ? r
                          : secret_set_add(&run.secrets, run.placeholder, strlen(run.placeholder),
                                           "the run's placeholder key");
                if (r < 0) {
                        say("cannot make the key broker's placeholder: %s", strerror(-r));
                        return RUN_EXIT_CLEANUP;
                }
        }
        run_secrets = &run.secrets;
        run.summary.secrets = &run.secrets;
        if (mkdir(run.plan.out_dir, 0700) < 0) {
                say("--out %s: %s", run.plan.out_dir,
                    errno == EEXIST ? "exists already (it must not)" : strerror(errno));
                return RUN_EXIT_CLEANUP;
        }
        run.out_fd = open(run.plan.out_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (run.out_fd < 0) {
                say("--out %s: %s", run.plan.out_dir, strerror(errno));
                return RUN_EXIT_CLEANUP;
        }
        (void)signal(SIGPIPE, SIG_IGN);
        run.sigfd = open_signals();
        if (run.sigfd < 0) {
                say("cannot take the signals: %s", strerror(-run.sigfd));
                return RUN_EXIT_CLEANUP;
        }
        run.summary.plan = &run.plan;
        run.summary.confine = run_confine_name(run.config->run_confine);
        run.summary.profile = run.plan.profile;
        run.summary.token = run.broker_on ? "broker" : run.token ? "file" : "none";

        /* 1. The record goes (seed 003: nothing may enter the sandbox user while one stands), and so does
         *    whatever of the sandbox user an earlier step left. */
        t0 = now_ms();
        phase_start("prepare");
        r = record_remove(getenv("RUNNER_TEMP"));
        if (r < 0) {
                (void)snprintf(detail, sizeof(detail), "cannot remove $RUNNER_TEMP/" RECORD_NAME ": %s",
                               strerror(-r));
                r = -EIO;
        } else
                r = prepare(&run, detail, sizeof(detail));
        phase_end(&run, "prepare", t0, r >= 0, r >= 0 ? detail : detail[0] ? detail : strerror(-r));
        if (r < 0)
                status = RUN_EXIT_NOT_RUN;

        /* 2. The clone; 3. the setup command, the before-agent check, the profile's files, the token and its
         *    probes; 4. the agent (which, after a setup command, writes the base's trusted paths again
         *    first); all within the deadline. With no 3, the clone and 4 are one enter. */
        run.deadline = now_ms() + 1000LL * run.plan.timeout;
        /* The one enter's clone needs an unprivileged user namespace: only where the inner confinement
         * (which needs one too) is on. */
        one_enter = !run.plan.setup && !run.config->check_before_agent && !profile_has_work(&run) &&
                    run.config->run_confine == RUN_CONFINE_BUBBLEWRAP;
        if (status == RUN_EXIT_OK) {
                disposable = true;
                status = one_enter ? phase_clone_agent(&run, task, task_size) : phase_clone(&run);
        }
        if (status == RUN_EXIT_OK && !one_enter && run.plan.setup)
                status = phase_setup(&run);
        if (status == RUN_EXIT_OK && !one_enter && run.config->check_before_agent)
                status = phase_check(&run);
        if (status == RUN_EXIT_OK && !one_enter && profile_has_work(&run))
                status = phase_profile(&run);
        if (status == RUN_EXIT_OK && !one_enter)
                status = phase_agent(&run, task, task_size);

        /* 5. Shutdown, whatever came before: nothing is read until nothing of the sandbox user lives. */
        if (disposable) {
                t0 = now_ms();
                phase_start("shutdown");
                r = verify_ended(&run, detail, sizeof(detail));
                phase_end(&run, "shutdown", t0, r >= 0, detail);
                if (r < 0)
                        status = RUN_EXIT_CLEANUP;
        }
        /* A signal that came after the agent ended cancels the run all the same: nothing is exported. */
        if (cancel_pending(&run))
                status = worse(status, RUN_EXIT_FAILED);

        /* 6. Export, only of a run that got to its agent, was not cancelled and was shut down. */
        if (disposable && run.summary.commit[0] && !run.cancel_signal && status != RUN_EXIT_CLEANUP &&
            status != RUN_EXIT_NOT_RUN)
                status = worse(status, phase_export(&run));
        phase_egress_log(&run);

        /* 7. Disposal, also of a run that failed or was cancelled; after an export, the exporter did it. */
        if (disposable && !run.disposed)
                status = worse(status, phase_dispose(&run));
        else if (disposable)
                status = worse(status, phase_disposed_by_exporter(&run));
        /* A signal in any phase ends the run as cancelled: the export's, the egress log's and the
         * disposal's too (which go on to their end, as the disposal must). */
        if (cancel_pending(&run))
                status = worse(status, RUN_EXIT_FAILED);

        run.summary.exit_status = status;
        run.summary.result = result_word(status, run.cancel_signal != 0);
        {
                const char *step = getenv("GITHUB_STEP_SUMMARY");
                _cleanup_fclose_ FILE *md = NULL;

                if (step && step[0] == '/') {
                        int fd =
                                open(step, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY,
                                     0600);
                        if (fd >= 0 && !(md = fdopen(fd, "a")))
                                close(fd);
                }
                int md_error = 0;

                r = summary_write(&run.summary, run.out_fd, md, &md_error);
                if (md_error < 0)
                        say("cannot append the summary to $GITHUB_STEP_SUMMARY: %s", strerror(-md_error));
                if (r < 0) {
                        say("cannot write the summary in %s: %s", run.plan.out_dir, strerror(-r));
                        status = worse(status, RUN_EXIT_CLEANUP);
                }
        }
        /* Where the summary could not be written, the last line points at no file. */
        if (r < 0)
                say("%s (exit %d); no summary", result_word(status, run.cancel_signal != 0), status);
        else
                say("%s (exit %d); summary in %s/summary.md", result_word(status, run.cancel_signal != 0),
                    status, run.plan.out_dir);
        return status;
}
