/* SPDX-License-Identifier: MIT */
/* kill-user: every process of the sandbox user and of its subordinate uids ends, and none remains when
 * this reports success.
 *
 * Each round, whatever the last scan found: every enter cgroup is killed in one write (cgroup.kill), and
 * for the sandbox uid and each uid that still has a live process, a child that is that uid (real,
 * effective and saved, no capabilities) sends kill(-1, SIGKILL). The kernel signals every process that
 * uid may signal under the same lock fork() takes, so a fork bomb cannot outrun it. Success needs a round
 * in which every killer ran its kill(-1) and exited by itself, and a scan of /proc after it that finds no
 * live process of those uids (a process lives while any of its threads does: a main thread that called
 * pthread_exit() looks like a zombie) and no enter cgroup that still holds one: the scan alone is not
 * atomic, so it is the proof only after a kill(-1) that was.
 * Where systemd runs, logind and the user's slice are told first, so nothing restarts what was killed,
 * and systemd is left, after, where the next enter's session can start (systemd-user.c).
 * Last, what the uid left in the shared temporary directories and its IPC objects go (remove-left.c).
 *
 * Every wait has a bound: a killer is the sandbox's uid, so the sandbox can stop it; one that has not
 * ended in KILLER_WAIT_NS is killed by root through its pidfd, and a round with a killer that did not end
 * by itself (stopped, slowed or killed) proves nothing: it is tried again, until
 * DEADLINE_NS, after which the call fails (EXIT_FAILED) naming what survives. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/sched.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "helper.h"
#include "macro.h"
#include "proc.h"
#include "subid.h"
#include "trusted-path.h"

#define DEADLINE_NS    (10LL * 1000 * 1000 * 1000)
#define KILLER_WAIT_NS (500LL * 1000 * 1000)
#define SETTLE_NS      (5LL * 1000 * 1000 * 1000)
#define MAX_UIDS       64
#define PID_BITS       (4 * 1024 * 1024) /* PID_MAX_LIMIT */

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

/* Which of the real, effective and saved uid is in the ranges first, or -1: the filesystem uid alone
 * does not make a process the user's. */
static int uid_hit(const ProcStatus *st, const Scan *s)
{
        for (int i = 0; i < 3; i++)
                if (uid_in_ranges(st->uid[i], s->ranges, s->n_ranges))
                        return i;
        return -1;
}

/* Root signals by pid only through a pidfd taken before the process is looked at again: if the pid was
 * reused before the pidfd was taken, the status read afterwards is the new process's and it is judged on
 * its own; if after, the pidfd names the old, dead process and the signal goes nowhere. */
static void kill_euid_only(pid_t pid, const Scan *s)
{
        int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
        ProcStatus st;

        if (pidfd < 0)
                return;
        if (proc_status_read(pid, &st) == 0 && uid_hit(&st, s) >= 0)
                (void)syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
        close(pidfd);
}

static int scan_one(pid_t pid, const ProcStatus *st, void *userdata)
{
        Scan *s = userdata;
        int hit = proc_status_dead(st) ? -1 : uid_hit(st, s);

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
                kill_euid_only(pid, s);
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

/* A child that is uid u and nothing more sends SIGKILL to everything u may signal. Being u, it can be
 * stopped, slowed or killed by what it is sent to kill: it gets KILLER_WAIT_NS (never past the deadline),
 * then root kills it through its pidfd. 0 when it exited by itself after its kill(-1); -ETIME when root
 * had to end it, -EPERM when it ended otherwise (the round is tried again); another -errno when it could
 * not be started or waited for. */
static int kill_as(uid_t u, long long deadline)
{
        int pidfd = -1, status, r = 0;
        struct clone_args args = { .flags = CLONE_PIDFD,
                                   .pidfd = (uint64_t)(uintptr_t)&pidfd,
                                   .exit_signal = SIGCHLD };
        long long until = now_ns() + KILLER_WAIT_NS;
        struct pollfd p;
        pid_t pid;

        pid = (pid_t)syscall(SYS_clone3, &args, sizeof(args));
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
        if (until > deadline)
                until = deadline;
        p = (struct pollfd){ .fd = pidfd, .events = POLLIN };
        if (poll(&p, 1, until > now_ns() ? (int)((until - now_ns()) / 1000000 + 1) : 0) <= 0) {
                /* Stopped, or slowed past its time: root ends it. SIGKILL ends a stopped process too, so the
                 * wait below is short. */
                (void)syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
                r = -ETIME;
        }
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR) {
                        r = -errno;
                        break;
                }
        close(pidfd);
        if (r < 0)
                return r;
        return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -EPERM;
}

void op_kill_user(const Helper *h)
{
        UidRange ranges[SUBID_MAX_RANGES + 1];
        size_t n = 0;
        Scan s = { 0 };
        AjError e = { 0 };
        long long start = now_ns(), deadline;
        unsigned rounds = 0, stopped_killers = 0, failed_killers = 0;
        unsigned long removed = 0;
        const char *settle_note = "";
        char failure[320];
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

        /* Ahead of whatever the sandbox keeps busy: its CPU hogs must not slow the scans and killers. */
        (void)setpriority(PRIO_PROCESS, 0, -20);
        /* Counted before anything is killed (the count is printed and audited), which also names the
         * uids of the first round. */
        r = proc_for_each(scan_one, &s);
        if (r < 0)
                die(EXIT_FAILED, "cannot scan /proc: %s", strerror(-r));
        systemd_user_stop(h->sandbox.pw_uid);
        /* The scan above is work, not a wait, and the bus calls are bounded on their own: the deadline
         * bounds the rounds, every wait in them included. */
        deadline = now_ns() + DEADLINE_NS;
        for (;;) {
                unsigned populated = 0;
                bool killers_ran = true; /* every killer of this round exited by itself */

                /* Killed first, whatever the last scan said: each enter cgroup in one write, the sandbox
                 * uid always, and every other uid seen alive. */
                r = cgroup_enter_kill_all(&populated);
                if (r < 0)
                        die(EXIT_FAILED, "cannot kill the enter cgroups: %s", strerror(-r));
                for (size_t i = 0; i <= s.n_uids; i++) {
                        uid_t u = i == 0 ? h->sandbox.pw_uid : s.uids[i - 1];

                        if (i > 0 && u == h->sandbox.pw_uid)
                                continue;
                        r = kill_as(u, deadline);
                        if (r == -ETIME)
                                stopped_killers++;
                        else if (r == -EPERM)
                                failed_killers++;
                        else if (r < 0)
                                die(EXIT_FAILED, "cannot run the killer as uid %u: %s", (unsigned)u,
                                    strerror(-r));
                        if (r < 0)
                                killers_ran = false;
                }
                s.n_uids = 0;
                s.live = 0;
                r = proc_for_each(scan_one, &s);
                if (r < 0)
                        die(EXIT_FAILED, "cannot scan /proc: %s", strerror(-r));
                if (killers_ran && s.live == 0 && populated == 0) {
                        r = cgroup_enter_kill_all(&populated);
                        if (r < 0)
                                die(EXIT_FAILED, "cannot read the enter cgroups: %s", strerror(-r));
                        if (populated == 0)
                                break;
                }
                if (now_ns() > deadline) {
                        if (s.live > 0)
                                die(EXIT_FAILED, "%u processes of %s survive (pid %ld first)%s", s.live,
                                    h->sandbox.pw_name, (long)s.survivors[0],
                                    stopped_killers ? "; the sandbox stopped the killer" : "");
                        if (populated > 0)
                                die(EXIT_FAILED, "%u enter cgroups of %s still hold processes", populated,
                                    h->sandbox.pw_name);
                        die(EXIT_FAILED,
                            "no round in which every killer of %s ran to its end: processes may survive "
                            "unseen (the sandbox stopped %u killers and ended %u)",
                            h->sandbox.pw_name, stopped_killers, failed_killers);
                }
                /* Killed processes take a moment to become zombies; do not spin against them. */
                if (rounds++ > 2) {
                        struct timespec ts = { 0, 1000 * 1000 };
                        nanosleep(&ts, NULL);
                }
        }
        cgroup_enter_remove_all();
        r = systemd_user_settle(h->sandbox.pw_uid, SETTLE_NS);
        if (r == -ETIME)
                settle_note = "; systemd still stops the user's slice after 5 s, which may end what a next "
                              "enter starts";
        if (r < 0)
                audit(LOG_NOTICE, "the user's units: %s",
                      r == -ETIME ? "user-UID.slice still runs after 5 s" : strerror(-r));
        /* Only now, with nothing of the uid alive to put them back: its files in the shared temporary
         * directories and its IPC objects, which hold memory that no process does. */
        r = remove_left(h->sandbox.pw_uid, h->sandbox.pw_gid, &removed, failure, sizeof(failure));
        if (r == -ENOTEMPTY)
                die(EXIT_FAILED,
                    "ended %lu processes of %s, but of what it left in the shared temporary "
                    "directories, %s",
                    s.ended, h->sandbox.pw_name, failure);
        if (r < 0)
                die(EXIT_FAILED,
                    "ended %lu processes of %s, but cannot remove what it left in the shared "
                    "temporary directories: %s",
                    s.ended, h->sandbox.pw_name, strerror(-r));
        printf("ended %lu processes of %s in %.1f ms", s.ended, h->sandbox.pw_name,
               (double)(now_ns() - start) / 1e6);
        if (removed > 0)
                printf("; removed %lu files and IPC objects it left in /tmp, /var/tmp, /dev/shm, "
                       "/dev/mqueue",
                       removed);
        printf("%s\n", settle_note);
        if (stopped_killers || failed_killers)
                audit(LOG_NOTICE,
                      "the sandbox stopped %u killers (root ended them) and ended %u; a later round proved "
                      "the end",
                      stopped_killers, failed_killers);
        audit(LOG_INFO, "done: ended %lu processes of %s", s.ended, h->sandbox.pw_name);
        fflush(stdout);
        _exit(0);
}
