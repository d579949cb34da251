/* SPDX-License-Identifier: MIT */
/* bench-walk: setup's world-write and setuid walk (client/setup/harden-walk.c) against GNU find doing the
 * same job on the same tree, in the same run.
 *
 *   bench-walk --generate TREE   makes TREE (which must not exist): 10,110 directories and 190,000
 *                                entries below them (files, some o+w, some setuid and setgid root, a few
 *                                world-writable and sticky directories, links to world-writable files)
 *   bench-walk [--rounds N] TREE times both, report-only, each printing the paths it found
 *
 * The job, as find says it (the links term is what makes it the walk's job: a link's mode is 0777 and
 * -perm would list every link; the walk never looks at links):
 *
 *   find TREE -xdev \( ! -type l -perm -o+w ! -perm -1000 \) -print , \( -type f -perm -4000 -user root
 *        -print \)
 *
 * Before anything is timed, both outputs are compared as sorted lists and must be equal. Then the two run
 * alternately, N rounds (default 5) after one warm-up each, caches warm; the best time of each is
 * reported, and their ratio; the walk on one thread is timed too, since the walk's threads only help
 * where CPUs are free. find's time includes its fork and exec (about a millisecond), the walk's
 * runs in this process. Reports only; asserts nothing about time. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BENCH_NAME "bench-walk"
#define BENCH_SEED 0x9e3779b97f4a7c15ULL /* the same tree in every run */
#include "bench.h"
#include "harden-walk.h"
#include "macro.h"

#define TOP    10
#define MIDDLE 10
#define LEAVES 100 /* per middle directory: 10,000 leaf directories */
#define FILES  19  /* per leaf directory: 190,000 files and links */

static int make_dir(int parent, const char *name, mode_t mode)
{
        int fd;

        if (mkdirat(parent, name, 0700) < 0)
                die("mkdir %s: %m", name);
        fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 || fchmod(fd, mode) < 0)
                die("%s: %m", name);
        return fd;
}

static void make_file(int dir, const char *name, mode_t mode)
{
        int fd = openat(dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);

        /* fchmod() after create: the umask does not apply, and the setuid bit is kept (root). */
        if (fd < 0 || fchmod(fd, mode) < 0)
                die("%s: %m", name);
        close(fd);
}

/* About 1 in 100 files o+w, 1 in 1,000 setuid root, 1 in 2,000 setgid, 1 in 100 names a link (to a
 * sibling, maybe world-writable); 1 in 100 leaf directories is 0777 and 1 in 100 is 1777 (kept). */
static void generate(const char *tree)
{
        _cleanup_close_ int root = -EBADF;
        char name[32];

        if (mkdir(tree, 0755) < 0)
                die("mkdir %s: %m", tree);
        root = open(tree, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (root < 0)
                die("%s: %m", tree);
        for (unsigned t = 0; t < TOP; t++) {
                _cleanup_close_ int top = -EBADF;

                (void)snprintf(name, sizeof(name), "top%u", t);
                top = make_dir(root, name, 0755);
                for (unsigned m = 0; m < MIDDLE; m++) {
                        _cleanup_close_ int middle = -EBADF;

                        (void)snprintf(name, sizeof(name), "middle%u", m);
                        middle = make_dir(top, name, 0755);
                        for (unsigned l = 0; l < LEAVES; l++) {
                                _cleanup_close_ int leaf = -EBADF;
                                unsigned kind = pick(100);

                                (void)snprintf(name, sizeof(name), "leaf%u", l);
                                leaf = make_dir(middle, name, kind == 0 ? 0777 : kind == 1 ? 01777 : 0755);
                                for (unsigned f = 0; f < FILES; f++) {
                                        unsigned k = pick(2000);
                                        mode_t mode = k < 20    ? 0666
                                                      : k < 22  ? 04755
                                                      : k == 22 ? 02755
                                                                : 0644;

                                        (void)snprintf(name, sizeof(name), "file%u", f);
                                        if (k >= 23 && k < 43) {
                                                if (symlinkat("file0", leaf, name) < 0)
                                                        die("symlink: %m");
                                        } else
                                                make_file(leaf, name, mode);
                                }
                        }
                }
        }
}

/* ---- Output: both print one path a line; kept in a buffer to compare, or thrown away to time. ---- */

typedef struct Lines {
        char *text;
        size_t size;
        FILE *f;
} Lines;

static int on_event(HardenWalkEvent event, const char *path, const struct stat *st _unused_, int error,
                    void *userdata)
{
        FILE *f = userdata;

        if (event == HARDEN_WALK_ERROR)
                die("walk: %s: %s", path, strerror(error));
        if (event == HARDEN_WALK_WORLD_WRITABLE || event == HARDEN_WALK_SETUID_ROOT) {
                fputs(path, f);
                fputc('\n', f);
        }
        return 0;
}

/* threads 0: one per CPU, as setup runs it. */
static double run_walk(const char *tree, FILE *out, unsigned threads)
{
        HardenWalkOptions o = { .dry_run = true, .threads = threads, .callback = on_event, .userdata = out };
        HardenWalkStats s;
        double t0 = now_ns(), t1;
        int r;

        r = harden_walk(tree, &o, &s);
        if (fflush(out) != 0)
                die("write: %m");
        t1 = now_ns();
        if (r < 0)
                die("walk: %s", strerror(-r));
        return (t1 - t0) / 1e9;
}

/* find with its standard output on fd. */
static double run_find(const char *tree, int fd)
{
        double t0 = now_ns(), t1;
        int status;
        pid_t pid;

        pid = fork();
        if (pid < 0)
                die("fork: %m");
        if (pid == 0) {
                if (dup2(fd, STDOUT_FILENO) < 0)
                        _exit(127);
                execlp("find", "find", tree, "-xdev", "(", "!", "-type", "l", "-perm", "-o+w", "!", "-perm",
                       "-1000", ")", "-print", ",", "(", "-type", "f", "-perm", "-4000", "-user", "root",
                       "-print", ")", (char *)NULL);
                _exit(127);
        }
        if (waitpid(pid, &status, 0) < 0)
                die("waitpid: %m");
        t1 = now_ns();
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                die("find failed (status %d)", status);
        return (t1 - t0) / 1e9;
}

static int cmp_str(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The lines of text, sorted; text is cut in place. */
static char **sorted_lines(char *text, size_t *ret_n)
{
        size_t n = 0, allocated = 0;
        char **v = NULL;

        for (char *p = text, *nl; *p; p = nl + 1) {
                nl = strchr(p, '\n');
                if (!nl)
                        die("output without a final newline");
                *nl = '\0';
                if (n == allocated) {
                        allocated = allocated ? allocated * 2 : 1024;
                        v = reallocarray(v, allocated, sizeof(char *));
                        if (!v)
                                die("out of memory");
                }
                v[n++] = p;
        }
        if (n > 0)
                qsort(v, n, sizeof(char *), cmp_str);
        *ret_n = n;
        return v;
}

static char *read_all(FILE *f)
{
        char *text;
        long size;

        if (fseek(f, 0, SEEK_END) < 0 || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) < 0)
                die("tmpfile: %m");
        text = malloc((size_t)size + 1);
        if (!text || fread(text, 1, (size_t)size, f) != (size_t)size)
                die("tmpfile: %m");
        text[size] = '\0';
        return text;
}

/* Both outputs, sorted, must be the same list; returns its length. */
static size_t check_same(const char *tree)
{
        _cleanup_fclose_ FILE *ff = tmpfile(), *fw = tmpfile();
        _cleanup_free_ char *tf = NULL, *tw = NULL;
        _cleanup_free_ char **lf = NULL, **lw = NULL;
        size_t nf, nw;

        if (!ff || !fw)
                die("tmpfile: %m");
        (void)run_find(tree, fileno(ff));
        (void)run_walk(tree, fw, 0);
        tf = read_all(ff);
        tw = read_all(fw);
        lf = sorted_lines(tf, &nf);
        lw = sorted_lines(tw, &nw);
        for (size_t i = 0; i < nf && i < nw; i++)
                if (strcmp(lf[i], lw[i]) != 0)
                        die("find and the walk differ first at %s (find) and %s (walk)", lf[i], lw[i]);
        if (nf != nw)
                die("find found %zu paths, the walk %zu", nf, nw);
        return nf;
}

int main(int argc, char **argv)
{
        _cleanup_fclose_ FILE *null = NULL;
        unsigned rounds = 5;
        double best_find = 1e9, best_walk = 1e9, best_one = 1e9;
        const char *tree;
        size_t found;

        if (argc == 3 && strcmp(argv[1], "--generate") == 0) {
                generate(argv[2]);
                return EXIT_SUCCESS;
        }
        if (argc == 4 && strcmp(argv[1], "--rounds") == 0) {
                rounds = (unsigned)strtoul(argv[2], NULL, 10);
                tree = argv[3];
        } else if (argc == 2)
                tree = argv[1];
        else
                die("usage: bench-walk --generate TREE | bench-walk [--rounds N] TREE");
        if (rounds == 0 || tree[0] != '/')
                die("ROUNDS must be positive and TREE absolute");

        null = fopen("/dev/null", "we");
        if (!null)
                die("/dev/null: %m");
        found = check_same(tree);
        printf("walk: both found the same %zu paths (o+w and setuid root)\n", found);
        (void)run_find(tree, fileno(null));
        (void)run_walk(tree, null, 0);
        (void)run_walk(tree, null, 1);
        for (unsigned i = 0; i < rounds; i++) {
                double f = run_find(tree, fileno(null)), w = run_walk(tree, null, 0),
                       one = run_walk(tree, null, 1);

                printf("round %u: find %.1f ms, walk %.1f ms, walk on one thread %.1f ms\n", i + 1, f * 1e3,
                       w * 1e3, one * 1e3);
                best_find = f < best_find ? f : best_find;
                best_walk = w < best_walk ? w : best_walk;
                best_one = one < best_one ? one : best_one;
        }
        printf("walk: best of %u: find %.1f ms, walk %.1f ms (%ld CPUs online, at most %d threads), one "
               "thread "
               "%.1f ms\n",
               rounds, best_find * 1e3, best_walk * 1e3, sysconf(_SC_NPROCESSORS_ONLN),
               HARDEN_WALK_THREADS_MAX, best_one * 1e3);
        printf("walk: ratio find / walk: %.2f (target >= 2); find / walk on one thread: %.2f\n",
               best_find / best_walk, best_find / best_one);
        return EXIT_SUCCESS;
}
