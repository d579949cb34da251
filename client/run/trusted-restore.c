/* SPDX-License-Identifier: MIT */
/* The trusted paths written again from the base commit's objects (trusted-restore.h). libgit2 reads the
 * objects only: the repository is one wrapped around the object database, with no configuration, work
 * tree or index, so nothing the setup command wrote in .git/config, .git/info or the index is read. The
 * files are written here, by descriptor, never through a link. */
#include "trusted-restore.h"

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <git2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clone.h"
#include "macro.h"
#include "read-file.h"
#include "remove-tree.h"
#include "write-all.h"

/* A base's directory deeper than this below a trusted path is refused: the walk recurses. */
#define RESTORE_DEPTH_MAX 64
/* A file of the base larger than this is refused (the verification reads it whole). */
#define RESTORE_FILE_MAX (64u * 1024 * 1024)

DEFINE_GIT_FREEP(git_odb)
DEFINE_GIT_FREEP(git_repository)
DEFINE_GIT_FREEP(git_commit)
DEFINE_GIT_FREEP(git_tree)
DEFINE_GIT_FREEP(git_tree_entry)
DEFINE_GIT_FREEP(git_blob)

/* A name a tree entry may have here: a single component, not ".", ".." or ".git" in any case. */
static bool entry_name_valid(const char *name)
{
        return name[0] && !strchr(name, '/') && strcmp(name, ".") != 0 && strcmp(name, "..") != 0 &&
               strcasecmp(name, ".git") != 0;
}

static int restore_entry(git_repository *repo, int dirfd, const char *name, const git_tree_entry *entry,
                         unsigned depth, AjError *reterr);

static int restore_tree(git_repository *repo, int dirfd, const char *name, const git_oid *id, unsigned depth,
                        AjError *reterr)
{
        _cleanup_(git_tree_freep) git_tree *tree = NULL;
        _cleanup_close_ int fd = -EBADF;

        if (depth > RESTORE_DEPTH_MAX)
                return aj_error(reterr, ELOOP, 0, 0, "the base's tree at %s is deeper than %d levels", name,
                                RESTORE_DEPTH_MAX);
        if (git_tree_lookup(&tree, repo, id) < 0)
                return libgit2_error(reterr, "cannot read the base's tree at %s", name);
        if (mkdirat(dirfd, name, 0755) < 0)
                return aj_error(reterr, errno, 0, 0, "cannot make %s: %s", name, strerror(errno));
        fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return aj_error(reterr, errno, 0, 0, "cannot open %s: %s", name, strerror(errno));
        for (size_t i = 0; i < git_tree_entrycount(tree); i++) {
                const git_tree_entry *e = git_tree_entry_byindex(tree, i);
                int r = restore_entry(repo, fd, git_tree_entry_name(e), e, depth + 1, reterr);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int restore_entry(git_repository *repo, int dirfd, const char *name, const git_tree_entry *entry,
                         unsigned depth, AjError *reterr)
{
        _cleanup_(git_blob_freep) git_blob *blob = NULL;
        _cleanup_close_ int fd = -EBADF;
        git_filemode_t mode = git_tree_entry_filemode(entry);
        const git_oid *id = git_tree_entry_id(entry);
        _cleanup_free_ char *target = NULL;
        size_t size;

        if (!entry_name_valid(name))
                return aj_error(reterr, EINVAL, 0, 0, "the base has an entry named \"%s\"", name);
        if (mode == GIT_FILEMODE_TREE)
                return restore_tree(repo, dirfd, name, id, depth, reterr);
        if (mode == GIT_FILEMODE_COMMIT) { /* a submodule: an empty directory, as a checkout makes */
                if (mkdirat(dirfd, name, 0755) < 0)
                        return aj_error(reterr, errno, 0, 0, "cannot make %s: %s", name, strerror(errno));
                return 0;
        }
        if (git_blob_lookup(&blob, repo, id) < 0)
                return libgit2_error(reterr, "cannot read the base's %s", name);
        size = (size_t)git_blob_rawsize(blob);
        if (size > RESTORE_FILE_MAX)
                return aj_error(reterr, EFBIG, 0, 0, "the base's %s is larger than %u bytes", name,
                                RESTORE_FILE_MAX);
        if (mode == GIT_FILEMODE_LINK) {
                target = strndup(git_blob_rawcontent(blob), size);
                if (!target)
                        return -ENOMEM;
                if (strlen(target) != size || size == 0)
                        return aj_error(reterr, EINVAL, 0, 0, "the base's link %s has a bad target", name);
                if (symlinkat(target, dirfd, name) < 0)
                        return aj_error(reterr, errno, 0, 0, "cannot make the link %s: %s", name,
                                        strerror(errno));
                return 0;
        }
        if (mode != GIT_FILEMODE_BLOB && mode != GIT_FILEMODE_BLOB_EXECUTABLE)
                return aj_error(reterr, EINVAL, 0, 0, "the base's %s has mode %o", name, (unsigned)mode);
        fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                    mode == GIT_FILEMODE_BLOB_EXECUTABLE ? 0755 : 0644);
        if (fd < 0)
                return aj_error(reterr, errno, 0, 0, "cannot make %s: %s", name, strerror(errno));
        /* A close that fails is caught by the reading back. */
        if (write_all(fd, git_blob_rawcontent(blob), size) < 0)
                return aj_error(reterr, EIO, 0, 0, "cannot write %s", name);
        return 0;
}

/* ---- reading back ---- */

static int verify_entry(git_repository *repo, int dirfd, const char *name, const git_tree_entry *entry,
                        unsigned depth, AjError *reterr);

static int verify_tree(git_repository *repo, int dirfd, const char *name, const git_oid *id, unsigned depth,
                       AjError *reterr)
{
        _cleanup_(git_tree_freep) git_tree *tree = NULL;
        _cleanup_(closedirp) DIR *d = NULL;
        size_t n = 0;
        int fd;

        if (git_tree_lookup(&tree, repo, id) < 0)
                return libgit2_error(reterr, "cannot read the base's tree at %s", name);
        fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 || !(d = fdopendir(fd))) {
                int e = errno;
                if (fd >= 0)
                        close(fd);
                return aj_error(reterr, e, 0, 0, "%s is not the base's directory: %s", name, strerror(e));
        }
        for (size_t i = 0; i < git_tree_entrycount(tree); i++) {
                const git_tree_entry *e = git_tree_entry_byindex(tree, i);
                int r = verify_entry(repo, fd, git_tree_entry_name(e), e, depth + 1, reterr);
                if (r < 0)
                        return r;
        }
        for (struct dirent *de; (errno = 0, de = readdir(d));)
                if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
                        n++;
        if (errno != 0)
                return aj_error(reterr, errno, 0, 0, "cannot read %s: %s", name, strerror(errno));
        if (n != git_tree_entrycount(tree))
                return aj_error(reterr, EEXIST, 0, 0, "%s holds %zu names where the base has %zu", name, n,
                                git_tree_entrycount(tree));
        return 0;
}

static int verify_entry(git_repository *repo, int dirfd, const char *name, const git_tree_entry *entry,
                        unsigned depth, AjError *reterr)
{
        git_filemode_t mode = git_tree_entry_filemode(entry);
        _cleanup_free_ char *data = NULL;
        struct stat st;
        git_oid got;
        size_t size = 0;
        int r;

        if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return aj_error(reterr, errno, 0, 0, "%s is not there: %s", name, strerror(errno));
        if (mode == GIT_FILEMODE_TREE)
                return verify_tree(repo, dirfd, name, git_tree_entry_id(entry), depth, reterr);
        if (mode == GIT_FILEMODE_COMMIT)
                return S_ISDIR(st.st_mode) ? 0
                                           : aj_error(reterr, EEXIST, 0, 0, "%s is not a directory", name);
        if (mode == GIT_FILEMODE_LINK) {
                char target[4097];
                ssize_t n = readlinkat(dirfd, name, target, sizeof(target) - 1);
                if (n < 0)
                        return aj_error(reterr, errno, 0, 0, "%s is not the base's link: %s", name,
                                        strerror(errno));
                r = git_odb_hash(&got, target, (size_t)n, GIT_OBJECT_BLOB);
        } else {
                if (!S_ISREG(st.st_mode) ||
                    !(st.st_mode & S_IXUSR) != (mode != GIT_FILEMODE_BLOB_EXECUTABLE))
                        return aj_error(reterr, EEXIST, 0, 0, "%s is not the base's file", name);
                r = read_regular_nofollow(dirfd, name, RESTORE_FILE_MAX, &data, &size);
                if (r < 0)
                        return aj_error(reterr, -r, 0, 0, "cannot read %s back: %s", name, strerror(-r));
                r = git_odb_hash(&got, data ? data : "", size, GIT_OBJECT_BLOB);
        }
        if (r < 0)
                return libgit2_error(reterr, "cannot hash %s", name);
        if (!git_oid_equal(&got, git_tree_entry_id(entry)))
                return aj_error(reterr, EEXIST, 0, 0, "%s differs from the base's", name);
        return 0;
}

/* ---- one path ---- */

/* Opens (into *ret_fd) the directory that holds path's last component, whose name is *ret_leaf (a pointer
 * into path, which is cut at its slashes): each directory on the way that is not one is removed, and made
 * anew when make, else *ret_fd is -EBADF (nothing of the path can stand). */
static int open_parent(int rootfd, char *path, bool make, int *ret_fd, char **ret_leaf, bool *ret_removed)
{
        _cleanup_close_ int fd = -EBADF;
        char *component = path, *slash;
        int at = rootfd;

        *ret_removed = false;
        while ((slash = strchr(component, '/'))) {
                struct stat st;
                int next, present;

                *slash = '\0';
                present = fstatat(at, component, &st, AT_SYMLINK_NOFOLLOW) == 0;
                if (!present && errno != ENOENT)
                        return -errno;
                if (present && !S_ISDIR(st.st_mode)) {
                        int r = remove_tree_at(at, component);
                        if (r < 0)
                                return r;
                        *ret_removed = true;
                        present = false;
                }
                if (!present && !make) {
                        *ret_fd = -EBADF;
                        *ret_leaf = NULL;
                        return 0;
                }
                if (!present && mkdirat(at, component, 0755) < 0)
                        return -errno;
                next = openat(at, component, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (next < 0)
                        return -errno;
                closep(&fd);
                at = fd = next;
                component = slash + 1;
        }
        *ret_fd = fd >= 0 ? TAKE_FD(fd) : fcntl(rootfd, F_DUPFD_CLOEXEC, 3);
        *ret_leaf = component;
        return *ret_fd < 0 ? -errno : 0;
}

static int restore_path(git_repository *repo, int rootfd, git_tree *base_tree, const char *trusted,
                        TrustedRestore *result, AjError *reterr)
{
        _cleanup_(git_tree_entry_freep) git_tree_entry *entry = NULL;
        _cleanup_free_ char *path = strdup(trusted), *cut = NULL;
        _cleanup_close_ int dirfd = -EBADF;
        bool removed_above, removed = false;
        char *leaf = NULL;
        size_t n;
        int r;

        if (!path)
                return -ENOMEM;
        n = strlen(path);
        if (n > 1 && path[n - 1] == '/')
                path[n - 1] = '\0';
        r = git_tree_entry_bypath(&entry, base_tree, path);
        if (r < 0 && r != GIT_ENOTFOUND)
                return libgit2_error(reterr, "cannot look %s up in the base commit", path);
        cut = strdup(path);
        if (!cut)
                return -ENOMEM;
        r = open_parent(rootfd, cut, entry != NULL, &dirfd, &leaf, &removed_above);
        if (r < 0)
                return aj_error(reterr, -r, 0, 0, "cannot clear the way to %s: %s", path, strerror(-r));
        if (dirfd >= 0) {
                r = tree_is_gone_at(dirfd, leaf);
                removed = r == 0;
                r = r < 0 ? r : remove_tree_at(dirfd, leaf);
                if (r < 0)
                        return aj_error(reterr, -r, 0, 0, "cannot remove %s: %s", path, strerror(-r));
        }
        if (!entry) {
                result->n_removed += removed || removed_above;
                return 0;
        }
        assert(dirfd >= 0 && leaf); /* open_parent() makes the way for an entry */
        r = restore_entry(repo, dirfd, leaf, entry, 0, reterr);
        r = r < 0 ? r : verify_entry(repo, dirfd, leaf, entry, 0, reterr);
        if (r < 0)
                return r;
        result->n_replaced++;
        return 0;
}

int trusted_paths_restore(const char *workspace, const char *base_commit, char *const *paths,
                          TrustedRestore *ret, AjError *reterr)
{
        _cleanup_libgit2_ int git_init = 0;
        _cleanup_(git_odb_freep) git_odb *odb = NULL;
        _cleanup_(git_repository_freep) git_repository *repo = NULL;
        _cleanup_(git_commit_freep) git_commit *base = NULL;
        _cleanup_(git_tree_freep) git_tree *base_tree = NULL;
        _cleanup_close_ int rootfd = -EBADF;
        _cleanup_free_ char *objects = NULL;
        TrustedRestore result = {};
        git_oid oid;

        assert(workspace);
        assert(base_commit);
        assert(ret);

        for (char *const *p = paths; p && *p; p++) {
                int r = trusted_path_validate(*p, reterr);
                if (r < 0)
                        return r;
        }
        if (strlen(base_commit) != 40 || git_oid_fromstr(&oid, base_commit) < 0)
                return aj_error(reterr, EINVAL, 0, 0, "bad base commit id");
        rootfd = open(workspace, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (rootfd < 0)
                return aj_error(reterr, errno, 0, 0, "cannot open the workspace %s: %s", workspace,
                                strerror(errno));
        if (asprintf(&objects, "%s/.git/objects", workspace) < 0)
                return -ENOMEM;
        git_init = libgit2_init_isolated(reterr);
        if (git_init < 0)
                return git_init;
        /* Each object hashed as it is read (libgit2's default since 0.27, set here all the same): one the
         * setup command rewrote under its id is an error, never content. */
        if (git_libgit2_opts(GIT_OPT_ENABLE_STRICT_HASH_VERIFICATION, 1) < 0)
                return libgit2_error(reterr, "cannot turn libgit2's hash verification on");
        if (git_odb_open(&odb, objects) < 0)
                return libgit2_error(reterr, "cannot open the workspace's objects");
        if (git_repository_wrap_odb(&repo, odb) < 0)
                return libgit2_error(reterr, "cannot read the workspace's objects");
        if (git_commit_lookup(&base, repo, &oid) < 0 || git_commit_tree(&base_tree, base) < 0)
                return libgit2_error(reterr, "cannot read the base commit %s", base_commit);
        for (char *const *p = paths; p && *p; p++) {
                int r = restore_path(repo, rootfd, base_tree, *p, &result, reterr);
                if (r < 0)
                        return r;
        }
        *ret = result;
        return 0;
}
