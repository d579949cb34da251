/* SPDX-License-Identifier: MIT */
/* workspace_clone() and patch_build(): a clone of an exact commit from a local repository made here with
 * libgit2 (a base branch, a pull request that attacks the trusted paths, filters and a submodule), and
 * the patch of an agent's changes. */
#include <check.h>

#include "check-run.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <git2.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clone.h"
#include "macro.h"
#include "patch.h"
#include "remove-tree.h"
#include "trusted-restore.h"

/* The clones' paths: short, under tmpdir. */
#define DIR_MAX 256

/* Made once by the parent (an unchecked fixture), so it is removed even when a test fails in its child. */
static char tmpdir[] = "/tmp/agentic-job-test-clone-XXXXXX";
static char src[PATH_MAX], big_src[PATH_MAX];
static char big_hex[41], base_hex[41], pr_hex[41], mid_hex[41], pull_hex[41], dangling_hex[41];
static int git_init;

static const char base_settings[] = "{\"base\": true}\n";
static const char pr_settings[] = "{\"pr\": \"evil\"}\n";
static const char lf_text[] = "a\nb\n";
static const char ident_text[] = "$Id$\n";

static int rm_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
        (void)st;
        (void)ftw;
        return type == FTW_DP ? rmdir(path) : unlink(path);
}

static void add_entry(git_repository *repo, git_index *index, const char *path, unsigned mode,
                      const char *content)
{
        git_index_entry e = { .mode = mode, .path = path };

        if (mode == GIT_FILEMODE_COMMIT)
                ck_assert_int_eq(git_oid_fromstr(&e.id, "1111111111111111111111111111111111111111"), 0);
        else
                ck_assert_int_eq(git_blob_create_from_buffer(&e.id, repo, content, strlen(content)), 0);
        ck_assert_int_eq(git_index_add(index, &e), 0);
}

static void commit_index(git_repository *repo, git_index *index, const char *ref, const git_oid *parent,
                         git_oid *ret)
{
        git_signature *sig = NULL;
        git_commit *parent_commit = NULL;
        git_tree *tree = NULL;
        git_oid tree_oid;

        ck_assert_int_eq(git_index_write_tree_to(&tree_oid, index, repo), 0);
        ck_assert_int_eq(git_tree_lookup(&tree, repo, &tree_oid), 0);
        ck_assert_int_eq(git_signature_new(&sig, "Test", "test@example.invalid", 1700000000, 0), 0);
        if (parent)
                ck_assert_int_eq(git_commit_lookup(&parent_commit, repo, parent), 0);
        ck_assert_int_eq(git_commit_create_v(ret, repo, ref, sig, sig, NULL, "test", tree, parent ? 1 : 0,
                                             parent_commit),
                         0);
        git_commit_free(parent_commit);
        git_tree_free(tree);
        git_signature_free(sig);
}

/* The source: main (the base), feature (the pull request), refs/pull/7/head (one more commit on it), an
 * annotated tag v1 of feature, a branch and a tag both named dup, and a commit no ref reaches. */
static int chown_nobody(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        (void)st;
        (void)flag;
        (void)ftw;
        return lchown(path, 65534, 65534) < 0 ? -1 : 0;
}

static void make_source(void)
{
        git_repository *repo = NULL;
        git_index *index = NULL;
        git_object *pr = NULL;
        git_reference *ref = NULL;
        git_signature *sig = NULL;
        git_oid base, feature, mid, pull, dangling, tag;

        (void)snprintf(src, sizeof(src), "%s/src.git", tmpdir);
        ck_assert_int_eq(git_repository_init(&repo, src, 1), 0);
        ck_assert_int_eq(git_index_new(&index), 0);
        add_entry(repo, index, ".claude/settings.json", GIT_FILEMODE_BLOB, base_settings);
        add_entry(repo, index, ".agentic-job/a", GIT_FILEMODE_BLOB, "base-a\n");
        add_entry(repo, index, "README", GIT_FILEMODE_BLOB, "readme\n");
        commit_index(repo, index, "refs/heads/main", NULL, &base);

        ck_assert_int_eq(git_index_remove(index, ".claude/settings.json", 0), 0);
        add_entry(repo, index, ".claude/settings.json", GIT_FILEMODE_BLOB, pr_settings);
        add_entry(repo, index, ".claude/extra.json", GIT_FILEMODE_BLOB, "{}\n");
        ck_assert_int_eq(git_index_remove_directory(index, ".agentic-job", 0), 0);
        add_entry(repo, index, ".agentic-job", GIT_FILEMODE_LINK, "/etc");
        add_entry(repo, index, ".only-in-pr/x", GIT_FILEMODE_BLOB, "pr\n");
        add_entry(repo, index, "new.txt", GIT_FILEMODE_BLOB, lf_text);
        add_entry(repo, index, "ident.txt", GIT_FILEMODE_BLOB, ident_text);
        add_entry(repo, index, "run.sh", GIT_FILEMODE_BLOB_EXECUTABLE, "#!/bin/sh\n");
        add_entry(repo, index, "hostname", GIT_FILEMODE_LINK, "/etc/hostname");
        add_entry(repo, index, ".gitattributes", GIT_FILEMODE_BLOB,
                  "*.txt text eol=crlf filter=evil\nident.txt ident\n");
        add_entry(repo, index, ".gitmodules", GIT_FILEMODE_BLOB,
                  "[submodule \"sub\"]\n\tpath = sub\n\turl = https://example.invalid/sub.git\n");
        add_entry(repo, index, "sub", GIT_FILEMODE_COMMIT, NULL);
        commit_index(repo, index, "refs/heads/feature", &base, &feature);
        add_entry(repo, index, "mid.txt", GIT_FILEMODE_BLOB, "mid\n");
        commit_index(repo, index, NULL, &feature, &mid);
        add_entry(repo, index, "pull.txt", GIT_FILEMODE_BLOB, "pull\n");
        commit_index(repo, index, "refs/pull/7/head", &mid, &pull);
        add_entry(repo, index, "dangling.txt", GIT_FILEMODE_BLOB, "dangling\n");
        commit_index(repo, index, NULL, &feature, &dangling);

        ck_assert_int_eq(git_signature_new(&sig, "Test", "test@example.invalid", 1700000000, 0), 0);
        ck_assert_int_eq(git_object_lookup(&pr, repo, &feature, GIT_OBJECT_COMMIT), 0);
        ck_assert_int_eq(git_tag_create(&tag, repo, "v1", pr, sig, "v1", 0), 0);
        ck_assert_int_eq(git_reference_create(&ref, repo, "refs/heads/dup", &base, 0, NULL), 0);
        git_reference_free(ref);
        ck_assert_int_eq(git_reference_create(&ref, repo, "refs/tags/dup", &feature, 0, NULL), 0);
        git_reference_free(ref);

        (void)git_oid_tostr(base_hex, sizeof(base_hex), &base);
        (void)git_oid_tostr(pr_hex, sizeof(pr_hex), &feature);
        (void)git_oid_tostr(mid_hex, sizeof(mid_hex), &mid);
        (void)git_oid_tostr(pull_hex, sizeof(pull_hex), &pull);
        (void)git_oid_tostr(dangling_hex, sizeof(dangling_hex), &dangling);
        git_signature_free(sig);
        git_object_free(pr);
        git_index_free(index);
        git_repository_free(repo);
        /* Another user's source, as root's is for the sandbox user in the test hosts (libgit2 checks the
         * owner of a repository it opens). Only root can give a file away. */
        if (geteuid() == 0)
                ck_assert_int_eq(nftw(src, chown_nobody, 16, FTW_PHYS), 0);
}

#define BIG_SETTINGS (3u << 20)
#define BIG_ZEROS    (4u << 20)

/* big.git: main has README ("readme\n") and .claude/settings.json of 3 MiB; the feature adds "zeros",
 * 4 MiB of zeros: a pack of some kilobytes that checks out 10 MiB and 7 bytes, and 3 MiB more for the
 * trusted path .claude, taken from the base. */
static void make_big_source(void)
{
        git_repository *repo = NULL;
        git_index *index = NULL;
        git_oid base, feature;
        char *buf = calloc(1, BIG_ZEROS);
        git_index_entry e = { .mode = GIT_FILEMODE_BLOB };

        ck_assert_ptr_nonnull(buf);
        (void)snprintf(big_src, sizeof(big_src), "%s/big.git", tmpdir);
        ck_assert_int_eq(git_repository_init(&repo, big_src, 1), 0);
        ck_assert_int_eq(git_index_new(&index), 0);
        add_entry(repo, index, "README", GIT_FILEMODE_BLOB, "readme\n");
        e.path = ".claude/settings.json";
        memset(buf, ' ', BIG_SETTINGS);
        ck_assert_int_eq(git_blob_create_from_buffer(&e.id, repo, buf, BIG_SETTINGS), 0);
        ck_assert_int_eq(git_index_add(index, &e), 0);
        commit_index(repo, index, "refs/heads/main", NULL, &base);
        e.path = "zeros";
        memset(buf, 0, BIG_ZEROS);
        ck_assert_int_eq(git_blob_create_from_buffer(&e.id, repo, buf, BIG_ZEROS), 0);
        ck_assert_int_eq(git_index_add(index, &e), 0);
        commit_index(repo, index, "refs/heads/feature", &base, &feature);
        (void)git_oid_tostr(big_hex, sizeof(big_hex), &feature);
        free(buf);
        git_index_free(index);
        git_repository_free(repo);
        if (geteuid() == 0)
                ck_assert_int_eq(nftw(big_src, chown_nobody, 16, FTW_PHYS), 0);
}

static void setup(void)
{
        AjError e = {};

        ck_assert_ptr_nonnull(mkdtemp(tmpdir));
        git_init = libgit2_init_isolated(&e);
        ck_assert_int_gt(git_init, 0);
        make_source();
        make_big_source();
}

static void teardown(void)
{
        libgit2_shutdownp(&git_init);
        (void)nftw(tmpdir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* remove_tree_at() takes a name in its directory, whose mount it compares the tree's with: the parent is
 * opened and its last component removed (with AT_FDCWD and a full path, the working directory would be
 * compared, another file system where the build directory is a mount of its own). */
static int remove_path(const char *path)
{
        const char *slash = strrchr(path, '/');
        char parent[PATH_MAX];
        int fd, r;

        ck_assert_ptr_nonnull(slash);
        (void)snprintf(parent, sizeof(parent), "%.*s", (int)(slash - path), path);
        fd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        r = remove_tree_at(fd, slash + 1);
        close(fd);
        return r;
}

static char *const trusted[] = { ".claude", ".agentic-job/", ".only-in-pr", ".not-anywhere", NULL };

static CloneRequest request(const char *name, const char *commit, const char *ref, char *dir, size_t size)
{
        (void)snprintf(dir, size, "%s/%s", tmpdir, name);
        return (CloneRequest){ .url = src,
                               .commit = commit,
                               .ref = ref,
                               .base = "main",
                               .trusted_paths = trusted,
                               .dir = dir };
}

static void count_progress(const CloneProgress *p, void *userdata)
{
        unsigned *calls = userdata;

        ck_assert_uint_le(p->indexed_objects, p->total_objects);
        (*calls)++;
}

/* The file's bytes, compared with what they must be. */
static void assert_file(const char *dir, const char *path, const char *content)
{
        char full[PATH_MAX], buf[256];
        _cleanup_close_ int fd = -EBADF;
        ssize_t n;

        (void)snprintf(full, sizeof(full), "%s/%s", dir, path);
        fd = open(full, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        ck_assert_msg(fd >= 0, "%s: %s", full, strerror(errno));
        n = read(fd, buf, sizeof(buf));
        ck_assert_int_eq(n, (ssize_t)strlen(content));
        ck_assert_mem_eq(buf, content, (size_t)n);
}

static void write_file(const char *dir, const char *path, const char *content)
{
        char full[PATH_MAX];
        _cleanup_close_ int fd = -EBADF;

        (void)snprintf(full, sizeof(full), "%s/%s", dir, path);
        fd = open(full, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, content, strlen(content)), (ssize_t)strlen(content));
}

static void assert_link(const char *dir, const char *path, const char *target)
{
        char full[PATH_MAX], buf[PATH_MAX];
        ssize_t n;

        (void)snprintf(full, sizeof(full), "%s/%s", dir, path);
        n = readlink(full, buf, sizeof(buf));
        ck_assert_int_eq(n, (ssize_t)strlen(target));
        ck_assert_mem_eq(buf, target, (size_t)n);
}

static void assert_absent(const char *dir, const char *path)
{
        char full[PATH_MAX];
        struct stat st;

        (void)snprintf(full, sizeof(full), "%s/%s", dir, path);
        ck_assert_int_eq(lstat(full, &st), -1);
        ck_assert_int_eq(errno, ENOENT);
}

static void assert_head(const char *dir, const char *hex)
{
        git_repository *repo = NULL;
        git_oid head;

        ck_assert_int_eq(git_repository_open(&repo, dir), 0);
        ck_assert_int_eq(git_repository_head_detached(repo), 1);
        ck_assert_int_eq(git_reference_name_to_id(&head, repo, "HEAD"), 0);
        ck_assert_str_eq(git_oid_tostr_s(&head), hex);
        git_repository_free(repo);
}

START_TEST(test_clone_by_commit)
{
        char dir[DIR_MAX], path[PATH_MAX];
        CloneRequest req = request("c1", pr_hex, NULL, dir, sizeof(dir));
        CloneResult res;
        AjError e = {};
        unsigned calls = 0;
        struct stat st;
        DIR *d;
        struct dirent *de;
        unsigned entries = 0;

        ck_assert_msg(workspace_clone(&req, count_progress, &calls, &res, &e) == 0, "%s", e.message);
        ck_assert_str_eq(res.commit, pr_hex);
        ck_assert_str_eq(res.base_commit, base_hex);
        ck_assert(res.fetched_by_id);
        ck_assert_uint_gt(calls, 0);
        ck_assert_uint_eq(res.n_trusted_replaced, 2);
        ck_assert_uint_eq(res.n_trusted_removed, 1);
        assert_head(dir, pr_hex);

        ck_assert_int_eq(stat(dir, &st), 0);
        ck_assert_uint_eq(st.st_mode & 07777, 0700);
        /* The pull request's own files, byte for byte: no eol=crlf, no ident, no filter driver. */
        assert_file(dir, "new.txt", lf_text);
        assert_file(dir, "ident.txt", ident_text);
        (void)snprintf(path, sizeof(path), "%s/run.sh", dir);
        ck_assert_int_eq(stat(path, &st), 0);
        ck_assert(st.st_mode & S_IXUSR);
        assert_link(dir, "hostname", "/etc/hostname");
        /* The trusted paths are the base's: the directory, not the link to /etc, and nothing of the PR's. */
        assert_file(dir, ".claude/settings.json", base_settings);
        assert_absent(dir, ".claude/extra.json");
        (void)snprintf(path, sizeof(path), "%s/.agentic-job", dir);
        ck_assert_int_eq(lstat(path, &st), 0);
        ck_assert(S_ISDIR(st.st_mode));
        assert_file(dir, ".agentic-job/a", "base-a\n");
        assert_absent(dir, ".only-in-pr");
        assert_absent(dir, ".not-anywhere");
        /* The submodule is never initialised: an empty directory. */
        (void)snprintf(path, sizeof(path), "%s/sub", dir);
        d = opendir(path);
        ck_assert_ptr_nonnull(d);
        while ((de = readdir(d)))
                entries += strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0;
        (void)closedir(d);
        ck_assert_uint_eq(entries, 0);
        /* No tag was followed. */
        (void)snprintf(path, sizeof(path), "%s/.git/refs/tags/v1", dir);
        ck_assert_int_eq(access(path, F_OK), -1);
}
END_TEST

START_TEST(test_link_component_removed)
{
        char dir[DIR_MAX], path[PATH_MAX];
        char *const inner[] = { ".agentic-job/a", ".claude/settings.json", NULL };
        CloneRequest req = request("c2", pr_hex, NULL, dir, sizeof(dir));
        CloneResult res;
        AjError e = {};
        struct stat st;

        req.trusted_paths = inner;
        ck_assert_msg(workspace_clone(&req, NULL, NULL, &res, &e) == 0, "%s", e.message);
        ck_assert_uint_eq(res.n_trusted_replaced, 2);
        /* The link on the way was removed, not followed: /etc/a was never looked for. */
        (void)snprintf(path, sizeof(path), "%s/.agentic-job", dir);
        ck_assert_int_eq(lstat(path, &st), 0);
        ck_assert(S_ISDIR(st.st_mode));
        assert_file(dir, ".agentic-job/a", "base-a\n");
        assert_file(dir, ".claude/settings.json", base_settings);
        /* Only the named file was replaced: the PR's sibling stays. */
        assert_file(dir, ".claude/extra.json", "{}\n");
}
END_TEST

/* A gitconfig where libgit2 would look for the global one is not read: core.symlinks = false there would
 * have the link checked out as a file. */
START_TEST(test_no_global_config)
{
        char dir[DIR_MAX], home[DIR_MAX];
        CloneRequest req = request("c9", pr_hex, NULL, dir, sizeof(dir));
        CloneResult res;
        AjError e = {};

        (void)snprintf(home, sizeof(home), "%s/home", tmpdir);
        ck_assert_int_eq(mkdir(home, 0700), 0);
        write_file(home, ".gitconfig", "[core]\n\tsymlinks = false\n");
        ck_assert_int_eq(git_libgit2_opts(GIT_OPT_SET_SEARCH_PATH, GIT_CONFIG_LEVEL_GLOBAL, home), 0);
        ck_assert_msg(workspace_clone(&req, NULL, NULL, &res, &e) == 0, "%s", e.message);
        assert_link(dir, "hostname", "/etc/hostname");
}
END_TEST

/* The directory holds .git alone: nothing was checked out. */
static void assert_nothing_checked_out(const char *dir)
{
        DIR *d = opendir(dir);
        struct dirent *de;

        ck_assert_ptr_nonnull(d);
        while ((de = readdir(d)))
                ck_assert_msg(strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
                                      strcmp(de->d_name, ".git") == 0,
                              "%s/%s was checked out", dir, de->d_name);
        (void)closedir(d);
}

/* Each bound at the exact size passes; one less is refused, naming its key, before any checkout. */
START_TEST(test_bounds)
{
        static const uint64_t checkout = BIG_SETTINGS + BIG_ZEROS + 7 + BIG_SETTINGS;
        static const struct {
                CloneLimits limits;
                const char *message; /* NULL: the clone passes */
        } cases[] = {
                { { .max_object_bytes = BIG_ZEROS - 1 },
                  "zeros is 4194304 bytes, more than [run] clone-max-object-bytes (4194303)" },
                { { .max_object_bytes = BIG_ZEROS }, NULL },
                { { .max_checkout_bytes = checkout - 1 },
                  "the checkout is more than [run] clone-max-checkout-bytes (10485766) bytes, at .claude" },
                { { .max_checkout_bytes = checkout }, NULL },
                /* README, .claude and its file, zeros; the base's .claude and its file. */
                { { .max_files = 5 },
                  "the checkout has more than [run] clone-max-files (5) entries, at .claude" },
                { { .max_files = 6 }, NULL },
                { { .max_bytes = 1000 }, "passed [run] clone-max-bytes (1000 bytes): cut there" },
                { { .max_bytes = 1u << 20 }, NULL },
        };
        char *const big_trusted[] = { ".claude", NULL };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char name[16], dir[DIR_MAX];
                CloneRequest req;
                CloneResult res;
                AjError e = {};
                int r;

                (void)snprintf(name, sizeof(name), "bounds%zu", i);
                req = request(name, big_hex, NULL, dir, sizeof(dir));
                req.url = big_src;
                req.trusted_paths = big_trusted;
                req.limits = cases[i].limits;
                r = workspace_clone(&req, NULL, NULL, &res, &e);
                if (!cases[i].message) {
                        ck_assert_msg(r == 0, "case %zu: %s", i, e.message);
                        ck_assert_uint_eq(res.n_trusted_replaced, 1);
                        continue;
                }
                ck_assert_msg(r == -EFBIG, "case %zu: %d %s", i, r, e.message);
                ck_assert_msg(strstr(e.message, cases[i].message), "case %zu: %s", i, e.message);
                assert_nothing_checked_out(dir);
        }
}
END_TEST

START_TEST(test_existing_dir_refused)
{
        char dir[DIR_MAX];
        CloneRequest req = request("c3", pr_hex, NULL, dir, sizeof(dir));
        CloneResult res;
        AjError e = {};

        ck_assert_int_eq(mkdir(dir, 0700), 0);
        ck_assert_int_eq(workspace_clone(&req, NULL, NULL, &res, &e), -EEXIST);
        ck_assert_ptr_nonnull(strstr(e.message, dir));
}
END_TEST

START_TEST(test_missing_commit)
{
        static const char missing[] = "0123456789abcdef0123456789abcdef01234567";
        char dir[DIR_MAX];
        CloneRequest req = request("c4", missing, NULL, dir, sizeof(dir));
        CloneResult res;
        AjError e = {};

        ck_assert_int_eq(workspace_clone(&req, NULL, NULL, &res, &e), -ENOENT);
        ck_assert_msg(strstr(e.message, missing), "%s", e.message);
}
END_TEST

START_TEST(test_reachable_commit)
{
        char dir[DIR_MAX];
        CloneRequest req = request("c8", mid_hex, NULL, dir, sizeof(dir));
        CloneResult res;
        AjError e = {};

        /* Measured: libgit2's local transport ignores the wants and sends all that any of its refs reaches
         * (here refs/pull/7/head), so the fetch with the bare id brings a commit no fetched ref reaches. */
        ck_assert_msg(workspace_clone(&req, NULL, NULL, &res, &e) == 0, "%s", e.message);
        ck_assert(res.fetched_by_id);
        assert_file(dir, "mid.txt", "mid\n");
}
END_TEST

START_TEST(test_unreachable_commit)
{
        char dir[DIR_MAX];
        CloneRequest req = request("c5", dangling_hex, NULL, dir, sizeof(dir));
        CloneResult res;
        AjError e = {};

        /* In the source's object database, but no ref reaches it: the local transport does not send it
         * (the fetch by id succeeds without it), nor does any branch have it. */
        ck_assert_int_eq(workspace_clone(&req, NULL, NULL, &res, &e), -ENOENT);
        ck_assert_msg(strstr(e.message, dangling_hex), "%s", e.message);
}
END_TEST

START_TEST(test_missing_base)
{
        char dir[DIR_MAX];
        CloneRequest req = request("c6", pr_hex, NULL, dir, sizeof(dir));
        CloneResult res;
        AjError e = {};

        req.base = "nope";
        ck_assert_int_eq(workspace_clone(&req, NULL, NULL, &res, &e), -ENOENT);
        ck_assert_msg(strstr(e.message, "nope"), "%s", e.message);
}
END_TEST

START_TEST(test_bad_requests)
{
        static const char *const urls[] = { "file:///tmp",
                                            "ssh://example.com/x.git",
                                            "git://example.com/x",
                                            "http://example.com/x.git",
                                            "example.com:x.git",
                                            "relative/path",
                                            "/nonexistent/agentic-job",
                                            "https://",
                                            "https://a b" };
        char *const bad_trusted[] = { "../x", NULL };
        char dir[DIR_MAX];
        CloneRequest req = request("c7", pr_hex, NULL, dir, sizeof(dir));
        CloneResult res;
        AjError e = {};

        for (size_t i = 0; i < ELEMENTSOF(urls); i++) {
                req.url = urls[i];
                ck_assert_int_eq(workspace_clone(&req, NULL, NULL, &res, &e), -EINVAL);
        }
        req.url = src;
        req.commit = "0123";
        ck_assert_int_eq(workspace_clone(&req, NULL, NULL, &res, &e), -EINVAL);
        req.commit = "0123456789ABCDEF0123456789abcdef01234567";
        ck_assert_int_eq(workspace_clone(&req, NULL, NULL, &res, &e), -EINVAL);
        req.ref = "main";
        req.commit = pr_hex;
        ck_assert_int_eq(workspace_clone(&req, NULL, NULL, &res, &e), -EINVAL);
        req.ref = NULL;
        req.base = "a:b";
        ck_assert_int_eq(workspace_clone(&req, NULL, NULL, &res, &e), -EINVAL);
        req.base = "main";
        req.proxy_url = "socks5://127.0.0.1:1080";
        ck_assert_int_eq(workspace_clone(&req, NULL, NULL, &res, &e), -EINVAL);
        req.proxy_url = NULL;
        req.trusted_paths = bad_trusted;
        ck_assert_int_eq(workspace_clone(&req, NULL, NULL, &res, &e), -EINVAL);
        req.trusted_paths = trusted;
        req.ca_file = "/nonexistent/ca.pem";
        ck_assert_int_eq(workspace_clone(&req, NULL, NULL, &res, &e), -EIO);
        ck_assert_msg(strstr(e.message, req.ca_file), "%s", e.message);
        req.ca_file = NULL;
        req.dir = "relative";
        ck_assert_int_eq(workspace_clone(&req, NULL, NULL, &res, &e), -EINVAL);
        /* Nothing was made for any of them. */
        ck_assert_int_eq(access(dir, F_OK), -1);
}
END_TEST

START_TEST(test_trusted_path_validate)
{
        static const char *const bad[] = { "",       "/",    "/etc",     "a//b", "./a",   "a/.", "..",
                                           "a/../b", ".git", "x/.GIT/y", "a\nb", "a\x7f", "//" };
        static const char *const good[] = { ".claude", ".claude/", ".agentic-job/x.toml", "a/.gitx", "..a" };
        AjError e = {};

        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                ck_assert_msg(trusted_path_validate(bad[i], &e) == -EINVAL, "%s", bad[i]);
        for (size_t i = 0; i < ELEMENTSOF(good); i++)
                ck_assert_msg(trusted_path_validate(good[i], &e) == 0, "%s: %s", good[i], e.message);
}
END_TEST

START_TEST(test_refs)
{
        static const struct {
                const char *ref, *hex;
        } cases[] = {
                { "feature", pr_hex },
                { "refs/heads/feature", pr_hex },
                { "refs/pull/7/head", pull_hex },
                { "v1", pr_hex }, /* an annotated tag: the commit it points at */
        };
        AjError e = {};

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char name[16], dir[DIR_MAX];
                CloneRequest req;
                CloneResult res;

                (void)snprintf(name, sizeof(name), "r%zu", i);
                req = request(name, NULL, cases[i].ref, dir, sizeof(dir));
                ck_assert_msg(workspace_clone(&req, NULL, NULL, &res, &e) == 0, "%s: %s", cases[i].ref,
                              e.message);
                ck_assert_str_eq(res.commit, cases[i].hex);
                assert_head(dir, cases[i].hex);
        }
}
END_TEST

START_TEST(test_bad_refs)
{
        char dir[DIR_MAX];
        CloneRequest req = request("r-bad", NULL, "nope", dir, sizeof(dir));
        CloneResult res;
        AjError e = {};

        ck_assert_int_eq(workspace_clone(&req, NULL, NULL, &res, &e), -ENOENT);
        ck_assert_msg(strstr(e.message, "nope"), "%s", e.message);
        req = request("r-dup", NULL, "dup", dir, sizeof(dir));
        ck_assert_int_eq(workspace_clone(&req, NULL, NULL, &res, &e), -EINVAL);
        ck_assert_msg(strstr(e.message, "ambiguous"), "%s", e.message);
}
END_TEST

START_TEST(test_patch)
{
        char dir[DIR_MAX], path[PATH_MAX];
        CloneRequest req = request("p1", pr_hex, NULL, dir, sizeof(dir));
        _cleanup_free_ char *patch = NULL;
        char *none = NULL;
        CloneResult res;
        AjError e = {};
        size_t size = 0;

        ck_assert_msg(workspace_clone(&req, NULL, NULL, &res, &e) == 0, "%s", e.message);
        /* The trusted paths' replacement is not the agent's doing. */
        ck_assert_int_eq(patch_build(dir, pr_hex, trusted, 1 << 20, &patch, &size, &e), 0);
        ck_assert_str_eq(patch, "");
        ck_assert_uint_eq(size, 0);
        free(TAKE_PTR(patch));

        /* The agent: a change, CRLF line ends where .gitattributes asks for text, a new file in a new
         * directory, a deletion, a link, and a change to a trusted path. */
        write_file(dir, "new.txt", "a\r\nb\r\nc\r\n");
        (void)snprintf(path, sizeof(path), "%s/added", dir);
        ck_assert_int_eq(mkdir(path, 0755), 0);
        write_file(dir, "added/file.c", "int x;\n");
        (void)snprintf(path, sizeof(path), "%s/README", dir);
        ck_assert_int_eq(unlink(path), 0);
        (void)snprintf(path, sizeof(path), "%s/passwd", dir);
        ck_assert_int_eq(symlink("/etc/passwd", path), 0);
        write_file(dir, ".claude/settings.json", "{\"agent\": 1}\n");
        /* A FIFO is no file of a patch, and opening it would block. */
        (void)snprintf(path, sizeof(path), "%s/fifo", dir);
        ck_assert_int_eq(mkfifo(path, 0644), 0);

        ck_assert_msg(patch_build(dir, pr_hex, trusted, 1 << 20, &patch, &size, &e) == 0, "%s", e.message);
        ck_assert_uint_eq(strlen(patch), size);
        ck_assert_ptr_nonnull(strstr(patch, "diff --git a/new.txt b/new.txt\n"));
        ck_assert_ptr_nonnull(strstr(patch, "+a\r\n+b\r\n+c\r\n"));
        ck_assert_ptr_nonnull(strstr(patch, "+++ b/added/file.c\n@@ -0,0 +1 @@\n+int x;\n"));
        ck_assert_ptr_nonnull(strstr(patch, "deleted file mode 100644\n"));
        ck_assert_ptr_nonnull(strstr(patch, "-readme\n"));
        ck_assert_ptr_nonnull(strstr(patch, "new file mode 120000\n"));
        ck_assert_ptr_nonnull(strstr(patch, "+/etc/passwd\n\\ No newline at end of file\n"));
        ck_assert_ptr_null(strstr(patch, "root:"));
        ck_assert_ptr_null(strstr(patch, ".claude"));
        ck_assert_ptr_null(strstr(patch, ".agentic-job"));
        ck_assert_ptr_null(strstr(patch, ".only-in-pr"));
        ck_assert_ptr_null(strstr(patch, "sub"));
        ck_assert_ptr_null(strstr(patch, "fifo"));

        /* Without the exclusions, the trusted paths show. */
        free(TAKE_PTR(patch));
        ck_assert_int_eq(patch_build(dir, pr_hex, NULL, 1 << 20, &patch, NULL, &e), 0);
        ck_assert_ptr_nonnull(strstr(patch, "+++ b/.claude/settings.json\n"));

        /* The bound: one byte short of the whole fails, the exact size passes. */
        ck_assert_int_eq(patch_build(dir, pr_hex, trusted, size - 1, &none, NULL, &e), -EFBIG);
        ck_assert_ptr_null(none);
        ck_assert_int_eq(patch_build(dir, pr_hex, trusted, 10, &none, NULL, &e), -EFBIG);
        ck_assert_int_eq(patch_build(dir, pr_hex, trusted, size, &none, NULL, &e), 0);
        free(TAKE_PTR(none));
        ck_assert_int_eq(patch_build(dir, "nothex", trusted, size, &none, NULL, &e), -EINVAL);
        ck_assert_int_eq(patch_build(dir, dangling_hex, trusted, size, &none, NULL, &e), -EIO);
        ck_assert_ptr_null(none);
}
END_TEST

START_TEST(test_patch_ignores_repository_config)
{
        char dir[DIR_MAX], path[PATH_MAX];
        CloneRequest req = request("p2", pr_hex, NULL, dir, sizeof(dir));
        _cleanup_free_ char *patch = NULL;
        CloneResult res;
        AjError e = {};

        ck_assert_msg(workspace_clone(&req, NULL, NULL, &res, &e) == 0, "%s", e.message);
        /* What an agent could write to .git/config to have the patch read through a link. */
        write_file(dir, ".git/config",
                   "[core]\n\tsymlinks = false\n\tfilemode = false\n\tworktree = /etc\n");
        (void)snprintf(path, sizeof(path), "%s/passwd", dir);
        ck_assert_int_eq(symlink("/etc/passwd", path), 0);
        (void)snprintf(path, sizeof(path), "%s/run.sh", dir);
        ck_assert_int_eq(chmod(path, 0644), 0);
        ck_assert_msg(patch_build(dir, pr_hex, trusted, 1 << 20, &patch, NULL, &e) == 0, "%s", e.message);
        ck_assert_ptr_nonnull(strstr(patch, "+/etc/passwd\n"));
        ck_assert_ptr_null(strstr(patch, "root:"));
        ck_assert_ptr_nonnull(strstr(patch, "old mode 100755\nnew mode 100644\n"));
}
END_TEST

/* A FIFO, a device or a link where libgit2 opens a file would block the exporter for good, or lead it out
 * of the workspace: the patch is refused by name before libgit2 opens anything (the alarm fails a test
 * that blocks). */
START_TEST(test_patch_refuses_what_blocks)
{
        static const struct {
                const char *path, *kind, *want;
        } cases[] = {
                { ".git/config", "fifo", ".git/config is a FIFO" },
                { ".git/HEAD", "fifo", ".git/HEAD is a FIFO" },
                { ".gitignore", "fifo", ".gitignore is a FIFO" },
                { "ajt-deep/er/.gitignore", "fifo", "ajt-deep/er/.gitignore is a FIFO" },
                { "ajt-deep/.gitattributes", "fifo", "ajt-deep/.gitattributes is a FIFO" },
                { ".gitmodules", "link", ".gitmodules is a symbolic link" },
                { ".git/info/attributes", "fifo", ".git/info/attributes is a FIFO" },
                { ".git/info/exclude", "link", ".git/info/exclude is a symbolic link" },
                { ".git/objects/pack/pack-x.idx", "fifo", "pack-x.idx is a FIFO" },
                { "ajt-sub/.git/HEAD", "fifo", "ajt-sub/.git/HEAD is a FIFO" },
                { ".git/objects/info/alternates", "file", "alternates" },
                { ".git/commondir", "file", "commondir" },
        };
        char dir[DIR_MAX], path[PATH_MAX], saved[PATH_MAX + 8];
        CloneRequest req = request("p3", pr_hex, NULL, dir, sizeof(dir));
        _cleanup_free_ char *patch = NULL;
        CloneResult res;
        AjError e = {};

        ck_assert_msg(workspace_clone(&req, NULL, NULL, &res, &e) == 0, "%s", e.message);
        for (const char *const *d =
                     (const char *const[]){ "ajt-deep", "ajt-deep/er", "ajt-sub", "ajt-sub/.git", NULL };
             *d; d++) {
                (void)snprintf(path, sizeof(path), "%s/%s", dir, *d);
                ck_assert_msg(mkdir(path, 0700) == 0, "%s: %s", path, strerror(errno));
        }
        alarm(20);
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char *none = NULL;
                bool moved;

                (void)snprintf(path, sizeof(path), "%s/%s", dir, cases[i].path);
                (void)snprintf(saved, sizeof(saved), "%s.saved", path);
                moved = rename(path, saved) == 0;
                if (strcmp(cases[i].kind, "fifo") == 0)
                        ck_assert_int_eq(mkfifo(path, 0600), 0);
                else if (strcmp(cases[i].kind, "link") == 0)
                        ck_assert_int_eq(symlink("/dev/zero", path), 0);
                else
                        write_file(dir, cases[i].path, "/tmp\n");
                ck_assert_int_eq(patch_build(dir, pr_hex, trusted, 1 << 20, &none, NULL, &e), -EINVAL);
                ck_assert_msg(strstr(e.message, cases[i].want), "%s: %s", cases[i].path, e.message);
                ck_assert_ptr_null(none);
                ck_assert_int_eq(unlink(path), 0);
                if (moved)
                        ck_assert_int_eq(rename(saved, path), 0);
        }
        /* The configuration it reads as it opens the repository: no file included from elsewhere. */
        (void)snprintf(path, sizeof(path), "%s/.git/config", dir);
        (void)snprintf(saved, sizeof(saved), "%s/.git/config.saved", dir);
        ck_assert_int_eq(rename(path, saved), 0);
        write_file(dir, ".git/config", "[core]\n\tbare = false\n  [Include]\n\tpath = /tmp/fifo\n");
        ck_assert_int_eq(patch_build(dir, pr_hex, trusted, 1 << 20, &patch, NULL, &e), -EINVAL);
        ck_assert_msg(strstr(e.message, "include"), "%s", e.message);
        ck_assert_int_eq(unlink(path), 0);
        write_file(dir, ".git/config", "[includeIf \"gitdir:/\"]\n\tpath = /tmp/fifo\n");
        ck_assert_int_eq(patch_build(dir, pr_hex, trusted, 1 << 20, &patch, NULL, &e), -EINVAL);
        ck_assert_int_eq(unlink(path), 0);
        /* A value that only mentions the word is no include. */
        write_file(dir, ".git/config", "[remote \"include\"]\n\turl = /srv/include-what-you-use\n");
        ck_assert_msg(patch_build(dir, pr_hex, trusted, 1 << 20, &patch, NULL, &e) == 0, "%s", e.message);
        free(TAKE_PTR(patch));
        ck_assert_int_eq(unlink(path), 0);
        ck_assert_int_eq(rename(saved, path), 0);
        /* And with everything back in place, the patch is made. */
        ck_assert_msg(patch_build(dir, pr_hex, trusted, 1 << 20, &patch, NULL, &e) == 0, "%s", e.message);
        alarm(0);
}
END_TEST

/* What a setup command may do to a clone before the agent: rewrite a trusted file and add one beside it,
 * put a link where a trusted directory was, bring back what the base lacks (a FIFO too), and rewrite the
 * repository's configuration and attributes. The restore undoes each, and follows none of it. */
START_TEST(test_restore_after_setup)
{
        char dir[DIR_MAX], path[PATH_MAX], elsewhere[PATH_MAX];
        CloneRequest req = request("c10", pr_hex, NULL, dir, sizeof(dir));
        CloneResult res;
        TrustedRestore tr = {};
        AjError e = {};
        struct stat st;

        ck_assert_msg(workspace_clone(&req, NULL, NULL, &res, &e) == 0, "%s", e.message);
        write_file(dir, ".claude/settings.json", pr_settings);
        write_file(dir, ".claude/extra.json", "{}\n");
        (void)snprintf(elsewhere, sizeof(elsewhere), "%s/elsewhere", tmpdir);
        ck_assert_int_eq(mkdir(elsewhere, 0755), 0);
        write_file(elsewhere, "a", "evil\n");
        (void)snprintf(path, sizeof(path), "%s/.agentic-job", dir);
        ck_assert_int_eq(remove_path(path), 0);
        ck_assert_int_eq(symlink(elsewhere, path), 0);
        (void)snprintf(path, sizeof(path), "%s/.only-in-pr", dir);
        ck_assert_int_eq(mkdir(path, 0755), 0);
        write_file(dir, ".only-in-pr/x", "pr\n");
        (void)snprintf(path, sizeof(path), "%s/.not-anywhere", dir);
        ck_assert_int_eq(mkfifo(path, 0644), 0);
        write_file(dir, ".git/config", "[core]\n\tautocrlf = true\n\tworktree = /nonexistent\n");
        write_file(dir, ".git/info/attributes", "* text eol=crlf filter=evil ident\n");
        /* Control: the setup command's versions stand. */
        assert_file(dir, ".claude/settings.json", pr_settings);
        assert_file(dir, ".agentic-job/a", "evil\n");

        ck_assert_msg(trusted_paths_restore(dir, base_hex, trusted, &tr, &e) == 0, "%s", e.message);
        ck_assert_uint_eq(tr.n_replaced, 2);
        ck_assert_uint_eq(tr.n_removed, 2);
        assert_file(dir, ".claude/settings.json", base_settings);
        assert_absent(dir, ".claude/extra.json");
        (void)snprintf(path, sizeof(path), "%s/.agentic-job", dir);
        ck_assert_int_eq(lstat(path, &st), 0);
        ck_assert(S_ISDIR(st.st_mode));
        assert_file(dir, ".agentic-job/a", "base-a\n");
        assert_file(elsewhere, "a", "evil\n"); /* the link was removed, never written through */
        assert_absent(dir, ".only-in-pr");
        assert_absent(dir, ".not-anywhere");
        /* The pull request's own files are left as they are. */
        assert_file(dir, "new.txt", lf_text);

        /* A trusted path below a directory of the commit's that is a link now: the link goes, the base's
         * file is written in a directory of its own. */
        char *const inner[] = { ".claude/settings.json", NULL };
        (void)snprintf(path, sizeof(path), "%s/.claude", dir);
        ck_assert_int_eq(remove_path(path), 0);
        ck_assert_int_eq(symlink(elsewhere, path), 0);
        ck_assert_msg(trusted_paths_restore(dir, base_hex, inner, &tr, &e) == 0, "%s", e.message);
        ck_assert_int_eq(lstat(path, &st), 0);
        ck_assert(S_ISDIR(st.st_mode));
        assert_file(dir, ".claude/settings.json", base_settings);
        assert_absent(elsewhere, "settings.json");

        /* Refused: a bad commit id, a bad trusted path, a base commit that is not there. */
        ck_assert_int_eq(trusted_paths_restore(dir, "1234", trusted, &tr, &e), -EINVAL);
        char *const dotdot[] = { "../x", NULL };
        ck_assert_int_eq(trusted_paths_restore(dir, base_hex, dotdot, &tr, &e), -EINVAL);
        ck_assert_int_lt(
                trusted_paths_restore(dir, "1111111111111111111111111111111111111111", trusted, &tr, &e), 0);
        ck_assert_msg(strstr(e.message, "base commit"), "%s", e.message);
}
END_TEST

static int copy_object(const git_oid *id, void *payload)
{
        git_odb **odbs = payload; /* from, to */
        git_odb_object *obj = NULL;
        git_oid written;
        int r = git_odb_read(&obj, odbs[0], id);

        if (r == 0)
                r = git_odb_write(&written, odbs[1], git_odb_object_data(obj), git_odb_object_size(obj),
                                  git_odb_object_type(obj));
        git_odb_object_free(obj);
        return r;
}

/* The objects under their ids: one the setup command wrote anew, other bytes under the id of the base's
 * settings, is refused, not taken. */
START_TEST(test_restore_refuses_a_changed_object)
{
        char dir[DIR_MAX], objects[DIR_MAX + 16], path[PATH_MAX], fake_path[PATH_MAX];
        CloneRequest req = request("c11", pr_hex, NULL, dir, sizeof(dir));
        CloneResult res;
        TrustedRestore tr = {};
        AjError e = {};
        git_odb *odbs[2] = {};
        git_odb_backend *loose = NULL;
        git_oid settings, fake;
        char hex[41], fake_hex[41];

        ck_assert_msg(workspace_clone(&req, NULL, NULL, &res, &e) == 0, "%s", e.message);
        /* Every object loose (a fetch leaves a pack), then the pack gone. */
        (void)snprintf(objects, sizeof(objects), "%s/.git/objects", dir);
        ck_assert_int_eq(git_odb_open(&odbs[0], objects), 0);
        ck_assert_int_eq(git_odb_new(&odbs[1]), 0);
        ck_assert_int_eq(git_odb_backend_loose(&loose, objects, -1, 0, 0, 0), 0);
        ck_assert_int_eq(git_odb_add_backend(odbs[1], loose, 1), 0);
        ck_assert_int_eq(git_odb_foreach(odbs[0], copy_object, odbs), 0);
        (void)snprintf(path, sizeof(path), "%s/pack", objects);
        ck_assert_int_eq(remove_path(path), 0);
        /* Control: from loose objects alone, the restore works. */
        ck_assert_msg(trusted_paths_restore(dir, base_hex, trusted, &tr, &e) == 0, "%s", e.message);
        assert_file(dir, ".claude/settings.json", base_settings);

        ck_assert_int_eq(git_odb_hash(&settings, base_settings, strlen(base_settings), GIT_OBJECT_BLOB), 0);
        ck_assert_int_eq(git_odb_write(&fake, odbs[1], pr_settings, strlen(pr_settings), GIT_OBJECT_BLOB),
                         0);
        (void)git_oid_tostr(hex, sizeof(hex), &settings);
        (void)git_oid_tostr(fake_hex, sizeof(fake_hex), &fake);
        (void)snprintf(path, sizeof(path), "%s/%.2s/%s", objects, hex, hex + 2);
        (void)snprintf(fake_path, sizeof(fake_path), "%s/%.2s/%s", objects, fake_hex, fake_hex + 2);
        ck_assert_int_eq(chmod(path, 0644), 0);
        ck_assert_int_eq(rename(fake_path, path), 0);
        ck_assert_int_lt(trusted_paths_restore(dir, base_hex, trusted, &tr, &e), 0);
        assert_absent(dir, ".claude/settings.json");
        git_odb_free(odbs[0]);
        git_odb_free(odbs[1]);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("clone");
        TCase *tc = tcase_create("workspace_clone");

        tcase_add_unchecked_fixture(tc, setup, teardown);
        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_clone_by_commit);
        tcase_add_test(tc, test_link_component_removed);
        tcase_add_test(tc, test_no_global_config);
        tcase_add_test(tc, test_bounds);
        tcase_add_test(tc, test_existing_dir_refused);
        tcase_add_test(tc, test_missing_commit);
        tcase_add_test(tc, test_reachable_commit);
        tcase_add_test(tc, test_unreachable_commit);
        tcase_add_test(tc, test_missing_base);
        tcase_add_test(tc, test_bad_requests);
        tcase_add_test(tc, test_trusted_path_validate);
        tcase_add_test(tc, test_refs);
        tcase_add_test(tc, test_bad_refs);
        tcase_add_test(tc, test_patch);
        tcase_add_test(tc, test_patch_ignores_repository_config);
        tcase_add_test(tc, test_patch_refuses_what_blocks);
        tcase_add_test(tc, test_restore_after_setup);
        tcase_add_test(tc, test_restore_refuses_a_changed_object);
        suite_add_tcase(s, tc);

        return check_run(s);
}
