/* SPDX-License-Identifier: MIT */
/* remove_tree_at() and tree_is_gone_at(): whole trees, never through a link, never into another mount,
 * directories an agent left without write permission, and the depth bound. */
#include <check.h>

#include "check-run.h"
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "macro.h"
#include "remove-tree.h"

/* Made once by the parent (an unchecked fixture), so it is removed even when a test fails in its child. */
static char tmpdir[] = "/tmp/agentic-job-test-remove-tree-XXXXXX";
static int dirfd_tmp = -EBADF;

static int make_writable(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
        (void)ftw;
        if (type == FTW_D)
                (void)chmod(path, (st->st_mode & 07777) | 0700);
        return 0;
}

static int rm_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
        (void)st;
        (void)ftw;
        return type == FTW_DP ? rmdir(path) : unlink(path);
}

static void setup(void)
{
        ck_assert_ptr_nonnull(mkdtemp(tmpdir));
        /* Others may pass through, for the test that runs as nobody. */
        ck_assert_int_eq(chmod(tmpdir, 0711), 0);
        dirfd_tmp = open(tmpdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_ge(dirfd_tmp, 0);
}

static void teardown(void)
{
        if (dirfd_tmp >= 0)
                (void)close(dirfd_tmp);
        dirfd_tmp = -EBADF;
        (void)nftw(tmpdir, make_writable, 16, FTW_PHYS);
        (void)nftw(tmpdir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void make_dir(int dir, const char *name, mode_t mode)
{
        ck_assert_int_eq(mkdirat(dir, name, 0700), 0);
        ck_assert_int_eq(fchmodat(dir, name, mode, 0), 0);
}

static void make_file(int dir, const char *name, const char *text)
{
        _cleanup_close_ int fd = openat(dir, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
}

static bool file_is(int dir, const char *name, const char *text)
{
        char buf[64] = {};
        _cleanup_close_ int fd = openat(dir, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

        return fd >= 0 && read(fd, buf, sizeof(buf) - 1) == (ssize_t)strlen(text) && strcmp(buf, text) == 0;
}

static void make_socket(const char *path)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

        ck_assert_int_ge(fd, 0);
        ck_assert_int_lt(snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path), (int)sizeof(sa.sun_path));
        ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
        (void)close(fd);
}

START_TEST(test_missing_is_gone)
{
        ck_assert_int_eq(tree_is_gone_at(dirfd_tmp, "never-made"), 1);
        ck_assert_int_eq(remove_tree_at(dirfd_tmp, "never-made"), 0);
        ck_assert_int_eq(tree_is_gone_at(dirfd_tmp, "."), 0);
        /* A dangling link is there. */
        ck_assert_int_eq(symlinkat("nowhere", dirfd_tmp, "dangling"), 0);
        ck_assert_int_eq(tree_is_gone_at(dirfd_tmp, "dangling"), 0);
        ck_assert_int_eq(remove_tree_at(dirfd_tmp, "dangling"), 0);
        ck_assert_int_eq(tree_is_gone_at(dirfd_tmp, "dangling"), 1);
        ck_assert_int_eq(tree_is_gone_at(dirfd_tmp, "not-a-dir/x"), 1);
        make_file(dirfd_tmp, "plain", "x");
        ck_assert_int_eq(tree_is_gone_at(dirfd_tmp, "plain/x"), -ENOTDIR);
        ck_assert_int_eq(remove_tree_at(dirfd_tmp, "plain"), 0);
        ck_assert_int_eq(tree_is_gone_at(dirfd_tmp, "plain"), 1);
}
END_TEST

START_TEST(test_nested_with_links_fifos_sockets)
{
        char path[256];

        make_dir(dirfd_tmp, "outside", 0755);
        make_file(dirfd_tmp, "outside/keep", "kept");
        make_dir(dirfd_tmp, "tree", 0755);
        make_dir(dirfd_tmp, "tree/a", 0755);
        make_dir(dirfd_tmp, "tree/a/b", 0755);
        make_dir(dirfd_tmp, "tree/a/b/c", 0755);
        make_dir(dirfd_tmp, "tree/empty", 0755);
        make_file(dirfd_tmp, "tree/top-file", "1");
        make_file(dirfd_tmp, "tree/a/b/c/deep-file", "2");
        make_file(dirfd_tmp, "tree/a/.hidden", "3");
        /* Links to a directory and a file outside, absolute and relative: removed, never followed. */
        (void)snprintf(path, sizeof(path), "%s/outside", tmpdir);
        ck_assert_int_eq(symlinkat(path, dirfd_tmp, "tree/abs-link"), 0);
        ck_assert_int_eq(symlinkat("../../outside", dirfd_tmp, "tree/a/rel-link"), 0);
        ck_assert_int_eq(symlinkat("../outside/keep", dirfd_tmp, "tree/file-link"), 0);
        ck_assert_int_eq(linkat(dirfd_tmp, "outside/keep", dirfd_tmp, "tree/a/b/hard", 0), 0);
        ck_assert_int_eq(mkfifoat(dirfd_tmp, "tree/a/fifo", 0600), 0);
        (void)snprintf(path, sizeof(path), "%s/tree/a/b/sock", tmpdir);
        make_socket(path);

        ck_assert_int_eq(tree_is_gone_at(dirfd_tmp, "tree"), 0);
        ck_assert_int_eq(remove_tree_at(dirfd_tmp, "tree"), 0);
        ck_assert_int_eq(tree_is_gone_at(dirfd_tmp, "tree"), 1);
        ck_assert(file_is(dirfd_tmp, "outside/keep", "kept"));
        ck_assert_int_eq(tree_is_gone_at(dirfd_tmp, "outside"), 0);
}
END_TEST

START_TEST(test_link_as_top)
{
        make_dir(dirfd_tmp, "target", 0755);
        make_file(dirfd_tmp, "target/keep", "kept");
        ck_assert_int_eq(symlinkat("target", dirfd_tmp, "top-link"), 0);
        ck_assert_int_eq(remove_tree_at(dirfd_tmp, "top-link"), 0);
        ck_assert_int_eq(tree_is_gone_at(dirfd_tmp, "top-link"), 1);
        ck_assert(file_is(dirfd_tmp, "target/keep", "kept"));
}
END_TEST

/* Directories without write or read permission, made and removed by their owner. Root needs no
 * permission, so as root it is done again as nobody, in a child, in a directory nobody owns. */
static int build_and_remove_locked(int dir)
{
        make_dir(dir, "locked", 0755);
        make_dir(dir, "locked/ro", 0755);
        make_file(dir, "locked/ro/f", "x");
        make_dir(dir, "locked/ro/none", 0755);
        make_file(dir, "locked/ro/none/g", "y");
        ck_assert_int_eq(fchmodat(dir, "locked/ro/none", 0000, 0), 0);
        ck_assert_int_eq(fchmodat(dir, "locked/ro", 0500, 0), 0);
        make_dir(dir, "locked/wx", 0300);
        ck_assert_int_eq(fchmodat(dir, "locked", 0500, 0), 0);
        if (remove_tree_at(dir, "locked") != 0)
                return 1;
        return tree_is_gone_at(dir, "locked") == 1 ? 0 : 2;
}

START_TEST(test_read_only_directories)
{
        _cleanup_close_ int fd = -EBADF;
        int status;
        pid_t pid;

        ck_assert_int_eq(build_and_remove_locked(dirfd_tmp), 0);
        if (geteuid() != 0)
                return;

        make_dir(dirfd_tmp, "nobody", 0700);
        ck_assert_int_eq(fchownat(dirfd_tmp, "nobody", 65534, 65534, 0), 0);
        fd = openat(dirfd_tmp, "nobody", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                if (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 ||
                    setresuid(65534, 65534, 65534) < 0)
                        _exit(3);
                _exit(build_and_remove_locked(fd));
        }
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert(WIFEXITED(status));
        ck_assert_int_eq(WEXITSTATUS(status), 0);
}
END_TEST

/* A chain of n directories below name, each called "d", with a file at the bottom. */
static void make_chain(const char *name, unsigned n)
{
        int fd;

        make_dir(dirfd_tmp, name, 0755);
        fd = openat(dirfd_tmp, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        for (unsigned i = 0; i < n; i++) {
                int next;

                make_dir(fd, "d", 0755);
                next = openat(fd, "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                ck_assert_int_ge(next, 0);
                (void)close(fd);
                fd = next;
        }
        make_file(fd, "bottom", "z");
        (void)close(fd);
}

START_TEST(test_depth_bound)
{
        make_chain("deep-ok", REMOVE_TREE_DEPTH_MAX);
        ck_assert_int_eq(remove_tree_at(dirfd_tmp, "deep-ok"), 0);
        ck_assert_int_eq(tree_is_gone_at(dirfd_tmp, "deep-ok"), 1);

        /* Deeper than the walk holds open (an agent's chain to stop the disposal): what lies deeper is
         * moved up into the top and removed from there, so no depth stops the removal. */
        make_chain("too-deep", REMOVE_TREE_DEPTH_MAX + 1);
        ck_assert_int_eq(remove_tree_at(dirfd_tmp, "too-deep"), 0);
        ck_assert_int_eq(tree_is_gone_at(dirfd_tmp, "too-deep"), 1);
        make_chain("far-too-deep", 5 * REMOVE_TREE_DEPTH_MAX + 7);
        ck_assert_int_eq(remove_tree_at(dirfd_tmp, "far-too-deep"), 0);
        ck_assert_int_eq(tree_is_gone_at(dirfd_tmp, "far-too-deep"), 1);
}
END_TEST

/* In a private mount namespace (the test runs in a child Check forked; its mounts die with it): a tmpfs
 * and a bind mount of the same file system inside the tree, and a tree that is a mount itself. */
START_TEST(test_mounts_not_crossed)
{
        _cleanup_close_ int top = -EBADF;
        char path[256], src[256];

        if (geteuid() != 0 || unshare(CLONE_NEWNS) < 0 ||
            mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) < 0) {
                fprintf(stderr, "note: test_mounts_not_crossed skipped: needs root and a mount namespace\n");
                return;
        }
        /* dirfd_tmp is a mount of the namespace left: lookups from it would not see these mounts. */
        top = open(tmpdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_ge(top, 0);
        make_dir(top, "m", 0755);
        make_dir(top, "m/tmpfs", 0755);
        (void)snprintf(path, sizeof(path), "%s/m/tmpfs", tmpdir);
        ck_assert_int_eq(mount("tmpfs", path, "tmpfs", 0, "mode=0755"), 0);
        make_file(top, "m/tmpfs/keep", "kept");
        ck_assert_int_eq(remove_tree_at(top, "m"), -EXDEV);
        ck_assert(file_is(top, "m/tmpfs/keep", "kept"));
        /* The mount itself as the tree. */
        ck_assert_int_eq(remove_tree_at(top, "m/tmpfs"), -EXDEV);
        ck_assert(file_is(top, "m/tmpfs/keep", "kept"));
        ck_assert_int_eq(umount(path), 0);

        make_dir(top, "src", 0755);
        make_file(top, "src/keep", "kept");
        (void)snprintf(src, sizeof(src), "%s/src", tmpdir);
        ck_assert_int_eq(mount(src, path, "none", MS_BIND, NULL), 0);
        ck_assert_int_eq(remove_tree_at(top, "m"), -EXDEV);
        ck_assert(file_is(top, "src/keep", "kept"));
        ck_assert_int_eq(umount(path), 0);

        ck_assert_int_eq(remove_tree_at(top, "m"), 0);
        ck_assert_int_eq(tree_is_gone_at(top, "m"), 1);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("remove-tree");
        TCase *tc = tcase_create("remove_tree_at");

        tcase_add_unchecked_fixture(tc, setup, teardown);
        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_missing_is_gone);
        tcase_add_test(tc, test_nested_with_links_fifos_sockets);
        tcase_add_test(tc, test_link_as_top);
        tcase_add_test(tc, test_read_only_directories);
        tcase_add_test(tc, test_depth_bound);
        tcase_add_test(tc, test_mounts_not_crossed);
        suite_add_tcase(s, tc);

        return check_run(s);
}
