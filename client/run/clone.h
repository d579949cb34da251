/* SPDX-License-Identifier: MIT */
/* The workspace of a run: a clone of one exact commit, made by the sandbox user with libgit2, so that no
 * byte of the untrusted repository is parsed with the runner's rights. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "macro.h"

typedef struct CloneProgress {
        unsigned received_objects, total_objects, indexed_objects;
        uint64_t received_bytes;
} CloneProgress;

/* Called on every transfer progress report of libgit2, unthrottled: the caller throttles. */
typedef void (*CloneProgressFn)(const CloneProgress *p, void *userdata);

/* The clone's bounds, so that the repository's bytes alone cannot spend the runner's memory and disk; each
 * 0 for none (tests). The transfer is cut as soon as it passes max_bytes; the others are checked before
 * anything is checked out. Either way the clone ends with -EFBIG. */
typedef struct CloneLimits {
        uint64_t max_bytes;          /* received by the fetches together: the transfer is cut there */
        uint64_t max_object_bytes;   /* any one tree or file to check out, inflated (from its header) */
        uint64_t max_files;          /* entries to check out: files, links, directories */
        uint64_t max_checkout_bytes; /* the files to check out, together */
} CloneLimits;

typedef struct CloneRequest {
        const char *url;            /* an https:// URL, or an absolute path of a local repository (tests) */
        const char *commit;         /* 40 lowercase hex digits, or NULL when ref is given */
        const char *ref;            /* resolved once, at the start: a branch or tag name, or a full ref name
                                     * ("refs/pull/7/head"); or NULL when commit is given */
        const char *base;           /* the base branch name, e.g. "main" */
        const char *proxy_url;      /* NULL: no proxy; else e.g. "http://127.0.0.1:3128" (https only) */
        const char *ca_file;        /* NULL: the TLS library's default roots; else the PEM bundle to trust
                                     * for https instead (the egress proxy's, EGRESS_CA_BUNDLE) */
        char *const *trusted_paths; /* NULL-terminated relative paths taken from the base, not the commit */
        const char *dir;            /* absolute path of the clone; must not exist; created 0700 */
        CloneLimits limits;
} CloneRequest;

typedef struct CloneResult {
        char commit[41];      /* what was checked out (HEAD, detached) */
        char base_commit[41]; /* the tip of the base branch the trusted paths came from */
        bool fetched_by_id;   /* the fetch of the bare id (with the base) brought the commit; false: the
                               * server refused it, and the base, the ref or all branches did */
        unsigned n_trusted_replaced, n_trusted_removed;
} CloneResult;

/* Clones req->commit (or what req->ref names) and the base branch from req->url into req->dir, with no
 * tag, submodule, hook or filter, HEAD detached at the commit. Then, for each trusted path, removes what
 * the commit has there without following a link (a link on the way is removed itself) and checks out the
 * base commit's version of it, if the base has one: n_trusted_replaced counts those, n_trusted_removed
 * those the commit had and the base has not. The index stays the commit's. No configuration file of
 * anyone is read (libgit2_init_isolated()). The clone's .git/info/attributes turns off the CRLF and ident
 * conversions, so that patch_build() shows the working tree's bytes (the agent can change that file).
 *
 * Before anything is checked out, the trees to check out (the commit's, and the base's at each trusted
 * path) are measured against req->limits from the objects' headers, no file inflated (checkout-bounds.h).
 *
 * Returns 0, or -EINVAL (a bad request, an ambiguous ref, an id that is not a commit's), -EEXIST (req->dir
 * exists), -EFBIG (a bound of req->limits passed: *reterr names it), -ENOMEM (libgit2 ran out of memory),
 * -ENOENT (the ref, the commit or the base branch is not in the remote), -EIO (libgit2 failed:
 * its message, one line, is in *reterr) or another -errno; *reterr always says what failed.
 * On failure after req->dir was made, req->dir is left for the caller to dispose of. Runs as the user
 * who will own the clone (the sandbox user). Not thread-safe: it sets libgit2's process-wide options. */
int workspace_clone(const CloneRequest *req, CloneProgressFn progress, void *userdata, CloneResult *ret,
                    AjError *reterr);

/* Whether path is a valid trusted path: relative, no empty, ".", ".." or ".git" (in any case) component,
 * no control byte; a trailing '/' is allowed. -EINVAL with a message naming it otherwise. */
int trusted_path_validate(const char *path, AjError *reterr);

/* git_libgit2_init(), then emptied search paths for the system, global, XDG and ProgramData levels, so
 * that no gitconfig, attributes or ignore file of anyone changes what is fetched or diffed. Returns the
 * init count (> 0), or -EIO with *reterr set. A value > 0 is undone by libgit2_shutdownp(). */
int libgit2_init_isolated(AjError *reterr);
void libgit2_shutdownp(const int *init_count);
#define _cleanup_libgit2_ _cleanup_(libgit2_shutdownp)

/* Sets *reterr to "WHAT: MESSAGE", MESSAGE being libgit2's last error cut at its first line end, with
 * any other control byte replaced (a server's text can be part of it), and returns -EIO, or -ENOMEM where
 * libgit2 ran out of memory (the clone's RLIMIT_DATA, [run] clone-max-memory). */
int libgit2_error(AjError *reterr, const char *what_fmt, ...) _printf_(2, 3);

/* A cleanup function for a libgit2 object type: type_freep(type **). */
#define DEFINE_GIT_FREEP(type)                                                                              \
        static inline void type##_freep(type **p)                                                           \
        {                                                                                                   \
                if (*p)                                                                                     \
                        type##_free(*p);                                                                    \
        }
