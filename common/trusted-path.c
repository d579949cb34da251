/* SPDX-License-Identifier: MIT */
#include "trusted-path.h"

#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "macro.h"

#define MAX_LINKS 40

/* The rule for one inode: root's, nobody else may write (the group only if it is root's group). An access
 * ACL could grant write to anyone the mode does not show, so an inode that has one is refused. */
static int check_owner_mode(const char *what, const struct stat *st, bool owners_only, AjError *reterr)
{
        if (lgetxattr(what, "system.posix_acl_access", NULL, 0) >= 0)
                return aj_error(reterr, EPERM, 0, 0, "%s has an access ACL", what);
        if (errno != ENODATA && errno != ENOTSUP)
                return aj_error(reterr, errno, 0, 0, "%s: cannot read its ACL: %s", what, strerror(errno));
        if (st->st_uid != 0)
                return aj_error(reterr, EPERM, 0, 0, "%s is owned by uid %u, not root", what,
                                (unsigned)st->st_uid);
        if (owners_only)
                return 0;
        if (st->st_mode & S_IWOTH)
                return aj_error(reterr, EPERM, 0, 0, "%s is writable by others (mode %04o)", what,
                                (unsigned)(st->st_mode & 07777));
        if ((st->st_mode & S_IWGRP) && st->st_gid != 0)
                return aj_error(reterr, EPERM, 0, 0, "%s is writable by group %u (mode %04o)", what,
                                (unsigned)st->st_gid, (unsigned)(st->st_mode & 07777));
        return 0;
}

/* Prepends the components of link (a readlink() result) to the unresolved remainder in rest. */
static int prepend(char *rest, size_t restsz, const char *link)
{
        size_t ll = strlen(link), rl = strlen(rest);

        if (ll + 1 + rl + 1 > restsz)
                return -ENAMETOOLONG;
        memmove(rest + ll + 1, rest, rl + 1);
        memcpy(rest, link, ll);
        rest[ll] = '/';
        return 0;
}

static int check_path(const char *path, bool owners_only, AjError *reterr)
{
        char done[PATH_MAX] = ""; /* what is resolved and checked so far; "" is "/" */
        char rest[2 * PATH_MAX];  /* what remains, components separated by '/' */
        unsigned links = 0;
        bool trailing_slash;
        struct stat st;
        int r;

        assert(path);

        if (path[0] != '/')
                return aj_error(reterr, EINVAL, 0, 0, "%s: not an absolute path", path);
        if (strlen(path) >= sizeof(rest))
                return aj_error(reterr, ENAMETOOLONG, 0, 0, "%s: path too long", path);
        if (stat("/", &st) < 0)
                return aj_error(reterr, errno, 0, 0, "/: %s", strerror(errno));
        r = check_owner_mode("/", &st, owners_only, reterr);
        if (r < 0)
                return r;
        strcpy(rest, path + 1);
        trailing_slash = path[strlen(path) - 1] == '/';

        while (rest[0]) {
                char component[NAME_MAX + 1], next[PATH_MAX];
                char *slash = strchr(rest, '/');
                size_t len = slash ? (size_t)(slash - rest) : strlen(rest);

                if (len > NAME_MAX)
                        return aj_error(reterr, ENAMETOOLONG, 0, 0, "%s: component too long", path);
                memcpy(component, rest, len);
                component[len] = '\0';
                memmove(rest, rest + len + (slash ? 1 : 0), strlen(rest + len + (slash ? 1 : 0)) + 1);

                if (len == 0 || strcmp(component, ".") == 0)
                        continue;
                if (strcmp(component, "..") == 0) {
                        /* The parent of a checked directory was itself checked on the way down. */
                        char *p = strrchr(done, '/');
                        if (p)
                                *p = '\0';
                        continue;
                }
                if ((size_t)snprintf(next, sizeof(next), "%s/%s", done, component) >= sizeof(next))
                        return aj_error(reterr, ENAMETOOLONG, 0, 0, "%s: path too long", path);
                if (lstat(next, &st) < 0)
                        return aj_error(reterr, errno, 0, 0, "%s: %s", next, strerror(errno));

                if (S_ISLNK(st.st_mode)) {
                        char target[PATH_MAX];
                        ssize_t n;

                        /* A link's mode means nothing, its owner does (protected_symlinks). */
                        if (st.st_uid != 0)
                                return aj_error(reterr, EPERM, 0, 0,
                                                "%s is a link owned by uid %u, not root", next,
                                                (unsigned)st.st_uid);
                        if (++links > MAX_LINKS)
                                return aj_error(reterr, ELOOP, 0, 0, "%s: too many links", path);
                        n = readlink(next, target, sizeof(target) - 1);
                        if (n < 0)
                                return aj_error(reterr, errno, 0, 0, "%s: %s", next, strerror(errno));
                        target[n] = '\0';
                        if (prepend(rest, sizeof(rest), target) < 0)
                                return aj_error(reterr, ENAMETOOLONG, 0, 0, "%s: path too long", path);
                        if (target[0] == '/')
                                done[0] = '\0';
                        continue;
                }

                r = check_owner_mode(next, &st, owners_only, reterr);
                if (r < 0)
                        return r;
                /* More to come, or a path that ends in '/': this must be a directory. */
                if ((rest[0] || trailing_slash) && !S_ISDIR(st.st_mode))
                        return aj_error(reterr, ENOTDIR, 0, 0, "%s: not a directory", next);
                strcpy(done, next);
        }
        return 0;
}

int trusted_path_check(const char *path, AjError *reterr)
{
        return check_path(path, false, reterr);
}

int trusted_path_check_owners(const char *path, AjError *reterr)
{
        return check_path(path, true, reterr);
}

int trusted_search_path_check(const char *search_path, AjError *reterr)
{
        _cleanup_free_ char *copy = strdup(search_path);
        char *save = NULL;

        if (!copy)
                return -ENOMEM;
        for (char *dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
                int r;

                if (access(dir, F_OK) < 0 && errno == ENOENT)
                        continue;
                r = trusted_path_check(dir, reterr);
                if (r < 0)
                        return r;
        }
        return 0;
}

int trusted_program_find(const char *search_path, const char *name, char **ret_path, AjError *reterr)
{
        _cleanup_free_ char *copy = strdup(search_path);
        char *save = NULL;

        assert(name);
        assert(ret_path);

        if (!copy)
                return -ENOMEM;
        if (!name[0] || strchr(name, '/'))
                return aj_error(reterr, EINVAL, 0, 0, "%s: not a plain program name", name);
        for (char *dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
                _cleanup_free_ char *candidate = NULL;
                struct stat st;
                int r;

                if (asprintf(&candidate, "%s/%s", dir, name) < 0)
                        return -ENOMEM;
                if (stat(candidate, &st) < 0 || !S_ISREG(st.st_mode) || !(st.st_mode & 0111))
                        continue;
                r = trusted_path_check(candidate, reterr);
                if (r < 0)
                        return r;
                *ret_path = TAKE_PTR(candidate);
                return 0;
        }
        return aj_error(reterr, ENOENT, 0, 0, "%s: not found on %s", name, search_path);
}
