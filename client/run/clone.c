/* SPDX-License-Identifier: MIT */
#include "clone.h"

#include <assert.h>
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <git2.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "checkout-bounds.h"
#include "macro.h"
#include "proxy-answer.h"
#include "remove-tree.h"

/* 40 hex digits and the NUL: SHA-1 ids, which is what libgit2 1.5 has (1.9's SHA-256 is experimental). */
#define OID_HEX_SIZE 41

DEFINE_GIT_FREEP(git_repository)
DEFINE_GIT_FREEP(git_remote)
DEFINE_GIT_FREEP(git_object)
DEFINE_GIT_FREEP(git_tree)
DEFINE_GIT_FREEP(git_tree_entry)

static bool has_control_byte(const char *s, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
                        return true;
        return false;
}

void libgit2_shutdownp(const int *init_count)
{
        if (*init_count > 0)
                (void)git_libgit2_shutdown();
}

int libgit2_error(AjError *reterr, const char *what_fmt, ...)
{
        const git_error *e = git_error_last();
        const char *m = e && e->message && e->message[0] ? e->message : "unknown error";
        char what[256], line[256];
        size_t n;
        va_list ap;

        va_start(ap, what_fmt);
        (void)vsnprintf(what, sizeof(what), what_fmt, ap);
        va_end(ap);
        for (n = 0; m[n] && m[n] != '\n' && m[n] != '\r' && n + 1 < sizeof(line); n++) {
                line[n] = m[n];
                if (has_control_byte(m + n, 1))
                        line[n] = '?';
        }
        line[n] = '\0';
        /* Out of memory is the clone's bound ([run] clone-max-memory) far more often than a fault. */
        return aj_error(reterr, e && e->klass == GIT_ERROR_NOMEMORY ? ENOMEM : EIO, 0, 0, "%s: %s", what,
                        line);
}

int libgit2_init_isolated(AjError *reterr)
{
        static const int levels[] = { GIT_CONFIG_LEVEL_PROGRAMDATA, GIT_CONFIG_LEVEL_SYSTEM,
                                      GIT_CONFIG_LEVEL_XDG, GIT_CONFIG_LEVEL_GLOBAL };
        int count = git_libgit2_init();

        if (count < 0)
                return libgit2_error(reterr, "cannot initialise libgit2");
        /* Process-wide, and reset to the defaults by the last shutdown: so set again at every init. */
        for (size_t i = 0; i < ELEMENTSOF(levels); i++)
                if (git_libgit2_opts(GIT_OPT_SET_SEARCH_PATH, levels[i], "") < 0) {
                        int r = libgit2_error(reterr, "cannot empty libgit2's configuration search path");
                        (void)git_libgit2_shutdown();
                        return r;
                }
        return count;
}

int trusted_path_validate(const char *path, AjError *reterr)
{
        size_t n = strlen(path);

        if (n > 0 && path[n - 1] == '/')
                n--;
        if (has_control_byte(path, n))
                return aj_error(reterr, EINVAL, 0, 0, "a trusted path contains a control byte");
        if (n == 0 || path[0] == '/')
                return aj_error(reterr, EINVAL, 0, 0, "trusted path \"%s\" is not a relative path", path);
        for (const char *p = path, *end = path + n; p <= end;) {
                const char *slash = memchr(p, '/', (size_t)(end - p));
                size_t len = slash ? (size_t)(slash - p) : (size_t)(end - p);

                /* ".git" too: the clone's own repository is never the base's to replace. */
                if (len == 0 || (len == 1 && p[0] == '.') || (len == 2 && strncmp(p, "..", 2) == 0) ||
                    (len == 4 && strncasecmp(p, ".git", 4) == 0))
                        return aj_error(
                                reterr, EINVAL, 0, 0,
                                "trusted path \"%s\" has an empty, \".\", \"..\" or \".git\" component",
                                path);
                p += len + 1;
        }
        return 0;
}

static bool is_commit_hex(const char *s)
{
        return strspn(s, "0123456789abcdef") == 40 && s[40] == '\0';
}

/* Whether name is a valid branch (or, with full, a full ref) name, which also keeps ':', '*' and a leading
 * '+' out of the refspecs made of it. */
static bool is_valid_ref(const char *name, bool full)
{
        _cleanup_free_ char *ref = NULL;
        int valid = 0;

        if (!full && asprintf(&ref, "refs/heads/%s", name) < 0)
                return false;
        return git_reference_name_is_valid(&valid, full ? name : ref) == 0 && valid;
}

static int validate_request(const CloneRequest *req, AjError *reterr)
{
        struct stat st;

        if (!req->url || has_control_byte(req->url, strlen(req->url)) || strchr(req->url, ' '))
                return aj_error(reterr, EINVAL, 0, 0, "the URL is missing or has a space or a control byte");
        if (req->url[0] == '/') {
                if (stat(req->url, &st) < 0 || !S_ISDIR(st.st_mode))
                        return aj_error(reterr, EINVAL, 0, 0, "%s is not a directory", req->url);
        } else if (strncmp(req->url, "https://", 8) != 0 || req->url[8] == '\0')
                return aj_error(reterr, EINVAL, 0, 0,
                                "URL %s refused: only https:// and the absolute path of a local repository",
                                req->url);
        if (!req->commit == !req->ref)
                return aj_error(reterr, EINVAL, 0, 0, "exactly one of a commit and a ref is needed");
        if (req->commit && !is_commit_hex(req->commit))
                return aj_error(reterr, EINVAL, 0, 0, "commit \"%s\" is not 40 lowercase hex digits",
                                req->commit);
        if (req->ref && !is_valid_ref(req->ref, strncmp(req->ref, "refs/", 5) == 0))
                return aj_error(reterr, EINVAL, 0, 0, "\"%s\" is not a valid ref name", req->ref);
        if (!req->base || !is_valid_ref(req->base, false))
                return aj_error(reterr, EINVAL, 0, 0, "the base branch name is missing or not valid");
        if (req->proxy_url && (has_control_byte(req->proxy_url, strlen(req->proxy_url)) ||
                               strncmp(req->proxy_url, "http://", 7) != 0))
                return aj_error(reterr, EINVAL, 0, 0, "the proxy URL is not an http:// URL");
        if (!req->dir || req->dir[0] != '/')
                return aj_error(reterr, EINVAL, 0, 0, "the clone's directory is not an absolute path");
        for (char *const *p = req->trusted_paths; p && *p; p++) {
                int r = trusted_path_validate(*p, reterr);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Overrides whatever .gitattributes the commit has (info/attributes comes first): libgit2 runs no filter
 * program, but its CRLF and ident conversions would make a diff show other bytes than the files have. */
static int write_info_attributes(git_repository *repo, AjError *reterr)
{
        static const char text[] = "# agentic-job: diffs show the working tree's bytes, unconverted\n"
                                   "* -text -ident\n";
        _cleanup_free_ char *info = NULL;
        _cleanup_close_ int dirfd = -EBADF, fd = -EBADF;

        if (asprintf(&info, "%sinfo", git_repository_path(repo)) < 0)
                return -ENOMEM;
        if (mkdir(info, 0755) < 0 && errno != EEXIST)
                return aj_error(reterr, errno, 0, 0, "cannot make %s: %s", info, strerror(errno));
        dirfd = open(info, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dirfd >= 0)
                fd = openat(dirfd, "attributes", O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
                            0644);
        if (fd < 0 || write(fd, text, sizeof(text) - 1) != (ssize_t)(sizeof(text) - 1))
                return aj_error(reterr, EIO, 0, 0, "cannot write %s/attributes: %s", info, strerror(errno));
        return 0;
}

/* Every transfer report of every fetch: the caller's progress, and the bound on what is received. */
typedef struct ProgressRelay {
        CloneProgressFn fn;
        void *userdata;
        uint64_t max_bytes;     /* 0: none */
        uint64_t earlier_bytes; /* received by the earlier fetches of this clone */
        bool over;              /* the transfer was cut at max_bytes */
} ProgressRelay;

static int relay_progress(const git_indexer_progress *stats, void *payload)
{
        ProgressRelay *relay = payload;
        CloneProgress p = {
                .received_objects = stats->received_objects,
                .total_objects = stats->total_objects,
                .indexed_objects = stats->indexed_objects,
                .received_bytes = relay->earlier_bytes + stats->received_bytes,
        };

        if (relay->max_bytes && p.received_bytes > relay->max_bytes) {
                relay->over = true;
                return -1; /* libgit2 stops the transfer */
        }
        if (relay->fn)
                relay->fn(&p, relay->userdata);
        return 0;
}

/* libgit2's error about req->url, with squid's reason where the answer was squid's own: libgit2 says only
 * "unexpected http status code: 503", so the proxy is asked the first request of the clone again
 * (libcurl, the same proxy and authority) for its X-Squid-Error. A refusal of the policy is not repeated
 * here: the runner names it from the run's egress log. */
static int remote_error(const CloneRequest *req, const char *what, AjError *reterr)
{
        int r = libgit2_error(reterr, "%s %s", what, req->url);
        _cleanup_free_ char *probe = NULL;
        char why[CURL_ERROR_SIZE], reason[160];
        size_t n = strlen(reterr->message);
        ProxyAnswer a;

        if (!req->proxy_url || !strstr(reterr->message, "unexpected http status code") ||
            asprintf(&probe, "%s/info/refs?service=git-upload-pack", req->url) < 0)
                return r;
        if (proxy_answer_get(probe, req->proxy_url, req->ca_file, NULL, 20, &a, why, sizeof(why)) == 0 &&
            proxy_answer_squid_reason(&a, reason, sizeof(reason)))
                (void)snprintf(reterr->message + n, sizeof(reterr->message) - n, " (the egress proxy: %s)",
                               reason);
        return r;
}

/* Resolves req->ref once, from the remote's advertisement: the one of "refs/heads/REF", "refs/tags/REF"
 * (the commit an annotated tag points at) or "REF" itself the remote has. */
static int resolve_ref(git_remote *remote, const CloneRequest *req, const git_fetch_options *fetch_opts,
                       git_oid *ret_oid, char **ret_name, AjError *reterr)
{
        _cleanup_free_ char *branch = NULL, *tag = NULL, *peeled = NULL, *name = NULL;
        const git_remote_head **heads = NULL;
        const git_remote_head *found = NULL;
        size_t n = 0;

        if (asprintf(&branch, "refs/heads/%s", req->ref) < 0 || asprintf(&tag, "refs/tags/%s", req->ref) < 0)
                return -ENOMEM;
        if (git_remote_connect(remote, GIT_DIRECTION_FETCH, &fetch_opts->callbacks, &fetch_opts->proxy_opts,
                               NULL) < 0)
                return remote_error(req, "cannot connect to", reterr);
        if (git_remote_ls(&heads, &n, remote) < 0)
                return libgit2_error(reterr, "cannot list the refs of %s", req->url);
        for (size_t i = 0; i < n; i++) {
                const char *h = heads[i]->name;

                if (strcmp(h, req->ref) != 0 && strcmp(h, branch) != 0 && strcmp(h, tag) != 0)
                        continue;
                if (found && strcmp(found->name, h) != 0)
                        return aj_error(reterr, EINVAL, 0, 0, "ref %s is ambiguous in %s: %s and %s",
                                        req->ref, req->url, found->name, h);
                found = heads[i];
        }
        if (!found)
                return aj_error(reterr, ENOENT, 0, 0, "ref %s is not in %s", req->ref, req->url);
        name = strdup(found->name);
        if (!name || asprintf(&peeled, "%s^{}", found->name) < 0)
                return -ENOMEM;
        git_oid_cpy(ret_oid, &found->oid);
        for (size_t i = 0; i < n; i++)
                if (strcmp(heads[i]->name, peeled) == 0)
                        git_oid_cpy(ret_oid, &heads[i]->oid);
        *ret_name = TAKE_PTR(name);
        return 0;
}

/* The object id as a commit, or -ENOENT when the clone does not have it (yet). */
static int lookup_commit(git_repository *repo, const git_oid *oid, git_object **ret, AjError *reterr)
{
        _cleanup_(git_object_freep) git_object *obj = NULL;
        char hex[OID_HEX_SIZE];
        int r = git_object_lookup(&obj, repo, oid, GIT_OBJECT_ANY);

        if (r == GIT_ENOTFOUND)
                return -ENOENT;
        if (r < 0)
                return libgit2_error(reterr, "cannot read object %s", git_oid_tostr(hex, sizeof(hex), oid));
        if (git_object_type(obj) != GIT_OBJECT_COMMIT)
                return aj_error(reterr, EINVAL, 0, 0, "%s is a %s, not a commit",
                                git_oid_tostr(hex, sizeof(hex), oid),
                                git_object_type2string(git_object_type(obj)));
        *ret = TAKE_PTR(obj);
        return 0;
}

/* -EFBIG when the transfer was cut at the bound: no later fetch is tried then. */
static int fetch(git_remote *remote, const git_fetch_options *fetch_opts, char *spec1, char *spec2)
{
        ProgressRelay *relay = fetch_opts->callbacks.payload;
        char *specs[] = { spec1, spec2 };
        git_strarray array = { .strings = specs, .count = spec2 ? 2 : 1 };
        int r = git_remote_fetch(remote, &array, fetch_opts, NULL);

        if (relay->over)
                return -EFBIG;
        relay->earlier_bytes += git_remote_stats(remote)->received_bytes;
        return r < 0 ? -EIO : 0;
}

static int transfer_bound_error(const git_fetch_options *fetch_opts, const CloneRequest *req,
                                AjError *reterr)
{
        const ProgressRelay *relay = fetch_opts->callbacks.payload;

        return aj_error(reterr, EFBIG, 0, 0,
                        "the fetch from %s passed [run] clone-max-bytes (%" PRIu64 " bytes): cut there",
                        req->url, relay->max_bytes);
}

/* Fetches the commit by its id with the base branch; where the server refuses a bare id, the base branch
 * (with the ref the commit was resolved from), then all branches, until the commit is there. */
static int fetch_commit(git_repository *repo, git_remote *remote, const CloneRequest *req,
                        const git_fetch_options *fetch_opts, const git_oid *oid, char *ref_name,
                        git_object **ret_commit, bool *ret_by_id, AjError *reterr)
{
        _cleanup_free_ char *base_spec = NULL;
        char hex[OID_HEX_SIZE], all_heads[] = "+refs/heads/*:refs/remotes/origin/*";
        AjError by_id = { .message = "fetched by id, not there" };
        int r;

        (void)git_oid_tostr(hex, sizeof(hex), oid);
        if (asprintf(&base_spec, "+refs/heads/%s:refs/remotes/origin/%s", req->base, req->base) < 0)
                return -ENOMEM;
        r = fetch(remote, fetch_opts, hex, base_spec);
        if (r == -EFBIG)
                return transfer_bound_error(fetch_opts, req, reterr);
        if (r == 0) {
                r = lookup_commit(repo, oid, ret_commit, reterr);
                *ret_by_id = r == 0;
                if (r != -ENOENT)
                        return r;
        } else
                (void)libgit2_error(&by_id, "fetch by id");

        r = fetch(remote, fetch_opts, base_spec, ref_name);
        if (r == -EFBIG)
                return transfer_bound_error(fetch_opts, req, reterr);
        if (r < 0)
                return libgit2_error(reterr, "cannot fetch from %s (%s)", req->url, by_id.message);
        r = lookup_commit(repo, oid, ret_commit, reterr);
        if (r != -ENOENT)
                return r;
        r = fetch(remote, fetch_opts, all_heads, NULL);
        if (r == -EFBIG)
                return transfer_bound_error(fetch_opts, req, reterr);
        if (r < 0)
                return libgit2_error(reterr, "cannot fetch the branches of %s", req->url);
        r = lookup_commit(repo, oid, ret_commit, reterr);
        if (r == -ENOENT)
                return aj_error(reterr, ENOENT, 0, 0, "commit %s is not in %s (%s; not in any branch)", hex,
                                req->url, by_id.message);
        return r;
}

static int checkout(git_repository *repo, const git_object *treeish, git_tree *baseline, const char *path)
{
        git_checkout_options opts;
        char *paths[] = { (char *)path };

        if (git_checkout_options_init(&opts, GIT_CHECKOUT_OPTIONS_VERSION) < 0)
                return -EIO;
        opts.checkout_strategy = GIT_CHECKOUT_FORCE;
        opts.disable_filters = 1;
        if (path) {
                /* The index stays the commit's: what the base put there shows as a change in the tree. The
                 * base as the baseline: against the commit's, libgit2 1.5 fails a link that becomes a
                 * directory ("null OID cannot exist"); the path is gone from the tree by now anyway. */
                opts.checkout_strategy |=
                        GIT_CHECKOUT_DISABLE_PATHSPEC_MATCH | GIT_CHECKOUT_DONT_UPDATE_INDEX;
                opts.baseline = baseline;
                opts.paths.strings = paths;
                opts.paths.count = 1;
        }
        return git_checkout_tree(repo, treeish, &opts) < 0 ? -EIO : 0;
}

static int replace_trusted_paths(git_repository *repo, const CloneRequest *req, const git_object *base,
                                 CloneResult *result, AjError *reterr)
{
        _cleanup_(git_tree_freep) git_tree *base_tree = NULL;
        _cleanup_close_ int rootfd = open(req->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

        if (rootfd < 0)
                return aj_error(reterr, errno, 0, 0, "cannot open %s: %s", req->dir, strerror(errno));
        if (git_commit_tree(&base_tree, (const git_commit *)base) < 0)
                return libgit2_error(reterr, "cannot read the base commit's tree");
        for (char *const *p = req->trusted_paths; p && *p; p++) {
                _cleanup_(git_tree_entry_freep) git_tree_entry *entry = NULL;
                _cleanup_free_ char *path = strdup(*p);
                size_t n;
                bool removed;
                int r;

                if (!path)
                        return -ENOMEM;
                n = strlen(path);
                if (path[n - 1] == '/')
                        path[n - 1] = '\0';
                r = remove_path_nofollow(rootfd, path, &removed);
                if (r < 0)
                        return aj_error(reterr, -r, 0, 0, "cannot remove %s from the clone: %s", path,
                                        strerror(-r));
                r = git_tree_entry_bypath(&entry, base_tree, path);
                if (r == GIT_ENOTFOUND) {
                        result->n_trusted_removed += removed;
                        continue;
                }
                if (r < 0 || checkout(repo, base, base_tree, path) < 0)
                        return libgit2_error(reterr, "cannot check %s out of the base commit", path);
                result->n_trusted_replaced++;
        }
        return 0;
}

/* Before the checkout: what it and the trusted paths' would write, against req->limits. */
static int bounds_check(git_repository *repo, const git_object *commit, const git_object *base,
                        const CloneRequest *req, AjError *reterr)
{
        return checkout_bounds_check(repo, git_commit_tree_id((const git_commit *)commit),
                                     git_commit_tree_id((const git_commit *)base), req->trusted_paths,
                                     &req->limits, reterr);
}

int workspace_clone(const CloneRequest *req, CloneProgressFn progress, void *userdata, CloneResult *ret,
                    AjError *reterr)
{
        _cleanup_libgit2_ int git_init = 0;
        _cleanup_(git_repository_freep) git_repository *repo = NULL;
        _cleanup_(git_remote_freep) git_remote *remote = NULL;
        _cleanup_(git_object_freep) git_object *commit = NULL, *base = NULL;
        _cleanup_free_ char *ref_name = NULL, *base_ref = NULL;
        git_repository_init_options init_opts;
        git_remote_create_options remote_opts;
        git_fetch_options fetch_opts;
        ProgressRelay relay = { .fn = progress, .userdata = userdata, .max_bytes = req->limits.max_bytes };
        CloneResult result = {};
        git_oid oid, base_oid;
        int r;

        assert(req);
        assert(ret);

        r = validate_request(req, reterr);
        if (r < 0)
                return r;
        git_init = libgit2_init_isolated(reterr);
        if (git_init < 0)
                return git_init;
        if (req->ca_file && git_libgit2_opts(GIT_OPT_SET_SSL_CERT_LOCATIONS, req->ca_file, NULL) < 0)
                return libgit2_error(reterr, "cannot load the certificates of %s", req->ca_file);

        /* A local source (tests) belongs to someone else, as root's does in the test hosts: libgit2's
         * owner check would refuse it. Only its objects are taken, with the sandbox user's rights. */
        if (req->url[0] == '/' && git_libgit2_opts(GIT_OPT_SET_OWNER_VALIDATION, 0) < 0)
                return libgit2_error(reterr, "cannot turn libgit2's owner check off for a local source");
        if (mkdir(req->dir, 0700) < 0)
                return aj_error(reterr, errno, 0, 0, "cannot make %s: %s", req->dir, strerror(errno));
        if (git_repository_init_options_init(&init_opts, GIT_REPOSITORY_INIT_OPTIONS_VERSION) < 0)
                return libgit2_error(reterr, "cannot initialise the repository options");
        init_opts.flags = GIT_REPOSITORY_INIT_NO_REINIT;
        if (git_repository_init_ext(&repo, req->dir, &init_opts) < 0)
                return libgit2_error(reterr, "cannot make a repository in %s", req->dir);
        r = write_info_attributes(repo, reterr);
        if (r < 0)
                return r;
        if (git_remote_create_options_init(&remote_opts, GIT_REMOTE_CREATE_OPTIONS_VERSION) < 0)
                return libgit2_error(reterr, "cannot initialise the remote options");
        /* Anonymous, and no url.*.insteadOf rewriting (libgit2 1.5 also leaks its regex match there). */
        remote_opts.repository = repo;
        remote_opts.flags = GIT_REMOTE_CREATE_SKIP_INSTEADOF | GIT_REMOTE_CREATE_SKIP_DEFAULT_FETCHSPEC;
        if (git_remote_create_with_opts(&remote, req->url, &remote_opts) < 0)
                return libgit2_error(reterr, "cannot make a remote of %s", req->url);

        if (git_fetch_options_init(&fetch_opts, GIT_FETCH_OPTIONS_VERSION) < 0)
                return libgit2_error(reterr, "cannot initialise the fetch options");
        fetch_opts.download_tags = GIT_REMOTE_DOWNLOAD_TAGS_NONE;
        fetch_opts.prune = GIT_FETCH_NO_PRUNE;
        fetch_opts.callbacks.transfer_progress = relay_progress;
        fetch_opts.callbacks.payload = &relay;
        if (req->proxy_url) {
                fetch_opts.proxy_opts.type = GIT_PROXY_SPECIFIED;
                fetch_opts.proxy_opts.url = req->proxy_url;
        }

        if (req->ref)
                r = resolve_ref(remote, req, &fetch_opts, &oid, &ref_name, reterr);
        else
                r = git_oid_fromstr(&oid, req->commit) < 0 ? libgit2_error(reterr, "bad commit id") : 0;
        if (r < 0)
                return r;
        r = fetch_commit(repo, remote, req, &fetch_opts, &oid, ref_name, &commit, &result.fetched_by_id,
                         reterr);
        if (r < 0)
                return r;
        if (asprintf(&base_ref, "refs/remotes/origin/%s", req->base) < 0)
                return -ENOMEM;
        r = git_reference_name_to_id(&base_oid, repo, base_ref);
        if (r == GIT_ENOTFOUND)
                return aj_error(reterr, ENOENT, 0, 0, "base branch %s is not in %s", req->base, req->url);
        if (r < 0)
                return libgit2_error(reterr, "cannot read the base branch %s", req->base);
        r = lookup_commit(repo, &base_oid, &base, reterr);
        if (r < 0)
                return r == -ENOENT
                               ? aj_error(reterr, ENOENT, 0, 0, "base branch %s has no commit", req->base)
                               : r;

        r = bounds_check(repo, commit, base, req, reterr);
        if (r < 0)
                return r;
        if (checkout(repo, commit, NULL, NULL) < 0)
                return libgit2_error(reterr, "cannot check out %s", git_oid_tostr_s(&oid));
        if (git_repository_set_head_detached(repo, &oid) < 0)
                return libgit2_error(reterr, "cannot detach HEAD at %s", git_oid_tostr_s(&oid));
        r = replace_trusted_paths(repo, req, base, &result, reterr);
        if (r < 0)
                return r;

        (void)git_oid_tostr(result.commit, sizeof(result.commit), &oid);
        (void)git_oid_tostr(result.base_commit, sizeof(result.base_commit), &base_oid);
        *ret = result;
        return 0;
}
