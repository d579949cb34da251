/* SPDX-License-Identifier: MIT */
/* token_scan_tree() and token_scan_processes(): the search for copies of the run token in what the
 * sandbox user can read, never through a link, never opening anything but a regular file. */
#include <check.h>

#include "check-run.h"
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "macro.h"
#include "token-scan.h"

/* Made once by the parent (an unchecked fixture), so it is removed even when a test fails in its child. */
static char tmpdir[] = "/tmp/agentic-job-test-token-scan-XXXXXX";
static int dirfd_tmp = -EBADF;

static const TokenScanLimits wide = { .max_files = 10000, .max_bytes = 1ULL << 30, .max_depth = 32 };

static int rm_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
        (void)st;
        (void)ftw;
        /* FTW_DNR: a directory of mode 000 (left so by a failed test), empty, so rmdir() works. */
        return type == FTW_DP || type == FTW_DNR ? rmdir(path) : unlink(path);
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

/* A secret nobody else holds: "AJTOKEN-" and 32 random hex digits. */
static void make_secret(char buf[static 41])
{
        unsigned char rnd[16];

        ck_assert_int_eq(getrandom(rnd, sizeof(rnd), 0), (ssize_t)sizeof(rnd));
        memcpy(buf, "AJTOKEN-", 8);
        for (size_t i = 0; i < sizeof(rnd); i++)
                (void)snprintf(buf + 8 + 2 * i, 3, "%02x", rnd[i]);
}

static void make_dir(const char *rel)
{
        ck_assert_int_eq(mkdirat(dirfd_tmp, rel, 0755), 0);
}

/* Writes the bytes to rel (relative to the temporary directory). */
static void make_file(const char *rel, const void *data, size_t size)
{
        _cleanup_close_ int fd = openat(dirfd_tmp, rel, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, data, size), (ssize_t)size);
}

/* A file of filler ('a' to 'z', which never makes a secret), with the secret at offset at. */
static void make_file_with(const char *rel, size_t size, const char *secret, size_t at)
{
        _cleanup_free_ char *buf = malloc(size);

        ck_assert_ptr_nonnull(buf);
        for (size_t i = 0; i < size; i++)
                buf[i] = (char)('a' + i % 26);
        if (secret) {
                ck_assert_uint_le(at + strlen(secret), size);
                memcpy(buf + at, secret, strlen(secret));
        }
        make_file(rel, buf, size);
}

static void path_of(char *buf, size_t size, const char *rel)
{
        ck_assert_int_lt(snprintf(buf, size, "%s/%s", tmpdir, rel), (int)size);
}

static int scan_rel(const char *rel, const char *secret, const struct stat *skip, size_t n_skip,
                    const TokenScanLimits *lim, TokenScan *scan)
{
        char root[256];

        path_of(root, sizeof(root), rel);
        return token_scan_tree(root, secret, strlen(secret), skip, n_skip, lim, scan);
}

START_TEST(test_found)
{
        TokenScan scan = { 0 }, again = { 0 };
        char secret[41], text[128], want[256], root[256];

        make_secret(secret);
        make_dir("t-found");
        make_dir("t-found/sub");
        make_dir("t-found/sub/deep");
        make_file_with("t-found/plain", 4096, NULL, 0);
        make_file_with("t-found/sub/other", 100, NULL, 0);
        (void)snprintf(text, sizeof(text), "export TOKEN=%s\n", secret);
        make_file("t-found/sub/deep/holder.txt", text, strlen(text));

        ck_assert_int_eq(scan_rel("t-found", secret, NULL, 0, &wide, &scan), 0);
        path_of(want, sizeof(want), "t-found/sub/deep/holder.txt");
        ck_assert_ptr_nonnull(scan.found);
        ck_assert_str_eq(scan.found, want);
        ck_assert(!scan.truncated);
        ck_assert_uint_ge(scan.files, 1);
        ck_assert_uint_ge(scan.dirs, 3);

        /* A root written with trailing slashes names the same paths. */
        path_of(root, sizeof(root), "t-found//");
        ck_assert_int_eq(token_scan_tree(root, secret, strlen(secret), NULL, 0, &wide, &again), 0);
        ck_assert_ptr_nonnull(again.found);
        ck_assert_str_eq(again.found, want);

        /* Once found, a later root is not searched. */
        ck_assert_int_eq(token_scan_tree(root, secret, strlen(secret), NULL, 0, &wide, &again), 0);
        ck_assert_str_eq(again.found, want);
        token_scan_done(&scan);
        token_scan_done(&again);
        ck_assert_ptr_null(again.found);
}
END_TEST

START_TEST(test_not_found)
{
        TokenScan scan = { 0 };
        char secret[41];

        make_secret(secret);
        make_dir("t-none");
        make_dir("t-none/a");
        make_file_with("t-none/one", 70000, NULL, 0);
        /* All of the secret but its last byte is not a find. */
        make_file("t-none/a/prefix", secret, strlen(secret) - 1);
        make_file("t-none/a/empty", "", 0);

        ck_assert_int_eq(scan_rel("t-none", secret, NULL, 0, &wide, &scan), 0);
        ck_assert_ptr_null(scan.found);
        ck_assert(!scan.truncated);
        ck_assert_uint_eq(scan.files, 3);
        ck_assert_uint_eq(scan.dirs, 2);
        ck_assert_uint_eq(scan.bytes, 70000 + strlen(secret) - 1);
        ck_assert_uint_eq(scan.denied, 0);
        token_scan_done(&scan);
}
END_TEST

START_TEST(test_chunk_boundary)
{
        char secret[41];
        size_t len;

        make_secret(secret);
        len = strlen(secret);
        make_dir("t-chunk");
        /* Every split of the secret across the first chunk boundary, and its two ends on it (split 0: it
         * starts the second chunk; split len: it ends the first). */
        for (size_t split = 0; split <= len; split++) {
                TokenScan scan = { 0 };
                char rel[64], want[256];

                (void)snprintf(rel, sizeof(rel), "t-chunk/%zu", split);
                make_dir(rel);
                (void)snprintf(rel, sizeof(rel), "t-chunk/%zu/file", split);
                make_file_with(rel, TOKEN_SCAN_CHUNK + 100, secret, TOKEN_SCAN_CHUNK - split);
                (void)snprintf(rel, sizeof(rel), "t-chunk/%zu", split);
                ck_assert_int_eq(scan_rel(rel, secret, NULL, 0, &wide, &scan), 0);
                (void)snprintf(rel, sizeof(rel), "t-chunk/%zu/file", split);
                path_of(want, sizeof(want), rel);
                ck_assert_msg(scan.found && strcmp(scan.found, want) == 0, "split %zu: found %s", split,
                              scan.found ? scan.found : "nothing");
                token_scan_done(&scan);
        }

        /* And across the second boundary of a larger file. */
        {
                TokenScan scan = { 0 };

                make_dir("t-chunk2");
                make_file_with("t-chunk2/file", 3 * TOKEN_SCAN_CHUNK, secret, 2 * TOKEN_SCAN_CHUNK - 7);
                ck_assert_int_eq(scan_rel("t-chunk2", secret, NULL, 0, &wide, &scan), 0);
                ck_assert_ptr_nonnull(scan.found);
                token_scan_done(&scan);
        }
}
END_TEST

/* The same search by the secret's print alone (key_scan_tree): every split across the chunk boundary. */
START_TEST(test_key_chunk_boundary)
{
        char secret[41];
        size_t len;
        KeyPrint print;

        make_secret(secret);
        len = strlen(secret);
        ck_assert_int_eq(key_print_make(secret, len, &print), 0);
        make_dir("k-chunk");
        for (size_t split = 0; split <= len; split++) {
                TokenScan scan = { 0 };
                char rel[64], want[256], root[256];

                (void)snprintf(rel, sizeof(rel), "k-chunk/%zu", split);
                make_dir(rel);
                (void)snprintf(rel, sizeof(rel), "k-chunk/%zu/file", split);
                make_file_with(rel, TOKEN_SCAN_CHUNK + 100, secret, TOKEN_SCAN_CHUNK - split);
                path_of(want, sizeof(want), rel);
                (void)snprintf(rel, sizeof(rel), "k-chunk/%zu", split);
                path_of(root, sizeof(root), rel);
                ck_assert_int_eq(key_scan_tree(root, &print, NULL, 0, &wide, &scan), 0);
                ck_assert_msg(scan.found && strcmp(scan.found, want) == 0, "split %zu: found %s", split,
                              scan.found ? scan.found : "nothing");
                token_scan_done(&scan);
        }
        /* One byte of it different: nothing found, every file read. */
        {
                TokenScan scan = { 0 };
                char root[256];

                secret[len / 2] ^= 1;
                make_dir("k-none");
                make_file_with("k-none/file", 3 * TOKEN_SCAN_CHUNK, secret, TOKEN_SCAN_CHUNK - 5);
                path_of(root, sizeof(root), "k-none");
                ck_assert_int_eq(key_scan_tree(root, &print, NULL, 0, &wide, &scan), 0);
                ck_assert_ptr_null(scan.found);
                ck_assert_uint_eq(scan.files, 1);
                ck_assert_uint_eq(scan.bytes, 3 * TOKEN_SCAN_CHUNK);
        }
}
END_TEST

START_TEST(test_skip)
{
        TokenScan scan = { 0 };
        struct stat skip[2];
        char secret[41], want[256];

        make_secret(secret);
        make_dir("t-skip");
        make_file("t-skip/expected", secret, strlen(secret));
        make_file("t-skip/copy", secret, strlen(secret));
        make_file("t-skip/unrelated", "x", 1);
        ck_assert_int_eq(fstatat(dirfd_tmp, "t-skip/expected", &skip[0], AT_SYMLINK_NOFOLLOW), 0);
        ck_assert_int_eq(fstatat(dirfd_tmp, "t-skip/unrelated", &skip[1], AT_SYMLINK_NOFOLLOW), 0);

        ck_assert_int_eq(scan_rel("t-skip", secret, skip, 2, &wide, &scan), 0);
        path_of(want, sizeof(want), "t-skip/copy");
        ck_assert_ptr_nonnull(scan.found);
        ck_assert_str_eq(scan.found, want);
        token_scan_done(&scan);

        /* With the copy gone, the expected holder alone is no find, and is not even read. */
        ck_assert_int_eq(unlinkat(dirfd_tmp, "t-skip/copy", 0), 0);
        scan = (TokenScan){ 0 };
        ck_assert_int_eq(scan_rel("t-skip", secret, skip, 2, &wide, &scan), 0);
        ck_assert_ptr_null(scan.found);
        ck_assert_uint_eq(scan.files, 0);

        /* Without the skip list it is found: the test above is not vacuous. */
        ck_assert_int_eq(scan_rel("t-skip", secret, NULL, 0, &wide, &scan), 0);
        ck_assert_ptr_nonnull(scan.found);
        token_scan_done(&scan);

        /* A skipped directory is not entered (the workspace, cloned before the token existed). */
        make_dir("t-skip/tree");
        make_file("t-skip/tree/copy", secret, strlen(secret));
        ck_assert_int_eq(fstatat(dirfd_tmp, "t-skip/tree", &skip[1], AT_SYMLINK_NOFOLLOW), 0);
        scan = (TokenScan){ 0 };
        ck_assert_int_eq(scan_rel("t-skip", secret, skip, 2, &wide, &scan), 0);
        ck_assert_ptr_null(scan.found);
        scan = (TokenScan){ 0 };
        ck_assert_int_eq(scan_rel("t-skip", secret, skip, 1, &wide, &scan), 0);
        ck_assert_ptr_nonnull(scan.found);
        token_scan_done(&scan);
}
END_TEST

START_TEST(test_symlink)
{
        TokenScan scan = { 0 };
        char secret[41], root[256];
        int r;

        make_secret(secret);
        make_dir("t-link-out");
        make_file("t-link-out/holder", secret, strlen(secret));
        make_dir("t-link");
        ck_assert_int_eq(symlinkat("../t-link-out/holder", dirfd_tmp, "t-link/file"), 0);
        ck_assert_int_eq(symlinkat("../t-link-out", dirfd_tmp, "t-link/dir"), 0);

        ck_assert_int_eq(scan_rel("t-link", secret, NULL, 0, &wide, &scan), 0);
        ck_assert_ptr_null(scan.found);
        ck_assert_uint_eq(scan.files, 0);
        ck_assert_uint_eq(scan.dirs, 1);

        /* The root itself is not a link to follow either (O_DIRECTORY|O_NOFOLLOW: ENOTDIR on Linux). */
        ck_assert_int_eq(symlinkat("t-link-out", dirfd_tmp, "t-link-root"), 0);
        path_of(root, sizeof(root), "t-link-root");
        r = token_scan_tree(root, secret, strlen(secret), NULL, 0, &wide, &scan);
        ck_assert_msg(r == -ENOTDIR || r == -ELOOP, "root through a link: %d", r);
        ck_assert_ptr_null(scan.found);

        /* The control: where the links point, it is found. */
        ck_assert_int_eq(scan_rel("t-link-out", secret, NULL, 0, &wide, &scan), 0);
        ck_assert_ptr_nonnull(scan.found);
        token_scan_done(&scan);
}
END_TEST

START_TEST(test_fifo)
{
        TokenScan scan = { 0 };
        char secret[41];

        make_secret(secret);
        make_dir("t-fifo");
        /* No writer: an open would hang here (or a read would, had it opened), and the tcase timeout
         * fails it. */
        ck_assert_int_eq(mkfifoat(dirfd_tmp, "t-fifo/token.txt", 0644), 0);
        make_file("t-fifo/plain", "x", 1);

        ck_assert_int_eq(scan_rel("t-fifo", secret, NULL, 0, &wide, &scan), 0);
        ck_assert_ptr_null(scan.found);
        ck_assert_uint_eq(scan.files, 1);
        ck_assert_uint_eq(scan.bytes, 1);
        token_scan_done(&scan);
}
END_TEST

/* The scan of t-denied as the caller it runs as; 0 when it says denied 1 and no find. */
static int denied_scan(const char *secret)
{
        TokenScan scan = { 0 };
        int r;

        r = scan_rel("t-denied", secret, NULL, 0, &wide, &scan);
        r = r == 0 && scan.denied == 1 && !scan.found && scan.files == 1 ? 0 : 1;
        /* A root it may not open is no error either: closed, as the runner's home should be. */
        if (r == 0)
                r = scan_rel("t-denied/locked", secret, NULL, 0, &wide, &scan) == 0 && scan.denied == 2 &&
                                    !scan.found
                            ? 0
                            : 1;
        token_scan_done(&scan);
        return r;
}

START_TEST(test_denied)
{
        char secret[41];

        make_secret(secret);
        make_dir("t-denied");
        make_dir("t-denied/locked");
        make_file("t-denied/locked/holder", secret, strlen(secret));
        make_file("t-denied/plain", "x", 1);
        ck_assert_int_eq(fchmodat(dirfd_tmp, "t-denied/locked", 0, 0), 0);

        if (geteuid() != 0)
                ck_assert_int_eq(denied_scan(secret), 0);
        else {
                /* Root reads a directory of mode 000 anyway, so the assertion is skipped as root; the
                 * same scan is made instead in a child that dropped to nobody (65534). */
                pid_t pid;
                int status;

                ck_assert_int_eq(chmod(tmpdir, 0711), 0);
                pid = fork();
                ck_assert_int_ge(pid, 0);
                if (pid == 0) {
                        if (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 ||
                            setresuid(65534, 65534, 65534) < 0)
                                _exit(2);
                        _exit(denied_scan(secret));
                }
                ck_assert_int_eq(waitpid(pid, &status, 0), pid);
                ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "as nobody: status %d", status);
        }
        ck_assert_int_eq(fchmodat(dirfd_tmp, "t-denied/locked", 0755, 0), 0);
}
END_TEST

START_TEST(test_max_files)
{
        TokenScanLimits lim = wide;
        TokenScan scan = { 0 };
        char secret[41];

        make_secret(secret);
        make_dir("t-files");
        make_file("t-files/1", "a", 1);
        make_file("t-files/2", "b", 1);
        make_file("t-files/3", "c", 1);

        lim.max_files = 2;
        ck_assert_int_eq(scan_rel("t-files", secret, NULL, 0, &lim, &scan), 0);
        ck_assert(scan.truncated);
        ck_assert_uint_eq(scan.files, 2);
        ck_assert_ptr_null(scan.found);

        /* Exactly enough: complete. */
        lim.max_files = 3;
        scan = (TokenScan){ 0 };
        ck_assert_int_eq(scan_rel("t-files", secret, NULL, 0, &lim, &scan), 0);
        ck_assert(!scan.truncated);
        ck_assert_uint_eq(scan.files, 3);
}
END_TEST

START_TEST(test_max_bytes)
{
        TokenScanLimits lim = wide;
        TokenScan scan = { 0 };
        char secret[41];
        uint64_t files;

        make_secret(secret);
        make_dir("t-bytes");
        make_file_with("t-bytes/big", 1000, secret, 900);

        lim.max_bytes = 500;
        ck_assert_int_eq(scan_rel("t-bytes", secret, NULL, 0, &lim, &scan), 0);
        ck_assert(scan.truncated);
        ck_assert_uint_eq(scan.bytes, 500);
        ck_assert_ptr_null(scan.found);

        /* The limits are shared by the roots of one scan: a second root gets nothing more. */
        files = scan.files;
        ck_assert_int_eq(scan_rel("t-bytes", secret, NULL, 0, &lim, &scan), 0);
        ck_assert_uint_eq(scan.bytes, 500);
        ck_assert_uint_eq(scan.files, files);
        ck_assert_ptr_null(scan.found);

        lim.max_bytes = 1000;
        scan = (TokenScan){ 0 };
        ck_assert_int_eq(scan_rel("t-bytes", secret, NULL, 0, &lim, &scan), 0);
        ck_assert_ptr_nonnull(scan.found);
        token_scan_done(&scan);
}
END_TEST

START_TEST(test_max_depth)
{
        TokenScanLimits lim = wide;
        TokenScan scan = { 0 };
        char secret[41];

        make_secret(secret);
        make_dir("t-depth");
        make_dir("t-depth/a");
        make_dir("t-depth/a/b");
        make_dir("t-depth/a/b/c");
        make_file("t-depth/a/b/c/holder", secret, strlen(secret));

        lim.max_depth = 2;
        ck_assert_int_eq(scan_rel("t-depth", secret, NULL, 0, &lim, &scan), 0);
        ck_assert(scan.truncated);
        ck_assert_ptr_null(scan.found);
        ck_assert_uint_eq(scan.dirs, 3);

        lim.max_depth = 3;
        scan = (TokenScan){ 0 };
        ck_assert_int_eq(scan_rel("t-depth", secret, NULL, 0, &lim, &scan), 0);
        ck_assert(!scan.truncated);
        ck_assert_ptr_nonnull(scan.found);
        token_scan_done(&scan);
}
END_TEST

START_TEST(test_missing_root)
{
        TokenScan scan = { 0 };
        char secret[41];

        make_secret(secret);
        ck_assert_int_eq(scan_rel("t-missing", secret, NULL, 0, &wide, &scan), 0);
        ck_assert_uint_eq(scan.dirs, 0);
        ck_assert_uint_eq(scan.files, 0);
        ck_assert(!scan.truncated);
        ck_assert_ptr_null(scan.found);

        /* A root that is a file is an error, not an empty search. */
        make_file("t-root-file", secret, strlen(secret));
        ck_assert_int_eq(scan_rel("t-root-file", secret, NULL, 0, &wide, &scan), -ENOTDIR);
        ck_assert_ptr_null(scan.found);
}
END_TEST

/* Waits until /proc/PID/file reads non-empty: the pipe closed at exec comes before the kernel set the new
 * program's arguments and environment. */
static void wait_exec_done(pid_t pid, const char *file)
{
        char path[64], c;

        (void)snprintf(path, sizeof(path), "/proc/%ld/%s", (long)pid, file);
        for (int i = 0; i < 10000; i++) {
                _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);

                if (fd >= 0 && read(fd, &c, 1) == 1)
                        return;
                (void)nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
        }
        ck_abort_msg("%s stayed empty", path);
}

/* Runs /bin/sleep 30 with argv and envp; returns once it runs. */
static pid_t spawn_sleeper(char *const argv[], char *const envp[], const char *wait_file)
{
        int p[2], err = 0;
        pid_t pid;

        ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                (void)close(p[0]);
                execve("/bin/sleep", argv, envp);
                err = errno;
                _exit(write(p[1], &err, sizeof(err)) == (ssize_t)sizeof(err) ? 127 : 126);
        }
        (void)close(p[1]);
        ck_assert_int_eq(read(p[0], &err, sizeof(err)), 0);
        (void)close(p[0]);
        wait_exec_done(pid, wait_file);
        return pid;
}

static void reap(pid_t pid)
{
        (void)kill(pid, SIGKILL);
        (void)waitpid(pid, NULL, 0);
}

START_TEST(test_processes_environ)
{
        TokenScan scan = { 0 };
        char secret[41], entry[64], want[64];
        char *argv[] = { "sleep", "30", NULL };
        char *envp[] = { entry, NULL };
        pid_t pid;
        int r;

        make_secret(secret);
        (void)snprintf(entry, sizeof(entry), "AJ_RUN_TOKEN=%s", secret);
        pid = spawn_sleeper(argv, envp, "environ");
        r = token_scan_processes("/proc", secret, strlen(secret), &scan);
        reap(pid);

        ck_assert_int_eq(r, 0);
        (void)snprintf(want, sizeof(want), "pid %ld environ", (long)pid);
        ck_assert_ptr_nonnull(scan.found);
        ck_assert_str_eq(scan.found, want);
        token_scan_done(&scan);
}
END_TEST

START_TEST(test_processes_argv)
{
        TokenScan scan = { 0 };
        char secret[41], want[64];
        /* argv[0] is free text to sleep: the secret there keeps it running. */
        char *argv[] = { secret, "30", NULL };
        char *envp[] = { NULL };
        pid_t pid;
        int r;

        make_secret(secret);
        pid = spawn_sleeper(argv, envp, "cmdline");
        r = token_scan_processes("/proc", secret, strlen(secret), &scan);
        reap(pid);

        ck_assert_int_eq(r, 0);
        (void)snprintf(want, sizeof(want), "pid %ld cmdline", (long)pid);
        ck_assert_ptr_nonnull(scan.found);
        ck_assert_str_eq(scan.found, want);
        token_scan_done(&scan);
}
END_TEST

START_TEST(test_key_processes_argv)
{
        TokenScan scan = { 0 };
        char secret[41], want[64];
        char *argv[] = { secret, "30", NULL };
        char *envp[] = { NULL };
        KeyPrint print;
        pid_t pid;
        int r;

        make_secret(secret);
        ck_assert_int_eq(key_print_make(secret, strlen(secret), &print), 0);
        pid = spawn_sleeper(argv, envp, "cmdline");
        r = key_scan_processes("/proc", &print, &scan);
        reap(pid);

        ck_assert_int_eq(r, 0);
        (void)snprintf(want, sizeof(want), "pid %ld cmdline", (long)pid);
        ck_assert_ptr_nonnull(scan.found);
        ck_assert_str_eq(scan.found, want);
        token_scan_done(&scan);
}
END_TEST

START_TEST(test_processes_absent)
{
        TokenScan scan = { 0 };
        char secret[41];

        make_secret(secret);
        ck_assert_int_eq(token_scan_processes("/proc", secret, strlen(secret), &scan), 0);
        ck_assert_ptr_null(scan.found);
        ck_assert(!scan.truncated);
        /* At least this process was read. */
        ck_assert_uint_ge(scan.processes, 1);
}
END_TEST

START_TEST(test_processes_fake_root)
{
        TokenScan scan = { 0 };
        char secret[41], root[256];

        make_secret(secret);
        make_dir("t-proc");
        /* Not a pid: ignored. */
        make_dir("t-proc/abc");
        make_file("t-proc/abc/environ", secret, strlen(secret));
        make_dir("t-proc/0123");
        make_file("t-proc/0123/cmdline", secret, strlen(secret));
        /* A FIFO is never read (no hang), a link to a process directory never followed. */
        make_dir("t-proc/77");
        ck_assert_int_eq(mkfifoat(dirfd_tmp, "t-proc/77/environ", 0644), 0);
        make_file("t-proc/77/cmdline", "sleep\0", 6);
        ck_assert_int_eq(symlinkat("abc", dirfd_tmp, "t-proc/88"), 0);

        path_of(root, sizeof(root), "t-proc");
        ck_assert_int_eq(token_scan_processes(root, secret, strlen(secret), &scan), 0);
        ck_assert_ptr_null(scan.found);
        ck_assert_uint_eq(scan.processes, 1);

        make_dir("t-proc/123");
        make_file("t-proc/123/environ", secret, strlen(secret));
        scan = (TokenScan){ 0 };
        ck_assert_int_eq(token_scan_processes(root, secret, strlen(secret), &scan), 0);
        ck_assert_ptr_nonnull(scan.found);
        ck_assert_str_eq(scan.found, "pid 123 environ");
        token_scan_done(&scan);

        path_of(root, sizeof(root), "t-proc-missing");
        ck_assert_int_eq(token_scan_processes(root, secret, strlen(secret), &scan), -ENOENT);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("token-scan");
        TCase *tc = tcase_create("token_scan");

        tcase_add_unchecked_fixture(tc, setup, teardown);
        tcase_set_timeout(tc, 30);
        tcase_add_test(tc, test_found);
        tcase_add_test(tc, test_not_found);
        tcase_add_test(tc, test_chunk_boundary);
        tcase_add_test(tc, test_skip);
        tcase_add_test(tc, test_key_chunk_boundary);
        tcase_add_test(tc, test_key_processes_argv);
        tcase_add_test(tc, test_symlink);
        tcase_add_test(tc, test_fifo);
        tcase_add_test(tc, test_denied);
        tcase_add_test(tc, test_max_files);
        tcase_add_test(tc, test_max_bytes);
        tcase_add_test(tc, test_max_depth);
        tcase_add_test(tc, test_missing_root);
        tcase_add_test(tc, test_processes_environ);
        tcase_add_test(tc, test_processes_argv);
        tcase_add_test(tc, test_processes_absent);
        tcase_add_test(tc, test_processes_fake_root);
        suite_add_tcase(s, tc);

        return check_run(s);
}
