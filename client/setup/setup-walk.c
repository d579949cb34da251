/* SPDX-License-Identifier: MIT */
/* Setup's filesystem stages: one walk of the root filesystem removing world-write and listing the
 * programs that run with root's rights; the set-id bit taken from each of those no package owns (nothing
 * vouches for it); and Yama's ptrace scope raised from 0, so the sandbox cannot trace what the runner
 * starts under the same uid through a setuid program it ran. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "harden-walk.h"
#include "macro.h"
#include "mountinfo.h"
#include "package-owner.h"
#include "ptrace-scope.h"
#include "setup-text.h"
#include "setup.h"
#include "spawn.h"

static const char *const temporary_trees[] = { "/tmp", "/var/tmp", NULL };

typedef struct WalkReport {
        Setup *setup;
        int failure; /* the first chmod that failed, as -errno */
        char failed_path[256];
        OwnedTally owned; /* what the sandbox user owns (or its group may write) where root runs things */
} WalkReport;

static int on_walk(HardenWalkEvent event, const char *path, const struct stat *st, int error, void *userdata)
{
        WalkReport *w = userdata;
        Setup *s = w->setup;

        (void)st;
        switch (event) {
        case HARDEN_WALK_WORLD_WRITABLE:
                if (error == EROFS) {
                        setup_note("%s is world-writable on a read-only mount; left", path);
                        return 0;
                }
                if (error != 0) {
                        setup_note("chmod o-w %s failed: %s", path, strerror(error));
                        if (w->failure == 0) {
                                w->failure = -error;
                                (void)snprintf(w->failed_path, sizeof(w->failed_path), "%s", path);
                        }
                        return 0;
                }
                setup_change(s, "chmod o-w %s", path);
                return 0;
        case HARDEN_WALK_SETUID_ROOT:
                return strv_push(&s->setuid_programs, strdup(path));
        case HARDEN_WALK_SETGID_ROOT:
                return strv_push(&s->setgid_programs, strdup(path));
        case HARDEN_WALK_ERROR:
                if (error != ENOENT)
                        setup_note("%s: %s", path, strerror(error));
                return 0;
        case HARDEN_WALK_OWNED:
                /* A new user's uid that was an earlier user's: the files that user left are its. */
                owned_tally_add(&w->owned, path);
                return 0;
        case HARDEN_WALK_MOUNT_SKIPPED:
        case HARDEN_WALK_TOO_DEEP:
        case HARDEN_WALK_WRITABLE: /* not asked for */
                return 0;
        }
        return 0;
}

static int walk_one(Setup *s, const char *root, const MountInfo *mounts, WalkReport *w, AjError *reterr)
{
        HardenWalkOptions opts = {
                .dry_run = s->dry_run,
                .write_excluded = temporary_trees,
                .mounts = mounts,
                .report_owned = s->sandbox_uid != (uid_t)-1,
                .owned_uid = s->sandbox_uid,
                .owned_gid = s->sandbox_gid,
                .callback = on_walk,
                .userdata = w,
        };
        HardenWalkStats st = { 0 };
        struct timespec t0, t1;
        int r;

        (void)clock_gettime(CLOCK_MONOTONIC, &t0);
        r = harden_walk(root, &opts, &st);
        (void)clock_gettime(CLOCK_MONOTONIC, &t1);
        if (r < 0)
                return aj_error(reterr, -r, 0, 0, "walking %s: %s", root, strerror(-r));
        setup_note(
                "%s: %llu directories, %llu names in %.3fs; %llu world-writable %s; %llu setuid-root, %llu "
                "setgid-root programs; %llu mounts not entered; %llu vanished, %llu denied, %llu errors",
                root, (unsigned long long)st.directories, (unsigned long long)st.entries,
                (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9,
                (unsigned long long)st.world_writable, s->dry_run ? "found" : "changed",
                (unsigned long long)st.setuid_root, (unsigned long long)st.setgid_root,
                (unsigned long long)st.mounts_skipped, (unsigned long long)st.vanished,
                (unsigned long long)st.denied, (unsigned long long)st.errors);
        return 0;
}

int stage_walk(Setup *s, AjError *reterr)
{
        MountInfo mounts = { 0 };
        WalkReport w = { .setup = s, .owned = { .home = s->sandbox_home } };
        struct stat root_st;
        int r;

        r = mountinfo_read(&mounts);
        if (r >= 0)
                r = mountinfo_prune_decide(&mounts);
        if (r < 0) {
                mountinfo_done(&mounts);
                return aj_error(reterr, -r, 0, 0, "/proc/self/mountinfo: %s", strerror(-r));
        }
        r = stat("/", &root_st) < 0 ? aj_error(reterr, errno, 0, 0, "/: %s", strerror(errno))
                                    : walk_one(s, "/", &mounts, &w, reterr);
        /* Like find -xdev the walk stays on /'s filesystem; the temporary trees are walked for set-id
         * programs where they are filesystems of their own (a tmpfs), since anyone can put one there. */
        for (const char *const *t = temporary_trees; r >= 0 && *t; t++) {
                struct stat st;

                if (lstat(*t, &st) == 0 && S_ISDIR(st.st_mode) && st.st_dev != root_st.st_dev)
                        r = walk_one(s, *t, &mounts, &w, reterr);
        }
        mountinfo_done(&mounts);
        if (r >= 0 && w.failure < 0)
                r = aj_error(reterr, -w.failure, 0, 0, "chmod o-w %s: %s (it stays world-writable)",
                             w.failed_path, strerror(-w.failure));
        if (r >= 0 && w.owned.found > 0)
                r = aj_error(
                        reterr, EPERM, 0, 0,
                        "the sandbox user (uid %u) owns or may write %llu files where root runs or trusts "
                        "them, such as %s (left by an earlier user of that uid?): it could rewrite them",
                        (unsigned)s->sandbox_uid, (unsigned long long)w.owned.found, w.owned.first);
        return r;
}

static int strip(const Setup *s, const char *path, mode_t bit, AjError *reterr)
{
        _cleanup_close_ int fd = -EBADF;
        struct stat st;

        setup_change(s, "chmod %s %s (no package owns it)", bit == S_ISUID ? "u-s" : "g-s", path);
        if (s->dry_run)
                return 0;
        fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd < 0 || fstat(fd, &st) < 0)
                return errno == ENOENT ? 0 : aj_error(reterr, errno, 0, 0, "%s: %s", path, strerror(errno));
        if (!S_ISREG(st.st_mode) || st.st_uid != 0 || !(st.st_mode & bit))
                return 0; /* changed since the walk: not a set-id program of root's any more */
        if (fchmod(fd, st.st_mode & 07777 & ~bit) < 0)
                return aj_error(reterr, errno, 0, 0, "chmod %s: %s", path, strerror(errno));
        return 0;
}

static int strip_unowned(Setup *s, Strv *programs, mode_t bit, AjError *reterr)
{
        _cleanup_free_ bool *owned = NULL;
        size_t kept = 0;
        int r;

        if (programs->n == 0)
                return 0;
        owned = calloc(programs->n, sizeof(bool));
        if (!owned)
                return -ENOMEM;
        r = package_owners(s->tools.dpkg_query, s->tools.rpm, programs->v, programs->n, owned, reterr);
        for (size_t i = 0; r >= 0 && i < programs->n; i++)
                if (owned[i])
                        kept++;
                else
                        r = strip(s, programs->v[i], bit, reterr);
        if (r >= 0)
                setup_note("%zu %s-root programs owned by a package, kept", kept,
                           bit == S_ISUID ? "setuid" : "setgid");
        return r;
}

int stage_setuid_owners(Setup *s, AjError *reterr)
{
        int r = strip_unowned(s, &s->setuid_programs, S_ISUID, reterr);

        return r < 0 ? r : strip_unowned(s, &s->setgid_programs, S_ISGID, reterr);
}

int stage_ptrace(Setup *s, AjError *reterr)
{
        _cleanup_close_ int fd = open(YAMA_PTRACE_SCOPE_PATH, O_RDWR | O_CLOEXEC);
        char value[8] = "";
        ssize_t n;

        if (fd < 0 && errno == ENOENT) {
                setup_note("this kernel has no Yama (%s): nothing to raise", YAMA_PTRACE_SCOPE_PATH);
                return 0;
        }
        if (fd < 0 && s->dry_run)
                fd = open(YAMA_PTRACE_SCOPE_PATH, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return aj_error(reterr, errno, 0, 0, "%s: %s", YAMA_PTRACE_SCOPE_PATH, strerror(errno));
        n = read(fd, value, sizeof(value) - 1);
        if (n <= 0)
                return aj_error(reterr, n < 0 ? errno : EIO, 0, 0, "reading %s", YAMA_PTRACE_SCOPE_PATH);
        value[strcspn(value, "\n")] = '\0';
        if (strcmp(value, "0") != 0) {
                setup_note("kernel.yama.ptrace_scope is %s already", value);
                return 0;
        }
        setup_change(s, "kernel.yama.ptrace_scope 0 -> 1");
        if (s->dry_run)
                return 0;
        if (pwrite(fd, "1\n", 2, 0) != 2)
                return aj_error(reterr, errno, 0, 0, "writing %s: %s", YAMA_PTRACE_SCOPE_PATH,
                                strerror(errno));
        return 0;
}
