/* SPDX-License-Identifier: MIT */
/* kill-user: every process of the sandbox user and of its subordinate uids ends, and none remains when
 * this reports success.
 *
 * The guarantee comes from the last step alone: for each uid that still has a live process, a child
 * that is that uid (real, effective and saved, no capabilities) sends kill(-1, SIGKILL). The kernel
 * signals every process that uid may signal under the same lock fork() takes, so a fork bomb cannot
 * outrun it; /proc is scanned again until no live process of those uids is left. Zombies waiting for a
 * parent are dead and count as gone. Where systemd runs, logind and the user's slice are told first, so
 * nothing restarts what was killed. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "helper.h"
#include "libsystemd.h"
#include "macro.h"
#include "proc.h"
#include "subid.h"
#include "trusted-path.h"

#define DEADLINE_NS (10LL * 1000 * 1000 * 1000)
#define MAX_UIDS    64
#define PID_BITS    (4 * 1024 * 1024) /* PID_MAX_LIMIT */

typedef struct Scan {
        const UidRange *ranges;
        size_t n_ranges;
        uid_t uids[MAX_UIDS]; /* uids with a live process in this round */
        size_t n_uids;
        unsigned live;
        unsigned long ended; /* distinct pids seen alive, over all rounds */
        unsigned char *seen; /* bitmap of those pids */
        pid_t survivors[8];
} Scan;

static long long now_ns(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int scan_one(pid_t pid, const ProcStatus *st, void *userdata)
{
        Scan *s = userdata;
        int hit = -1;

        if (proc_status_dead(st))
                return 0;
        /* Real, effective or saved uid; the filesystem uid alone does not make a process the user's. */
        for (int i = 0; i < 3 && hit < 0; i++)
                if (uid_in_ranges(st->uid[i], s->ranges, s->n_ranges))
                        hit = i;
        if (hit < 0)
                return 0;
        if (s->live < ELEMENTSOF(s->survivors))
                s->survivors[s->live] = pid;
        s->live++;
        if ((unsigned long)pid < PID_BITS && !(s->seen[pid / 8] & (1u << (pid % 8)))) {
                s->seen[pid / 8] |= (unsigned char)(1u << (pid % 8));
                s->ended++;
        }
        /* kill(-1) from uid U reaches the processes whose real or saved uid is U. One that is the user's
         * only by its effective uid (a root process acting for it for a moment) is killed by pid. */
        if (hit == 1 && !uid_in_ranges(st->uid[2], s->ranges, s->n_ranges)) {
                (void)kill(pid, SIGKILL);
                return 0;
        }
        uid_t u = hit == 0 ? st->uid[0] : st->uid[2];
        for (size_t i = 0; i < s->n_uids; i++)
                if (s->uids[i] == u)
                        return 0;
        if (s->n_uids < MAX_UIDS)
                s->uids[s->n_uids++] = u;
        return 0;
}

/* A child that is uid u and nothing more sends SIGKILL to everything u may signal. */
static int kill_as(uid_t u)
{
        pid_t pid = fork();
        int status;

        if (pid < 0)
                return -errno;
        if (pid == 0) {
                /* Not dumpable, so the processes being killed cannot ptrace the killer. */
                if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0 || setgroups(0, NULL) < 0 ||
                    setresgid(65534, 65534, 65534) < 0 || setresuid(u, u, u) < 0)
                        _exit(1);
                (void)kill(-1, SIGKILL);
                _exit(0);
        }
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return -errno;
        return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -EPERM;
}

/* Calls method; a failure is audited, except gone_errno (0: none), which says the call found nothing left
 * to do: KillUnit fails with ENODEV when the slice's last processes end, and its cgroup goes, while it is
 * signalling them. */
static void bus_call(const Libsystemd *sd, sd_bus *bus, int gone_errno, const char *dest, const char *path,
                     const char *iface, const char *method, const char *types, ...)
{
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus_message *m = NULL, *reply = NULL;
        int r;

        r = sd->bus_message_new_method_call(bus, &m, dest, path, iface, method);
        if (r >= 0) {
                va_list ap;

                va_start(ap, types);
                r = sd->bus_message_appendv(m, types, ap);
                va_end(ap);
        }
        if (r >= 0)
                r = sd->bus_call(bus, m, 10 * 1000 * 1000, &error, &reply);
        /* A user with no session, slice or linger is already where we want it; the loop below verifies. */
        if (r < 0 && gone_errno != 0 && r == -gone_errno)
                audit(LOG_INFO, "%s found nothing left to do (%s)", method, strerror(-r));
        else if (r < 0)
                audit(LOG_NOTICE, "%s: %s", method, error.message ? error.message : strerror(-r));
        sd->bus_error_free(&error);
        sd->bus_message_unref(m);
        sd->bus_message_unref(reply);
}

static void stop_systemd_user(uid_t uid)
{
        char slice[64];
        const Libsystemd *sd;
        sd_bus *bus = NULL;

        if (!systemd_running())
                return;
        sd = libsystemd();
        if (!sd || sd->bus_open_system(&bus) < 0) {
                audit(LOG_NOTICE, "systemd runs but its bus cannot be opened");
                return;
        }
        (void)snprintf(slice, sizeof(slice), "user-%u.slice", (unsigned)uid);
        bus_call(sd, bus, 0, "org.freedesktop.login1", "/org/freedesktop/login1",
                 "org.freedesktop.login1.Manager", "SetUserLinger", "ubb", (uint32_t)uid, 0, 0);
        bus_call(sd, bus, ENODEV, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                 "org.freedesktop.systemd1.Manager", "KillUnit", "ssi", slice, "all", SIGKILL);
        bus_call(sd, bus, 0, "org.freedesktop.login1", "/org/freedesktop/login1",
                 "org.freedesktop.login1.Manager", "TerminateUser", "u", (uint32_t)uid);
        sd->bus_flush_close_unref(bus);
}

void op_kill_user(const Helper *h)
{
        UidRange ranges[SUBID_MAX_RANGES + 1];
        size_t n = 0;
        Scan s = { 0 };
        AjError e = { 0 };
        long long start = now_ns(), deadline;
        unsigned rounds = 0;
        int r;

        /* The ranges say whose processes root kills: the file must be root's alone like the
         * configuration, and no range may reach the uids of system or ordinary users. */
        if (access(SUBUID_PATH, F_OK) == 0 && trusted_path_check(SUBUID_PATH, &e) < 0)
                die(EXIT_CONFIG, "%s not trusted: %s", SUBUID_PATH, e.message);
        r = subid_load(SUBUID_PATH, h->sandbox.pw_name, h->sandbox.pw_uid, ranges, &n);
        if (r < 0)
                die(EXIT_CONFIG, "%s: cannot read the ranges of %s: %s", SUBUID_PATH, h->sandbox.pw_name,
                    strerror(-r));
        for (size_t i = 0; i < n; i++)
                if (ranges[i].start < SUBID_LOWEST || uid_in_ranges(h->caller_uid, &ranges[i], 1))
                        die(EXIT_CONFIG, "%s: a range of %s starts below %u or holds the runner's uid",
                            SUBUID_PATH, h->sandbox.pw_name, SUBID_LOWEST);
        ranges[n++] = (UidRange){ .start = h->sandbox.pw_uid, .count = 1 };

        s.ranges = ranges;
        s.n_ranges = n;
        s.seen = calloc(PID_BITS / 8, 1);
        if (!s.seen)
                die(EXIT_FAILED, "out of memory");

        if (systemd_running()) {
                /* Counted before systemd is asked: what it kills is ended all the same, and the count
                 * (printed and audited) would otherwise leave out everything in the user's slice. */
                r = proc_for_each(scan_one, &s);
                if (r < 0)
                        die(EXIT_FAILED, "cannot scan /proc: %s", strerror(-r));
                stop_systemd_user(h->sandbox.pw_uid);
        }
        /* The bus calls above may take their time; the kill loop gets its own. */
        deadline = now_ns() + DEADLINE_NS;
        for (;;) {
                s.n_uids = 0;
                s.live = 0;
                r = proc_for_each(scan_one, &s);
                if (r < 0)
                        die(EXIT_FAILED, "cannot scan /proc: %s", strerror(-r));
                if (s.live == 0)
                        break;
                if (now_ns() > deadline)
                        die(EXIT_FAILED, "%u processes of %s survive (pid %ld first)", s.live,
                            h->sandbox.pw_name, (long)s.survivors[0]);
                /* Counted first, then killed: each enter cgroup in one write, then every uid at once. */
                if (rounds == 0)
                        cgroup_enter_kill_all();
                for (size_t i = 0; i < s.n_uids; i++)
                        (void)kill_as(s.uids[i]);
                /* Killed processes take a moment to become zombies; do not spin against them. */
                if (rounds++ > 2) {
                        struct timespec ts = { 0, 1000 * 1000 };
                        nanosleep(&ts, NULL);
                }
        }
        cgroup_enter_remove_all();
        printf("ended %lu processes of %s in %.1f ms\n", s.ended, h->sandbox.pw_name,
               (double)(now_ns() - start) / 1e6);
        audit(LOG_INFO, "done: ended %lu processes of %s", s.ended, h->sandbox.pw_name);
        fflush(stdout);
        _exit(0);
}
