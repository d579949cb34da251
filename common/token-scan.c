/* SPDX-License-Identifier: MIT */
#include "token-scan.h"

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "macro.h"

/* What is looked for: the secret's bytes, or (print set) a secret known by its print alone. */
typedef struct Needle {
        const char *secret;
        size_t size;
        const KeyPrint *print;
} Needle;

static bool needle_in(const Needle *n, const char *data, size_t size)
{
        if (n->print)
                return key_print_find(n->print, data, size);
        return size >= n->size && memmem(data, size, n->secret, n->size);
}

static bool errno_denied(int err)
{
        return err == EACCES || err == EPERM;
}

/* An open that failed because the entry went away or was swapped for something else since its stat: a
 * link (ELOOP), a socket or a device without a driver (ENXIO, ENODEV), not a directory (ENOTDIR). */
static bool errno_raced(int err)
{
        return err == ENOENT || err == ELOOP || err == ENXIO || err == ENODEV || err == ENOTDIR;
}

/* The buffer scan_fd() needs: the kept tail of the previous chunk, then a chunk. */
static int scan_buffer_new(size_t secret_size, char **ret)
{
        assert(secret_size > 0);
        if (secret_size - 1 > SIZE_MAX - TOKEN_SCAN_CHUNK)
                return -EINVAL;
        *ret = malloc(secret_size - 1 + TOKEN_SCAN_CHUNK);
        return *ret ? 0 : -ENOMEM;
}

/* Reads fd to its end, or until budget bytes were read, looking for the secret. Returns 1 (found) or 0,
 * with the bytes read in *ret_read and *ret_more set when the budget ran out before the end; or -errno. */
static int scan_fd(int fd, const Needle *needle, char *buf, uint64_t budget, uint64_t *ret_read,
                   bool *ret_more)
{
        size_t keep = 0;
        uint64_t done = 0;

        *ret_more = false;
        for (;;) {
                size_t want = TOKEN_SCAN_CHUNK, have;
                ssize_t k;

                if (done >= budget) {
                        /* Whether anything is left is not known without reading it: incomplete. */
                        *ret_more = true;
                        break;
                }
                if (budget - done < want)
                        want = (size_t)(budget - done);
                k = read(fd, buf + keep, want);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        *ret_read = done;
                        return -errno;
                }
                if (k == 0)
                        break;
                done += (uint64_t)k;
                have = keep + (size_t)k;
                if (needle_in(needle, buf, have)) {
                        *ret_read = done;
                        return 1;
                }
                keep = have < needle->size - 1 ? have : needle->size - 1;
                memmove(buf, buf + have - keep, keep);
        }
        *ret_read = done;
        return 0;
}

typedef struct Walk {
        const Needle *needle;
        const struct stat *skip;
        size_t n_skip;
        const TokenScanLimits *lim;
        TokenScan *scan;
        dev_t dev; /* of the root: nothing on another filesystem is searched */
        char *buf;
        char path[PATH_MAX]; /* root, then the entry at hand */
} Walk;

static bool walk_skipped(const Walk *w, const struct stat *st)
{
        for (size_t i = 0; i < w->n_skip; i++)
                if (w->skip[i].st_dev == st->st_dev && w->skip[i].st_ino == st->st_ino)
                        return true;
        return false;
}

/* The walk's internal returns: < 0 an error, 0 go on, STOP found or a limit on all roots reached. */
#define STOP 1

static int walk_found(Walk *w)
{
        w->scan->found = strdup(w->path);
        return w->scan->found ? STOP : -ENOMEM;
}

/* The regular file name in dir_fd, whose fstatat() gave *st. */
static int walk_file(Walk *w, int dir_fd, const char *name, const struct stat *st)
{
        struct stat fst;
        uint64_t n = 0;
        bool more;
        int r;

        if (st->st_dev != w->dev || walk_skipped(w, st))
                return 0;
        if (w->scan->files >= w->lim->max_files || w->scan->bytes >= w->lim->max_bytes) {
                w->scan->truncated = true;
                return STOP;
        }
        _cleanup_close_ int fd =
                openat(dir_fd, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
        if (fd < 0) {
                if (errno_denied(errno)) {
                        w->scan->denied++;
                        return 0;
                }
                return errno_raced(errno) ? 0 : -errno;
        }
        /* What was opened is what counts: the entry may have been swapped since the stat. */
        if (fstat(fd, &fst) < 0)
                return -errno;
        if (!S_ISREG(fst.st_mode) || fst.st_dev != w->dev || walk_skipped(w, &fst))
                return 0;
        w->scan->files++;
        r = scan_fd(fd, w->needle, w->buf, w->lim->max_bytes - w->scan->bytes, &n, &more);
        w->scan->bytes += n;
        if (r < 0)
                return r;
        if (r > 0)
                return walk_found(w);
        if (more) {
                w->scan->truncated = true;
                return STOP;
        }
        return 0;
}

/* Searches the directory dir_fd (taken, always closed), at depth below the root, w->path its path of
 * length len. */
static int walk_dir(Walk *w, int dir_fd, size_t len, unsigned depth)
{
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *de;

        d = fdopendir(dir_fd);
        if (!d) {
                int r = -errno;

                (void)close(dir_fd);
                return r;
        }
        w->scan->dirs++;
        while ((errno = 0, de = readdir(d))) {
                const char *name = de->d_name;
                size_t sep = w->path[len - 1] == '/' ? 0 : 1, n = strlen(name);
                struct stat st;
                int r = 0;

                if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
                        continue;
                if (len + sep + n >= sizeof(w->path)) {
                        /* Not searched: its path cannot be told. */
                        w->scan->truncated = true;
                        continue;
                }
                if (sep)
                        w->path[len] = '/';
                memcpy(w->path + len + sep, name, n + 1);

                if (fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                        if (errno_denied(errno))
                                w->scan->denied++;
                        else if (errno != ENOENT)
                                r = -errno;
                } else if (S_ISREG(st.st_mode))
                        r = walk_file(w, dir_fd, name, &st);
                else if (S_ISDIR(st.st_mode) && st.st_dev == w->dev && !walk_skipped(w, &st)) {
                        if (depth >= w->lim->max_depth)
                                w->scan->truncated = true;
                        else {
                                int fd = openat(dir_fd, name,
                                                O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                                struct stat fst;

                                if (fd < 0) {
                                        if (errno_denied(errno))
                                                w->scan->denied++;
                                        else if (!errno_raced(errno))
                                                r = -errno;
                                } else if (fstat(fd, &fst) < 0) {
                                        r = -errno;
                                        (void)close(fd);
                                } else if (fst.st_dev != w->dev)
                                        (void)close(fd); /* mounted over since the stat */
                                else
                                        r = walk_dir(w, fd, len + sep + n, depth + 1);
                        }
                }
                /* Links, FIFOs, sockets and devices are never opened. */

                w->path[len] = '\0';
                if (r != 0)
                        return r;
        }
        return errno != 0 ? -errno : 0;
}

static int scan_tree(const char *root, const Needle *needle, const struct stat *skip, size_t n_skip,
                     const TokenScanLimits *lim, TokenScan *scan)
{
        _cleanup_free_ char *buf = NULL;
        _cleanup_free_ Walk *w = NULL;
        struct stat st;
        size_t len;
        int r;

        assert(root);
        assert(skip || n_skip == 0);
        assert(lim);
        assert(scan);

        if (scan->found)
                return 0;
        len = strlen(root);
        if (len == 0)
                return -EINVAL;
        if (len >= PATH_MAX)
                return -ENAMETOOLONG;
        _cleanup_close_ int fd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 && errno_denied(errno)) {
                /* A root closed to the caller is the answer the search wants: nothing under it is read. */
                scan->denied++;
                return 0;
        }
        if (fd < 0)
                return errno == ENOENT ? 0 : -errno;
        if (fstat(fd, &st) < 0)
                return -errno;

        r = scan_buffer_new(needle->size, &buf);
        if (r < 0)
                return r;
        w = malloc(sizeof(*w));
        if (!w)
                return -ENOMEM;
        *w = (Walk){
                .needle = needle,
                .skip = skip,
                .n_skip = n_skip,
                .lim = lim,
                .scan = scan,
                .dev = st.st_dev,
                .buf = buf,
        };
        /* "dir/" and "dir" name the same; only "/" keeps its slash. */
        while (len > 1 && root[len - 1] == '/')
                len--;
        memcpy(w->path, root, len);
        w->path[len] = '\0';

        /* cppcheck-suppress unreadVariable ; TAKE_FD() leaves -EBADF for the cleanup, which reads it */
        r = walk_dir(w, TAKE_FD(fd), len, 0);
        return r < 0 ? r : 0;
}

int token_scan_tree(const char *root, const char *secret, size_t secret_size, const struct stat *skip,
                    size_t n_skip, const TokenScanLimits *lim, TokenScan *scan)
{
        assert(secret);
        assert(secret_size > 0);
        return scan_tree(root, &(Needle){ .secret = secret, .size = secret_size }, skip, n_skip, lim, scan);
}

int key_scan_tree(const char *root, const KeyPrint *print, const struct stat *skip, size_t n_skip,
                  const TokenScanLimits *lim, TokenScan *scan)
{
        assert(print);
        return scan_tree(root, &(Needle){ .size = print->size, .print = print }, skip, n_skip, lim, scan);
}

/* Searches dir_fd/name of process pid ("environ" or "cmdline"). */
static int scan_proc_file(int dir_fd, const char *name, long pid, const Needle *needle, char *buf,
                          TokenScan *scan, bool *ret_read)
{
        _cleanup_close_ int fd =
                openat(dir_fd, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
        struct stat st;
        uint64_t n = 0;
        bool more;
        int r;

        *ret_read = false;
        if (fd < 0) {
                if (errno_denied(errno)) {
                        scan->denied++;
                        return 0;
                }
                return errno == ENOENT || errno == ESRCH ? 0 : -errno;
        }
        if (fstat(fd, &st) < 0)
                return errno == ESRCH ? 0 : -errno;
        if (!S_ISREG(st.st_mode))
                return 0;
        r = scan_fd(fd, needle, buf, TOKEN_SCAN_PROC_MAX, &n, &more);
        if (r < 0) {
                if (errno_denied(-r)) {
                        scan->denied++;
                        return 0;
                }
                /* It exited while being read. */
                return r == -ESRCH ? 0 : r;
        }
        *ret_read = true;
        if (r > 0) {
                if (asprintf(&scan->found, "pid %ld %s", pid, name) < 0) {
                        scan->found = NULL;
                        return -ENOMEM;
                }
                return STOP;
        }
        if (more)
                scan->truncated = true;
        return 0;
}

static int scan_processes(const char *proc_root, const Needle *needle, TokenScan *scan)
{
        _cleanup_closedir_ DIR *d = NULL;
        _cleanup_free_ char *buf = NULL;
        struct dirent *de;
        int fd, r;

        assert(proc_root);
        assert(scan);

        if (scan->found)
                return 0;
        r = scan_buffer_new(needle->size, &buf);
        if (r < 0)
                return r;
        fd = open(proc_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        d = fdopendir(fd);
        if (!d) {
                r = -errno;
                (void)close(fd);
                return r;
        }
        while ((errno = 0, de = readdir(d))) {
                static const char *const files[] = { "environ", "cmdline" };
                bool any = false;
                char *end;
                long pid;

                if (de->d_name[0] < '1' || de->d_name[0] > '9')
                        continue;
                errno = 0;
                pid = strtol(de->d_name, &end, 10);
                if (*end || errno || pid <= 0)
                        continue;
                _cleanup_close_ int pid_fd =
                        openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (pid_fd < 0) {
                        if (errno_denied(errno))
                                scan->denied++;
                        else if (errno != ENOENT && errno != ESRCH && errno != ELOOP && errno != ENOTDIR)
                                return -errno;
                        continue; /* denied, exited, or no process directory */
                }
                for (size_t i = 0; i < ELEMENTSOF(files); i++) {
                        bool read_it;

                        r = scan_proc_file(pid_fd, files[i], pid, needle, buf, scan, &read_it);
                        if (r < 0)
                                return r;
                        any = any || read_it;
                        if (r > 0)
                                break;
                }
                if (any)
                        scan->processes++;
                if (r > 0)
                        return 0;
        }
        return errno != 0 ? -errno : 0;
}

int token_scan_processes(const char *proc_root, const char *secret, size_t secret_size, TokenScan *scan)
{
        assert(secret);
        assert(secret_size > 0);
        return scan_processes(proc_root, &(Needle){ .secret = secret, .size = secret_size }, scan);
}

int key_scan_processes(const char *proc_root, const KeyPrint *print, TokenScan *scan)
{
        assert(print);
        return scan_processes(proc_root, &(Needle){ .size = print->size, .print = print }, scan);
}

void token_scan_done(TokenScan *scan)
{
        if (!scan)
                return;
        free(scan->found);
        scan->found = NULL;
}
