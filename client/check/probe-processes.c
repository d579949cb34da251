/* SPDX-License-Identifier: MIT */
/* The sandbox side's probes of processes and environments: what it can do to a process of the runner's
 * (the decoy the runner side started: read its environment and memory, trace it, signal it, reach its
 * terminal), and what it can find in every environment it can read (the decoy's canary, job variables,
 * the runner's OIDC request values, which it knows only by their length and digest). */
#include "probe-processes.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check-line.h"
#include "environ-scan.h"
#include "probe-emit.h"

#define ENVIRON_READ_MAX (1024U * 1024U) /* of each /proc/PID/environ */
#define PROCESSES_MAX    4096            /* environments read, in all */

extern char **environ;

/* What an open of one of the decoy's /proc files says. A refusal passes; so does ENOENT, since the
 * runner side proves afterwards that the decoy lived (signal-runner-control): /proc hides it. */
static void proc_file_probe(const char *name, pid_t decoy, const char *file, const char *what)
{
        char path[64];
        long long t = probe_now_ms();
        int fd, error;

        (void)snprintf(path, sizeof(path), "/proc/%d/%s", (int)decoy, file);
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        error = errno;
        if (fd >= 0) {
                /* The open is where the kernel checks access: past it, reading is the caller's. */
                close(fd);
                probe_emit(name, "fail", t, "opened %s, %s", path, what);
        } else if (error == EACCES || error == EPERM)
                probe_emit(name, "ok", t, "%s refused: %s", path, strerror(error));
        else if (error == ENOENT)
                probe_emit(name, "ok", t, "%s is not there for the sandbox user: /proc hides the process",
                           path);
        else
                probe_emit(name, "fail", t, "%s: %s: cannot tell", path, strerror(error));
}

static void probe_ptrace(pid_t decoy)
{
        long long t = probe_now_ms();
        int status;

        if (ptrace(PTRACE_SEIZE, decoy, NULL, NULL) == 0) {
                /* Let it go again: stop it, wait for the stop, detach. */
                (void)ptrace(PTRACE_INTERRUPT, decoy, NULL, NULL);
                (void)waitpid(decoy, &status, __WALL);
                (void)ptrace(PTRACE_DETACH, decoy, NULL, NULL);
                probe_emit("ptrace-runner", "fail", t, "PTRACE_SEIZE of the runner's process %d worked",
                           (int)decoy);
        } else if (errno == EPERM)
                probe_emit("ptrace-runner", "ok", t, "PTRACE_SEIZE of the runner's process %d refused: %s",
                           (int)decoy, strerror(errno));
        else
                probe_emit("ptrace-runner", "fail", t, "PTRACE_SEIZE of %d: %s: cannot tell", (int)decoy,
                           strerror(errno));
}

static void probe_signal(pid_t decoy)
{
        long long t = probe_now_ms();

        if (kill(decoy, 0) == 0)
                probe_emit("signal-runner", "fail", t, "kill -0 of the runner's process %d worked",
                           (int)decoy);
        else if (errno == EPERM)
                probe_emit("signal-runner", "ok", t, "kill -0 of the runner's process %d refused: %s",
                           (int)decoy, strerror(errno));
        else
                probe_emit("signal-runner", "fail", t, "kill -0 of %d: %s: cannot tell", (int)decoy,
                           strerror(errno));
}

/* TIOCSTI pushes input into a terminal that is the caller's controlling terminal (without
 * CAP_SYS_ADMIN); writing to one shows the runner text it did not write. So the sandbox user must hold no
 * terminal of the runner's: none among its standard descriptors, no controlling terminal, and the decoy's
 * terminal not open to it. */
static void probe_tiocsti(const char *tty)
{
        char found[CHECK_DETAIL_MAX] = "";
        long long t = probe_now_ms();
        int fd;

        for (int i = 0; i < 3; i++)
                if (isatty(i)) {
                        size_t l = strlen(found);
                        (void)snprintf(found + l, sizeof(found) - l, "%sdescriptor %d is a terminal",
                                       l ? "; " : "", i);
                }
        fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
        if (fd >= 0) {
                size_t l = strlen(found);
                (void)snprintf(found + l, sizeof(found) - l, "%sit has a controlling terminal",
                               l ? "; " : "");
                close(fd);
        }
        for (int mode = 0; mode < 2; mode++) {
                fd = open(tty, (mode ? O_WRONLY : O_RDONLY) | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
                if (fd >= 0) {
                        size_t l = strlen(found);
                        (void)snprintf(found + l, sizeof(found) - l, "%sopened the runner's %s for %s",
                                       l ? "; " : "", tty, mode ? "writing" : "reading");
                        close(fd);
                }
        }
        if (found[0])
                probe_emit("tiocsti", "fail", t, "%s", found);
        else
                probe_emit("tiocsti", "ok", t,
                           "no terminal among its descriptors, none controlling, the runner's %s not "
                           "open to it",
                           tty);
}

void probe_runner_processes(const InsideArgs *a)
{
        proc_file_probe("environ-runner", a->decoy, "environ", "the runner's process's environment");
        proc_file_probe("proc-mem", a->decoy, "mem", "the runner's process's memory");
        probe_ptrace(a->decoy);
        probe_signal(a->decoy);
        probe_tiocsti(a->decoy_tty);
}

/* ---- environments ---- */

static size_t read_bounded(int fd, char *buf, size_t size)
{
        size_t n = 0;

        while (n < size) {
                ssize_t k = read(fd, buf + n, size - n);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        break;
                n += (size_t)k;
        }
        return n;
}

/* Where something was first found: "pid N", once. */
static void note_where(char *where, size_t size, bool before, bool after, const char *pid)
{
        if (!before && after && !where[0])
                (void)snprintf(where, size, "pid %s", pid);
}

void probe_environments(const InsideArgs *a)
{
        _cleanup_free_ char *buf = malloc(ENVIRON_READ_MAX);
        char home_entry[4096 + 8], canary_at[32] = "", secret_at[ENVIRON_MAX_SECRETS][32] = {};
        EnvironScan own = { .secrets = a->secrets, .n_secrets = a->n_secrets };
        EnvironScan all = { .canary = a->canary, .secrets = a->secrets, .n_secrets = a->n_secrets };
        unsigned read_n = 0, refused = 0;
        long long t = probe_now_ms();
        struct passwd pwd, *pw = NULL;
        char pwbuf[4096];
        DIR *d;

        /* Its own environment, as the process has it (not only as it started). */
        for (char **e = environ; e && *e; e++)
                environ_scan_block(&own, *e, strlen(*e));
        if (own.job_found)
                probe_emit("env-job-variables", "fail", t, "job variables in its own environment: %s",
                           own.job_names);
        else
                probe_emit("env-job-variables", "ok", t,
                           "no " ENVIRON_JOB_PREFIX "* in its own environment");

        /* getpwuid_r: the other probes' threads look the user up too. */
        if (getpwuid_r(getuid(), &pwd, pwbuf, sizeof(pwbuf), &pw) != 0)
                pw = NULL;
        (void)snprintf(home_entry, sizeof(home_entry), "HOME=%s", pw ? pw->pw_dir : "?");
        all.entry = home_entry;
        d = buf ? opendir("/proc") : NULL;
        for (struct dirent *de; d && (de = readdir(d)) && read_n < PROCESSES_MAX;) {
                char path[300];
                bool canary = all.canary_found, secret[ENVIRON_MAX_SECRETS];
                size_t n;
                int fd;

                if (de->d_name[0] < '1' || de->d_name[0] > '9' ||
                    strspn(de->d_name, "0123456789") != strlen(de->d_name))
                        continue;
                (void)snprintf(path, sizeof(path), "/proc/%s/environ", de->d_name);
                fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
                if (fd < 0) {
                        refused += errno == EACCES || errno == EPERM;
                        continue;
                }
                memcpy(secret, all.secret_found, sizeof(secret));
                n = read_bounded(fd, buf, ENVIRON_READ_MAX);
                close(fd);
                read_n++;
                environ_scan_block(&all, buf, n);
                note_where(canary_at, sizeof(canary_at), canary, all.canary_found, de->d_name);
                for (size_t k = 0; k < a->n_secrets; k++)
                        note_where(secret_at[k], sizeof(secret_at[k]), secret[k], all.secret_found[k],
                                   de->d_name);
        }
        if (d)
                closedir(d);

        if (!buf || !pw || !all.entry_found) {
                probe_emit("environ-sandbox-control", "fail", t,
                           "%s not found in the %u environments it read (%u refused)", home_entry, read_n,
                           refused);
                probe_emit("environ-canary", "note", t, "not probed: its control failed");
                probe_emit("environ-job-variables", "note", t, "not probed: its control failed");
                for (size_t k = 0; k < a->n_secrets; k++) {
                        char name[CHECK_NAME_MAX];

                        (void)snprintf(name, sizeof(name), "oidc-value:%.64s", a->secrets[k].name);
                        probe_emit(name, "note", t, "not probed: its control failed");
                }
                return;
        }
        probe_emit("environ-sandbox-control", "ok", t,
                   "found %s among the %u environments it read (%u refused)", home_entry, read_n, refused);
        if (all.canary_found)
                probe_emit("environ-canary", "fail", t, "the runner's canary in the environment of %s",
                           canary_at);
        else
                probe_emit("environ-canary", "ok", t, "the runner's canary in none of %u environments",
                           read_n);
        if (all.job_found)
                probe_emit("environ-job-variables", "fail", t, "job variables in environments it reads: %s",
                           all.job_names);
        else
                probe_emit("environ-job-variables", "ok", t, "no " ENVIRON_JOB_PREFIX "* in %u environments",
                           read_n);
        for (size_t k = 0; k < a->n_secrets; k++) {
                char name[CHECK_NAME_MAX];

                (void)snprintf(name, sizeof(name), "oidc-value:%.64s", a->secrets[k].name);
                if (own.secret_found[k] || all.secret_found[k])
                        probe_emit(name, "fail", t, "the runner's value of %s in the environment of %s",
                                   a->secrets[k].name,
                                   own.secret_found[k] ? "the sandbox side" : secret_at[k]);
                else
                        probe_emit(name, "ok", t, "the runner's value of %s in none of %u environments",
                                   a->secrets[k].name, read_n + 1);
        }
}
