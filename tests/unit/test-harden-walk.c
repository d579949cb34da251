/* SPDX-License-Identifier: MIT */
/* harden_walk() on generated temporary trees: what loses o+w and what keeps it, links never followed,
 * setuid and setgid root programs listed, excluded trees, the dry run, the depth bound, races, threads,
 * and mounts (a private mount namespace with tmpfs and bind mounts, as root). */
#include <check.h>

#include "check-run.h"
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harden-walk.h"
#include "macro.h"
#include "mountinfo.h"

static char tree[64], outside[64];

static void make_file(const char *rel, mode_t mode)
{
        char path[256];
        int fd;

        (void)snprintf(path, sizeof(path), "%s/%s", tree, rel);
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        ck_assert_int_ge(fd, 0);
        /* fchmod(): the umask does not apply and a setuid bit stays. */
        ck_assert_int_eq(fchmod(fd, mode), 0);
        close(fd);
}

static void make_dir(const char *rel, mode_t mode)
{
        char path[256];

        (void)snprintf(path, sizeof(path), "%s/%s", tree, rel);
        ck_assert_int_eq(mkdir(path, 0700), 0);
        ck_assert_int_eq(chmod(path, mode), 0);
}

static mode_t mode_of(const char *rel)
{
        char path[256];
        struct stat st;

        (void)snprintf(path, sizeof(path), "%s/%s", tree, rel);
        ck_assert_int_eq(lstat(path, &st), 0);
        return st.st_mode & 07777;
}

static void setup(void)
{
        char path[256];

        strcpy(tree, "/tmp/test-harden-walk-XXXXXX");
        strcpy(outside, "/tmp/test-harden-walk-out-XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(tree));
        ck_assert_ptr_nonnull(mkdtemp(outside));
        ck_assert_int_eq(chmod(tree, 0755), 0);

        make_file("ww-file", 0666);
        make_dir("ww-dir", 0777);
        make_file("ww-dir/inner", 0644);
        make_dir("sticky-dir", 01777);
        make_file("sticky-dir/ww-in-sticky", 0646);
        make_file("sticky-file", 01666); /* a sticky bit protects no file: fixed */
        make_file("plain", 0644);
        make_file("suid", 04755);
        make_file("sgid", 02755);
        make_file("suid-ww", 04777);
        make_dir("tmp", 01777);
        make_file("tmp/ww-kept", 0666);
        make_file("tmp/suid-in-tmp", 04755);
        make_dir("tmp/sub", 0777);
        ck_assert_int_eq(mkfifo(strcat(strcpy(path, tree), "/ww-fifo"), 0600), 0);
        ck_assert_int_eq(chmod(path, 0666), 0);

        /* A link to a world-writable file outside the tree, and one to a directory outside. */
        (void)snprintf(path, sizeof(path), "%s/target", outside);
        ck_assert_int_eq(close(open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)), 0);
        ck_assert_int_eq(chmod(path, 0666), 0);
        ck_assert_int_eq(chmod(outside, 0777), 0);
        ck_assert_int_eq(symlinkat(path, AT_FDCWD, strcat(strcpy(path, tree), "/link-file")), 0);
        ck_assert_int_eq(symlinkat(outside, AT_FDCWD, strcat(strcpy(path, tree), "/link-dir")), 0);
}

static void rm_rf(const char *path)
{
        char cmd[300];

        (void)snprintf(cmd, sizeof(cmd), "rm -rf -- '%s'", path);
        ck_assert_int_eq(system(cmd), 0);
}

static void teardown(void)
{
        /* test_mounts's mounts, if it stopped before removing them (private to this child anyway). */
        static const char *const mounts[] = { "ro", "rw", "bind", "proc" };
        char path[256];

        for (size_t i = 0; i < ELEMENTSOF(mounts); i++) {
                (void)snprintf(path, sizeof(path), "%s/%s", tree, mounts[i]);
                (void)umount2(path, MNT_DETACH);
        }
        rm_rf(tree);
        rm_rf(outside);
}

/* What the callback saw. */
typedef struct Seen {
        char ww[4096], suid[4096], sgid[4096], skipped[4096];
        unsigned errors, calls;
        int stop_at; /* return -ECANCELED on this call (1-based), 0: never */
        bool remove_siblings;
} Seen;

static void add(char *list, const char *path)
{
        const char *rel = strncmp(path, tree, strlen(tree)) == 0 ? path + strlen(tree) : path;

        strncat(list, rel, 4096 - strlen(list) - 2);
        strcat(list, " ");
}

static int on_event(HardenWalkEvent event, const char *path, const struct stat *st _unused_, int error,
                    void *userdata)
{
        Seen *s = userdata;

        s->calls++;
        if (s->stop_at > 0 && s->calls == (unsigned)s->stop_at)
                return -ECANCELED;
        switch (event) {
        case HARDEN_WALK_WORLD_WRITABLE:
                ck_assert_int_eq(error, 0);
                add(s->ww, path);
                if (s->remove_siblings && strstr(path, "/race/")) {
                        /* The others in this directory were read already: each now vanishes. */
                        char other[256];

                        for (char c = 'a'; c <= 'e'; c++) {
                                (void)snprintf(other, sizeof(other), "%s/race/%c", tree, c);
                                (void)unlink(other);
                        }
                }
                break;
        case HARDEN_WALK_SETUID_ROOT:
                add(s->suid, path);
                break;
        case HARDEN_WALK_SETGID_ROOT:
                add(s->sgid, path);
                break;
        case HARDEN_WALK_MOUNT_SKIPPED:
                add(s->skipped, path);
                break;
        default:
                s->errors++;
        }
        return 0;
}

static bool listed(const char *list, const char *rel)
{
        char word[256];

        (void)snprintf(word, sizeof(word), "%s ", rel);
        for (const char *p = list; (p = strstr(p, word)); p++)
                if (p == list || p[-1] == ' ')
                        return true;
        return false;
}

static int walk(Seen *seen, bool dry_run, unsigned threads, HardenWalkStats *stats)
{
        char excluded[128];
        const char *const excl[] = { excluded, NULL };
        HardenWalkOptions o = {
                .dry_run = dry_run,
                .threads = threads,
                .write_excluded = excl,
                .callback = on_event,
                .userdata = seen,
        };

        (void)snprintf(excluded, sizeof(excluded), "%s/tmp", tree);
        return harden_walk(tree, &o, stats);
}

static void check_found(const Seen *seen, const HardenWalkStats *stats)
{
        ck_assert_msg(listed(seen->ww, "/ww-file"), "ww: %s", seen->ww);
        ck_assert(listed(seen->ww, "/ww-dir"));
        ck_assert(listed(seen->ww, "/sticky-dir/ww-in-sticky"));
        ck_assert(listed(seen->ww, "/sticky-file"));
        ck_assert(listed(seen->ww, "/suid-ww"));
        ck_assert(listed(seen->ww, "/ww-fifo"));
        ck_assert(!listed(seen->ww, "/sticky-dir"));
        ck_assert(!listed(seen->ww, "/link-file"));
        ck_assert(!listed(seen->ww, "/tmp/ww-kept"));
        ck_assert(!listed(seen->ww, "/tmp/sub"));
        ck_assert_uint_eq(stats->world_writable, 6);

        if (geteuid() == 0) {
                ck_assert_msg(listed(seen->suid, "/suid"), "suid: %s", seen->suid);
                ck_assert(listed(seen->suid, "/suid-ww"));
                ck_assert(listed(seen->suid, "/tmp/suid-in-tmp")); /* excluded trees are still listed */
                ck_assert(!listed(seen->suid, "/sgid"));
                ck_assert(listed(seen->sgid, "/sgid"));
                ck_assert_uint_eq(stats->setuid_root, 3);
                ck_assert_uint_eq(stats->setgid_root, 1);
        } else {
                /* Not root: the files are the caller's, so nothing is setuid root. */
                ck_assert_uint_eq(stats->setuid_root, 0);
        }
        ck_assert_uint_eq(seen->errors, 0);
        ck_assert_uint_eq(stats->errors + stats->denied + stats->vanished + stats->too_deep, 0);
        /* tree, ww-dir, sticky-dir, tmp, tmp/sub: the link to a directory is not entered. */
        ck_assert_uint_eq(stats->directories, 5);
}

START_TEST(test_dry_run_changes_nothing)
{
        Seen seen = { 0 };
        HardenWalkStats stats;

        ck_assert_int_eq(walk(&seen, true, 1, &stats), 0);
        check_found(&seen, &stats);
        ck_assert_uint_eq(mode_of("ww-file"), 0666);
        ck_assert_uint_eq(mode_of("ww-dir"), 0777);
        ck_assert_uint_eq(mode_of("suid-ww"), 04777);
        ck_assert_uint_eq(mode_of("ww-fifo"), 0666);
}
END_TEST

START_TEST(test_fix)
{
        Seen seen = { 0 };
        HardenWalkStats stats;
        char path[256];
        struct stat st;

        ck_assert_int_eq(walk(&seen, false, 1, &stats), 0);
        check_found(&seen, &stats);
        ck_assert_uint_eq(mode_of("ww-file"), 0664);
        ck_assert_uint_eq(mode_of("ww-dir"), 0775);
        ck_assert_uint_eq(mode_of("sticky-dir"), 01777);
        ck_assert_uint_eq(mode_of("sticky-dir/ww-in-sticky"), 0644);
        ck_assert_uint_eq(mode_of("sticky-file"), 01664);
        ck_assert_uint_eq(mode_of("ww-fifo"), 0664);
        ck_assert_uint_eq(mode_of("plain"), 0644);
        ck_assert_uint_eq(mode_of("suid-ww"), 04775); /* the setuid bit is the package check's business */
        ck_assert_uint_eq(mode_of("tmp"), 01777);
        ck_assert_uint_eq(mode_of("tmp/ww-kept"), 0666);
        ck_assert_uint_eq(mode_of("tmp/sub"), 0777);
        ck_assert_uint_eq(mode_of("link-file") & 0777, 0777);

        /* The links' targets, outside the tree, are untouched. */
        (void)snprintf(path, sizeof(path), "%s/target", outside);
        ck_assert_int_eq(stat(path, &st), 0);
        ck_assert_uint_eq(st.st_mode & 07777, 0666);
        ck_assert_int_eq(stat(outside, &st), 0);
        ck_assert_uint_eq(st.st_mode & 07777, 0777);

        /* A second pass finds nothing left to change. */
        memset(&seen, 0, sizeof(seen));
        ck_assert_int_eq(walk(&seen, false, 1, &stats), 0);
        ck_assert_uint_eq(stats.world_writable, 0);
}
END_TEST

START_TEST(test_threads_same_result)
{
        Seen seen = { 0 };
        HardenWalkStats stats;
        char rel[64];

        /* Enough directories that idle threads are handed some. */
        for (unsigned i = 0; i < 40; i++) {
                (void)snprintf(rel, sizeof(rel), "many%u", i);
                make_dir(rel, 0755);
                (void)snprintf(rel, sizeof(rel), "many%u/sub", i);
                make_dir(rel, 0755);
                (void)snprintf(rel, sizeof(rel), "many%u/sub/f", i);
                make_file(rel, i % 4 == 0 ? 0666 : 0644);
        }
        ck_assert_int_eq(walk(&seen, false, 4, &stats), 0);
        ck_assert_uint_eq(stats.world_writable, 6 + 10);
        ck_assert_uint_eq(stats.directories, 5 + 80);
        ck_assert_uint_eq(mode_of("many0/sub/f"), 0664);
        ck_assert_uint_eq(mode_of("many39/sub/f"), 0644);
        ck_assert_uint_eq(seen.errors, 0);
}
END_TEST

START_TEST(test_depth_bound)
{
        Seen seen = { 0 };
        HardenWalkStats stats;
        HardenWalkOptions o = { .max_depth = 2, .threads = 1, .callback = on_event, .userdata = &seen };

        make_dir("d1", 0755);
        make_dir("d1/d2", 0755);
        make_dir("d1/d2/d3", 0777);
        make_file("d1/d2/d3/deep", 0666);
        ck_assert_int_eq(harden_walk(tree, &o, &stats), 0);
        /* d3 is below the bound: itself checked (and fixed), not entered. */
        ck_assert_uint_eq(stats.too_deep, 1);
        ck_assert_uint_eq(mode_of("d1/d2/d3"), 0775);
        ck_assert_uint_eq(mode_of("d1/d2/d3/deep"), 0666);
}
END_TEST

START_TEST(test_race_counted)
{
        Seen seen = { .remove_siblings = true };
        HardenWalkStats stats;
        HardenWalkOptions o = { .threads = 1, .callback = on_event, .userdata = &seen };
        char rel[32];

        make_dir("race", 0755);
        for (char c = 'a'; c <= 'e'; c++) {
                (void)snprintf(rel, sizeof(rel), "race/%c", c);
                make_file(rel, 0666);
        }
        ck_assert_int_eq(harden_walk(tree, &o, &stats), 0);
        /* The first world-writable name of race/ removes the rest, which the walk had read already. */
        ck_assert_uint_ge(stats.vanished, 1);
        ck_assert_uint_eq(stats.vanished, seen.errors);
        ck_assert_uint_eq(stats.errors, 0);
}
END_TEST

START_TEST(test_callback_stops)
{
        Seen seen = { .stop_at = 2 };
        HardenWalkStats stats;
        HardenWalkOptions o = { .dry_run = true, .callback = on_event, .userdata = &seen };

        ck_assert_int_eq(harden_walk(tree, &o, &stats), -ECANCELED);
}
END_TEST

START_TEST(test_root_link_refused)
{
        HardenWalkOptions o = { .dry_run = true };
        char path[128];

        (void)snprintf(path, sizeof(path), "%s/link-dir", tree);
        ck_assert_int_lt(harden_walk(path, &o, NULL), 0);
        (void)snprintf(path, sizeof(path), "%s/plain", tree);
        ck_assert_int_eq(harden_walk(path, &o, NULL), -ENOTDIR);
}
END_TEST

/* In a private mount namespace (the test runs in a child Check forked; its mounts die with it): a
 * read-only nosuid tmpfs (pruned), a writable tmpfs (walked only when crossing devices), a read-only
 * nosuid bind mount of a directory of the tree itself (same device: pruned by mount id), and a proc
 * (pruned by device). The type "none" where the kernel ignores it: valgrind checks the pointer. */
START_TEST(test_mounts)
{
        _cleanup_(mountinfo_done) MountInfo m = { 0 };
        Seen seen = { 0 };
        HardenWalkStats stats;
        HardenWalkOptions o = { .threads = 1, .callback = on_event, .userdata = &seen };
        char path[256], src[256];

        if (geteuid() != 0 || unshare(CLONE_NEWNS) < 0 ||
            mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) < 0) {
                fprintf(stderr, "note: test_mounts skipped: needs root and a mount namespace\n");
                return;
        }
        make_dir("ro", 0755);
        (void)snprintf(path, sizeof(path), "%s/ro", tree);
        ck_assert_int_eq(mount("tmpfs", path, "tmpfs", 0, "mode=0755"), 0);
        make_file("ro/ww", 0666);
        make_file("ro/suid", 04755);
        ck_assert_int_eq(mount("none", path, "none", MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID, NULL), 0);

        make_dir("rw", 0777);
        (void)snprintf(path, sizeof(path), "%s/rw", tree);
        ck_assert_int_eq(mount("tmpfs", path, "tmpfs", 0, "mode=0777"), 0);
        make_file("rw/ww", 0666);

        make_dir("bind-src", 0755);
        make_file("bind-src/ww", 0666);
        make_dir("bind", 0755);
        (void)snprintf(src, sizeof(src), "%s/bind-src", tree);
        (void)snprintf(path, sizeof(path), "%s/bind", tree);
        ck_assert_int_eq(mount(src, path, "none", MS_BIND, NULL), 0);
        ck_assert_int_eq(mount("none", path, "none", MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID, NULL), 0);

        make_dir("proc", 0755);
        (void)snprintf(path, sizeof(path), "%s/proc", tree);
        ck_assert_int_eq(mount("proc", path, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL), 0);

        ck_assert_int_eq(mountinfo_read(&m), 0);
        ck_assert_int_eq(mountinfo_prune_decide(&m), 0);
        o.mounts = &m;

        /* Like find -xdev: the writable tmpfs's root is checked (0777: fixed), its files are not. */
        ck_assert_int_eq(harden_walk(tree, &o, &stats), 0);
        ck_assert_msg(listed(seen.skipped, "/ro"), "skipped: %s", seen.skipped);
        ck_assert(listed(seen.skipped, "/rw"));
        ck_assert(listed(seen.skipped, "/bind"));
        ck_assert(listed(seen.skipped, "/proc"));
        ck_assert(!listed(seen.suid, "/ro/suid"));
        ck_assert(listed(seen.ww, "/bind-src/ww"));
        ck_assert(!listed(seen.ww, "/bind/ww"));
        ck_assert_uint_eq(mode_of("rw"), 0775);
        ck_assert_uint_eq(mode_of("rw/ww"), 0666);
        ck_assert_uint_eq(seen.errors, 0);

        /* Crossing devices: the writable tmpfs is walked; the pruned mounts still are not. */
        memset(&seen, 0, sizeof(seen));
        o.cross_devices = true;
        ck_assert_int_eq(harden_walk(tree, &o, &stats), 0);
        ck_assert_uint_eq(mode_of("rw/ww"), 0664);
        ck_assert(listed(seen.skipped, "/ro"));
        ck_assert(listed(seen.skipped, "/proc"));
        ck_assert(listed(seen.skipped, "/bind"));
        ck_assert(!listed(seen.skipped, "/rw"));
        ck_assert_uint_eq(seen.errors, 0);

        /* Without the table, the read-only tmpfs is entered when crossing (proc is taken away first). */
        (void)snprintf(path, sizeof(path), "%s/proc", tree);
        ck_assert_int_eq(umount2(path, 0), 0);
        memset(&seen, 0, sizeof(seen));
        o.mounts = NULL;
        o.dry_run = true;
        ck_assert_int_eq(harden_walk(tree, &o, &stats), 0);
        ck_assert(listed(seen.suid, "/ro/suid"));
}
END_TEST

/* Files a user owns, or its group may write, where root runs things: what setup refuses before it takes an
 * existing sandbox user. A link, a group-owned file without the group's write bit and root's are not named.
 */
static int on_owned(HardenWalkEvent event, const char *path, const struct stat *st _unused_, int error,
                    void *userdata)
{
        Seen *s = userdata;

        ck_assert_int_eq(error, 0);
        if (event == HARDEN_WALK_OWNED)
                add(s->ww, path);
        return 0;
}

START_TEST(test_owned)
{
        const uid_t uid = 4242;
        const gid_t gid = 4243;
        Seen seen = { 0 };
        HardenWalkStats stats;
        HardenWalkOptions o = { .dry_run = true,
                                .report_owned = true,
                                .owned_uid = uid,
                                .owned_gid = gid,
                                .callback = on_owned,
                                .userdata = &seen };
        char path[256];

        make_dir("owned", 0755);
        make_file("owned/by-uid", 0400);
        make_file("owned/group-w", 0664);
        make_file("owned/group-ro", 0644);
        make_dir("owned/dir-by-uid", 0700);
        make_file("owned/dir-by-uid/root-inside", 0644);
        (void)snprintf(path, sizeof(path), "%s/owned/by-uid", tree);
        ck_assert_int_eq(chown(path, uid, 0), 0);
        (void)snprintf(path, sizeof(path), "%s/owned/group-w", tree);
        ck_assert_int_eq(chown(path, 0, gid), 0);
        (void)snprintf(path, sizeof(path), "%s/owned/group-ro", tree);
        ck_assert_int_eq(chown(path, 0, gid), 0);
        (void)snprintf(path, sizeof(path), "%s/owned/dir-by-uid", tree);
        ck_assert_int_eq(chown(path, uid, uid), 0);
        (void)snprintf(path, sizeof(path), "%s/owned/link", tree);
        ck_assert_int_eq(symlink("/etc/passwd", path), 0);
        ck_assert_int_eq(lchown(path, uid, gid), 0);

        ck_assert_int_eq(harden_walk(tree, &o, &stats), 0);
        ck_assert_uint_eq(stats.owned, 3);
        ck_assert_msg(listed(seen.ww, "/owned/by-uid"), "named: %s", seen.ww);
        ck_assert(listed(seen.ww, "/owned/group-w"));
        ck_assert(listed(seen.ww, "/owned/dir-by-uid"));
        ck_assert(!listed(seen.ww, "/owned/group-ro"));
        ck_assert(!listed(seen.ww, "/owned/link"));
        ck_assert(!listed(seen.ww, "/owned/dir-by-uid/root-inside"));

        /* Not asked for: nothing named. */
        memset(&seen, 0, sizeof(seen));
        o.report_owned = false;
        ck_assert_int_eq(harden_walk(tree, &o, &stats), 0);
        ck_assert_uint_eq(stats.owned, 0);
        ck_assert_str_eq(seen.ww, "");
}
END_TEST

static Suite *suite(void)
{
        Suite *s = suite_create("harden-walk");
        TCase *tc = tcase_create("harden-walk");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, test_dry_run_changes_nothing);
        tcase_add_test(tc, test_fix);
        tcase_add_test(tc, test_threads_same_result);
        tcase_add_test(tc, test_depth_bound);
        tcase_add_test(tc, test_race_counted);
        tcase_add_test(tc, test_callback_stops);
        tcase_add_test(tc, test_root_link_refused);
        tcase_add_test(tc, test_mounts);
        tcase_add_test(tc, test_owned);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return check_run(suite());
}
