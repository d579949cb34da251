/* SPDX-License-Identifier: MIT */
#include "patch.h"

#include <assert.h>
#include <errno.h>
#include <git2.h>
#include <git2/sys/repository.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "clone.h"
#include "macro.h"

DEFINE_GIT_FREEP(git_repository)
DEFINE_GIT_FREEP(git_config)
DEFINE_GIT_FREEP(git_index)
DEFINE_GIT_FREEP(git_commit)
DEFINE_GIT_FREEP(git_tree)
DEFINE_GIT_FREEP(git_diff)
DEFINE_GIT_FREEP(git_patch)

typedef struct PatchBuffer {
        char *data;
        size_t size, allocated, max;
        int error; /* what stopped the printing: -EFBIG or -ENOMEM */
} PatchBuffer;

static void patch_buffer_done(PatchBuffer *b)
{
        free(b->data);
}

static int patch_buffer_append(PatchBuffer *b, const char *s, size_t n)
{
        if (n > b->max - b->size)
                return -EFBIG;
        if (b->size + n + 1 > b->allocated) {
                size_t want = b->allocated > 0 ? b->allocated : 4096;
                char *p;

                while (want < b->size + n + 1)
                        want *= 2;
                if (want > b->max + 1)
                        want = b->max + 1;
                p = realloc(b->data, want);
                if (!p)
                        return -ENOMEM;
                b->data = p;
                b->allocated = want;
        }
        memcpy(b->data + b->size, s, n);
        b->size += n;
        b->data[b->size] = '\0';
        return 0;
}

static int print_line(const git_diff_delta *delta, const git_diff_hunk *hunk, const git_diff_line *line,
                      void *payload)
{
        PatchBuffer *b = payload;
        char origin = line->origin;

        (void)delta;
        (void)hunk;
        /* Content lines come without their origin; headers and "\ No newline" lines are whole. */
        if (origin == GIT_DIFF_LINE_CONTEXT || origin == GIT_DIFF_LINE_ADDITION ||
            origin == GIT_DIFF_LINE_DELETION)
                b->error = patch_buffer_append(b, &origin, 1);
        if (b->error == 0)
                b->error = patch_buffer_append(b, line->content, line->content_len);
        return b->error < 0 ? 1 : 0;
}

static bool is_excluded(const char *path, char *const *exclude_paths)
{
        for (char *const *e = exclude_paths; path && e && *e; e++) {
                size_t n = strlen(*e);

                if (n > 0 && (*e)[n - 1] == '/')
                        n--;
                if (n > 0 && strncmp(path, *e, n) == 0 && (path[n] == '\0' || path[n] == '/'))
                        return true;
        }
        return false;
}

/* The repository of workdir with an empty configuration and an empty index: neither, the agent's to
 * write, may change what the diff shows (core.symlinks=false would have a link read as the file it names,
 * core.worktree move the tree, excludes and attributes files come from anywhere). */
static int open_workspace(const char *workdir, git_repository **ret, AjError *reterr)
{
        _cleanup_(git_repository_freep) git_repository *repo = NULL;
        _cleanup_(git_config_freep) git_config *config = NULL;
        _cleanup_(git_index_freep) git_index *index = NULL;
        _cleanup_free_ char *gitdir = NULL;
        struct stat st;

        /* Not a .git file (a link to some other repository) nor a link. */
        if (asprintf(&gitdir, "%s/.git", workdir) < 0)
                return -ENOMEM;
        if (lstat(gitdir, &st) < 0 || !S_ISDIR(st.st_mode))
                return aj_error(reterr, EINVAL, 0, 0, "%s is not a directory", gitdir);
        /* Opened bare, so that core.worktree is not read, and then given its working tree. */
        if (git_repository_open_ext(&repo, gitdir, GIT_REPOSITORY_OPEN_NO_SEARCH | GIT_REPOSITORY_OPEN_BARE,
                                    NULL) < 0)
                return libgit2_error(reterr, "cannot open the repository of %s", workdir);
        if (git_config_new(&config) < 0 || git_repository_set_config(repo, config) < 0 ||
            git_index_new(&index) < 0 || git_repository_set_index(repo, index) < 0 ||
            git_repository_set_workdir(repo, workdir, 0) < 0)
                return libgit2_error(reterr, "cannot set up the repository of %s", workdir);
        *ret = TAKE_PTR(repo);
        return 0;
}

int patch_build(const char *workdir, const char *commit_hex, char *const *exclude_paths, size_t max_bytes,
                char **ret_patch, size_t *ret_size, AjError *reterr)
{
        _cleanup_libgit2_ int git_init = 0;
        _cleanup_(git_repository_freep) git_repository *repo = NULL;
        _cleanup_(git_commit_freep) git_commit *commit = NULL;
        _cleanup_(git_tree_freep) git_tree *tree = NULL;
        _cleanup_(git_diff_freep) git_diff *diff = NULL;
        _cleanup_(patch_buffer_done) PatchBuffer out = { .max = max_bytes };
        git_diff_options opts;
        git_oid oid;
        int r;

        assert(workdir);
        assert(ret_patch);
        assert(max_bytes < SIZE_MAX);

        if (!commit_hex || strspn(commit_hex, "0123456789abcdef") != 40 || commit_hex[40] != '\0')
                return aj_error(reterr, EINVAL, 0, 0, "the commit is not 40 lowercase hex digits");
        git_init = libgit2_init_isolated(reterr);
        if (git_init < 0)
                return git_init;
        r = open_workspace(workdir, &repo, reterr);
        if (r < 0)
                return r;
        if (git_oid_fromstr(&oid, commit_hex) < 0 || git_commit_lookup(&commit, repo, &oid) < 0 ||
            git_commit_tree(&tree, commit) < 0)
                return libgit2_error(reterr, "cannot read commit %s", commit_hex);

        if (git_diff_options_init(&opts, GIT_DIFF_OPTIONS_VERSION) < 0)
                return libgit2_error(reterr, "cannot initialise the diff options");
        opts.flags = GIT_DIFF_INCLUDE_UNTRACKED | GIT_DIFF_RECURSE_UNTRACKED_DIRS |
                     GIT_DIFF_SHOW_UNTRACKED_CONTENT;
        opts.ignore_submodules = GIT_SUBMODULE_IGNORE_ALL;
        if (git_diff_tree_to_workdir(&diff, repo, tree, &opts) < 0)
                return libgit2_error(reterr, "cannot compare %s with commit %s", workdir, commit_hex);

        for (size_t i = 0, n = git_diff_num_deltas(diff); i < n; i++) {
                _cleanup_(git_patch_freep) git_patch *patch = NULL;
                const git_diff_delta *delta = git_diff_get_delta(diff, i);

                if (is_excluded(delta->old_file.path, exclude_paths) ||
                    is_excluded(delta->new_file.path, exclude_paths))
                        continue;
                if (git_patch_from_diff(&patch, diff, i) < 0)
                        return libgit2_error(reterr, "cannot make the patch of change %zu", i);
                if (patch && git_patch_print(patch, print_line, &out) != 0) {
                        if (out.error == -EFBIG)
                                return aj_error(reterr, EFBIG, 0, 0, "the patch is longer than %zu bytes",
                                                max_bytes);
                        return out.error < 0 ? out.error : libgit2_error(reterr, "cannot print the patch");
                }
        }
        if (!out.data && patch_buffer_append(&out, "", 0) < 0)
                return -ENOMEM;
        *ret_patch = TAKE_PTR(out.data);
        if (ret_size)
                *ret_size = out.size;
        return 0;
}
