/* SPDX-License-Identifier: MIT */
#include "probe-runner.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "build-config.h"
#include "macro.h"
#include "probe-emit.h"
#include "probe-run.h"
#include "spawn.h"
#include "sudo-list.h"

#define TIMEOUT_PATH "/usr/bin/timeout"
#define SUDO_PATH    "/usr/bin/sudo"
#define RUN0_PATH    "/usr/bin/run0"
#define PKEXEC_PATH  "/usr/bin/pkexec"
#define SU_PATH      "/usr/bin/su"
#define TRUE_PATH    "/bin/true"
#define OUT_MAX      (64 * 1024)

/* argv under timeout(1), killed after ms (probe-run.h's bounds: sudo waits for nobody, run0 and pkexec
 * on polkitd), standard input /dev/null, no terminal: the exit status, its output and standard error in
 * *ret_out. */
static int attempt(long long ms, char *const *argv, char **ret_out)
{
        char seconds[24];
        char *line[16] = { (char *)TIMEOUT_PATH, seconds };
        char *env[] = { (char *)"PATH=/usr/bin:/bin", (char *)"LANG=C", NULL };
        size_t k = 2;

        (void)snprintf(seconds, sizeof(seconds), "%lld", ms / 1000);

        for (; *argv && k + 1 < ELEMENTSOF(line); argv++)
                line[k++] = *argv;
        return spawn_wait(line, env, SPAWN_MERGE_STDERR, OUT_MAX, ret_out, NULL);
}

/* Whether an attempt's status is the program's own refusal. timeout(1) ends with 124 when it killed the
 * program, 125 to 127 when it could not run it, 128+N after signal N: no answer, which never passes.
 * pkexec refuses with 127 (126: a dialog dismissed), a program found executable just before. */
static bool attempt_refused(int status, bool refuses_with_127)
{
        return (status > 0 && status < 124) || (refuses_with_127 && (status == 126 || status == 127));
}

/* spawn_first_line() of what a program said, which may be nothing. */
static const char *first_line_of(const char *s, char *buf, size_t size)
{
        spawn_first_line(s ? s : "", s ? strlen(s) : 0, buf, size);
        return buf;
}

void probe_runner_lock(Report *rep, const Config *c)
{
        static const char *const names[] = { "runner-sudo-control", "runner-sudo", "runner-sudo-list",
                                             "runner-run0", "runner-pkexec" };
        char line[256];
        long long t;
        int r;

        if (!c->lock_runner) {
                for (size_t i = 0; i < ELEMENTSOF(names); i++)
                        report_add(rep, names[i], CHECK_NOTE, 0,
                                   "[sandbox] lock-runner = false: the runner keeps its rights; not probed",
                                   false);
                return;
        }

        {
                _cleanup_free_ char *out = NULL;
                char *ping[] = { (char *)SUDO_PATH, (char *)"-n",   (char *)"--", (char *)HELPER_PATH,
                                 (char *)"helper",  (char *)"ping", NULL };

                t = probe_now_ms();
                r = attempt(PROBE_PROGRAM_MS, ping, &out);
                if (r != 0) {
                        report_addf(rep, "runner-sudo-control", CHECK_FAIL, probe_now_ms() - t, false,
                                    "sudo -n %s helper ping: status %d: %s", HELPER_PATH, r,
                                    first_line_of(out, line, sizeof(line)));
                        report_add(rep, "runner-sudo", CHECK_NOTE, 0, "not probed: its control failed",
                                   false);
                        report_add(rep, "runner-sudo-list", CHECK_NOTE, 0, "not probed: its control failed",
                                   false);
                } else {
                        _cleanup_free_ char *o2 = NULL, *o3 = NULL;
                        char why[320];
                        char *tru[] = { (char *)SUDO_PATH, (char *)"-n", (char *)"--", (char *)TRUE_PATH,
                                        NULL };
                        char *list[] = { (char *)SUDO_PATH, (char *)"-n", (char *)"-l", NULL };

                        report_addf(rep, "runner-sudo-control", CHECK_OK, probe_now_ms() - t, false,
                                    "sudo runs the helper for the runner (helper ping)");
                        t = probe_now_ms();
                        r = attempt(PROBE_PROGRAM_MS, tru, &o2);
                        report_addf(rep, "runner-sudo", attempt_refused(r, false) ? CHECK_OK : CHECK_FAIL,
                                    probe_now_ms() - t, false,
                                    attempt_refused(r, false) ? "sudo -n " TRUE_PATH
                                                                " refused (status %d: %s)"
                                    : r == 0 ? "sudo -n " TRUE_PATH " ran as root (status %d%s)"
                                             : "sudo -n " TRUE_PATH ": cannot tell (status %d: %s)",
                                    r, r != 0 ? first_line_of(o2, line, sizeof(line)) : "");
                        t = probe_now_ms();
                        r = attempt(PROBE_PROGRAM_MS, list, &o3);
                        if (r != 0)
                                report_addf(rep, "runner-sudo-list", CHECK_FAIL, probe_now_ms() - t, false,
                                            "sudo -n -l: status %d: %s", r,
                                            first_line_of(o3, line, sizeof(line)));
                        else if (!runner_sudo_list_locked(o3, HELPER_PATH, why, sizeof(why)))
                                report_add(rep, "runner-sudo-list", CHECK_FAIL, probe_now_ms() - t, why,
                                           false);
                        else
                                report_add(rep, "runner-sudo-list", CHECK_OK, probe_now_ms() - t,
                                           "after the lock's deny, sudo -l lists the helper's rule alone",
                                           false);
                }
        }

        {
                const struct {
                        const char *name, *path;
                        char *argv[6];
                        bool refuses_with_127; /* pkexec's own statuses */
                } tries[] = {
                        { "runner-run0",
                          RUN0_PATH,
                          { (char *)RUN0_PATH, (char *)"--no-ask-password", (char *)TRUE_PATH, NULL },
                          false },
                        { "runner-pkexec",
                          PKEXEC_PATH,
                          { (char *)PKEXEC_PATH, (char *)"--disable-internal-agent", (char *)TRUE_PATH,
                            NULL },
                          true },
                };

                for (size_t i = 0; i < ELEMENTSOF(tries); i++) {
                        _cleanup_free_ char *out = NULL;
                        bool refused;

                        t = probe_now_ms();
                        if (access(tries[i].path, X_OK) < 0) {
                                report_addf(rep, tries[i].name, CHECK_NOTE, 0, false,
                                            "%s is not installed: nothing to refuse", tries[i].path);
                                continue;
                        }
                        r = attempt(PROBE_POLKIT_MS, tries[i].argv, &out);
                        refused = attempt_refused(r, tries[i].refuses_with_127);
                        report_addf(rep, tries[i].name, refused ? CHECK_OK : CHECK_FAIL, probe_now_ms() - t,
                                    false,
                                    refused  ? "%s refused the runner a command as root (status %d: %s)"
                                    : r == 0 ? "%s ran a command as root for the runner (status %d%s)"
                                             : "%s: cannot tell (status %d: %s)",
                                    tries[i].path, r, r != 0 ? first_line_of(out, line, sizeof(line)) : "");
                }
        }
}

int probe_runner_su_start(const Config *c, RunnerSu *ret)
{
        int p[2];

        *ret = (RunnerSu){ .pid = 0, .out = -EBADF, .start = probe_now_ms(), .locked = c->lock_runner };
        if (!c->lock_runner || access(SU_PATH, X_OK) < 0)
                return 0;
        if (pipe2(p, O_CLOEXEC) < 0)
                return -errno;
        ret->pid = fork();
        if (ret->pid < 0) {
                int r = -errno;

                close(p[0]);
                close(p[1]);
                ret->pid = 0;
                return r;
        }
        if (ret->pid == 0) {
                char *argv[] = {
                        (char *)TIMEOUT_PATH, (char *)"10", (char *)SU_PATH, (char *)"-c", (char *)TRUE_PATH,
                        (char *)"root",       NULL
                };
                char *env[] = { (char *)"PATH=/usr/bin:/bin", (char *)"LANG=C", NULL };
                int null = open("/dev/null", O_RDONLY | O_CLOEXEC);

                if (null < 0 || dup2(null, 0) < 0 || dup2(p[1], 1) < 0 || dup2(p[1], 2) < 0)
                        _exit(127);
                execve(argv[0], argv, env);
                _exit(127);
        }
        close(p[1]);
        ret->out = p[0];
        return 0;
}

void probe_runner_su_finish(Report *rep, RunnerSu *s)
{
        _cleanup_free_ char *out = NULL;
        int r;

        if (!s->locked) {
                report_add(rep, "runner-su", CHECK_NOTE, 0,
                           "[sandbox] lock-runner = false: the runner keeps its rights; not probed", false);
                return;
        }
        if (s->pid == 0) {
                report_add(rep, "runner-su", CHECK_NOTE, 0, SU_PATH " is not installed: nothing to refuse",
                           false);
                return;
        }
        (void)read_pipe_bounded(s->out, OUT_MAX, &out, NULL);
        closep(&s->out);
        s->out = -EBADF;
        r = wait_exit_status(s->pid);
        s->pid = 0;
        if (r != 0) {
                char line[256];

                report_addf(rep, "runner-su", CHECK_OK, probe_now_ms() - s->start, false,
                            SU_PATH " refused the runner a command as root (status %d: %s)", r,
                            first_line_of(out, line, sizeof(line)));
        } else
                report_addf(rep, "runner-su", CHECK_FAIL, probe_now_ms() - s->start, false,
                            SU_PATH " ran a command as root for the runner (status 0)");
}

void probe_runner_su_stop(RunnerSu *s)
{
        if (s->pid > 0) {
                (void)kill(s->pid, SIGKILL);
                (void)wait_exit_status(s->pid);
                s->pid = 0;
        }
        closep(&s->out);
        s->out = -EBADF;
}
