/* SPDX-License-Identifier: MIT */
/* bench-run: two parts of `agentic-job run` against what a user would otherwise run for the same job, in
 * the same run.
 *
 *   bench-run [--rounds N] --clone DIR    makes DIR (which must not exist) and in it a bare source
 *       repository of 5,000 files (100 directories of 50, 200 bytes to 4 KiB each) with one commit on
 *       main, made with libgit2; then times workspace_clone() of that commit (client/run/clone.c, base
 *       main, no trusted path) against
 *         git clone --no-checkout --quiet SRC DST && git -C DST checkout --quiet COMMIT
 *       and, for reference, the same with file://SRC, which makes git send a pack as it would over the
 *       network instead of linking the source's objects (what it does for a local path).
 *   bench-run [--rounds N] --export DIR   makes DIR and in it 10,000 files (100 directories of 100, 100
 *       to 2,000 bytes each); then times export_send() and export_send_end() in a child into a pipe and
 *       export_receive() in this process (client/run/export-*.c) against
 *         tar -C SRC -cf - DIRS... | tar -C OUT -xf -
 *
 * git and tar run from /usr/bin and /bin with an environment of PATH, HOME (a directory of DIR) and
 * GIT_CONFIG_NOSYSTEM=1, no shell; their times include their fork and exec, the export's its fork and
 * its pipe. Before anything is timed, each side does the job once (a warm-up) and the results are
 * compared: the same number of files, and the same bytes for one file in 25 and the last; a difference
 * is fatal. Then N rounds (default 5), interleaved, each output removed between rounds outside the
 * timing; the best time of each is reported and the ratio. DIR is removed at the end. Reports only;
 * asserts nothing about time. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <git2.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define BENCH_NAME "bench-run"
#define BENCH_SEED 0x2545f4914f6cdd1dULL /* the same files in every run */
#include "bench.h"
#include "clone.h"
#include "export-frame.h"
#include "export-inside.h"
#include "export-receive.h"
#include "macro.h"

#define CLONE_DIRS  100
#define CLONE_FILES 50 /* per directory: 5,000 files */
#define CLONE_MIN   200
#define CLONE_MAX   4096

#define EXPORT_DIRS  100
#define EXPORT_FILES 100 /* per directory: 10,000 files */
#define EXPORT_MIN   100
#define EXPORT_MAX   2000

#define SAMPLE_STEP 25 /* compare one file in 25, and the last */

#define GIT "/usr/bin/git"
#define TAR "/bin/tar"

static char *child_env[4];

/* ---- Shared: names, contents, children, trees. ---- */

/* "dNN/fNN", dirs x files of them, NULL-terminated. */
static char **make_names(unsigned dirs, unsigned files)
{
        char **v = calloc((size_t)dirs * files + 1, sizeof(char *));

        if (!v)
                die("out of memory");
        for (unsigned d = 0; d < dirs; d++)
                for (unsigned f = 0; f < files; f++)
                        if (asprintf(&v[d * files + f], "d%02u/f%02u", d, f) < 0)
                                die("out of memory");
        return v;
}

/* Text: lowercase letters, a newline every 64 bytes; min to max bytes. Returns the size. */
static size_t fill(char *buf, size_t min, size_t max)
{
        size_t size = min + pick((unsigned)(max - min + 1));

        for (size_t i = 0; i < size; i++)
                buf[i] = i % 64 == 63 ? '\n' : (char)('a' + pick(26));
        return size;
}

static pid_t spawn(char *const argv[], int in_fd, int out_fd)
{
        pid_t pid = fork();

        if (pid < 0)
                die("fork: %m");
        if (pid == 0) {
                if ((in_fd >= 0 && dup2(in_fd, STDIN_FILENO) < 0) ||
                    (out_fd >= 0 && dup2(out_fd, STDOUT_FILENO) < 0))
                        _exit(127);
                execve(argv[0], argv, child_env);
                _exit(127);
        }
        return pid;
}

static void wait_ok(pid_t pid, const char *what)
{
        int status;

        if (waitpid(pid, &status, 0) < 0)
                die("waitpid: %m");
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                die("%s failed (status %d)", what, status);
}

static int rm_one(const char *path, const struct stat *st _unused_, int type _unused_,
                  struct FTW *ftw _unused_)
{
        if (remove(path) < 0)
                die("remove %s: %m", path);
        return 0;
}

static void rm_tree(const char *path)
{
        if (nftw(path, rm_one, 64, FTW_DEPTH | FTW_PHYS) < 0)
                die("remove %s: %m", path);
}

/* The regular files below name, ".git" left out; anything but a file or a directory is fatal. */
static unsigned count_files(int parent, const char *name)
{
        _cleanup_close_ int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        struct dirent *de;
        unsigned n = 0;
        DIR *d;

        if (fd < 0)
                die("%s: %m", name);
        d = fdopendir(fd);
        if (!d)
                die("%s: %m", name);
        fd = -EBADF; /* the DIR's now */
        while ((errno = 0, de = readdir(d))) {
                struct stat st;

                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
                    strcmp(de->d_name, ".git") == 0)
                        continue;
                if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        die("%s/%s: %m", name, de->d_name);
                if (S_ISDIR(st.st_mode))
                        n += count_files(dirfd(d), de->d_name);
                else if (S_ISREG(st.st_mode))
                        n++;
                else
                        die("%s/%s: neither a file nor a directory", name, de->d_name);
        }
        if (errno != 0)
                die("readdir %s: %m", name);
        closedir(d);
        return n;
}

static char *read_whole(const char *dir, const char *name, size_t *ret_size)
{
        _cleanup_free_ char *path = NULL;
        _cleanup_fclose_ FILE *f = NULL;
        char *text;
        long size;

        if (asprintf(&path, "%s/%s", dir, name) < 0)
                die("out of memory");
        f = fopen(path, "re");
        if (!f)
                die("%s: %m", path);
        if (fseek(f, 0, SEEK_END) < 0 || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) < 0)
                die("%s: %m", path);
        text = malloc((size_t)size + 1);
        if (!text || fread(text, 1, (size_t)size, f) != (size_t)size)
                die("%s: cannot read", path);
        *ret_size = (size_t)size;
        return text;
}

static void check_file(const char *a, const char *b, const char *name)
{
        _cleanup_free_ char *x = NULL, *y = NULL;
        size_t sx, sy;

        x = read_whole(a, name, &sx);
        y = read_whole(b, name, &sy);
        if (sx != sy || memcmp(x, y, sx) != 0)
                die("%s differs between %s and %s", name, a, b);
}

/* Both trees hold n files (".git" aside), and the sampled ones have the same bytes. */
static void check_same(const char *a, const char *b, char *const *names, unsigned n)
{
        unsigned na = count_files(AT_FDCWD, a), nb = count_files(AT_FDCWD, b);

        if (na != n || nb != n)
                die("%s has %u files, %s %u; %u expected", a, na, b, nb, n);
        for (unsigned i = 0; i < n; i += SAMPLE_STEP)
                check_file(a, b, names[i]);
        check_file(a, b, names[n - 1]);
}

static char *path_in(const char *dir, const char *name)
{
        char *p;

        if (asprintf(&p, "%s/%s", dir, name) < 0)
                die("out of memory");
        return p;
}

static double min_of(double a, double b)
{
        return a < b ? a : b;
}

/* ---- Clone. ---- */

_noreturn_ static void git_die(const char *what)
{
        const git_error *e = git_error_last();

        die("%s: %s", what, e && e->message ? e->message : "libgit2 failed");
}

/* A bare repository at src, main's one commit holding CLONE_DIRS x CLONE_FILES files, HEAD at main. */
static void make_source(const char *src, char *const *names, char ret_hex[static 41])
{
        git_repository *repo = NULL;
        git_index *index = NULL;
        git_signature *sig = NULL;
        git_tree *tree = NULL;
        git_oid tree_oid, commit;
        char buf[CLONE_MAX];

        if (git_repository_init(&repo, src, 1) < 0)
                git_die("init");
        if (git_index_new(&index) < 0)
                git_die("index");
        for (unsigned i = 0; names[i]; i++) {
                git_index_entry e = { .mode = GIT_FILEMODE_BLOB, .path = names[i] };
                size_t size = fill(buf, CLONE_MIN, CLONE_MAX);

                if (git_blob_create_from_buffer(&e.id, repo, buf, size) < 0 || git_index_add(index, &e) < 0)
                        git_die(names[i]);
        }
        if (git_index_write_tree_to(&tree_oid, index, repo) < 0 ||
            git_tree_lookup(&tree, repo, &tree_oid) < 0)
                git_die("tree");
        if (git_signature_new(&sig, "Bench", "bench@example.invalid", 1700000000, 0) < 0)
                git_die("signature");
        if (git_commit_create_v(&commit, repo, "refs/heads/main", sig, sig, NULL, "5,000 files", tree, 0) <
            0)
                git_die("commit");
        if (git_repository_set_head(repo, "refs/heads/main") < 0)
                git_die("HEAD");
        (void)git_oid_tostr(ret_hex, 41, &commit);
        git_signature_free(sig);
        git_tree_free(tree);
        git_index_free(index);
        git_repository_free(repo);
}

static double clone_ours(const char *src, const char *commit, const char *dst)
{
        static char *const no_trusted[] = { NULL };
        CloneRequest req = {
                .url = src, .commit = commit, .base = "main", .trusted_paths = no_trusted, .dir = dst
        };
        CloneResult res;
        AjError e = {};
        double t0 = now_ns(), t1;
        int r;

        r = workspace_clone(&req, NULL, NULL, &res, &e);
        t1 = now_ns();
        if (r < 0)
                die("workspace_clone: %s", e.message);
        if (strcmp(res.commit, commit) != 0)
                die("workspace_clone checked out %s, not %s", res.commit, commit);
        return (t1 - t0) / 1e9;
}

static double clone_git(const char *url, const char *commit, const char *dst)
{
        char *const clone[] = { GIT, "clone", "--no-checkout", "--quiet", (char *)url, (char *)dst, NULL };
        char *const checkout[] = { GIT, "-C", (char *)dst, "checkout", "--quiet", (char *)commit, NULL };
        double t0 = now_ns();

        wait_ok(spawn(clone, -EBADF, -EBADF), "git clone");
        wait_ok(spawn(checkout, -EBADF, -EBADF), "git checkout");
        return (now_ns() - t0) / 1e9;
}

static void bench_clone(const char *dir, unsigned rounds)
{
        _cleanup_libgit2_ int git_init = 0;
        _cleanup_strv_free_ char **names = make_names(CLONE_DIRS, CLONE_FILES);
        _cleanup_free_ char *src = path_in(dir, "src.git"), *ours = path_in(dir, "ours"),
                            *git = path_in(dir, "git"), *git_file = path_in(dir, "git-file"), *url = NULL;
        double best_ours = 1e9, best_git = 1e9, best_file = 1e9;
        unsigned n = CLONE_DIRS * CLONE_FILES;
        char commit[41];
        AjError e = {};

        git_init = libgit2_init_isolated(&e);
        if (git_init < 0)
                die("%s", e.message);
        make_source(src, names, commit);
        if (asprintf(&url, "file://%s", src) < 0)
                die("out of memory");
        printf("clone: a source of %u files in %u directories, commit %s on main\n", n, CLONE_DIRS, commit);

        /* The warm-up, and the check that all three did the same job. */
        (void)clone_ours(src, commit, ours);
        (void)clone_git(src, commit, git);
        (void)clone_git(url, commit, git_file);
        check_same(ours, git, names, n);
        check_same(ours, git_file, names, n);
        printf("clone: all three checked out the same %u files\n", n);
        rm_tree(ours);
        rm_tree(git);
        rm_tree(git_file);

        for (unsigned i = 0; i < rounds; i++) {
                double o = clone_ours(src, commit, ours), g = clone_git(src, commit, git),
                       f = clone_git(url, commit, git_file);

                printf("round %u: workspace_clone %.1f ms, git clone + checkout %.1f ms, the same of "
                       "file:// "
                       "%.1f ms\n",
                       i + 1, o * 1e3, g * 1e3, f * 1e3);
                best_ours = min_of(best_ours, o);
                best_git = min_of(best_git, g);
                best_file = min_of(best_file, f);
                rm_tree(ours);
                rm_tree(git);
                rm_tree(git_file);
        }
        printf("clone: best of %u: workspace_clone %.1f ms, git clone --no-checkout + checkout %.1f ms, of "
               "file:// %.1f ms\n",
               rounds, best_ours * 1e3, best_git * 1e3, best_file * 1e3);
        printf("clone: ours is %.2f times as fast as git (git / ours; the target is at least 1); %.2f times "
               "as fast as git of file://\n",
               best_git / best_ours, best_file / best_ours);
}

/* ---- Export. ---- */

static void make_files(const char *src, char *const *names, uint64_t *ret_bytes)
{
        _cleanup_close_ int root = -EBADF;
        char buf[EXPORT_MAX], name[16];
        uint64_t total = 0;

        if (mkdir(src, 0755) < 0)
                die("mkdir %s: %m", src);
        root = open(src, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (root < 0)
                die("%s: %m", src);
        for (unsigned d = 0; d < EXPORT_DIRS; d++) {
                (void)snprintf(name, sizeof(name), "d%02u", d);
                if (mkdirat(root, name, 0755) < 0)
                        die("mkdir %s: %m", name);
        }
        for (unsigned i = 0; names[i]; i++) {
                _cleanup_close_ int fd = -EBADF;
                size_t size = fill(buf, EXPORT_MIN, EXPORT_MAX);

                fd = openat(root, names[i], O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
                if (fd < 0 || write(fd, buf, size) != (ssize_t)size)
                        die("%s: %m", names[i]);
                total += size;
        }
        *ret_bytes = total;
}

static int open_new_dir(const char *path)
{
        int fd;

        if (mkdir(path, 0700) < 0)
                die("mkdir %s: %m", path);
        fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                die("%s: %m", path);
        return fd;
}

static double export_ours(int src_fd, const char *out, char *const *names, uint64_t bytes)
{
        static const ExportLimits limits = { .max_file_bytes = 1024 * 1024,
                                             .max_total_bytes = 1024 * 1024 * 1024,
                                             .max_files = EXPORT_DIRS * EXPORT_FILES };
        _cleanup_close_ int out_fd = open_new_dir(out);
        ExportResult res;
        SecretSet secrets;
        AjError e = {};
        double t0, t1;
        int p[2], r;
        pid_t pid;

        /* As run searches: a run token and the patterns (the runner's variables add a few more). */
        secret_set_init(&secrets);
        if (secret_set_add(&secrets, "bench-token-0123456789abcdef", 28, "the run token") < 0)
                die("secret_set_add");
        t0 = now_ns();
        if (pipe2(p, O_CLOEXEC) < 0)
                die("pipe: %m");
        pid = fork();
        if (pid < 0)
                die("fork: %m");
        if (pid == 0) {
                (void)close(p[0]);
                _exit(export_send(src_fd, names, &limits, p[1]) < 0 || export_send_end(p[1]) < 0 ? 1 : 0);
        }
        (void)close(p[1]);
        r = export_receive(p[0], out_fd, names, &limits, &secrets, &res, &e);
        (void)close(p[0]);
        wait_ok(pid, "export_send");
        t1 = now_ns();
        if (r < 0)
                die("export_receive: %s", e.message);
        if (res.n_exported != res.n_entries || res.total_bytes != bytes)
                die("export_receive: %zu of %zu files exported, %llu bytes of %llu", res.n_exported,
                    res.n_entries, (unsigned long long)res.total_bytes, (unsigned long long)bytes);
        export_result_done(&res);
        secret_set_done(&secrets);
        return (t1 - t0) / 1e9;
}

static double export_tar(const char *src, const char *out)
{
        /* TAR -C SRC -cf - d00 ... d99 NULL */
        char *create[5 + EXPORT_DIRS + 1] = { TAR, "-C", (char *)src, "-cf", "-" }, names[EXPORT_DIRS][8];
        char *const extract[] = { TAR, "-C", (char *)out, "-xf", "-", NULL };
        double t0;
        pid_t c, x;
        int p[2];

        for (unsigned d = 0; d < EXPORT_DIRS; d++) {
                (void)snprintf(names[d], sizeof(names[d]), "d%02u", d);
                create[5 + d] = names[d];
        }
        if (mkdir(out, 0700) < 0)
                die("mkdir %s: %m", out);
        t0 = now_ns();
        if (pipe2(p, O_CLOEXEC) < 0)
                die("pipe: %m");
        c = spawn(create, -EBADF, p[1]);
        x = spawn(extract, p[0], -EBADF);
        (void)close(p[0]);
        (void)close(p[1]);
        wait_ok(c, "tar -c");
        wait_ok(x, "tar -x");
        return (now_ns() - t0) / 1e9;
}

static void bench_export(const char *dir, unsigned rounds)
{
        _cleanup_strv_free_ char **names = make_names(EXPORT_DIRS, EXPORT_FILES);
        _cleanup_free_ char *src = path_in(dir, "src"), *ours = path_in(dir, "ours"),
                            *tar = path_in(dir, "tar");
        _cleanup_close_ int src_fd = -EBADF;
        double best_ours = 1e9, best_tar = 1e9;
        unsigned n = EXPORT_DIRS * EXPORT_FILES;
        uint64_t bytes;

        make_files(src, names, &bytes);
        src_fd = open(src, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (src_fd < 0)
                die("%s: %m", src);
        printf("export: %u files in %u directories, %.2f MB\n", n, EXPORT_DIRS, (double)bytes / 1e6);

        (void)export_ours(src_fd, ours, names, bytes);
        (void)export_tar(src, tar);
        check_same(src, ours, names, n);
        check_same(src, tar, names, n);
        printf("export: both wrote the same %u files\n", n);
        rm_tree(ours);
        rm_tree(tar);

        for (unsigned i = 0; i < rounds; i++) {
                double o = export_ours(src_fd, ours, names, bytes), t = export_tar(src, tar);

                printf("round %u: export_send | export_receive %.1f ms, tar -c | tar -x %.1f ms\n", i + 1,
                       o * 1e3, t * 1e3);
                best_ours = min_of(best_ours, o);
                best_tar = min_of(best_tar, t);
                rm_tree(ours);
                rm_tree(tar);
        }
        printf("export: best of %u: ours %.1f ms (%.0f files/s, %.1f MB/s), tar %.1f ms (%.0f files/s, %.1f "
               "MB/s)\n",
               rounds, best_ours * 1e3, n / best_ours, (double)bytes / 1e6 / best_ours, best_tar * 1e3,
               n / best_tar, (double)bytes / 1e6 / best_tar);
        printf("export: ours is %.2f times as fast as tar (tar / ours)\n", best_tar / best_ours);
}

int main(int argc, char **argv)
{
        _cleanup_free_ char *home = NULL, *home_env = NULL;
        unsigned rounds = 5;
        const char *mode, *dir;

        if (argc == 5 && strcmp(argv[1], "--rounds") == 0) {
                rounds = (unsigned)strtoul(argv[2], NULL, 10);
                argv += 2;
        } else if (argc != 3)
                die("usage: bench-run [--rounds N] --clone DIR | bench-run [--rounds N] --export DIR");
        mode = argv[1];
        dir = argv[2];
        if (rounds == 0 || dir[0] != '/')
                die("ROUNDS must be positive and DIR absolute");
        if (strcmp(mode, "--clone") != 0 && strcmp(mode, "--export") != 0)
                die("unknown mode %s", mode);

        if (mkdir(dir, 0700) < 0)
                die("mkdir %s: %m", dir);
        home = path_in(dir, "home");
        if (mkdir(home, 0700) < 0)
                die("mkdir %s: %m", home);
        if (asprintf(&home_env, "HOME=%s", home) < 0)
                die("out of memory");
        child_env[0] = "PATH=/usr/bin:/bin";
        child_env[1] = home_env;
        child_env[2] = "GIT_CONFIG_NOSYSTEM=1";
        child_env[3] = NULL;
        /* Our output before the children's, whatever stdout is. */
        setvbuf(stdout, NULL, _IOLBF, 0);

        if (strcmp(mode, "--clone") == 0)
                bench_clone(dir, rounds);
        else
                bench_export(dir, rounds);
        rm_tree(dir);
        return EXIT_SUCCESS;
}
