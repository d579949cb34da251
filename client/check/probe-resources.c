/* SPDX-License-Identifier: MIT */
#include "probe-resources.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <linux/magic.h>

#include "cgroup-budget.h"
#include "cgroup.h"
#include "macro.h"
#include "probe-emit.h"
#include "read-file.h"

#define CGROUP_V1_MEMORY "/sys/fs/cgroup/memory"

static int read_oom_score_adj(long *ret)
{
        _cleanup_free_ char *text = NULL;
        size_t n;
        int r = read_regular_nofollow(AT_FDCWD, "/proc/self/oom_score_adj", 32, &text, &n);

        if (r < 0)
                return r;
        while (n > 0 && text[n - 1] == '\n')
                text[--n] = '\0';
        errno = 0;
        char *end;
        *ret = strtol(text, &end, 10);
        return errno || end == text || *end ? -EBADMSG : 0;
}

static int write_oom_score_adj(long v)
{
        char buf[32];
        int n = snprintf(buf, sizeof(buf), "%ld\n", v), fd, r = 0;

        fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return -errno;
        if (write(fd, buf, (size_t)n) != n)
                r = -errno;
        close(fd);
        return r;
}

/* The entered command's oom_score_adj is 1000 (the OOM killer's first choice), and where the one who set
 * it had CAP_SYS_RESOURCE, that is also the floor the sandbox cannot go below. */
static void probe_oom_score(void)
{
        long long t = probe_now_ms();
        long adj, after;
        int r = read_oom_score_adj(&adj);

        if (r < 0) {
                probe_emit("oom-score", "fail", t, "cannot read /proc/self/oom_score_adj: %s", strerror(-r));
                return;
        }
        if (adj != 1000) {
                probe_emit("oom-score", "fail", t,
                           "oom_score_adj is %ld, not 1000: the OOM killer may take a process of the "
                           "runner's before the sandbox's",
                           adj);
                return;
        }
        r = write_oom_score_adj(999);
        if (r == -EACCES || r == -EPERM) {
                probe_emit("oom-score", "ok", t,
                           "oom_score_adj 1000: the OOM killer's first choice, and lowering it to 999 is "
                           "refused (%s)",
                           strerror(-r));
                return;
        }
        if (r < 0) {
                probe_emit("oom-score", "fail", t, "writing /proc/self/oom_score_adj: %s", strerror(-r));
                return;
        }
        /* Raising is always allowed: back to 1000 before anything else runs. */
        (void)write_oom_score_adj(1000);
        if (read_oom_score_adj(&after) < 0 || after != 1000) {
                probe_emit("oom-score", "fail", t, "oom_score_adj lowered to 999 and not back to 1000");
                return;
        }
        if (write_oom_score_adj(-1) == 0) {
                (void)write_oom_score_adj(1000);
                probe_emit("oom-score", "fail", t, "the sandbox set its own oom_score_adj to -1");
                return;
        }
        probe_emit("oom-score", "note", t,
                   "oom_score_adj 1000, but the sandbox may lower it to 0 (never below): whoever set it had "
                   "no CAP_SYS_RESOURCE, as where root's bounding set lacks it, so no floor could be set");
}

/* RLIMIT_NPROC counts every task of the uid at fork(): at most tasks-max, and no higher for the asking. */
static void probe_tasks_budget(unsigned long tasks_max)
{
        long long t = probe_now_ms();
        struct rlimit rl;

        if (getrlimit(RLIMIT_NPROC, &rl) < 0) {
                probe_emit("tasks-budget", "fail", t, "getrlimit(RLIMIT_NPROC): %s", strerror(errno));
                return;
        }
        if (rl.rlim_max == RLIM_INFINITY) {
                probe_emit("tasks-budget", "fail", t,
                           "RLIMIT_NPROC is unlimited: a fork bomb may take every pid of the machine");
                return;
        }
        if (tasks_max && rl.rlim_max > tasks_max) {
                probe_emit("tasks-budget", "fail", t,
                           "RLIMIT_NPROC is %llu, more than [sandbox] tasks-max (%lu)",
                           (unsigned long long)rl.rlim_max, tasks_max);
                return;
        }
        if (setrlimit(RLIMIT_NPROC, &(struct rlimit){ rl.rlim_max + 1, rl.rlim_max + 1 }) == 0) {
                probe_emit("tasks-budget", "fail", t,
                           "the sandbox raised its RLIMIT_NPROC from %llu to %llu",
                           (unsigned long long)rl.rlim_max, (unsigned long long)rl.rlim_max + 1);
                return;
        }
        probe_emit("tasks-budget", "ok", t,
                   "RLIMIT_NPROC %llu (soft %llu), for every task of the sandbox uid; raising it is refused "
                   "(%s)",
                   (unsigned long long)rl.rlim_max, (unsigned long long)rl.rlim_cur, strerror(errno));
}

/* Where the memory controller's hierarchy is, and this process's cgroup in it: cgroup v2 where its mount
 * lists "memory" among its controllers, else v1's memory hierarchy at its usual place. -ENOENT where
 * neither is there. */
static int memory_hierarchy(const char *self_cgroup, int *ret_root_fd, bool *ret_v1, char **ret_path)
{
        _cleanup_free_ char *mount = NULL, *controllers = NULL, *file = NULL, *path = NULL;
        struct statfs sf;
        int r;

        r = cgroup2_mount_find(&mount);
        if (r >= 0) {
                if (asprintf(&file, "%s/cgroup.controllers", mount) < 0)
                        return -ENOMEM;
                if (read_regular_nofollow(AT_FDCWD, file, 4096, &controllers, NULL) >= 0 &&
                    (strncmp(controllers, "memory", 6) == 0 || strstr(controllers, " memory")) &&
                    cgroup_path_parse(self_cgroup, false, &path) >= 0) {
                        *ret_root_fd = open(mount, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                        if (*ret_root_fd < 0)
                                return -errno;
                        *ret_v1 = false;
                        *ret_path = TAKE_PTR(path);
                        return 0;
                }
        }
        if (statfs(CGROUP_V1_MEMORY, &sf) < 0 || sf.f_type != CGROUP_SUPER_MAGIC)
                return -ENOENT;
        r = cgroup_path_parse(self_cgroup, true, &path);
        if (r < 0)
                return r;
        *ret_root_fd = open(CGROUP_V1_MEMORY, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (*ret_root_fd < 0)
                return -errno;
        *ret_v1 = true;
        *ret_path = TAKE_PTR(path);
        return 0;
}

static void probe_memory_budget(const char *self_cgroup)
{
        _cleanup_free_ char *path = NULL, *where = NULL;
        _cleanup_close_ int root_fd = -EBADF;
        long long t = probe_now_ms();
        uint64_t limit;
        size_t top = 0;
        bool v1 = false;
        int r = memory_hierarchy(self_cgroup, &root_fd, &v1, &path);

        if (r == -ENOENT) {
                probe_emit("memory-budget", "note", t,
                           "not enforced here: no memory controller for this process's cgroup (cgroup v1 "
                           "without the memory hierarchy, as in some containers); systemd may record "
                           "MemoryMax= on the sandbox user's slice, nothing applies it");
                return;
        }
        if (r >= 0 && (top = cgroup_own_prefix(path, (unsigned)getuid())) == 0) {
                probe_emit("memory-budget", "note", t,
                           "not enforced here: in the memory hierarchy (cgroup %s) the sandbox side is at "
                           "%s, no "
                           "cgroup of the sandbox user's own (user-UID.slice, or the direct enter's), so "
                           "nothing there bounds it apart from the runner",
                           v1 ? "v1" : "v2", path);
                return;
        }
        if (r >= 0)
                r = cgroup_memory_budget(root_fd, path, top, v1, &limit, &where);
        if (r == -ENOENT) {
                probe_emit(
                        "memory-budget", "note", t,
                        "not enforced here: the memory controller is not enabled from %s up to %.*s (cgroup "
                        "%s)",
                        path, (int)top, path, v1 ? "v1" : "v2");
                return;
        }
        if (r < 0) {
                probe_emit("memory-budget", "fail", t, "cannot read the memory limits above %s: %s",
                           path ? path : "this process's cgroup", strerror(-r));
                return;
        }
        if (limit == CGROUP_UNLIMITED) {
                if (access("/run/systemd/system", F_OK) < 0)
                        probe_emit("memory-budget", "note", t,
                                   "no memory limit from %s up to %.*s (cgroup %s), and systemd is not "
                                   "running, through which setup sets one",
                                   path, (int)top, path, v1 ? "v1" : "v2");
                else
                        probe_emit(
                                "memory-budget", "fail", t,
                                "no memory limit from %s up to %.*s (cgroup %s): the sandbox may take the "
                                "runner's memory",
                                path, (int)top, path, v1 ? "v1" : "v2");
                return;
        }
        probe_emit("memory-budget", "ok", t, "%" PRIu64 " MiB at most, set at %s (cgroup %s), over %s",
                   limit >> 20, where, v1 ? "v1" : "v2", path);
}

void probe_resources(const InsideArgs *a)
{
        _cleanup_free_ char *self = NULL;
        long long t = probe_now_ms();
        long adj;
        int r = read_regular_nofollow(AT_FDCWD, "/proc/self/cgroup", 64 * 1024, &self, NULL);

        if (r >= 0)
                r = read_oom_score_adj(&adj);
        if (r < 0) {
                probe_emit("resources-control", "fail", t,
                           "cannot read /proc/self/cgroup and /proc/self/oom_score_adj: %s", strerror(-r));
                probe_emit("oom-score", "note", t, "not probed: its control failed");
                probe_emit("tasks-budget", "note", t, "not probed: its control failed");
                probe_emit("memory-budget", "note", t, "not probed: its control failed");
                return;
        }
        probe_emit("resources-control", "ok", t,
                   "the sandbox side reads its cgroup and its oom_score_adj (%ld)", adj);
        probe_oom_score();
        probe_tasks_budget(a->tasks_max);
        probe_memory_budget(self);
}
