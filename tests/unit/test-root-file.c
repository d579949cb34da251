/* SPDX-License-Identifier: MIT */
/* root_file_write(): exact content, mode and owner; an atomic replacement that never writes through a
 * link; a validator that can refuse; a parent directory that others could write, or that is a link,
 * refused; no temporary file left behind. */
#include <check.h>

#include "check-run.h"
#include "run-tool.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "macro.h"
#include "read-file.h"
#include "root-file.h"

/* Made once by the parent (an unchecked fixture), so it is removed even when a test fails in its child.
 * mkdtemp() makes it 0700 and the caller's: a parent root_file_write() accepts. */
static char tmpdir[] = "/tmp/agentic-job-test-root-file-XXXXXX";
static int dirfd_tmp = -EBADF;

static int rm_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
        (void)st;
        (void)ftw;
        return type == FTW_DP ? rmdir(path) : unlink(path);
}

static void setup(void)
{
        ck_assert_ptr_nonnull(mkdtemp(tmpdir));
        dirfd_tmp = open(tmpdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_ge(dirfd_tmp, 0);
}

static void teardown(void)
{
        if (dirfd_tmp >= 0)
                (void)close(dirfd_tmp);
        dirfd_tmp = -EBADF;
        (void)nftw(tmpdir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* tmpdir/sub/name, in a static buffer (so at most one call per expression). */
static const char *tpath(const char *sub, const char *name)
{
        static char buf[4096];

        if (sub)
                (void)snprintf(buf, sizeof(buf), "%s/%s/%s", tmpdir, sub, name);
        else
                (void)snprintf(buf, sizeof(buf), "%s/%s", tmpdir, name);
        return buf;
}

/* A fresh directory under tmpdir, mode 0755, for one test. */
static void make_dir(const char *name)
{
        ck_assert_int_eq(mkdirat(dirfd_tmp, name, 0755), 0);
        ck_assert_int_eq(fchmodat(dirfd_tmp, name, 0755, 0), 0);
}

static void make_file(const char *sub, const char *name, const char *text)
{
        _cleanup_close_ int fd = open(tpath(sub, name), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
}

static void assert_content(const char *sub, const char *name, const char *text)
{
        _cleanup_free_ char *data = NULL;
        size_t size = 0;

        ck_assert_int_eq(read_regular_nofollow(AT_FDCWD, tpath(sub, name), 1 << 20, &data, &size), 0);
        ck_assert_uint_eq(size, strlen(text));
        ck_assert_str_eq(data, text);
}

/* The number of entries in tmpdir/sub, "." and ".." not counted: a leftover temporary shows here. */
static unsigned count_entries(const char *sub)
{
        char path[4096];
        struct dirent *de;
        unsigned n = 0;
        DIR *d;

        (void)snprintf(path, sizeof(path), "%s/%s", tmpdir, sub);
        d = opendir(path);
        ck_assert_ptr_nonnull(d);
        while ((de = readdir(d)))
                if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
                        n++;
        (void)closedir(d);
        return n;
}

/* An owner the file would not get by accident: nobody when root, else the caller (fchown to anyone else
 * needs root). */
static uid_t other_uid(void)
{
        return geteuid() == 0 ? 65534 : geteuid();
}

static gid_t other_gid(void)
{
        return geteuid() == 0 ? 65534 : getegid();
}

START_TEST(test_content_mode_owner)
{
        static const char text[] = "line one\nline two\n";
        AjError e = { 0 };
        struct stat st;
        mode_t old_umask;

        make_dir("a");
        /* The umask takes everything away; the mode must still be exact. */
        old_umask = umask(0777);
        ck_assert_int_eq(root_file_write(tpath("a", "f"), text, strlen(text), 0640, other_uid(), other_gid(),
                                         NULL, &e),
                         0);
        (void)umask(old_umask);
        assert_content("a", "f", text);
        ck_assert_int_eq(lstat(tpath("a", "f"), &st), 0);
        ck_assert(S_ISREG(st.st_mode));
        ck_assert_uint_eq(st.st_mode & 07777, 0640);
        ck_assert_uint_eq(st.st_uid, other_uid());
        ck_assert_uint_eq(st.st_gid, other_gid());
        ck_assert_uint_eq(count_entries("a"), 1);

        /* Set-id bits survive the fchown (which clears them) because the mode is set after it. */
        ck_assert_int_eq(root_file_write(tpath("a", "g"), "x", 1, 02750, other_uid(), other_gid(), NULL, &e),
                         0);
        ck_assert_int_eq(lstat(tpath("a", "g"), &st), 0);
        ck_assert_uint_eq(st.st_mode & 07777, 02750);

        /* Empty content. */
        ck_assert_int_eq(root_file_write(tpath("a", "empty"), NULL, 0, 0600, geteuid(), getegid(), NULL, &e),
                         0);
        assert_content("a", "empty", "");
}
END_TEST

START_TEST(test_replaces_atomically)
{
        _cleanup_close_ int old_fd = -EBADF;
        _cleanup_free_ char *data = NULL;
        AjError e = { 0 };
        struct stat before, after;

        make_dir("b");
        make_file("b", "f", "old content\n");
        ck_assert_int_eq(stat(tpath("b", "f"), &before), 0);
        old_fd = open(tpath("b", "f"), O_RDONLY | O_CLOEXEC);
        ck_assert_int_ge(old_fd, 0);

        ck_assert_int_eq(root_file_write(tpath("b", "f"), "new\n", 4, 0644, geteuid(), getegid(), NULL, &e),
                         0);
        assert_content("b", "f", "new\n");
        ck_assert_int_eq(stat(tpath("b", "f"), &after), 0);
        /* A new inode renamed over the name: the old one was never truncated or written. */
        ck_assert_uint_ne(before.st_ino, after.st_ino);
        ck_assert_int_eq(read_regular_fd(old_fd, 1024, &data, NULL), 0);
        ck_assert_str_eq(data, "old content\n");
        ck_assert_uint_eq(count_entries("b"), 1);
}
END_TEST

START_TEST(test_symlink_at_final_name_replaced)
{
        AjError e = { 0 };
        struct stat st;

        make_dir("c");
        make_file(NULL, "c-target", "precious\n");
        ck_assert_int_eq(symlinkat("../c-target", dirfd_tmp, "c/f"), 0);
        ck_assert_int_eq(root_file_write(tpath("c", "f"), "new\n", 4, 0644, geteuid(), getegid(), NULL, &e),
                         0);
        ck_assert_int_eq(lstat(tpath("c", "f"), &st), 0);
        ck_assert(S_ISREG(st.st_mode));
        assert_content("c", "f", "new\n");
        assert_content(NULL, "c-target", "precious\n");

        /* A dangling link: nothing is created where it points. */
        ck_assert_int_eq(symlinkat("../c-nowhere", dirfd_tmp, "c/g"), 0);
        ck_assert_int_eq(root_file_write(tpath("c", "g"), "x", 1, 0644, geteuid(), getegid(), NULL, &e), 0);
        ck_assert_int_eq(lstat(tpath(NULL, "c-nowhere"), &st), -1);
        ck_assert_int_eq(errno, ENOENT);
        ck_assert_uint_eq(count_entries("c"), 2);
}
END_TEST

START_TEST(test_failing_validator)
{
        char *const falsev[] = { (char *)"/bin/false", NULL };
        AjError e = { 0 };

        make_dir("d");
        make_file("d", "f", "old\n");
        ck_assert_int_eq(
                root_file_write(tpath("d", "f"), "new\n", 4, 0644, geteuid(), getegid(), falsev, &e),
                -EINVAL);
        ck_assert_ptr_nonnull(strstr(e.message, "/bin/false refused the new content (exit status 1)"));
        assert_content("d", "f", "old\n");
        ck_assert_uint_eq(count_entries("d"), 1);

        /* No old file: still none afterwards. */
        ck_assert_int_eq(
                root_file_write(tpath("d", "g"), "new\n", 4, 0644, geteuid(), getegid(), falsev, &e),
                -EINVAL);
        ck_assert_uint_eq(count_entries("d"), 1);
}
END_TEST

START_TEST(test_validator_output_first_line)
{
        char *const shv[] = { (char *)"/bin/sh", (char *)"-c",
                              (char *)"echo \"first: $(cat \"$1\")\"; echo second >&2; exit 3", (char *)"sh",
                              NULL };
        AjError e = { 0 };

        make_dir("e");
        ck_assert_int_eq(root_file_write(tpath("e", "f"), "bad", 3, 0644, geteuid(), getegid(), shv, &e),
                         -EINVAL);
        /* It read the temporary file (appended as the last argument); only the first line is kept. */
        ck_assert_ptr_nonnull(strstr(e.message, "(exit status 3): first: bad"));
        ck_assert_ptr_null(strstr(e.message, "second"));
        ck_assert_uint_eq(count_entries("e"), 0);
}
END_TEST

START_TEST(test_validator_succeeds)
{
        char *const truev[] = { (char *)"/bin/true", NULL };
        /* Sees the content through the appended path, with an empty environment. */
        char *const checkv[] = { (char *)"/bin/sh", (char *)"-c",
                                 (char *)"[ -z \"${AJ_TEST_MARKER:-}\" ] && [ -z \"${HOME:-}\" ] && "
                                         "grep -qx good \"$1\"",
                                 (char *)"sh", NULL };
        AjError e = { 0 };

        make_dir("f");
        ck_assert_int_eq(setenv("AJ_TEST_MARKER", "1", 1), 0);
        ck_assert_int_eq(root_file_write(tpath("f", "a"), "t\n", 2, 0644, geteuid(), getegid(), truev, &e),
                         0);
        assert_content("f", "a", "t\n");
        ck_assert_int_eq(
                root_file_write(tpath("f", "b"), "good\n", 5, 0600, geteuid(), getegid(), checkv, &e), 0);
        assert_content("f", "b", "good\n");
        ck_assert_int_eq(
                root_file_write(tpath("f", "b"), "bad\n", 4, 0600, geteuid(), getegid(), checkv, &e),
                -EINVAL);
        assert_content("f", "b", "good\n");
        ck_assert_uint_eq(count_entries("f"), 2);
}
END_TEST

START_TEST(test_validator_must_be_absolute)
{
        char *const rel[] = { (char *)"true", NULL };
        char *const missing[] = { (char *)"/nonexistent/validator", NULL };
        AjError e = { 0 };

        make_dir("g");
        ck_assert_int_eq(root_file_write(tpath("g", "f"), "x", 1, 0644, geteuid(), getegid(), rel, &e),
                         -EINVAL);
        ck_assert_ptr_nonnull(strstr(e.message, "not an absolute path"));
        /* A program that cannot be run fails like a refusal (status 127). */
        ck_assert_int_eq(root_file_write(tpath("g", "f"), "x", 1, 0644, geteuid(), getegid(), missing, &e),
                         -EINVAL);
        ck_assert_ptr_nonnull(strstr(e.message, "exit status 127"));
        ck_assert_uint_eq(count_entries("g"), 0);
}
END_TEST

START_TEST(test_visudo)
{
        static const char *const visudo_paths[] = { "/usr/sbin/visudo", "/usr/bin/visudo", NULL };
        const char *visudo = tool_find(visudo_paths);
        AjError e = { 0 };
        struct stat st;

        if (!tool_check_runs("visudo validation of root_file_write()", visudo))
                return;
        char *const argv[] = { (char *)visudo, (char *)"-c", (char *)"-f", NULL };
        static const char valid[] = "Defaults env_reset\nroot ALL=(ALL:ALL) ALL\n";
        static const char invalid[] = "root ALL=(ALL:ALL ALL\n";

        make_dir("h");
        ck_assert_int_eq(root_file_write(tpath("h", "sudoers"), valid, strlen(valid), 0440, 0, 0, argv, &e),
                         0);
        assert_content("h", "sudoers", valid);
        ck_assert_int_eq(stat(tpath("h", "sudoers"), &st), 0);
        ck_assert_uint_eq(st.st_mode & 07777, 0440);
        ck_assert_int_eq(
                root_file_write(tpath("h", "sudoers"), invalid, strlen(invalid), 0440, 0, 0, argv, &e),
                -EINVAL);
        ck_assert_ptr_nonnull(strstr(e.message, "refused the new content"));
        assert_content("h", "sudoers", valid);
        ck_assert_uint_eq(count_entries("h"), 1);
}
END_TEST

START_TEST(test_parent_writable_by_others_refused)
{
        AjError e = { 0 };

        make_dir("i");
        ck_assert_int_eq(fchmodat(dirfd_tmp, "i", 0775, 0), 0);
        ck_assert_int_eq(root_file_write(tpath("i", "f"), "x", 1, 0644, geteuid(), getegid(), NULL, &e),
                         -EPERM);
        ck_assert_ptr_nonnull(strstr(e.message, "writable by its group"));
        ck_assert_int_eq(fchmodat(dirfd_tmp, "i", 01757, 0), 0);
        ck_assert_int_eq(root_file_write(tpath("i", "f"), "x", 1, 0644, geteuid(), getegid(), NULL, &e),
                         -EPERM);
        ck_assert_ptr_nonnull(strstr(e.message, "writable by others"));
        ck_assert_uint_eq(count_entries("i"), 0);
}
END_TEST

START_TEST(test_parent_not_owned_refused)
{
        AjError e = { 0 };

        if (geteuid() != 0) {
                fprintf(stderr, "note: parent owned by another user skipped: not root\n");
                return;
        }
        make_dir("j");
        ck_assert_int_eq(fchownat(dirfd_tmp, "j", 65534, 65534, 0), 0);
        ck_assert_int_eq(root_file_write(tpath("j", "f"), "x", 1, 0644, 0, 0, NULL, &e), -EPERM);
        ck_assert_ptr_nonnull(strstr(e.message, "owned by uid 65534"));
        ck_assert_uint_eq(count_entries("j"), 0);
}
END_TEST

START_TEST(test_parent_symlink_refused)
{
        AjError e = { 0 };

        make_dir("k");
        ck_assert_int_eq(symlinkat("k", dirfd_tmp, "k-link"), 0);
        ck_assert_int_eq(root_file_write(tpath("k-link", "f"), "x", 1, 0644, geteuid(), getegid(), NULL, &e),
                         -ELOOP);
        ck_assert_ptr_nonnull(strstr(e.message, "is a link"));
        ck_assert_uint_eq(count_entries("k"), 0);
}
END_TEST

START_TEST(test_bad_paths)
{
        AjError e = { 0 };

        ck_assert_int_eq(root_file_write("relative/f", "x", 1, 0644, 0, 0, NULL, &e), -EINVAL);
        ck_assert_int_eq(root_file_write(tpath(NULL, "dir/"), "x", 1, 0644, 0, 0, NULL, &e), -EINVAL);
        ck_assert_int_eq(root_file_write(tpath(NULL, ".."), "x", 1, 0644, 0, 0, NULL, &e), -EINVAL);
        ck_assert_int_eq(root_file_write("/", "x", 1, 0644, 0, 0, NULL, &e), -EINVAL);
        ck_assert_int_eq(root_file_write(tpath("missing", "f"), "x", 1, 0644, 0, 0, NULL, &e), -ENOENT);
        /* A directory at the final name: the rename fails and the temporary goes. */
        make_dir("l");
        ck_assert_int_eq(mkdirat(dirfd_tmp, "l/d", 0755), 0);
        ck_assert_int_eq(root_file_write(tpath("l", "d"), "x", 1, 0644, geteuid(), getegid(), NULL, &e),
                         -EISDIR);
        ck_assert_uint_eq(count_entries("l"), 1);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("root-file");
        TCase *tc = tcase_create("root_file_write");

        tcase_add_unchecked_fixture(tc, setup, teardown);
        tcase_set_timeout(tc, 30);
        tcase_add_test(tc, test_content_mode_owner);
        tcase_add_test(tc, test_replaces_atomically);
        tcase_add_test(tc, test_symlink_at_final_name_replaced);
        tcase_add_test(tc, test_failing_validator);
        tcase_add_test(tc, test_validator_output_first_line);
        tcase_add_test(tc, test_validator_succeeds);
        tcase_add_test(tc, test_validator_must_be_absolute);
        tcase_add_test(tc, test_visudo);
        tcase_add_test(tc, test_parent_writable_by_others_refused);
        tcase_add_test(tc, test_parent_not_owned_refused);
        tcase_add_test(tc, test_parent_symlink_refused);
        tcase_add_test(tc, test_bad_paths);
        suite_add_tcase(s, tc);

        return check_run(s);
}
