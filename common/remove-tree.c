/* SPDX-License-Identifier: MIT */
/* The tree removal (remove-tree.h): an iterative walk with one open directory per level, so the C stack
 * does not grow with the depth; what lies deeper than the table of levels is moved up and walked again. */
#include "remove-tree.h"

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "macro.h"

typedef struct Level {
        DIR *dir;
        char name[NAME_MAX + 1]; /* its name in the directory one level up */
} Level;

static int stat_at(int dirfd, const char *name, int flags, struct statx *ret)
{
        if (statx(dirfd, name, flags | AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT,
                  STATX_TYPE | STATX_MODE | STATX_UID | STATX_INO | STATX_MNT_ID, ret) < 0)
                return -errno;
        return 0;
}

/* A bind mount of the same file system has the same st_dev: the mount id tells them apart. */
static bool same_mount(const struct statx *a, const struct statx *b)
{
        if (a->stx_dev_major != b->stx_dev_major || a->stx_dev_minor != b->stx_dev_minor)
                return false;
        return !(a->stx_mask & b->stx_mask & STATX_MNT_ID) || a->stx_mnt_id == b->stx_mnt_id;
}

static int unlink_gone(int dirfd, const char *name, int flags)
{
        if (unlinkat(dirfd, name, flags) < 0 && errno != ENOENT)
                return -errno;
        return 0;
}

/* Opens the directory st describes. Reading it and removing names from it need u+rwx, which its owner
 * may give it: fchmodat() follows a link put in its place meanwhile, but the caller may only change the
 * modes of its own files, and nothing else of the sandbox user runs during the disposal. */
static int open_dir(int dirfd, const char *name, const struct statx *st, DIR **ret)
{
        struct stat opened;
        int fd;

        if (st->stx_uid == geteuid() && (st->stx_mode & 0700) != 0700 &&
            fchmodat(dirfd, name, (st->stx_mode & 07777) | 0700, 0) < 0)
                return -errno;
        fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &opened) < 0 || opened.st_ino != st->stx_ino ||
            opened.st_dev != makedev(st->stx_dev_major, st->stx_dev_minor)) {
                (void)close(fd);
                return -ESTALE; /* not the directory just looked at */
        }
        *ret = fdopendir(fd);
        if (!*ret) {
                int r = -errno;
                (void)close(fd);
                return r;
        }
        return 0;
}

/* A directory one level deeper than the walk holds open is moved up into the top, under a name of its
 * own there (RENAME_NOREPLACE), and removed from there in a later pass: so no depth stops the removal.
 * Moving a directory to another parent rewrites its "..": it needs u+w, which its owner may give it. */
static int move_up(int fd, const char *name, const struct statx *st, int top_fd, unsigned *counter)
{
        char up[32];

        if (st->stx_uid == geteuid() && (st->stx_mode & 0700) != 0700 &&
            fchmodat(fd, name, (st->stx_mode & 07777) | 0700, 0) < 0)
                return -errno;
        for (;;) {
                (void)snprintf(up, sizeof(up), ".remove-tree-%u", (*counter)++);
                if (renameat2(fd, name, top_fd, up, RENAME_NOREPLACE) == 0)
                        return 0;
                if (errno != EEXIST)
                        return -errno;
        }
}

/* Empties the directory open at stack[0], leaving stack[0] open: each loop reads one name of the deepest
 * open level, and an emptied level is closed and removed from the one above. What lies deeper than
 * REMOVE_TREE_DEPTH_MAX is moved up into the top (*moved counts them): the caller reads the top again. */
static int empty_tree(Level *stack, const struct statx *top, unsigned *counter, unsigned *moved)
{
        size_t depth = 1;
        int r = 0;

        while (depth > 0 && r == 0) {
                Level *l = &stack[depth - 1];
                int fd = dirfd(l->dir);
                struct dirent *de;
                struct statx st;

                if (fd < 0) {
                        r = -errno;
                        break;
                }
                errno = 0;
                de = readdir(l->dir);
                if (!de) {
                        if (errno != 0) {
                                r = -errno;
                                break;
                        }
                        if (depth == 1)
                                break;
                        (void)closedir(l->dir);
                        l->dir = NULL;
                        depth--;
                        fd = dirfd(stack[depth - 1].dir);
                        r = fd < 0 ? -errno : unlink_gone(fd, l->name, AT_REMOVEDIR);
                        continue;
                }
                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;
                r = stat_at(fd, de->d_name, 0, &st);
                if (r == -ENOENT) {
                        r = 0;
                        continue;
                }
                if (r < 0)
                        break;
                if (!S_ISDIR(st.stx_mode)) {
                        r = unlink_gone(fd, de->d_name, 0);
                        continue;
                }
                if (!same_mount(top, &st))
                        r = -EXDEV;
                else if (depth > REMOVE_TREE_DEPTH_MAX) {
                        r = move_up(fd, de->d_name, &st, dirfd(stack[0].dir), counter);
                        *moved += r == 0;
                } else if (strlen(de->d_name) >= sizeof(stack[depth].name))
                        r = -ENAMETOOLONG;
                else {
                        strcpy(stack[depth].name, de->d_name);
                        r = open_dir(fd, de->d_name, &st, &stack[depth].dir);
                        if (r == 0)
                                depth++;
                }
        }
        for (size_t i = 1; i < depth; i++)
                (void)closedir(stack[i].dir);
        return r;
}

int remove_tree_at(int dirfd, const char *name)
{
        _cleanup_free_ Level *stack = NULL;
        struct statx parent, top;
        unsigned counter = 0;
        int r;

        assert(name);

        r = stat_at(dirfd, name, 0, &top);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        if (!S_ISDIR(top.stx_mode))
                return unlink_gone(dirfd, name, 0);
        /* The top itself may be a mount point: emptying it would empty another file system. */
        r = stat_at(dirfd, "", AT_EMPTY_PATH, &parent);
        if (r < 0)
                return r;
        if (!same_mount(&parent, &top))
                return -EXDEV;

        stack = calloc(REMOVE_TREE_DEPTH_MAX + 1, sizeof(Level));
        if (!stack)
                return -ENOMEM;
        r = open_dir(dirfd, name, &top, &stack[0].dir);
        if (r < 0)
                return r;
        /* Pass after pass, while the last one moved something up: a directory added to the top while it
         * was read may not have been seen. Each pass takes REMOVE_TREE_DEPTH_MAX levels off every chain
         * deeper than that, so the passes are bounded by the depth, and the work by the size of the tree. */
        for (;;) {
                unsigned moved = 0;

                r = empty_tree(stack, &top, &counter, &moved);
                if (r < 0 || moved == 0)
                        break;
                rewinddir(stack[0].dir);
        }
        (void)closedir(stack[0].dir);
        if (r < 0)
                return r;
        return unlink_gone(dirfd, name, AT_REMOVEDIR);
}

int tree_is_gone_at(int dirfd, const char *name)
{
        struct stat st;

        assert(name);

        if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
                return 0;
        return errno == ENOENT ? 1 : -errno;
}

int remove_path_nofollow(int rootfd, const char *path, bool *ret_removed)
{
        _cleanup_free_ char *copy = strdup(path);
        _cleanup_close_ int fd = -EBADF;
        char *component, *slash;
        struct stat st;
        int at = rootfd;

        *ret_removed = false;
        if (!copy)
                return -ENOMEM;
        for (component = copy;; component = slash + 1) {
                slash = strchr(component, '/');
                if (slash)
                        *slash = '\0';
                if (fstatat(at, component, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        return errno == ENOENT ? 0 : -errno;
                if (!slash || !S_ISDIR(st.st_mode))
                        break;
                closep(&fd);
                fd = openat(at, component, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (fd < 0)
                        return -errno;
                at = fd;
        }
        *ret_removed = true;
        return remove_tree_at(at, component);
}
