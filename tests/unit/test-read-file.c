/* SPDX-License-Identifier: MIT */
/* read_regular_nofollow() and read_regular_fd(): whole regular files only, never a link, a FIFO, a
 * device or a directory, never more than the bound. */
#include <check.h>

#include "check-run.h"
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "macro.h"
#include "read-file.h"

/* Made once by the parent (an unchecked fixture), so it is removed even when a test fails in its child. */
static char tmpdir[] = "/tmp/agentic-job-test-read-file-XXXXXX";
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

/* Writes size bytes (a repeating pattern, or text when given) to name in the temporary directory. */
static void make_file(const char *name, const char *text, size_t size)
{
        _cleanup_close_ int fd = openat(dirfd_tmp, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        _cleanup_free_ char *buf = malloc(size + 1);

        ck_assert_int_ge(fd, 0);
        ck_assert_ptr_nonnull(buf);
        for (size_t i = 0; i < size; i++)
                buf[i] = text ? text[i] : (char)('a' + i % 26);
        ck_assert_int_eq(write(fd, buf, size), (ssize_t)size);
}

START_TEST(test_regular)
{
        _cleanup_free_ char *data = NULL;
        size_t size = 0;

        make_file("regular", "hello\nworld", 11);
        ck_assert_int_eq(read_regular_nofollow(dirfd_tmp, "regular", 1024, &data, &size), 0);
        ck_assert_uint_eq(size, 11);
        ck_assert_mem_eq(data, "hello\nworld", 11);
        ck_assert_int_eq(data[11], '\0');
}
END_TEST

START_TEST(test_absolute_path_and_null_size)
{
        _cleanup_free_ char *data = NULL;
        char path[sizeof(tmpdir) + 16];

        make_file("abs", "x=1\n", 4);
        (void)snprintf(path, sizeof(path), "%s/abs", tmpdir);
        /* dirfd is ignored for an absolute path, and ret_size may be NULL. */
        ck_assert_int_eq(read_regular_nofollow(AT_FDCWD, path, 4, &data, NULL), 0);
        ck_assert_str_eq(data, "x=1\n");
}
END_TEST

START_TEST(test_binary_with_nul)
{
        _cleanup_free_ char *data = NULL;
        size_t size = 0;

        make_file("binary", "a\0b\0", 4);
        ck_assert_int_eq(read_regular_nofollow(dirfd_tmp, "binary", 4, &data, &size), 0);
        ck_assert_uint_eq(size, 4);
        ck_assert_mem_eq(data, "a\0b\0", 5);
}
END_TEST

START_TEST(test_empty)
{
        _cleanup_free_ char *data = NULL;
        size_t size = 99;

        make_file("empty", "", 0);
        ck_assert_int_eq(read_regular_nofollow(dirfd_tmp, "empty", 1024, &data, &size), 0);
        ck_assert_uint_eq(size, 0);
        ck_assert_ptr_nonnull(data);
        ck_assert_str_eq(data, "");
}
END_TEST

START_TEST(test_empty_with_zero_bound)
{
        _cleanup_free_ char *data = NULL;
        size_t size = 99;

        make_file("empty0", "", 0);
        ck_assert_int_eq(read_regular_nofollow(dirfd_tmp, "empty0", 0, &data, &size), 0);
        ck_assert_uint_eq(size, 0);
        ck_assert_str_eq(data, "");
}
END_TEST

START_TEST(test_exactly_max_size)
{
        _cleanup_free_ char *data = NULL;
        size_t size = 0;

        make_file("max", NULL, 4096);
        ck_assert_int_eq(read_regular_nofollow(dirfd_tmp, "max", 4096, &data, &size), 0);
        ck_assert_uint_eq(size, 4096);
        ck_assert_int_eq(data[0], 'a');
        ck_assert_int_eq(data[4095], 'a' + 4095 % 26);
        ck_assert_int_eq(data[4096], '\0');
}
END_TEST

START_TEST(test_max_size_plus_one)
{
        char *data = NULL;
        size_t size = 0;

        make_file("max1", NULL, 4097);
        ck_assert_int_eq(read_regular_nofollow(dirfd_tmp, "max1", 4096, &data, &size), -EFBIG);
        ck_assert_ptr_null(data);
        make_file("one", "x", 1);
        ck_assert_int_eq(read_regular_nofollow(dirfd_tmp, "one", 0, &data, &size), -EFBIG);
        ck_assert_ptr_null(data);
}
END_TEST

START_TEST(test_symlink)
{
        char *data = NULL;

        make_file("target", "secret", 6);
        ck_assert_int_eq(symlinkat("target", dirfd_tmp, "link"), 0);
        ck_assert_int_eq(read_regular_nofollow(dirfd_tmp, "link", 1024, &data, NULL), -ELOOP);
        ck_assert_ptr_null(data);
        /* A dangling link is a link too. */
        ck_assert_int_eq(symlinkat("nowhere", dirfd_tmp, "dangling"), 0);
        ck_assert_int_eq(read_regular_nofollow(dirfd_tmp, "dangling", 1024, &data, NULL), -ELOOP);
        ck_assert_ptr_null(data);
}
END_TEST

START_TEST(test_fifo)
{
        char *data = NULL;

        /* No writer: a blocking open would hang here, and the tcase timeout fails it (no clock: a loaded
         * machine must not fail what is right). */
        ck_assert_int_eq(mkfifoat(dirfd_tmp, "fifo", 0600), 0);
        ck_assert_int_eq(read_regular_nofollow(dirfd_tmp, "fifo", 1024, &data, NULL), -EBADFD);
        ck_assert_ptr_null(data);
}
END_TEST

START_TEST(test_directory)
{
        char *data = NULL;

        ck_assert_int_eq(mkdirat(dirfd_tmp, "dir", 0755), 0);
        ck_assert_int_eq(read_regular_nofollow(dirfd_tmp, "dir", 1024, &data, NULL), -EBADFD);
        ck_assert_ptr_null(data);
        ck_assert_int_eq(read_regular_nofollow(AT_FDCWD, "/", 1024, &data, NULL), -EBADFD);
        ck_assert_ptr_null(data);
}
END_TEST

START_TEST(test_device)
{
        char *data = NULL;

        ck_assert_int_eq(read_regular_nofollow(AT_FDCWD, "/dev/null", 1024, &data, NULL), -EBADFD);
        ck_assert_ptr_null(data);
}
END_TEST

START_TEST(test_proc_status)
{
        _cleanup_free_ char *data = NULL;
        struct stat st;
        size_t size = 0;

        /* procfs reports size 0: the content must still be read. */
        ck_assert_int_eq(stat("/proc/self/status", &st), 0);
        ck_assert_int_eq(st.st_size, 0);
        ck_assert_int_eq(read_regular_nofollow(AT_FDCWD, "/proc/self/status", 65536, &data, &size), 0);
        ck_assert_uint_gt(size, 0);
        ck_assert_uint_eq(strlen(data), size);
        ck_assert_ptr_nonnull(strstr(data, "Name:"));
        ck_assert_ptr_nonnull(strstr(data, "\nUid:"));
}
END_TEST

START_TEST(test_proc_status_past_bound)
{
        char *data = NULL;

        /* fstat() says 0 bytes, the read finds more than the bound: still -EFBIG. */
        ck_assert_int_eq(read_regular_nofollow(AT_FDCWD, "/proc/self/status", 16, &data, NULL), -EFBIG);
        ck_assert_ptr_null(data);
}
END_TEST

START_TEST(test_missing)
{
        char *data = NULL;

        ck_assert_int_eq(read_regular_nofollow(dirfd_tmp, "missing", 1024, &data, NULL), -ENOENT);
        ck_assert_ptr_null(data);
        ck_assert_int_eq(read_regular_nofollow(dirfd_tmp, "missing/x", 1024, &data, NULL), -ENOENT);
        ck_assert_ptr_null(data);
}
END_TEST

START_TEST(test_through_non_directory)
{
        char *data = NULL;

        make_file("file", "x", 1);
        ck_assert_int_eq(read_regular_nofollow(dirfd_tmp, "file/x", 1024, &data, NULL), -ENOTDIR);
        ck_assert_ptr_null(data);
}
END_TEST

START_TEST(test_fd_reads_from_position)
{
        _cleanup_free_ char *data = NULL;
        _cleanup_close_ int fd = -EBADF;
        size_t size = 0;

        make_file("pos", "0123456789", 10);
        fd = openat(dirfd_tmp, "pos", O_RDONLY | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(lseek(fd, 4, SEEK_SET), 4);
        ck_assert_int_eq(read_regular_fd(fd, 10, &data, &size), 0);
        ck_assert_uint_eq(size, 6);
        ck_assert_str_eq(data, "456789");
        /* The position moved to the end. */
        ck_assert_int_eq(lseek(fd, 0, SEEK_CUR), 10);
}
END_TEST

START_TEST(test_fd_not_regular)
{
        char *data = NULL;
        int p[2];

        ck_assert_int_eq(pipe2(p, O_CLOEXEC | O_NONBLOCK), 0);
        ck_assert_int_eq(read_regular_fd(p[0], 1024, &data, NULL), -EBADFD);
        ck_assert_ptr_null(data);
        (void)close(p[0]);
        (void)close(p[1]);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("read-file");
        TCase *tc = tcase_create("read_regular_nofollow");

        tcase_add_unchecked_fixture(tc, setup, teardown);
        tcase_set_timeout(tc, 10);
        tcase_add_test(tc, test_regular);
        tcase_add_test(tc, test_absolute_path_and_null_size);
        tcase_add_test(tc, test_binary_with_nul);
        tcase_add_test(tc, test_empty);
        tcase_add_test(tc, test_empty_with_zero_bound);
        tcase_add_test(tc, test_exactly_max_size);
        tcase_add_test(tc, test_max_size_plus_one);
        tcase_add_test(tc, test_symlink);
        tcase_add_test(tc, test_fifo);
        tcase_add_test(tc, test_directory);
        tcase_add_test(tc, test_device);
        tcase_add_test(tc, test_proc_status);
        tcase_add_test(tc, test_proc_status_past_bound);
        tcase_add_test(tc, test_missing);
        tcase_add_test(tc, test_through_non_directory);
        tcase_add_test(tc, test_fd_reads_from_position);
        tcase_add_test(tc, test_fd_not_regular);
        suite_add_tcase(s, tc);

        return check_run(s);
}
