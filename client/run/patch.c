/* SPDX-License-Identifier: MIT */
#include "patch.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <git2.h>
#include <git2/sys/repository.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clone.h"
#include "macro.h"
#include "read-file.h"

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

/* ---- what libgit2 will open, checked first ---- */

#define CONFIG_READ_MAX (1024 * 1024)

/* The walk's state: nftw() takes no userdata. The exporter builds one patch, in one thread. */
static struct {
        size_t top; /* strlen(workdir) */
        char why[200];
        char name[160];
} walk;

static const char *type_word(mode_t mode)
{
        switch (mode & S_IFMT) {
        case S_IFIFO:
                return "a FIFO";
        case S_IFSOCK:
                return "a socket";
        case S_IFCHR:
        case S_IFBLK:
                return "a device";
        case S_IFLNK:
                return "a symbolic link";
        case S_IFDIR:
                return "a directory";
        default:
                return "not a regular file";
        }
}

/* Whether rel (a path below the workspace) is a .git directory or something in one. */
static bool in_git_dir(const char *rel)
{
        for (const char *p = rel; p; p = strchr(p, '/')) {
                if (*p == '/')
                        p++;
                if (strncmp(p, ".git", 4) == 0 && (p[4] == '\0' || p[4] == '/'))
                        return true;
        }
        return false;
}

/* The name as it may stand in a refusal's reason: printable ASCII, cut short. */
static void printable_name(const char *rel, char *buf, size_t size)
{
        size_t i = 0;

        for (; rel[i] && i + 4 < size; i++) {
                buf[i] = '?';
                if (rel[i] > ' ' && rel[i] < 0x7f)
                        buf[i] = rel[i];
        }
        if (rel[i]) {
                memcpy(buf + i, "...", 3);
                i += 3;
        }
        buf[i] = '\0';
}

static int walk_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
        const char *rel = path + walk.top + (path[walk.top] == '/'), *base = path + ftw->base;
        bool git = in_git_dir(rel);

        if (ftw->level == 0)
                return 0;
        printable_name(rel, walk.name, sizeof(walk.name));
        if (type == FTW_NS || type == FTW_DNR) {
                (void)snprintf(walk.why, sizeof(walk.why), "cannot be read");
                return 1;
        }
        /* In a repository's directory, libgit2 opens files (its configuration, HEAD, objects, packs and
         * their indexes, info/) by name, following links: only regular files and directories are read. */
        if (git && !S_ISREG(st->st_mode) && !S_ISDIR(st->st_mode)) {
                (void)snprintf(walk.why, sizeof(walk.why), "is %s", type_word(st->st_mode));
                return 1;
        }
        /* And in the working tree the ignore, attribute and submodule files of every directory. */
        if ((strcmp(base, ".gitignore") == 0 || strcmp(base, ".gitattributes") == 0 ||
             strcmp(base, ".gitmodules") == 0) &&
            !S_ISREG(st->st_mode)) {
                (void)snprintf(walk.why, sizeof(walk.why), "is %s", type_word(st->st_mode));
                return 1;
        }
        return 0;
}

/* Whether a configuration has a section [include] or [includeIf ...] (whose path libgit2 follows as it
 * opens the repository): any line whose first non-blank is "[", then blanks, then "include" in any case.
 * A line that only continues a value is taken as a line too: more is refused, never less. */
static bool config_includes(const char *data, size_t size)
{
        for (size_t i = 0; i < size;) {
                while (i < size && (data[i] == ' ' || data[i] == '\t' || data[i] == '\r' ||
                                    data[i] == '\v' || data[i] == '\f' || (unsigned char)data[i] >= 0x80))
                        i++;
                if (i < size && data[i] == '[') {
                        i++;
                        while (i < size && (data[i] == ' ' || data[i] == '\t'))
                                i++;
                        /* data ends with a NUL, where the comparison stops. */
                        if (i < size && strncasecmp(data + i, "include", 7) == 0)
                                return true;
                }
                while (i < size && data[i] != '\n')
                        i++;
                i++;
        }
        return false;
}

/* Before libgit2 opens anything of the workspace: every file it may open there is a regular file (a FIFO
 * would block it for good, a device or a link lead anywhere), the configuration it reads as it opens the
 * repository includes nothing from elsewhere, and no alternates send it to objects elsewhere. Nothing of
 * the sandbox user runs while the exporter does: what is checked here stays so. */
int patch_check_workspace(const char *workdir, AjError *reterr)
{
        _cleanup_free_ char *config = NULL, *data = NULL, *alternates = NULL, *commondir = NULL;
        size_t size = 0;
        struct stat st;
        int r;

        assert(workdir);

        walk.top = strlen(workdir);
        walk.why[0] = walk.name[0] = '\0';
        r = nftw(workdir, walk_entry, 16, FTW_PHYS | FTW_MOUNT);
        if (r > 0)
                return aj_error(reterr, EINVAL, 0, 0, "%s %s: libgit2 reads only regular files there",
                                walk.name, walk.why);
        if (r < 0)
                return aj_error(reterr, errno, 0, 0, "cannot look through the workspace: %s",
                                strerror(errno));
        if (asprintf(&config, "%s/.git/config", workdir) < 0 ||
            asprintf(&alternates, "%s/.git/objects/info/alternates", workdir) < 0 ||
            asprintf(&commondir, "%s/.git/commondir", workdir) < 0)
                return -ENOMEM;
        if (lstat(alternates, &st) == 0 || errno != ENOENT)
                return aj_error(reterr, EINVAL, 0, 0,
                                ".git/objects/info/alternates: objects from elsewhere are not read");
        if (lstat(commondir, &st) == 0 || errno != ENOENT)
                return aj_error(reterr, EINVAL, 0, 0,
                                ".git/commondir: a repository directory elsewhere is not read");
        r = read_regular_nofollow(AT_FDCWD, config, CONFIG_READ_MAX, &data, &size);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return aj_error(reterr, -r, 0, 0, ".git/config: %s", strerror(-r));
        if (config_includes(data, size))
                return aj_error(reterr, EINVAL, 0, 0,
                                ".git/config has an include or includeIf section: libgit2 would read files "
                                "from anywhere");
        return 0;
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
        r = patch_check_workspace(workdir, reterr);
        if (r < 0)
                return r;
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
