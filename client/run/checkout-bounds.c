/* SPDX-License-Identifier: MIT */
#include "checkout-bounds.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <string.h>

#include "macro.h"

/* A path of PATH_MAX bytes has at most this many components; libgit2 writes no longer one. */
#define DEPTH_MAX (PATH_MAX / 2)

DEFINE_GIT_FREEP(git_odb)
DEFINE_GIT_FREEP(git_tree)
DEFINE_GIT_FREEP(git_tree_entry)

typedef struct Walk {
        git_repository *repo;
        git_odb *odb;
        const CloneLimits *limits;
        uint64_t files, bytes;
        char path[PATH_MAX];
} Walk;

/* The path for a message: the repository chose its bytes, so no control byte, and not all of it. */
static const char *shown(Walk *w)
{
        if (!w->path[0])
                return "the root tree";
        for (char *p = w->path; *p; p++)
                if ((unsigned char)*p < 0x20 || *p == 0x7f)
                        *p = '?';
        if (strlen(w->path) > 200)
                memcpy(w->path + 197, "...", 4);
        return w->path;
}

/* Appends "/name" (or "name" at the top) to w->path; the old length in *ret_len, to cut back to. */
static int path_push(Walk *w, const char *name, size_t *ret_len)
{
        size_t len = strlen(w->path), n = strlen(name);

        if (len + (len > 0) + n + 1 > sizeof(w->path))
                return -ENAMETOOLONG;
        if (len > 0)
                w->path[len] = '/';
        memcpy(w->path + len + (len > 0), name, n + 1);
        *ret_len = len;
        return 0;
}

static int object_size(Walk *w, const git_oid *id, git_object_t want, uint64_t *ret, AjError *reterr)
{
        git_object_t type;
        size_t size;

        if (git_odb_read_header(&size, &type, w->odb, id) < 0)
                return libgit2_error(reterr, "cannot read the header of %s", shown(w));
        if (type != want)
                return aj_error(reterr, EINVAL, 0, 0, "%s is a %s where the tree says %s", shown(w),
                                git_object_type2string(type), git_object_type2string(want));
        if (w->limits->max_object_bytes && size > w->limits->max_object_bytes)
                return aj_error(reterr, EFBIG, 0, 0,
                                "%s is %zu bytes, more than [run] clone-max-object-bytes (%" PRIu64 ")",
                                shown(w), size, w->limits->max_object_bytes);
        *ret = size;
        return 0;
}

static int walk_tree(Walk *w, const git_oid *id, unsigned depth, AjError *reterr);

/* One entry, its path in w->path: counted, and measured or walked. */
static int walk_entry(Walk *w, const git_tree_entry *e, unsigned depth, AjError *reterr)
{
        const CloneLimits *l = w->limits;
        uint64_t size = 0;
        int r;

        if (l->max_files && ++w->files > l->max_files)
                return aj_error(reterr, EFBIG, 0, 0,
                                "the checkout has more than [run] clone-max-files (%" PRIu64
                                ") entries, at %s",
                                l->max_files, shown(w));
        switch (git_tree_entry_type(e)) {
        case GIT_OBJECT_TREE:
                return walk_tree(w, git_tree_entry_id(e), depth + 1, reterr);
        case GIT_OBJECT_BLOB:
                r = object_size(w, git_tree_entry_id(e), GIT_OBJECT_BLOB, &size, reterr);
                if (r < 0)
                        return r;
                w->bytes += size;
                if (l->max_checkout_bytes && w->bytes > l->max_checkout_bytes)
                        return aj_error(reterr, EFBIG, 0, 0,
                                        "the checkout is more than [run] clone-max-checkout-bytes (%" PRIu64
                                        ") bytes, at %s",
                                        l->max_checkout_bytes, shown(w));
                return 0;
        default:
                /* A submodule's commit: checked out as an empty directory, nothing read. */
                return 0;
        }
}

static int walk_tree(Walk *w, const git_oid *id, unsigned depth, AjError *reterr)
{
        _cleanup_(git_tree_freep) git_tree *tree = NULL;
        uint64_t size = 0;
        int r;

        if (depth > DEPTH_MAX)
                return aj_error(reterr, EFBIG, 0, 0, "the checkout is deeper than %d directories, at %s",
                                DEPTH_MAX, shown(w));
        r = object_size(w, id, GIT_OBJECT_TREE, &size, reterr);
        if (r < 0)
                return r;
        if (git_tree_lookup(&tree, w->repo, id) < 0)
                return libgit2_error(reterr, "cannot read the tree %s", shown(w));
        for (size_t i = 0, n = git_tree_entrycount(tree); i < n; i++) {
                const git_tree_entry *e = git_tree_entry_byindex(tree, i);
                size_t len;

                r = path_push(w, git_tree_entry_name(e), &len);
                if (r < 0)
                        return aj_error(reterr, EFBIG, 0, 0,
                                        "a path of the checkout is longer than %d bytes", PATH_MAX - 1);
                r = walk_entry(w, e, depth, reterr);
                if (r < 0)
                        return r;
                w->path[len] = '\0';
        }
        return 0;
}

int checkout_bounds_check(git_repository *repo, const git_oid *tree_id, const git_oid *base_tree_id,
                          char *const *trusted_paths, const CloneLimits *limits, AjError *reterr)
{
        _cleanup_(git_odb_freep) git_odb *odb = NULL;
        _cleanup_(git_tree_freep) git_tree *base_tree = NULL;
        Walk w = { .repo = repo, .limits = limits };
        uint64_t size = 0;
        int r;

        if (git_repository_odb(&odb, repo) < 0)
                return libgit2_error(reterr, "cannot open the clone's objects");
        w.odb = odb;
        r = walk_tree(&w, tree_id, 0, reterr);
        if (r < 0)
                return r;
        if (!trusted_paths || !*trusted_paths)
                return 0;
        /* The base's trees on the way to a trusted path are read whole: the base is the repository's own
         * branch, not the change under review; its root is measured all the same. */
        memcpy(w.path, "the base's root tree", sizeof("the base's root tree"));
        r = object_size(&w, base_tree_id, GIT_OBJECT_TREE, &size, reterr);
        if (r < 0)
                return r;
        if (git_tree_lookup(&base_tree, repo, base_tree_id) < 0)
                return libgit2_error(reterr, "cannot read the base commit's tree");
        for (char *const *p = trusted_paths; p && *p; p++) {
                _cleanup_(git_tree_entry_freep) git_tree_entry *e = NULL;
                size_t len = strlen(*p);

                if (len >= sizeof(w.path))
                        return -ENAMETOOLONG;
                memcpy(w.path, *p, len + 1);
                if (len > 0 && w.path[len - 1] == '/')
                        w.path[len - 1] = '\0';
                r = git_tree_entry_bypath(&e, base_tree, w.path);
                if (r == GIT_ENOTFOUND)
                        continue;
                if (r < 0)
                        return libgit2_error(reterr, "cannot find %s in the base commit", shown(&w));
                r = walk_entry(&w, e, 0, reterr);
                if (r < 0)
                        return r;
        }
        return 0;
}
