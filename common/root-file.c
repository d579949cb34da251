/* SPDX-License-Identifier: MIT */
#include "root-file.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "macro.h"
#include "spawn.h"
#include "write-all.h"

#define TEMP_ATTEMPTS      16
#define VALIDATOR_KEEP     4096
#define VALIDATOR_MAX_ARGS 32
#define TEMP_SUFFIX_LEN    16

/* Splits an absolute path into a newly allocated parent directory and a pointer to its last component. */
static int split_path(const char *path, char **ret_parent, const char **ret_base)
{
        const char *slash = strrchr(path, '/');
        const char *base = slash + 1;
        char *parent;

        if (path[0] != '/')
                return -EINVAL;
        if (base[0] == '\0' || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
                return -EINVAL;
        parent = slash == path ? strdup("/") : strndup(path, (size_t)(slash - path));
        if (!parent)
                return -ENOMEM;
        *ret_parent = parent;
        *ret_base = base;
        return 0;
}

/* Creates ".BASE.tmp-RANDOM" in dfd exclusively; the name into ret_name (size bytes). */
static int create_temp(int dfd, const char *base, mode_t mode, char *ret_name, size_t size)
{
        for (unsigned attempt = 0; attempt < TEMP_ATTEMPTS; attempt++) {
                unsigned char rnd[TEMP_SUFFIX_LEN / 2];
                char hex[TEMP_SUFFIX_LEN + 1];
                ssize_t k;
                int fd, n;

                do
                        k = getrandom(rnd, sizeof(rnd), 0);
                while (k < 0 && errno == EINTR);
                if (k < 0)
                        return -errno;
                if ((size_t)k != sizeof(rnd))
                        return -EIO;
                for (size_t i = 0; i < sizeof(rnd); i++)
                        (void)snprintf(hex + 2 * i, 3, "%02x", rnd[i]);
                n = snprintf(ret_name, size, ".%s.tmp-%s", base, hex);
                if (n < 0 || (size_t)n >= size)
                        return -ENAMETOOLONG;

                fd = openat(dfd, ret_name, O_CREAT | O_EXCL | O_NOFOLLOW | O_WRONLY | O_CLOEXEC | O_NOCTTY,
                            mode);
                if (fd >= 0)
                        return fd;
                if (errno != EEXIST)
                        return -errno;
        }
        return -EEXIST;
}

/* Runs validator with file appended. 0 when it exits 0; otherwise -EINVAL (or -errno when it could not be
 * started) with *reterr filled. */
static int run_validator(const char *path, char *const *validator, const char *file, AjError *reterr)
{
        char *argv[VALIDATOR_MAX_ARGS + 2];
        _cleanup_free_ char *out = NULL;
        size_t n = strv_length(validator), kept = 0;
        char line[256];
        int status;

        if (n == 0 || validator[0][0] != '/')
                return aj_error(reterr, EINVAL, 0, 0, "%s: the validator's program is not an absolute path",
                                path);

        if (n > VALIDATOR_MAX_ARGS)
                return aj_error(reterr, E2BIG, 0, 0, "%s: the validator has more than %d arguments", path,
                                VALIDATOR_MAX_ARGS);
        memcpy(argv, validator, n * sizeof(char *));
        argv[n] = (char *)file;
        argv[n + 1] = NULL;

        status = spawn_wait(argv, NULL, SPAWN_MERGE_STDERR, VALIDATOR_KEEP, &out, &kept);
        if (status < 0)
                return aj_error(reterr, -status, 0, 0, "%s: running %s: %s", path, argv[0],
                                strerror(-status));
        if (status == 0)
                return 0;
        spawn_first_line(out, kept, line, sizeof(line));
        if (status < 128)
                return aj_error(reterr, EINVAL, 0, 0, "%s: %s refused the new content (exit status %d)%s%s",
                                path, argv[0], status, line[0] ? ": " : "", line);
        return aj_error(reterr, EINVAL, 0, 0, "%s: %s refused the new content (killed by signal %d)%s%s",
                        path, argv[0], status - 128, line[0] ? ": " : "", line);
}

/* Everything between creating the temporary file and renaming it; the caller removes it on failure. */
static int fill_temp(const char *path, int fd, const void *data, size_t size, mode_t mode, uid_t uid,
                     gid_t gid, char *const *validator, const char *temp_path, AjError *reterr)
{
        int r;

        r = write_all(fd, data, size);
        if (r < 0)
                return aj_error(reterr, -r, 0, 0, "%s: writing the temporary file: %s", path, strerror(-r));
        if (fchown(fd, uid, gid) < 0)
                return aj_error(reterr, errno, 0, 0, "%s: fchown: %s", path, strerror(errno));
        /* After fchown(), which clears set-id bits; and whatever the umask took away at creation. */
        if (fchmod(fd, mode) < 0)
                return aj_error(reterr, errno, 0, 0, "%s: fchmod: %s", path, strerror(errno));
        if (fsync(fd) < 0)
                return aj_error(reterr, errno, 0, 0, "%s: fsync: %s", path, strerror(errno));
        if (validator)
                return run_validator(path, validator, temp_path, reterr);
        return 0;
}

/* Opens path's parent (never through a link as its last component) and checks that only root, the
 * effective uid or dir_owner can change what is in it. */
static int open_trusted_parent(const char *path, uid_t dir_owner, char **ret_parent, const char **ret_base,
                               int *ret_dfd, AjError *reterr)
{
        _cleanup_free_ char *parent = NULL;
        _cleanup_close_ int dfd = -EBADF;
        const char *base = NULL;
        struct stat st;
        int r;

        r = split_path(path, &parent, &base);
        if (r == -ENOMEM)
                return aj_error(reterr, ENOMEM, 0, 0, "%s: %s", path, strerror(ENOMEM));
        if (r < 0)
                return aj_error(reterr, EINVAL, 0, 0, "%s: not an absolute path to a file", path);

        dfd = open(parent, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dfd < 0) {
                int err = errno;

                /* With O_DIRECTORY a link fails as ENOTDIR; look again only to say which. */
                if (err == ENOTDIR && fstatat(AT_FDCWD, parent, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                    S_ISLNK(st.st_mode))
                        err = ELOOP;
                if (err == ELOOP)
                        return aj_error(reterr, ELOOP, 0, 0, "%s: the directory %s is a link", path, parent);
                return aj_error(reterr, err, 0, 0, "%s: the directory %s: %s", path, parent, strerror(err));
        }
        if (fstat(dfd, &st) < 0)
                return aj_error(reterr, errno, 0, 0, "%s: the directory %s: %s", path, parent,
                                strerror(errno));
        if (st.st_uid != 0 && st.st_uid != geteuid() && (dir_owner == (uid_t)-1 || st.st_uid != dir_owner))
                return aj_error(reterr, EPERM, 0, 0, "%s: the directory %s is owned by uid %u, not root",
                                path, parent, (unsigned)st.st_uid);
        if (st.st_mode & (S_IWGRP | S_IWOTH))
                return aj_error(reterr, EPERM, 0, 0, "%s: the directory %s is writable by %s (mode %04o)",
                                path, parent, st.st_mode & S_IWOTH ? "others" : "its group",
                                (unsigned)(st.st_mode & 07777));
        *ret_parent = TAKE_PTR(parent);
        *ret_base = base;
        /* cppcheck-suppress unreadVariable ; TAKE_FD() leaves -EBADF for the cleanup, which reads it */
        *ret_dfd = TAKE_FD(dfd);
        return 0;
}

int root_file_check_parent(const char *path, uid_t dir_owner, AjError *reterr)
{
        _cleanup_free_ char *parent = NULL;
        _cleanup_close_ int dfd = -EBADF;
        const char *base = NULL;

        assert(path);
        return open_trusted_parent(path, dir_owner, &parent, &base, &dfd, reterr);
}

int root_file_write(const char *path, const void *data, size_t size, mode_t mode, uid_t uid, gid_t gid,
                    char *const *validator, AjError *reterr)
{
        return root_file_write_in(path, (uid_t)-1, data, size, mode, uid, gid, validator, reterr);
}

int root_file_write_in(const char *path, uid_t dir_owner, const void *data, size_t size, mode_t mode,
                       uid_t uid, gid_t gid, char *const *validator, AjError *reterr)
{
        _cleanup_free_ char *parent = NULL, *temp_path = NULL;
        _cleanup_close_ int dfd = -EBADF, fd = -EBADF;
        char temp[NAME_MAX + 1];
        const char *base = NULL;
        int r;

        assert(path);
        assert(data || size == 0);
        assert((mode & ~(mode_t)07777) == 0);

        r = open_trusted_parent(path, dir_owner, &parent, &base, &dfd, reterr);
        if (r < 0)
                return r;

        fd = create_temp(dfd, base, mode, temp, sizeof(temp));
        if (fd < 0)
                return aj_error(reterr, -fd, 0, 0, "%s: creating a temporary file in %s: %s", path, parent,
                                fd == -EEXIST ? "every name tried exists" : strerror(-fd));
        if (asprintf(&temp_path, "%s/%s", strcmp(parent, "/") == 0 ? "" : parent, temp) < 0) {
                temp_path = NULL;
                r = aj_error(reterr, ENOMEM, 0, 0, "%s: %s", path, strerror(ENOMEM));
                goto fail;
        }

        r = fill_temp(path, fd, data, size, mode, uid, gid, validator, temp_path, reterr);
        if (r < 0)
                goto fail;
        if (close(TAKE_FD(fd)) < 0) {
                r = aj_error(reterr, errno, 0, 0, "%s: closing the temporary file: %s", path,
                             strerror(errno));
                goto fail;
        }
        /* rename(2) replaces NAME itself, a link included: it never writes through one. */
        if (renameat(dfd, temp, dfd, base) < 0) {
                r = aj_error(reterr, errno, 0, 0, "%s: rename: %s", path, strerror(errno));
                goto fail;
        }
        if (fsync(dfd) < 0)
                return aj_error(reterr, errno, 0, 0, "%s: the new file is in place, but fsync of %s: %s",
                                path, parent, strerror(errno));
        return 0;

fail:
        (void)unlinkat(dfd, temp, 0);
        return r;
}
