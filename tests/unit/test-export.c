/* SPDX-License-Identifier: MIT */
/* The export: its stream format and strict reader, the sender's refusals (links, FIFOs, sockets,
 * directories, hard links, sparse giants) and the receiver's limits, exclusive creation and refusal to
 * follow links in the output directory. */
#include <check.h>

#include "check-run.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <linux/openat2.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "export-frame.h"
#include "export-inside.h"
#include "export-receive.h"
#include "macro.h"
#include "read-file.h"

/* Made once by the parent (an unchecked fixture), so it is removed even when a test fails in its child;
 * each test works in a directory of its own below it. */
#define TMPDIR_TEMPLATE "/tmp/agentic-job-test-export-XXXXXX"
static char tmpdir[] = TMPDIR_TEMPLATE;
static int dirfd_tmp = -EBADF;

static int rm_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
        (void)st;
        (void)ftw;
        return type == FTW_DP ? rmdir(path) : unlink(path);
}

static void setup(void)
{
        memcpy(tmpdir, TMPDIR_TEMPLATE, sizeof(tmpdir));
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

static int make_dir(int parent, const char *name)
{
        int fd;

        ck_assert_int_eq(mkdirat(parent, name, 0700), 0);
        fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        return fd;
}

static char pattern(size_t i, unsigned seed)
{
        return (char)(i * 7 + seed + i / 251);
}

static void make_file(int dir, const char *name, size_t size, unsigned seed)
{
        _cleanup_close_ int fd = openat(dir, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        _cleanup_free_ char *buf = malloc(size + 1);

        ck_assert_int_ge(fd, 0);
        ck_assert_ptr_nonnull(buf);
        for (size_t i = 0; i < size; i++)
                buf[i] = pattern(i, seed);
        ck_assert_int_eq(write(fd, buf, size), (ssize_t)size);
}

static void check_file(int dir, const char *name, size_t size, unsigned seed)
{
        _cleanup_free_ char *data = NULL;
        size_t n = 0;
        struct stat st;

        ck_assert_int_eq(read_regular_nofollow(dir, name, 1 << 24, &data, &n), 0);
        ck_assert_uint_eq(n, size);
        for (size_t i = 0; i < size; i++)
                ck_assert_int_eq(data[i], pattern(i, seed));
        ck_assert_int_eq(fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW), 0);
        ck_assert_uint_eq(st.st_mode & 07777, 0600);
}

static bool exists(int dir, const char *name)
{
        struct stat st;
        return fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

static int stream_fd(void)
{
        int fd = memfd_create("export-stream", MFD_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        return fd;
}

static void rewind_fd(int fd)
{
        ck_assert_int_eq(lseek(fd, 0, SEEK_SET), 0);
}

static size_t fd_size(int fd)
{
        struct stat st;
        ck_assert_int_eq(fstat(fd, &st), 0);
        return (size_t)st.st_size;
}

static char *read_stream(int fd, size_t *ret_size)
{
        char *data = NULL;

        rewind_fd(fd);
        ck_assert_int_eq(read_regular_fd(fd, 1 << 26, &data, ret_size), 0);
        return data;
}

/* What the reader reported, in a form that does not depend on how the input was split: events as lines,
 * data bytes as they are. */
typedef struct Log {
        char *buf;
        size_t len, allocated;
} Log;

static void log_add(Log *l, const void *p, size_t n)
{
        if (l->len + n + 1 > l->allocated) {
                size_t a = (l->len + n + 1) * 2;
                char *b = realloc(l->buf, a);

                if (!b)
                        ck_abort_msg("out of memory");
                l->buf = b;
                l->allocated = a;
        }
        memcpy(l->buf + l->len, p, n);
        l->len += n;
        l->buf[l->len] = '\0';
}

static void log_addf(Log *l, const char *a, const char *b, const char *c)
{
        log_add(l, a, strlen(a));
        if (b) {
                log_add(l, ":", 1);
                log_add(l, b, strlen(b));
        }
        if (c) {
                log_add(l, ":", 1);
                log_add(l, c, strlen(c));
        }
        log_add(l, "\n", 1);
}

static int on_begin(const char *name, void *userdata)
{
        log_addf(userdata, "B", name, NULL);
        return 0;
}

static int on_data(const void *data, size_t size, void *userdata)
{
        /* Not ck_assert(), which reports its place to the parent at each call: this runs once a byte. */
        if (size == 0 || size > EXPORT_CHUNK_MAX)
                ck_abort_msg("a piece of %zu bytes", size);
        log_add(userdata, data, size);
        return 0;
}

static int on_end(void *userdata)
{
        log_addf(userdata, "E", NULL, NULL);
        return 0;
}

static int on_refusal(const char *name, const char *reason, bool limit, void *userdata)
{
        log_addf(userdata, limit ? "L" : "R", name, reason);
        return 0;
}

static int on_stream_end(void *userdata)
{
        log_addf(userdata, "Z", NULL, NULL);
        return 0;
}

static const ExportReaderCallbacks log_callbacks = {
        .file_begin = on_begin,
        .data = on_data,
        .file_end = on_end,
        .refusal = on_refusal,
        .stream_end = on_stream_end,
};

static uint64_t rng = 88172645463325252ULL;

static size_t random_below(size_t n)
{
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        return (size_t)(rng % n);
}

/* Feeds data in pieces of piece bytes (0: random sizes, from 1 to a little over a chunk), then ends. */
static int feed(const char *data, size_t size, size_t piece, Log *log, AjError *e)
{
        ExportReader r;
        int q;

        export_reader_init(&r, &log_callbacks, log);
        for (size_t i = 0; i < size;) {
                size_t k = piece ? piece : 1 + random_below(random_below(2) ? 16 : EXPORT_CHUNK_MAX + 100);

                if (k > size - i)
                        k = size - i;
                q = export_reader_feed(&r, data + i, k, e);
                if (q < 0) {
                        /* Broken: every later call fails too. */
                        ck_assert_int_lt(export_reader_feed(&r, "END\n", 4, e), 0);
                        ck_assert_int_lt(export_reader_end(&r, e), 0);
                        return q;
                }
                i += k;
        }
        q = export_reader_end(&r, e);
        if (q < 0)
                ck_assert_int_lt(export_reader_end(&r, e), 0);
        return q;
}

START_TEST(test_name_valid)
{
        static const char *const good[] = { "a",    "a/b",       "a.b", "..a",       "a..",
                                            ".x/y", "a/b/c.txt", "é ü", "with space" };
        static const char *const bad[] = { "",     "/",    "/a",   "a/",    "a//b", ".",
                                           "..",   "./a",  "a/.",  "a/..",  "../a", "a/./b",
                                           "a\nb", "a\tb", "\x7f", "a\x1b", "\r" };
        char long_name[EXPORT_NAME_MAX + 2];

        for (size_t i = 0; i < ELEMENTSOF(good); i++)
                ck_assert_msg(export_name_valid(good[i], strlen(good[i])), "%s", good[i]);
        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                ck_assert_msg(!export_name_valid(bad[i], strlen(bad[i])), "%s", bad[i]);
        ck_assert(!export_name_valid("a\0b", 3));
        memset(long_name, 'a', sizeof(long_name));
        long_name[100] = '/';
        ck_assert(export_name_valid(long_name, EXPORT_NAME_MAX));
        ck_assert(!export_name_valid(long_name, EXPORT_NAME_MAX + 1));

        ck_assert_int_eq(export_names_check((char *const[]){ "a", "b/c", NULL }), 0);
        ck_assert_int_eq(export_names_check((char *const[]){ NULL }), 0);
        ck_assert_int_eq(export_names_check((char *const[]){ "a", "b", "a", NULL }), -EINVAL);
        ck_assert_int_eq(export_names_check((char *const[]){ "a", "../b", NULL }), -EINVAL);
}
END_TEST

START_TEST(test_writers_refuse)
{
        _cleanup_close_ int fd = stream_fd();
        char reason[EXPORT_REASON_MAX + 2];

        ck_assert_int_eq(export_write_file_begin(fd, "../x"), -EINVAL);
        ck_assert_int_eq(export_write_file_begin(fd, "/x"), -EINVAL);
        ck_assert_int_eq(export_write_refusal(fd, "x", "two\nlines", false), -EINVAL);
        ck_assert_int_eq(export_write_refusal(fd, "x", "", false), -EINVAL);
        ck_assert_int_eq(export_write_refusal(fd, "x/", "r", false), -EINVAL);
        memset(reason, 'r', sizeof(reason));
        reason[EXPORT_REASON_MAX + 1] = '\0';
        ck_assert_int_eq(export_write_refusal(fd, "x", reason, true), -EINVAL);
        ck_assert_uint_eq(fd_size(fd), 0);
        reason[EXPORT_REASON_MAX] = '\0';
        ck_assert_int_eq(export_write_refusal(fd, "x", reason, true), 0);
        ck_assert_uint_eq(fd_size(fd), strlen("LIMIT x\t") + EXPORT_REASON_MAX + 1);
}
END_TEST

/* The writers' stream, read back whole, a byte at a time and in random pieces: the same events. */
START_TEST(test_round_trip_reader)
{
        static const size_t sizes[] = {
                0, 1, EXPORT_CHUNK_MAX - 1, EXPORT_CHUNK_MAX, EXPORT_CHUNK_MAX + 1, 3 * EXPORT_CHUNK_MAX + 17
        };
        _cleanup_close_ int fd = stream_fd();
        _cleanup_free_ char *stream = NULL;
        Log expected = {};
        size_t size;

        for (size_t i = 0; i < ELEMENTSOF(sizes); i++) {
                _cleanup_free_ char *buf = malloc(sizes[i] + 1);
                char name[32];

                ck_assert_ptr_nonnull(buf);
                for (size_t j = 0; j < sizes[i]; j++)
                        buf[j] = pattern(j, (unsigned)i);
                (void)snprintf(name, sizeof(name), "dir %zu/file-%zu", i, sizes[i]);
                ck_assert_int_eq(export_send_buffer(fd, name, buf, sizes[i]), 0);
                log_addf(&expected, "B", name, NULL);
                log_add(&expected, buf, sizes[i]);
                log_addf(&expected, "E", NULL, NULL);
        }
        ck_assert_int_eq(export_write_refusal(fd, "gone", "missing", false), 0);
        log_addf(&expected, "R", "gone", "missing");
        ck_assert_int_eq(export_write_refusal(fd, "huge/file", "larger than the per-file limit", true), 0);
        log_addf(&expected, "L", "huge/file", "larger than the per-file limit");
        ck_assert_int_eq(export_send_end(fd), 0);
        log_addf(&expected, "Z", NULL, NULL);
        stream = read_stream(fd, &size);

        for (size_t piece = 0; piece <= 3; piece++) {
                for (unsigned round = 0; round < (piece == 0 ? 8 : 1); round++) {
                        Log log = {};
                        AjError e = {};
                        int r = feed(stream, size, piece == 3 ? size : piece, &log, &e);

                        ck_assert_msg(r == 0, "piece %zu: %s", piece, e.message);
                        ck_assert_uint_eq(log.len, expected.len);
                        ck_assert(memcmp(log.buf, expected.buf, log.len) == 0);
                        free(log.buf);
                }
        }
        free(expected.buf);
}
END_TEST

typedef struct Bytes {
        const char *data;
        size_t size;
} Bytes;

/* clang-format 14 and 19 lay out this macro differently: kept as written. */
/* clang-format off */
#define S(x) { x, sizeof(x) - 1 }
/* clang-format on */

static const Bytes malformed[] = {
        S(""),
        S("END"),
        S("END\nx"),
        S("END\nEND\n"),
        S("END \n"),
        S("end\n"),
        S("\n"),
        S("FILE a\nDONE\n"),
        S("FILE a\nDATA 3\nab"),
        S("FILE a\nDATA 3\nabcEND\n"),
        S("FILE /a\nDONE\nEND\n"),
        S("FILE \nDONE\nEND\n"),
        S("FILE a/\nDONE\nEND\n"),
        S("FILE a//b\nDONE\nEND\n"),
        S("FILE a/../b\nDONE\nEND\n"),
        S("FILE ..\nDONE\nEND\n"),
        S("FILE .\nDONE\nEND\n"),
        S("FILE a\x01"
          "b\nDONE\nEND\n"),
        S("FILE a\r\nDONE\nEND\n"),
        S("FILE a\0b\nDONE\nEND\n"),
        S("FILEa\nDONE\nEND\n"),
        S("DATA 1\nxEND\n"),
        S("FILE a\nDATA 65537\n"),
        S("FILE a\nDATA 0\nDONE\nEND\n"),
        S("FILE a\nDATA 01\nxDONE\nEND\n"),
        S("FILE a\nDATA +1\nxDONE\nEND\n"),
        S("FILE a\nDATA 1 \nxDONE\nEND\n"),
        S("FILE a\nDATA  1\nxDONE\nEND\n"),
        S("FILE a\nDATA\nDONE\nEND\n"),
        S("FILE a\nDATA 99999999999999999999999\n"),
        S("FILE a\nFILE b\nDONE\nDONE\nEND\n"),
        S("DONE\nEND\n"),
        S("FILE a\nDONE \nEND\n"),
        S("FILE a\nEND\n"),
        S("FILE a\nREFUSE b\tr\nDONE\nEND\n"),
        S("REFUSE a\nEND\n"),
        S("REFUSE a\t\nEND\n"),
        S("REFUSE \tr\nEND\n"),
        S("REFUSE a\tr\tr\nEND\n"),
        S("REFUSE /a\tr\nEND\n"),
        S("LIMIT a\tr\x01\nEND\n"),
        S("LIMIT a\tr\x7f\nEND\n"),
        S("REFUSE\ta\tr\nEND\n"),
};

static int feed_quietly(const char *data, size_t size, size_t piece)
{
        Log log = {};
        AjError e = {};
        int r = feed(data, size, piece, &log, &e);

        free(log.buf);
        return r;
}

static void check_malformed(const char *data, size_t size)
{
        for (size_t piece = 0; piece <= 2; piece++) {
                Log log = {};
                AjError e = {};
                int r = feed(data, size, piece == 2 ? size : piece == 1 ? 1 : 0, &log, &e);

                ck_assert_msg(r == -EBADMSG, "accepted (piece %zu): %.*s", piece, (int)size, data);
                ck_assert_str_ne(e.message, "");
                free(log.buf);
        }
}

START_TEST(test_malformed)
{
        char *line;
        size_t n;

        for (size_t i = 0; i < ELEMENTSOF(malformed); i++)
                check_malformed(malformed[i].data, malformed[i].size);

        /* A name one byte over the bound, a reason one over, a line over the longest. */
        n = EXPORT_LINE_MAX + 64;
        line = malloc(n);
        ck_assert_ptr_nonnull(line);
        memcpy(line, "FILE ", 5);
        memset(line + 5, 'a', EXPORT_NAME_MAX + 1);
        memcpy(line + 5 + EXPORT_NAME_MAX + 1, "\nDONE\nEND\n", 10);
        check_malformed(line, 5 + EXPORT_NAME_MAX + 1 + 10);
        memcpy(line + 5 + EXPORT_NAME_MAX, "\nDONE\nEND\n", 10);
        ck_assert_int_eq(feed_quietly(line, 5 + EXPORT_NAME_MAX + 10, 1), 0);

        memcpy(line, "REFUSE a\t", 9);
        memset(line + 9, 'r', EXPORT_REASON_MAX + 1);
        memcpy(line + 9 + EXPORT_REASON_MAX + 1, "\nEND\n", 5);
        check_malformed(line, 9 + EXPORT_REASON_MAX + 1 + 5);

        memset(line, 'x', n);
        check_malformed(line, n);
        free(line);

        /* The shortest accepted streams, for contrast. */
        ck_assert_int_eq(feed_quietly("END\n", 4, 1), 0);
        ck_assert_int_eq(feed_quietly("FILE a\nDONE\nREFUSE b c\td e\nEND\n", 31, 1), 0);
}
END_TEST

static int callback_fails(const char *name, void *userdata)
{
        (void)name;
        (void)userdata;
        return -ENOSPC;
}

START_TEST(test_callback_error)
{
        static const ExportReaderCallbacks cb = { .file_begin = callback_fails };
        AjError e = { .message = "untouched" };
        ExportReader r;

        export_reader_init(&r, &cb, NULL);
        ck_assert_int_eq(export_reader_feed(&r, "FILE a\n", 7, &e), -ENOSPC);
        ck_assert_str_eq(e.message, "untouched");
        ck_assert_int_eq(export_reader_feed(&r, "DONE\nEND\n", 9, &e), -EBADMSG);
}
END_TEST

/* valgrind 3.19 (Debian 12's) does not know openat2(): there the sender can only say -ENOSYS, which is
 * checked, and its refusals are left to the plain and sanitizer runs. */
static bool have_openat2(int dir)
{
        struct open_how how = { .flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC };
        int fd = (int)syscall(SYS_openat2, dir, ".", &how, sizeof(how));

        if (fd >= 0) {
                (void)close(fd);
                return true;
        }
        ck_assert_int_eq(errno, ENOSYS);
        fprintf(stderr, "note: no openat2() here (valgrind?): the sender's reads are not tested\n");
        return false;
}

static void make_socket(const char *dir, const char *name)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

        ck_assert_int_ge(fd, 0);
        ck_assert_int_lt(snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/%s/%s", tmpdir, dir, name),
                         (int)sizeof(sa.sun_path));
        ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
        (void)close(fd);
}

START_TEST(test_sender_refusals)
{
        _cleanup_close_ int top = make_dir(dirfd_tmp, "sender");
        _cleanup_close_ int work = make_dir(top, "work");
        _cleanup_close_ int real = make_dir(work, "real");
        _cleanup_close_ int fd = stream_fd();
        _cleanup_close_ int sparse = -EBADF;
        _cleanup_free_ char *stream = NULL;
        const ExportLimits limits = { .max_file_bytes = 1 << 20,
                                      .max_total_bytes = 1 << 30,
                                      .max_files = 100 };
        char *const names[] = { "link",    "linkdir/file", "fifo",     "dir",   "sock",    "hard",
                                "missing", "sparse",       "notdir/x", "outer", "real/ok", NULL };
        Log log = {};
        AjError e = {};
        size_t size;

        make_file(work, "target", 10, 1);
        ck_assert_int_eq(symlinkat("target", work, "link"), 0);
        make_file(real, "file", 10, 2);
        ck_assert_int_eq(symlinkat("real", work, "linkdir"), 0);
        ck_assert_int_eq(mkfifoat(work, "fifo", 0600), 0);
        ck_assert_int_eq(mkdirat(work, "dir", 0700), 0);
        make_socket("sender/work", "sock");
        make_file(work, "hard-source", 10, 3);
        ck_assert_int_eq(linkat(work, "hard-source", work, "hard", 0), 0);
        sparse = openat(work, "sparse", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        ck_assert_int_ge(sparse, 0);
        ck_assert_int_eq(ftruncate(sparse, 10LL * 1024 * 1024 * 1024), 0);
        make_file(work, "notdir", 1, 4);
        /* A file outside the workspace, reached by a link: "outer" is a link to it. */
        make_file(top, "secret", 10, 5);
        ck_assert_int_eq(symlinkat("../secret", work, "outer"), 0);
        make_file(real, "ok", 1000, 6);

        if (!have_openat2(work)) {
                ck_assert_int_eq(export_send(work, names, &limits, fd), -ENOSYS);
                return;
        }
        /* A FIFO that blocked the open would hang here, until meson's timeout fails the test; that the 10 GB
         * were not read is in the stream: a LIMIT record for sparse and no data of it (below). No clock. */
        ck_assert_int_eq(export_send(work, names, &limits, fd), 0);
        ck_assert_int_eq(export_send_end(fd), 0);

        stream = read_stream(fd, &size);
        ck_assert_int_eq(feed(stream, size, 0, &log, &e), 0);
        /* Then the 1000 bytes of real/ok, its end and the stream's. */
        ck_assert_uint_gt(log.len, 1000 + 4);
        ck_assert_str_eq(log.buf + log.len - 4, "E\nZ\n");
        log.len -= 1000 + 4;
        log.buf[log.len] = '\0';
        ck_assert_str_eq(log.buf, "R:link:a link in its path\n"
                                  "R:linkdir/file:a link in its path\n"
                                  "R:fifo:not a regular file: a FIFO\n"
                                  "R:dir:not a regular file: a directory\n"
                                  "R:sock:not a regular file: a socket or a device\n"
                                  "R:hard:a file with 2 hard links\n"
                                  "R:missing:missing\n"
                                  "L:sparse:larger than the per-file limit of 1048576 bytes\n"
                                  "R:notdir/x:a component of its path is not a directory\n"
                                  "R:outer:a link in its path\n"
                                  "B:real/ok\n");
        free(log.buf);
}
END_TEST

/* In a private mount namespace (the test runs in a child Check forked; its mounts die with it). */
START_TEST(test_sender_mount_not_crossed)
{
        _cleanup_close_ int top = make_dir(dirfd_tmp, "sender-mount");
        _cleanup_close_ int work = -EBADF, mnt = -EBADF;
        _cleanup_close_ int fd = stream_fd();
        _cleanup_free_ char *stream = NULL;
        const ExportLimits limits = { .max_file_bytes = 100, .max_total_bytes = 100, .max_files = 10 };
        char path[256];
        Log log = {};
        AjError e = {};
        size_t size;

        if (geteuid() != 0 || unshare(CLONE_NEWNS) < 0 ||
            mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) < 0) {
                fprintf(stderr,
                        "note: test_sender_mount_not_crossed skipped: needs root and a mount namespace\n");
                return;
        }
        (void)close(make_dir(top, "work"));
        (void)close(make_dir(top, "work/mnt"));
        (void)snprintf(path, sizeof(path), "%s/sender-mount/work/mnt", tmpdir);
        ck_assert_int_eq(mount("tmpfs", path, "tmpfs", 0, "mode=0755"), 0);
        /* Opened after the mount, in this namespace: lookups from the older descriptors would not see it. */
        (void)snprintf(path, sizeof(path), "%s/sender-mount/work", tmpdir);
        work = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_ge(work, 0);
        mnt = openat(work, "mnt", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_ge(mnt, 0);
        make_file(mnt, "f", 10, 1);
        if (!have_openat2(work))
                return;
        ck_assert_int_eq(export_send(work, (char *const[]){ "mnt/f", "mnt", NULL }, &limits, fd), 0);
        ck_assert_int_eq(export_send_end(fd), 0);
        stream = read_stream(fd, &size);
        ck_assert_int_eq(feed(stream, size, 0, &log, &e), 0);
        ck_assert_str_eq(log.buf, "R:mnt/f:its path crosses a mount point\n"
                                  "R:mnt:its path crosses a mount point\n"
                                  "Z\n");
        free(log.buf);
}
END_TEST

START_TEST(test_sender_names_checked_first)
{
        _cleanup_close_ int top = make_dir(dirfd_tmp, "names");
        _cleanup_close_ int fd = stream_fd();
        const ExportLimits limits = { .max_file_bytes = 100, .max_total_bytes = 100, .max_files = 10 };

        make_file(top, "ok", 10, 1);
        ck_assert_int_eq(export_send(top, (char *const[]){ "ok", "..", NULL }, &limits, fd), -EINVAL);
        ck_assert_int_eq(export_send(top, (char *const[]){ "ok", "../names/ok", NULL }, &limits, fd),
                         -EINVAL);
        ck_assert_int_eq(export_send(top, (char *const[]){ "ok", "/etc/passwd", NULL }, &limits, fd),
                         -EINVAL);
        ck_assert_int_eq(export_send(top, (char *const[]){ "ok", "ok", NULL }, &limits, fd), -EINVAL);
        ck_assert_int_eq(export_send_buffer(fd, "a/../b", "x", 1), -EINVAL);
        ck_assert_uint_eq(fd_size(fd), 0);
}
END_TEST

static ExportEntry *entry(ExportResult *res, const char *name)
{
        for (size_t i = 0; i < res->n_entries; i++)
                if (strcmp(res->entries[i].name, name) == 0)
                        return &res->entries[i];
        ck_abort_msg("no entry %s", name);
        return NULL;
}

START_TEST(test_round_trip)
{
        _cleanup_close_ int top = make_dir(dirfd_tmp, "round-trip");
        _cleanup_close_ int work = make_dir(top, "work");
        _cleanup_close_ int out = make_dir(top, "out");
        _cleanup_close_ int fd = stream_fd();
        _cleanup_close_ int a = -EBADF, ab = -EBADF;
        const ExportLimits limits = { .max_file_bytes = 150000,
                                      .max_total_bytes = 1 << 20,
                                      .max_files = 10 };
        char *const send[] = { "empty", "exact", "a/b/c.txt", "a/d", "absent", NULL };
        char *const want[] = { "empty", "exact", "a/b/c.txt", "a/d", "absent", "patch.diff", "never", NULL };
        _cleanup_(export_result_done) ExportResult res = {};
        AjError e = {};
        struct stat st;

        make_file(work, "empty", 0, 0);
        make_file(work, "exact", 150000, 1);
        a = make_dir(work, "a");
        ab = make_dir(a, "b");
        make_file(ab, "c.txt", 70000, 2);
        make_file(a, "d", 1, 3);
        if (!have_openat2(work)) {
                ck_assert_int_eq(export_send(work, send, &limits, fd), -ENOSYS);
                return;
        }
        ck_assert_int_eq(export_send(work, send, &limits, fd), 0);
        ck_assert_int_eq(export_send_buffer(fd, "patch.diff", "diff --git\n", 11), 0);
        ck_assert_int_eq(export_send_end(fd), 0);
        rewind_fd(fd);

        ck_assert_msg(export_receive(fd, out, want, &limits, NULL, &res, &e) == 0, "%s", e.message);
        ck_assert_uint_eq(res.n_entries, 7);
        ck_assert_uint_eq(res.n_exported, 5);
        ck_assert_uint_eq(res.n_refused, 1);
        ck_assert_uint_eq(res.n_missing, 1);
        ck_assert_uint_eq(res.n_failed, 0);
        ck_assert(!res.limit_hit);
        ck_assert_uint_eq(res.total_bytes, 150000 + 70000 + 1 + 11);
        ck_assert_int_eq(entry(&res, "empty")->state, EXPORT_EXPORTED);
        ck_assert_uint_eq(entry(&res, "empty")->bytes, 0);
        ck_assert_uint_eq(entry(&res, "exact")->bytes, 150000);
        ck_assert_uint_eq(entry(&res, "a/b/c.txt")->bytes, 70000);
        ck_assert_int_eq(entry(&res, "absent")->state, EXPORT_REFUSED);
        ck_assert_str_eq(entry(&res, "absent")->reason, "missing");
        ck_assert(!entry(&res, "absent")->limit);
        ck_assert_int_eq(entry(&res, "never")->state, EXPORT_MISSING);
        ck_assert_ptr_eq(entry(&res, "never")->name, want[6]);

        check_file(out, "empty", 0, 0);
        check_file(out, "exact", 150000, 1);
        check_file(out, "a/b/c.txt", 70000, 2);
        check_file(out, "a/d", 1, 3);
        ck_assert(!exists(out, "absent"));
        ck_assert_int_eq(fstatat(out, "a/b", &st, AT_SYMLINK_NOFOLLOW), 0);
        ck_assert_uint_eq(st.st_mode & 07777, 0700);
}
END_TEST

/* A stream of one file of size bytes, in chunks of chunk bytes, made by hand: the sender would never send
 * more than the limit and one byte, a lying one does. */
/* The receiver fed piece by piece (as run's pump does), then dropped before the stream's end (a cancel, a
 * deadline): nothing it wrote remains, directories included; fed whole and ended, the same as
 * export_receive(). */
START_TEST(test_receiver_pieces_and_drop)
{
        _cleanup_close_ int top = make_dir(dirfd_tmp, "receiver-drop");
        _cleanup_close_ int work = make_dir(top, "work");
        _cleanup_close_ int out = make_dir(top, "out");
        _cleanup_close_ int fd = stream_fd();
        _cleanup_close_ int a = -EBADF;
        const ExportLimits limits = { .max_file_bytes = 1 << 20,
                                      .max_total_bytes = 1 << 20,
                                      .max_files = 10 };
        char *const names[] = { "one", "a/two", NULL };
        _cleanup_free_ char *data = NULL;
        _cleanup_(export_result_done) ExportResult res = {};
        ExportReceiver *x = NULL;
        AjError e = {};
        size_t size = 0;

        make_file(work, "one", 5000, 1);
        a = make_dir(work, "a");
        make_file(a, "two", 7000, 2);
        if (!have_openat2(work))
                return;
        ck_assert_int_eq(export_send(work, names, &limits, fd), 0);
        ck_assert_int_eq(export_send_end(fd), 0);
        data = read_stream(fd, &size);

        /* All but the last 100 bytes (the second file's end and END), then dropped. */
        ck_assert_int_eq(export_receiver_new(out, names, &limits, NULL, &x, &e), 0);
        for (size_t i = 0; i + 100 < size; i += 7)
                ck_assert_int_eq(export_receiver_feed(x, data + i, size - 100 - i < 7 ? size - 100 - i : 7),
                                 0);
        ck_assert(exists(out, "one"));
        ck_assert(exists(out, "a/two"));
        export_receiver_free(x);
        ck_assert(!exists(out, "one"));
        ck_assert(!exists(out, "a"));

        /* Whole, in pieces, and ended. */
        ck_assert_int_eq(export_receiver_new(out, names, &limits, NULL, &x, &e), 0);
        for (size_t i = 0; i < size; i += 7)
                ck_assert_int_eq(export_receiver_feed(x, data + i, size - i < 7 ? size - i : 7), 0);
        ck_assert_msg(export_receiver_end(x, &res) == 0, "%s", e.message);
        ck_assert_uint_eq(res.n_exported, 2);
        check_file(out, "one", 5000, 1);
        check_file(out, "a/two", 7000, 2);

        /* A broken stream: the error stays, and the end removes what was written. */
        ck_assert_int_eq(unlinkat(out, "one", 0), 0);
        ck_assert_int_eq(unlinkat(out, "a/two", 0), 0);
        ck_assert_int_eq(unlinkat(out, "a", AT_REMOVEDIR), 0);
        ck_assert_int_eq(export_receiver_new(out, names, &limits, NULL, &x, &e), 0);
        ck_assert_int_eq(export_receiver_feed(x, data, size - 4), 0);
        ck_assert_int_eq(export_receiver_feed(x, "BAD\n", 4), -EBADMSG);
        ck_assert_int_eq(export_receiver_feed(x, "END\n", 4), -EBADMSG);
        ck_assert_int_eq(export_receiver_end(x, &res), -EBADMSG);
        ck_assert(!exists(out, "one"));
        ck_assert(!exists(out, "a"));
}
END_TEST

/* The exporter blocked where the agent made it block (an open() of a FIFO nobody writes) ends once its
 * caller is gone: the caller's end of the stream closed, as when the runner is killed. Alive until then. */
START_TEST(test_watch_caller)
{
        _cleanup_close_ int top = make_dir(dirfd_tmp, "watch");
        int sv[2], status = 0;
        pid_t pid;

        ck_assert_int_eq(mkfifoat(top, "fifo", 0600), 0);
        ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                (void)close(sv[0]);
                if (export_watch_caller(sv[1], 7) < 0)
                        _exit(2);
                (void)openat(top, "fifo", O_RDONLY); /* blocks: no writer */
                _exit(3);
        }
        (void)close(sv[1]);
        (void)usleep(300000);
        ck_assert_int_eq(waitpid(pid, &status, WNOHANG), 0); /* still blocked */
        (void)close(sv[0]);
        alarm(10);
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        alarm(0);
        ck_assert(WIFEXITED(status));
        ck_assert_int_eq(WEXITSTATUS(status), 7);
}
END_TEST

static void write_file_record(int fd, const char *name, size_t size, size_t chunk)
{
        _cleanup_free_ char *buf = malloc(chunk);

        ck_assert_ptr_nonnull(buf);
        memset(buf, 'x', chunk);
        ck_assert_int_eq(export_write_file_begin(fd, name), 0);
        for (size_t done = 0; done < size; done += chunk)
                ck_assert_int_eq(export_write_data(fd, buf, size - done < chunk ? size - done : chunk), 0);
        ck_assert_int_eq(export_write_file_end(fd), 0);
}

static int receive(int fd, int out, char *const *names, const ExportLimits *limits, ExportResult *res,
                   AjError *e)
{
        ck_assert_int_ge(export_send_end(fd), 0);
        rewind_fd(fd);
        return export_receive(fd, out, names, limits, NULL, res, e);
}

/* A file that holds a secret is refused by name and nothing of it stays in the output directory: the
 * token whole in one piece, the token across two pieces (its first part was written, then removed), a
 * secret-shaped string; the clean file beside them is exported. */
START_TEST(test_secret_refused)
{
        _cleanup_close_ int out = make_dir(dirfd_tmp, "secret");
        _cleanup_close_ int fd = stream_fd();
        const ExportLimits limits = { .max_file_bytes = 1 << 20,
                                      .max_total_bytes = 1 << 20,
                                      .max_files = 10 };
        char *const names[] = { "whole", "d/split", "shaped", "clean", NULL };
        _cleanup_(export_result_done) ExportResult res = {};
        const char token[] = "run-token-0123456789abcdef";
        SecretSet set;
        AjError e = {};

        secret_set_init(&set);
        ck_assert_int_eq(secret_set_add(&set, token, strlen(token), "the run token"), 0);
        ck_assert_int_eq(export_write_file_begin(fd, "whole"), 0);
        ck_assert_int_eq(export_write_data(fd, "before ", 7), 0);
        ck_assert_int_eq(export_write_data(fd, token, strlen(token)), 0);
        ck_assert_int_eq(export_write_data(fd, " after", 6), 0);
        ck_assert_int_eq(export_write_file_end(fd), 0);
        ck_assert_int_eq(export_write_file_begin(fd, "d/split"), 0);
        ck_assert_int_eq(export_write_data(fd, token, 10), 0);
        ck_assert_int_eq(export_write_data(fd, token + 10, strlen(token) - 10), 0);
        ck_assert_int_eq(export_write_file_end(fd), 0);
        ck_assert_int_eq(export_send_buffer(fd, "shaped", "AKIAIOSFODNN7EXAMPLE\n", 21), 0);
        ck_assert_int_eq(export_send_buffer(fd, "clean", "run-token-0123456789abcde", 25), 0);
        ck_assert_int_eq(export_send_end(fd), 0);
        rewind_fd(fd);

        ck_assert_msg(export_receive(fd, out, names, &limits, &set, &res, &e) == 0, "%s", e.message);
        ck_assert_uint_eq(res.n_exported, 1);
        ck_assert_uint_eq(res.n_refused, 3);
        ck_assert_uint_eq(res.n_secret, 3);
        ck_assert_uint_eq(res.n_failed, 0);
        ck_assert(!res.limit_hit);
        ck_assert_str_eq(entry(&res, "whole")->reason, "holds the run token: not exported");
        ck_assert_str_eq(entry(&res, "d/split")->reason, "holds the run token: not exported");
        ck_assert_str_eq(entry(&res, "shaped")->reason, "holds an AWS access key id: not exported");
        ck_assert(entry(&res, "whole")->secret && !entry(&res, "whole")->limit);
        ck_assert(!entry(&res, "clean")->secret);
        ck_assert(!exists(out, "whole"));
        ck_assert(!exists(out, "d/split"));
        ck_assert(!exists(out, "d"));
        ck_assert(!exists(out, "shaped"));
        ck_assert(exists(out, "clean"));
        secret_set_done(&set);
}
END_TEST

START_TEST(test_per_file_limit)
{
        _cleanup_close_ int out = make_dir(dirfd_tmp, "per-file");
        _cleanup_close_ int fd = stream_fd();
        const ExportLimits limits = { .max_file_bytes = 1000, .max_total_bytes = 1 << 20, .max_files = 10 };
        _cleanup_(export_result_done) ExportResult res = {};
        AjError e = {};

        write_file_record(fd, "exact", 1000, 300);
        write_file_record(fd, "d/over", 1001, 7);
        ck_assert_int_eq(
                export_write_refusal(fd, "big", "larger than the per-file limit of 1000 bytes", true), 0);
        ck_assert_msg(
                receive(fd, out, (char *const[]){ "exact", "d/over", "big", NULL }, &limits, &res, &e) == 0,
                "%s", e.message);
        ck_assert(res.limit_hit);
        ck_assert_int_eq(entry(&res, "exact")->state, EXPORT_EXPORTED);
        ck_assert_int_eq(entry(&res, "d/over")->state, EXPORT_REFUSED);
        ck_assert(entry(&res, "d/over")->limit);
        ck_assert_str_eq(entry(&res, "d/over")->reason, "over the per-file limit of 1000 bytes");
        ck_assert(entry(&res, "big")->limit);
        ck_assert_uint_eq(res.n_refused, 2);
        ck_assert_uint_eq(res.total_bytes, 1000);
        /* The partial file is gone, and the directory made for it. */
        ck_assert(!exists(out, "d/over"));
        ck_assert(!exists(out, "d"));
        ck_assert(exists(out, "exact"));
}
END_TEST

START_TEST(test_lying_chunks)
{
        _cleanup_close_ int out = make_dir(dirfd_tmp, "lying");
        _cleanup_close_ int fd = stream_fd();
        const ExportLimits limits = { .max_file_bytes = 1000, .max_total_bytes = 1 << 20, .max_files = 10 };
        ExportResult res = {};
        AjError e = {};

        /* Far past the limit and one byte, which the sender never sends: the stream is refused whole,
         * and what this call wrote before is removed. */
        write_file_record(fd, "first/ok", 10, 10);
        write_file_record(fd, "liar", 1 << 20, EXPORT_CHUNK_MAX);
        ck_assert_int_eq(receive(fd, out, (char *const[]){ "first/ok", "liar", NULL }, &limits, &res, &e),
                         -EBADMSG);
        ck_assert_ptr_nonnull(strstr(e.message, "liar"));
        ck_assert_ptr_null(res.entries);
        ck_assert(!exists(out, "first"));
        ck_assert(!exists(out, "liar"));
}
END_TEST

START_TEST(test_total_and_count_limits)
{
        _cleanup_close_ int out = make_dir(dirfd_tmp, "total");
        _cleanup_close_ int out2 = make_dir(dirfd_tmp, "count");
        _cleanup_close_ int fd = stream_fd();
        _cleanup_close_ int fd2 = stream_fd();
        ExportLimits limits = { .max_file_bytes = 1000, .max_total_bytes = 1000, .max_files = 10 };
        _cleanup_(export_result_done) ExportResult res = {};
        _cleanup_(export_result_done) ExportResult res2 = {};
        AjError e = {};

        write_file_record(fd, "one", 600, 100);
        write_file_record(fd, "two", 600, 100);
        write_file_record(fd, "three", 400, 100);
        ck_assert_int_eq(receive(fd, out, (char *const[]){ "one", "two", "three", NULL }, &limits, &res, &e),
                         0);
        ck_assert(res.limit_hit);
        ck_assert_int_eq(entry(&res, "one")->state, EXPORT_EXPORTED);
        ck_assert_str_eq(entry(&res, "two")->reason, "over the total limit of 1000 bytes");
        ck_assert(entry(&res, "two")->limit);
        ck_assert_int_eq(entry(&res, "three")->state, EXPORT_EXPORTED);
        ck_assert_uint_eq(res.total_bytes, 1000);
        ck_assert(!exists(out, "two"));

        limits = (ExportLimits){ .max_file_bytes = 1000, .max_total_bytes = 1000, .max_files = 1 };
        write_file_record(fd2, "one", 1, 1);
        write_file_record(fd2, "two", 1, 1);
        ck_assert_int_eq(export_write_refusal(fd2, "three", "missing", false), 0);
        ck_assert_int_eq(
                receive(fd2, out2, (char *const[]){ "one", "two", "three", NULL }, &limits, &res2, &e), 0);
        ck_assert(res2.limit_hit);
        ck_assert_int_eq(entry(&res2, "one")->state, EXPORT_EXPORTED);
        ck_assert_str_eq(entry(&res2, "two")->reason, "over the limit of 1 files");
        ck_assert(!entry(&res2, "three")->limit);
        ck_assert(!exists(out2, "two"));
}
END_TEST

START_TEST(test_names_not_requested_or_twice)
{
        _cleanup_close_ int out = make_dir(dirfd_tmp, "not-requested");
        _cleanup_close_ int fd = stream_fd();
        _cleanup_close_ int fd2 = stream_fd();
        _cleanup_close_ int fd3 = stream_fd();
        const ExportLimits limits = { .max_file_bytes = 1000, .max_total_bytes = 1000, .max_files = 10 };
        ExportResult res = {};
        AjError e = {};

        write_file_record(fd, "a/asked", 5, 5);
        write_file_record(fd, "other", 5, 5);
        ck_assert_int_eq(receive(fd, out, (char *const[]){ "a/asked", NULL }, &limits, &res, &e), -EBADMSG);
        ck_assert_ptr_nonnull(strstr(e.message, "not requested"));
        ck_assert(!exists(out, "a"));

        write_file_record(fd2, "asked", 5, 5);
        ck_assert_int_eq(export_write_refusal(fd2, "asked", "missing", false), 0);
        ck_assert_int_eq(receive(fd2, out, (char *const[]){ "asked", NULL }, &limits, &res, &e), -EBADMSG);
        ck_assert_ptr_nonnull(strstr(e.message, "second"));
        ck_assert(!exists(out, "asked"));

        /* The request itself must be usable. */
        ck_assert_int_eq(receive(fd3, out, (char *const[]){ "x", "x", NULL }, &limits, &res, &e), -EINVAL);
        ck_assert_int_eq(receive(fd3, out, (char *const[]){ "x/../y", NULL }, &limits, &res, &e), -EINVAL);
}
END_TEST

START_TEST(test_malformed_removes_everything)
{
        _cleanup_close_ int out = make_dir(dirfd_tmp, "malformed");
        _cleanup_close_ int fd = stream_fd();
        const ExportLimits limits = { .max_file_bytes = 1 << 20,
                                      .max_total_bytes = 1 << 20,
                                      .max_files = 10 };
        ExportResult res = {};
        AjError e = {};

        make_file(out, "before", 3, 3);
        write_file_record(fd, "x/y/z", 100000, 4096);
        write_file_record(fd, "x/w", 10, 10);
        ck_assert_int_eq(export_write_file_begin(fd, "half"), 0);
        ck_assert_int_eq(export_write_data(fd, "abc", 3), 0);
        /* No DONE, no END: the stream stops in the middle of a file. */
        rewind_fd(fd);
        ck_assert_int_eq(export_receive(fd, out, (char *const[]){ "x/y/z", "x/w", "half", NULL }, &limits,
                                        NULL, &res, &e),
                         -EBADMSG);
        ck_assert_str_eq(e.message, "the stream ended without its end record");
        ck_assert(!exists(out, "x"));
        ck_assert(!exists(out, "half"));
        /* What was there before is the caller's. */
        ck_assert(exists(out, "before"));
}
END_TEST

START_TEST(test_exclusive_create)
{
        _cleanup_close_ int out = make_dir(dirfd_tmp, "exclusive");
        _cleanup_close_ int fd = stream_fd();
        const ExportLimits limits = { .max_file_bytes = 1000, .max_total_bytes = 1000, .max_files = 10 };
        _cleanup_(export_result_done) ExportResult res = {};
        AjError e = {};

        make_file(out, "pre", 4, 9);
        ck_assert_int_eq(fchmodat(out, "pre", 0600, 0), 0);
        write_file_record(fd, "pre", 5, 5);
        write_file_record(fd, "new", 5, 5);
        ck_assert_int_eq(receive(fd, out, (char *const[]){ "pre", "new", NULL }, &limits, &res, &e), 0);
        ck_assert_int_eq(entry(&res, "pre")->state, EXPORT_REFUSED);
        ck_assert_int_eq(entry(&res, "pre")->error, EEXIST);
        ck_assert_str_eq(entry(&res, "pre")->reason, "exists in the output directory");
        ck_assert(!entry(&res, "pre")->limit);
        ck_assert(!res.limit_hit);
        ck_assert_uint_eq(res.n_failed, 1);
        ck_assert_int_eq(entry(&res, "new")->state, EXPORT_EXPORTED);
        check_file(out, "pre", 4, 9); /* untouched */
}
END_TEST

START_TEST(test_links_in_outdir)
{
        _cleanup_close_ int top = make_dir(dirfd_tmp, "planted");
        _cleanup_close_ int out = make_dir(top, "out");
        _cleanup_close_ int outside = make_dir(top, "outside");
        _cleanup_close_ int fd = stream_fd();
        const ExportLimits limits = { .max_file_bytes = 1000, .max_total_bytes = 1000, .max_files = 10 };
        _cleanup_(export_result_done) ExportResult res = {};
        AjError e = {};
        DIR *d;
        unsigned n = 0;

        make_file(outside, "victim", 6, 6);
        ck_assert_int_eq(fchmodat(outside, "victim", 0600, 0), 0);
        ck_assert_int_eq(symlinkat("../outside", out, "sub"), 0);
        ck_assert_int_eq(symlinkat("../outside/victim", out, "file"), 0);
        ck_assert_int_eq(symlinkat("../outside/new", out, "dangling"), 0);
        write_file_record(fd, "sub/x", 5, 5);
        write_file_record(fd, "file", 5, 5);
        write_file_record(fd, "dangling", 5, 5);
        write_file_record(fd, "sub/deeper/y", 5, 5);
        ck_assert_int_eq(receive(fd, out,
                                 (char *const[]){ "sub/x", "file", "dangling", "sub/deeper/y", NULL },
                                 &limits, &res, &e),
                         0);
        /* openat() says ENOTDIR for a link opened with O_DIRECTORY | O_NOFOLLOW. */
        ck_assert_int_eq(entry(&res, "sub/x")->error, ENOTDIR);
        ck_assert_int_eq(entry(&res, "file")->error, EEXIST);
        ck_assert_int_eq(entry(&res, "dangling")->error, EEXIST);
        ck_assert_int_eq(entry(&res, "sub/deeper/y")->error, ENOTDIR);
        ck_assert_uint_eq(res.n_failed, 4);
        check_file(outside, "victim", 6, 6);
        d = fdopendir(dup(outside));
        ck_assert_ptr_nonnull(d);
        for (struct dirent *de; (de = readdir(d));)
                n += de->d_name[0] != '.';
        (void)closedir(d);
        ck_assert_uint_eq(n, 1); /* victim alone: nothing made through the links */
}
END_TEST

int main(void)
{
        Suite *s = suite_create("export");
        TCase *frame = tcase_create("frame");
        TCase *tc = tcase_create("send-receive");

        tcase_add_unchecked_fixture(frame, setup, teardown);
        tcase_set_timeout(frame, 60);
        tcase_add_test(frame, test_name_valid);
        tcase_add_test(frame, test_writers_refuse);
        tcase_add_test(frame, test_round_trip_reader);
        tcase_add_test(frame, test_malformed);
        tcase_add_test(frame, test_callback_error);
        suite_add_tcase(s, frame);

        tcase_add_unchecked_fixture(tc, setup, teardown);
        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_sender_refusals);
        tcase_add_test(tc, test_sender_mount_not_crossed);
        tcase_add_test(tc, test_sender_names_checked_first);
        tcase_add_test(tc, test_round_trip);
        tcase_add_test(tc, test_receiver_pieces_and_drop);
        tcase_add_test(tc, test_watch_caller);
        tcase_add_test(tc, test_per_file_limit);
        tcase_add_test(tc, test_secret_refused);
        tcase_add_test(tc, test_lying_chunks);
        tcase_add_test(tc, test_total_and_count_limits);
        tcase_add_test(tc, test_names_not_requested_or_twice);
        tcase_add_test(tc, test_malformed_removes_everything);
        tcase_add_test(tc, test_exclusive_create);
        tcase_add_test(tc, test_links_in_outdir);
        suite_add_tcase(s, tc);

        return check_run(s);
}
