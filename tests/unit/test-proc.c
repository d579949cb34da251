/* SPDX-License-Identifier: MIT */
/* proc_status_parse() on captured texts, proc_for_each() on the live /proc, and cgroup2_mount_parse() on
 * captured mountinfo texts. */
#include <check.h>

#include "check-run.h"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup.h"
#include "macro.h"
#include "proc.h"

/* ---- proc_status_parse() ---- */

/* Captured from Linux 6.x, trimmed after the fields that matter. */
#define STATUS_HEAD(name, state)                                                                            \
        "Name:\t" name "\n"                                                                                 \
        "Umask:\t0022\n"                                                                                    \
        "State:\t" state "\n"                                                                               \
        "Tgid:\t4242\n"                                                                                     \
        "Ngid:\t0\n"                                                                                        \
        "Pid:\t4242\n"                                                                                      \
        "PPid:\t1\n"                                                                                        \
        "TracerPid:\t0\n"
#define STATUS_TAIL                                                                                         \
        "Gid:\t100\t100\t100\t100\n"                                                                        \
        "FDSize:\t256\n"                                                                                    \
        "Groups:\t100 \n"                                                                                   \
        "NStgid:\t4242\n"                                                                                   \
        "NSpid:\t4242\n"                                                                                    \
        "VmPeak:\t    3060 kB\n"                                                                            \
        "Threads:\t1\n"                                                                                     \
        "SigQ:\t0/96365\n"                                                                                  \
        "CapEff:\t0000000000000000\n"                                                                       \
        "NoNewPrivs:\t0\n"                                                                                  \
        "Seccomp:\t0\n"                                                                                     \
        "voluntary_ctxt_switches:\t12\n"                                                                    \
        "nonvoluntary_ctxt_switches:\t3\n"

static const char status_normal[] =
        STATUS_HEAD("bash", "S (sleeping)") "Uid:\t1000\t1001\t1002\t1003\n" STATUS_TAIL;
static const char status_zombie[] =
        STATUS_HEAD("sleep", "Z (zombie)") "Uid:\t1001\t1001\t1001\t1001\n" STATUS_TAIL;
static const char status_dead[] =
        STATUS_HEAD("sleep", "X (dead)") "Uid:\t1001\t1001\t1001\t1001\n" STATUS_TAIL;
static const char status_no_uid[] = STATUS_HEAD("bash", "S (sleeping)") STATUS_TAIL;
static const char status_no_state[] = "Name:\tbash\nUmask:\t0022\nTgid:\t1\nUid:\t0\t0\t0\t0\n" STATUS_TAIL;

static ProcStatus st;

static int parse(const char *text)
{
        memset(&st, 0x55, sizeof(st));
        return proc_status_parse(text, &st);
}

START_TEST(test_status_normal)
{
        ck_assert_int_eq(parse(status_normal), 0);
        ck_assert_int_eq(st.state, 'S');
        ck_assert_uint_eq(st.uid[0], 1000);
        ck_assert_uint_eq(st.uid[1], 1001);
        ck_assert_uint_eq(st.uid[2], 1002);
        ck_assert_uint_eq(st.uid[3], 1003);
        ck_assert_int_eq(st.ppid, 1);
        ck_assert(!proc_status_dead(&st));
}
END_TEST

START_TEST(test_status_zombie)
{
        ck_assert_int_eq(parse(status_zombie), 0);
        ck_assert_int_eq(st.state, 'Z');
        ck_assert_uint_eq(st.uid[0], 1001);
        ck_assert_uint_eq(st.uid[3], 1001);
        ck_assert(proc_status_dead(&st));

        ck_assert_int_eq(parse(status_dead), 0);
        ck_assert_int_eq(st.state, 'X');
        ck_assert(proc_status_dead(&st));
}
END_TEST

/* No PPid: line (or one that does not parse) is no parent at all, never pid 0 or a made-up one. */
START_TEST(test_status_ppid_missing)
{
        ck_assert_int_eq(parse("State:\tS (sleeping)\nUid:\t1\t1\t1\t1\n"), 0);
        ck_assert_int_eq(st.ppid, -1);
        ck_assert_int_eq(parse("State:\tS (sleeping)\nPPid:\tx7\nUid:\t1\t1\t1\t1\n"), 0);
        ck_assert_int_eq(st.ppid, -1);
        ck_assert_int_eq(parse("State:\tS (sleeping)\nPPid:\t0\nUid:\t1\t1\t1\t1\n"), 0);
        ck_assert_int_eq(st.ppid, 0);
}
END_TEST

/* Every state letter of fs/proc/array.c task_state_array[], which a live process can show. */
static const struct {
        const char *text;
        char state;
        bool dead;
} states[] = {
        { "State:\tR (running)\nUid:\t1\t2\t3\t4\n", 'R', false },
        { "State:\tS (sleeping)\nUid:\t1\t2\t3\t4\n", 'S', false },
        { "State:\tD (disk sleep)\nUid:\t1\t2\t3\t4\n", 'D', false },
        { "State:\tT (stopped)\nUid:\t1\t2\t3\t4\n", 'T', false },
        { "State:\tt (tracing stop)\nUid:\t1\t2\t3\t4\n", 't', false },
        { "State:\tX (dead)\nUid:\t1\t2\t3\t4\n", 'X', true },
        { "State:\tZ (zombie)\nUid:\t1\t2\t3\t4\n", 'Z', true },
        { "State:\tP (parked)\nUid:\t1\t2\t3\t4\n", 'P', false },
        { "State:\tI (idle)\nUid:\t1\t2\t3\t4\n", 'I', false },
};

START_TEST(test_status_states)
{
        ck_assert_msg(parse(states[_i].text) == 0, "refused: %s", states[_i].text);
        ck_assert_int_eq(st.state, states[_i].state);
        ck_assert_int_eq(proc_status_dead(&st), states[_i].dead);
        ck_assert_uint_eq(st.uid[0], 1);
        ck_assert_uint_eq(st.uid[3], 4);
}
END_TEST

START_TEST(test_status_uid_limits)
{
        ck_assert_int_eq(parse("State:\tS (sleeping)\nUid:\t0\t4294967295\t4294967294\t65534\n"), 0);
        ck_assert_uint_eq(st.uid[0], 0);
        ck_assert_uint_eq(st.uid[1], 4294967295u);
        ck_assert_uint_eq(st.uid[2], 4294967294u);
        ck_assert_uint_eq(st.uid[3], 65534);
        ck_assert_int_eq(parse("State:\tS (sleeping)\nUid:\t0\t4294967296\t0\t0\n"), -EINVAL);
        ck_assert_int_eq(parse("State:\tS (sleeping)\nUid:\t0\t99999999999999999999999\t0\t0\n"), -EINVAL);
}
END_TEST

START_TEST(test_status_name_cannot_spoof)
{
        /* A process names itself (comm, 15 bytes, newline escaped by the kernel): only lines count. */
        ck_assert_int_eq(parse("Name:\tUid:\t0\t0\t0\t0\n"
                               "State:\tS (sleeping)\n"
                               "Uid:\t1000\t1000\t1000\t1000\n"),
                         0);
        ck_assert_uint_eq(st.uid[0], 1000);
        ck_assert_int_eq(parse("Name:\tState:\tZ\n"
                               "State:\tR (running)\n"
                               "Uid:\t1000\t1000\t1000\t1000\n"),
                         0);
        ck_assert_int_eq(st.state, 'R');
}
END_TEST

static const char *const malformed_status[] = {
        "",
        "\n",
        status_no_uid,
        status_no_state,
        "State:\tS (sleeping)\nUid:\n",
        "State:\tS (sleeping)\nUid:\t1000\t1000\t1000\n",                   /* three uids */
        "State:\tS (sleeping)\nUid:\t1000\t1000\t1000\nGid:\t5\t5\t5\t5\n", /* not from the next line */
        "State:\tS (sleeping)\nUid:\t-1\t0\t0\t0\n",
        "State:\tS (sleeping)\nUid:\t+1\t0\t0\t0\n",
        "State:\tS (sleeping)\nUid:\tabc\t0\t0\t0\n",
        "State:\tS (sleeping)\nUid:\t0x10\t0\t0\t0\n",
        "State:\tS (sleeping)\nUid:\t1000,1000,1000,1000\n",
        "State:\tS (sleeping)\nUid:\t1000\t\t\n",
        "State:\t\nUid:\t0\t0\t0\t0\n",
        "State:\t5 (five)\nUid:\t0\t0\t0\t0\n",
        "State:\t(sleeping)\nUid:\t0\t0\t0\t0\n",
        " State:\tS (sleeping)\nUid:\t0\t0\t0\t0\n",
        "State:\tS (sleeping)\n Uid:\t0\t0\t0\t0\n",
        "state:\tS (sleeping)\nuid:\t0\t0\t0\t0\n",
};

START_TEST(test_status_malformed)
{
        ck_assert_msg(parse(malformed_status[_i]) == -EINVAL, "accepted: \"%s\"", malformed_status[_i]);
}
END_TEST

/* ---- proc_for_each() ---- */

typedef struct Seen {
        pid_t want[2];
        bool found[2];
        ProcStatus status[2];
        unsigned calls;
        int stop_with; /* when negative, returned from the first call */
} Seen;

static int collect(pid_t pid, const ProcStatus *status, void *userdata)
{
        Seen *s = userdata;

        s->calls++;
        ck_assert_int_gt(pid, 0);
        for (int i = 0; i < 2; i++)
                if (pid == s->want[i]) {
                        ck_assert(!s->found[i]); /* each process once */
                        s->found[i] = true;
                        s->status[i] = *status;
                }
        return s->stop_with < 0 ? s->stop_with : 1;
}

static pid_t child_that_exits(void)
{
        siginfo_t si = { 0 };
        pid_t pid = fork();

        ck_assert_int_ge(pid, 0);
        if (pid == 0)
                _exit(7);
        /* Wait for the exit without reaping: the child stays a zombie. */
        ck_assert_int_eq(waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT), 0);
        ck_assert_int_eq(si.si_pid, pid);
        return pid;
}

static void reap(pid_t pid)
{
        int status;

        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
}

START_TEST(test_for_each_self_and_zombie)
{
        Seen s = { 0 };
        uid_t ruid, euid, suid;
        int r;

        ck_assert_int_eq(getresuid(&ruid, &euid, &suid), 0);
        s.want[0] = getpid();
        s.want[1] = child_that_exits();

        r = proc_for_each(collect, &s);
        reap(s.want[1]);
        ck_assert_int_eq(r, 0);
        ck_assert_uint_gt(s.calls, 1);

        ck_assert_msg(s.found[0], "own pid %d not reported", (int)s.want[0]);
        ck_assert(!proc_status_dead(&s.status[0]));
        ck_assert_int_eq(s.status[0].state, 'R'); /* it is reading /proc right now */
        ck_assert_uint_eq(s.status[0].uid[0], ruid);
        ck_assert_uint_eq(s.status[0].uid[1], euid);
        ck_assert_uint_eq(s.status[0].uid[2], suid);
        ck_assert_uint_eq(s.status[0].uid[3], (uid_t)setfsuid((uid_t)-1));

        ck_assert_msg(s.found[1], "zombie child %d not reported", (int)s.want[1]);
        ck_assert_int_eq(s.status[1].state, 'Z');
        ck_assert(proc_status_dead(&s.status[1]));
        ck_assert_uint_eq(s.status[1].uid[0], ruid);
}
END_TEST

START_TEST(test_status_read_self_and_gone)
{
        ProcStatus status;
        uid_t ruid, euid, suid;
        pid_t pid = child_that_exits();

        ck_assert_int_eq(getresuid(&ruid, &euid, &suid), 0);
        ck_assert_int_eq(proc_status_read(getpid(), &status), 0);
        ck_assert_uint_eq(status.uid[0], ruid);
        ck_assert_uint_eq(status.threads, 1);
        ck_assert_int_eq(status.ppid, getppid());
        ck_assert_int_eq(proc_status_read(pid, &status), 0);
        ck_assert_int_eq(status.ppid, getpid());
        reap(pid);
        ck_assert_int_eq(proc_status_read(pid, &status), -ESRCH);
}
END_TEST

START_TEST(test_for_each_reaped_child_gone)
{
        Seen s = { 0 };

        s.want[0] = getpid();
        s.want[1] = child_that_exits();
        reap(s.want[1]);
        ck_assert_int_eq(proc_for_each(collect, &s), 0);
        ck_assert(s.found[0]);
        ck_assert(!s.found[1]);
}
END_TEST

START_TEST(test_for_each_traced_child)
{
        /* A process stopped under ptrace shows "t (tracing stop)": it is alive and must be reported, or
         * kill-user would not see it. */
        Seen s = { 0 };
        int status, r;
        pid_t pid = fork();

        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0)
                        _exit(1);
                (void)raise(SIGSTOP);
                _exit(0);
        }
        ck_assert_int_eq(waitpid(pid, &status, WUNTRACED), pid);
        ck_assert_msg(WIFSTOPPED(status), "the child did not stop under ptrace (status 0x%x)", status);
        s.want[0] = pid;
        s.want[1] = -1;
        r = proc_for_each(collect, &s);
        (void)kill(pid, SIGKILL);
        (void)waitpid(pid, &status, 0);
        ck_assert_int_eq(r, 0);
        ck_assert_msg(s.found[0], "traced child %d (state t) not reported by proc_for_each", (int)pid);
        ck_assert_int_eq(s.status[0].state, 't');
        ck_assert(!proc_status_dead(&s.status[0]));
}
END_TEST

/* A process whose main thread called pthread_exit() while another thread runs: its leader shows
 * "Z (zombie)", yet the process is alive and must not be counted as gone. */
static void *spin(void *arg)
{
        (void)arg;
        for (;;)
                pause();
        return NULL;
}

START_TEST(test_for_each_zombie_leader)
{
        Seen s = { 0 };
        int ready[2], status, r;
        char c;
        pid_t pid;

        ck_assert_int_eq(pipe(ready), 0);
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                pthread_t t;

                if (pthread_create(&t, NULL, spin, NULL) != 0)
                        _exit(1);
                (void)!write(ready[1], "x", 1);
                pthread_exit(NULL);
        }
        ck_assert_int_eq(read(ready[0], &c, 1), 1);
        /* Until the leader shows as a zombie. */
        for (int i = 0; i < 2000; i++) {
                char path[64], buf[4096];
                int fd;
                ssize_t n;

                (void)snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
                fd = open(path, O_RDONLY | O_CLOEXEC);
                ck_assert_int_ge(fd, 0);
                n = read(fd, buf, sizeof(buf) - 1);
                close(fd);
                ck_assert_int_gt(n, 0);
                buf[n] = '\0';
                if (strstr(buf, "State:\tZ"))
                        break;
                usleep(1000);
        }
        s.want[0] = pid;
        s.want[1] = -1;
        r = proc_for_each(collect, &s);
        (void)kill(pid, SIGKILL);
        (void)waitpid(pid, &status, 0);
        close(ready[0]);
        close(ready[1]);
        ck_assert_int_eq(r, 0);
        ck_assert(s.found[0]);
        ck_assert_int_eq(s.status[0].state, 'Z');
        ck_assert(s.status[0].other_task_alive);
        ck_assert(!proc_status_dead(&s.status[0]));
}
END_TEST

/* A tree laid out like /proc, made in a temporary directory. */
static char fake_root[64];

static void fake_file(const char *rel, const char *text)
{
        char path[256];
        FILE *f;

        (void)snprintf(path, sizeof(path), "%s/%s", fake_root, rel);
        f = fopen(path, "w");
        ck_assert_ptr_nonnull(f);
        fputs(text, f);
        ck_assert_int_eq(fclose(f), 0);
}

static void fake_dir(const char *rel)
{
        char path[256];

        (void)snprintf(path, sizeof(path), "%s/%s", fake_root, rel);
        ck_assert_int_eq(mkdir(path, 0755), 0);
}

static int fake_scan(Seen *s)
{
        int fd = open(fake_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC), r;

        ck_assert_int_ge(fd, 0);
        r = proc_for_each_at(fd, collect, s);
        close(fd);
        return r;
}

static void fake_remove(void)
{
        char cmd[128];

        (void)snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fake_root);
        ck_assert_int_eq(system(cmd), 0);
}

START_TEST(test_for_each_at_gone_and_zombie_leaders)
{
        Seen s = { .want = { 104, 106 } };

        (void)snprintf(fake_root, sizeof(fake_root), "/tmp/test-proc.XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(fake_root));
        fake_dir("101"); /* no status: it exited */
        fake_dir("102");
        fake_file("102/status", ""); /* reads empty: it exited */
        fake_dir("104");             /* a zombie leader with a live thread */
        fake_file("104/status",
                  STATUS_HEAD("x", "Z (zombie)") "Uid:\t1001\t1001\t1001\t1001\nThreads:\t2\n");
        fake_dir("104/task");
        fake_dir("104/task/104");
        fake_file("104/task/104/status", status_zombie);
        fake_dir("104/task/105");
        fake_file("104/task/105/status", status_normal);
        fake_dir("107"); /* no Threads: line: its tasks are walked */
        fake_file("107/status", STATUS_HEAD("x", "Z (zombie)") "Uid:\t1001\t1001\t1001\t1001\n");
        fake_dir("107/task");
        fake_dir("107/task/108");
        fake_file("107/task/108/status", status_normal);
        fake_dir("106"); /* a zombie whose only thread is the leader */
        fake_file("106/status", status_zombie);
        fake_dir("106/task");
        fake_dir("106/task/106");
        fake_file("106/task/106/status", status_zombie);
        ck_assert_int_eq(fake_scan(&s), 0);
        fake_remove();
        ck_assert_uint_eq(s.calls, 3);
        ck_assert(s.found[0] && s.found[1]);
        ck_assert(!proc_status_dead(&s.status[0]));
        ck_assert_uint_eq(s.status[0].threads, 2);
        ck_assert(proc_status_dead(&s.status[1]));
        ck_assert_uint_eq(s.status[1].threads, 1);
}
END_TEST

/* What cannot be read is not gone: the scan fails instead of skipping it. */
static const struct {
        const char *what;
        int error;
} unreadable[] = {
        { "status is a directory", -EISDIR },
        { "status is not a status file", -EBADMSG },
        { "status is too long", -EFBIG },
};

START_TEST(test_for_each_at_unreadable)
{
        Seen s = { .want = { -1, -1 } };
        char *big;

        (void)snprintf(fake_root, sizeof(fake_root), "/tmp/test-proc.XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(fake_root));
        fake_dir("200");
        switch (_i) {
        case 0:
                fake_dir("200/status");
                break;
        case 1:
                fake_file("200/status", "Name:\tbash\n");
                break;
        default:
                big = malloc(20000);
                ck_assert_ptr_nonnull(big);
                memset(big, 'x', 19999);
                big[19999] = '\0';
                fake_file("200/status", big);
                free(big);
        }
        ck_assert_msg(fake_scan(&s) == unreadable[_i].error, "%s", unreadable[_i].what);
        fake_remove();
}
END_TEST

START_TEST(test_for_each_stops)
{
        Seen s = { .stop_with = -EXDEV };

        ck_assert_int_eq(proc_for_each(collect, &s), -EXDEV);
        ck_assert_uint_eq(s.calls, 1);
}
END_TEST

/* ---- cgroup2_mount_parse() ---- */

/* Captured from a systemd host in hybrid mode. */
static const char mountinfo_hybrid[] =
        "22 27 0:21 / /proc rw,relatime shared:13 - proc proc rw\n"
        "23 27 0:22 / /sys rw,nosuid,nodev,noexec,relatime shared:2 - sysfs sysfs rw\n"
        "27 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw,errors=remount-ro\n"
        "31 23 0:28 / /sys/fs/cgroup ro,nosuid,nodev,noexec shared:9 - tmpfs tmpfs ro,mode=755\n"
        "32 31 0:29 / /sys/fs/cgroup/unified rw,nosuid,nodev,noexec,relatime shared:10 - cgroup2 cgroup2 "
        "rw,nsdelegate\n"
        "33 31 0:30 / /sys/fs/cgroup/systemd rw,nosuid,nodev,noexec,relatime shared:11 - cgroup cgroup "
        "rw,xattr,name=systemd\n"
        "34 31 0:31 / /sys/fs/cgroup/memory rw,nosuid,nodev,noexec,relatime shared:15 - cgroup cgroup "
        "rw,memory\n";

/* Hybrid, but with the v1 controllers listed first (as in a container). */
static const char mountinfo_hybrid_v1_first[] =
        "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
        "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
        "33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct\n"
        "40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd\n"
        "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";

/* Captured from a systemd host in unified mode. */
static const char mountinfo_v2[] =
        "24 30 0:22 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw\n"
        "25 30 0:23 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw\n"
        "30 1 259:2 / / rw,relatime shared:1 - ext4 /dev/nvme0n1p2 rw\n"
        "35 24 0:30 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 "
        "rw,nsdelegate,memory_recursiveprot\n"
        "36 24 0:31 / /sys/fs/pstore rw,nosuid,nodev,noexec,relatime shared:10 - pstore pstore rw\n";

/* Pure v1: no cgroup2 anywhere (a tmpfs whose source is named "cgroup2" does not count). */
static const char mountinfo_none[] =
        "22 27 0:21 / /proc rw,relatime - proc proc rw\n"
        "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs cgroup2 rw,mode=755\n"
        "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
        "33 31 0:30 / /srv/cgroup2 rw,relatime - cgroup cgroup rw,name=systemd\n";

/* The mount point holds a space, escaped by the kernel as \040. */
static const char mountinfo_escaped[] =
        "22 27 0:21 / /proc rw,relatime - proc proc rw\n"
        "50 27 0:40 / /mnt/my\\040cgroup\\011v2\\134x rw,relatime shared:20 - cgroup2 none rw\n";

static void assert_mount(const char *mountinfo, const char *expected)
{
        _cleanup_free_ char *path = NULL;

        ck_assert_int_eq(cgroup2_mount_parse(mountinfo, &path), 0);
        ck_assert_str_eq(path, expected);
}

START_TEST(test_cgroup_hybrid)
{
        assert_mount(mountinfo_hybrid, "/sys/fs/cgroup/unified");
        assert_mount(mountinfo_hybrid_v1_first, "/sys/fs/cgroup/unified");
}
END_TEST

START_TEST(test_cgroup_v2)
{
        assert_mount(mountinfo_v2, "/sys/fs/cgroup");
}
END_TEST

START_TEST(test_cgroup_none)
{
        char *path = NULL;

        ck_assert_int_eq(cgroup2_mount_parse(mountinfo_none, &path), -ENOENT);
        ck_assert_ptr_null(path);
        ck_assert_int_eq(cgroup2_mount_parse("", &path), -ENOENT);
        ck_assert_int_eq(cgroup2_mount_parse("\n\n", &path), -ENOENT);
        /* A line without the separator, then one whose separator has no file system type after it. */
        ck_assert_int_eq(cgroup2_mount_parse("1 2 0:1 / /a rw cgroup2 cgroup2 rw\n"
                                             "3 4 0:2 / /b rw - cgroup2",
                                             &path),
                         -ENOENT);
        ck_assert_ptr_null(path);
}
END_TEST

START_TEST(test_cgroup_escaped)
{
        assert_mount(mountinfo_escaped, "/mnt/my cgroup\tv2\\x");
}
END_TEST

START_TEST(test_cgroup_first_wins)
{
        assert_mount("1 2 0:1 / /first rw - cgroup2 cgroup2 rw\n"
                     "3 4 0:2 / /second rw - cgroup2 cgroup2 rw\n",
                     "/first");
}
END_TEST

START_TEST(test_cgroup_separator_on_another_line)
{
        /* A short line's missing " - " must not be found on the next line. */
        assert_mount("1 2 0:1 / /short rw\n"
                     "3 4 0:2 / /real rw shared:1 master:2 - cgroup2 cgroup2 rw\n",
                     "/real");
}
END_TEST

START_TEST(test_cgroup_no_trailing_newline)
{
        assert_mount("35 24 0:30 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw", "/sys/fs/cgroup");
}
END_TEST

START_TEST(test_cgroup_live)
{
        _cleanup_free_ char *path = NULL;
        int r = cgroup2_mount_find(&path);

        /* Either there is a cgroup2 mount, or there is none; nothing else. */
        ck_assert_msg(r == 0 || r == -ENOENT, "cgroup2_mount_find: %s", strerror(-r));
        if (r == 0)
                ck_assert_int_eq(path[0], '/');
}
END_TEST

/* Whether this process may trace a child (seccomp or a container may forbid ptrace). */
static bool can_ptrace(void)
{
        int status;
        pid_t pid = fork();

        if (pid < 0)
                return false;
        if (pid == 0) {
                if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0)
                        _exit(1);
                (void)raise(SIGSTOP);
                _exit(0);
        }
        if (waitpid(pid, &status, WUNTRACED) != pid)
                return false;
        if (WIFSTOPPED(status)) {
                (void)kill(pid, SIGKILL);
                (void)waitpid(pid, &status, 0);
                return true;
        }
        return false;
}

int main(void)
{
        Suite *s = suite_create("proc");
        TCase *tc = tcase_create("proc_status_parse");

        tcase_add_test(tc, test_status_normal);
        tcase_add_test(tc, test_status_zombie);
        tcase_add_test(tc, test_status_ppid_missing);
        tcase_add_loop_test(tc, test_status_states, 0, (int)ELEMENTSOF(states));
        tcase_add_test(tc, test_status_uid_limits);
        tcase_add_test(tc, test_status_name_cannot_spoof);
        tcase_add_loop_test(tc, test_status_malformed, 0, (int)ELEMENTSOF(malformed_status));
        suite_add_tcase(s, tc);

        tc = tcase_create("proc_for_each");
        tcase_set_timeout(tc, 30);
        tcase_add_test(tc, test_for_each_self_and_zombie);
        tcase_add_test(tc, test_for_each_reaped_child_gone);
        tcase_add_test(tc, test_status_read_self_and_gone);
        if (can_ptrace())
                tcase_add_test(tc, test_for_each_traced_child);
        else
                printf("skipped: test_for_each_traced_child: ptrace is not permitted here\n");
        tcase_add_test(tc, test_for_each_stops);
        tcase_add_test(tc, test_for_each_zombie_leader);
        tcase_add_test(tc, test_for_each_at_gone_and_zombie_leaders);
        tcase_add_loop_test(tc, test_for_each_at_unreadable, 0, (int)ELEMENTSOF(unreadable));
        suite_add_tcase(s, tc);

        tc = tcase_create("cgroup2_mount_parse");
        tcase_add_test(tc, test_cgroup_hybrid);
        tcase_add_test(tc, test_cgroup_v2);
        tcase_add_test(tc, test_cgroup_none);
        tcase_add_test(tc, test_cgroup_escaped);
        tcase_add_test(tc, test_cgroup_first_wins);
        tcase_add_test(tc, test_cgroup_separator_on_another_line);
        tcase_add_test(tc, test_cgroup_no_trailing_newline);
        tcase_add_test(tc, test_cgroup_live);
        suite_add_tcase(s, tc);

        return check_run(s);
}
