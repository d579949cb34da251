/* SPDX-License-Identifier: MIT */
/* Setup's stages about users and their files: the state directory, the sandbox user and its subordinate
 * ids, /etc/environment, the runner's closed home and private directories, the stopped services. */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "environment-filter.h"
#include "macro.h"
#include "read-file.h"
#include "setup.h"
#include "strv.h"
#include "subid.h"

int stage_state_dir(Setup *s, AjError *reterr)
{
        setup_change(s, "mkdir %s (0755, root:root): marks the machine as set up, also if setup fails",
                     SETUP_STATE_DIR);
        if (s->dry_run)
                return 0;
        if (mkdir(SETUP_STATE_DIR, 0755) < 0)
                return aj_error(reterr, errno, 0, 0, "mkdir %s: %s", SETUP_STATE_DIR, strerror(errno));
        if (chmod(SETUP_STATE_DIR, 0755) < 0)
                return aj_error(reterr, errno, 0, 0, "chmod %s: %s", SETUP_STATE_DIR, strerror(errno));
        return 0;
}

/* useradd gives subordinate ids only where both files exist. */
static int ensure_subid_file(Setup *s, const char *path, AjError *reterr)
{
        struct stat st;

        if (lstat(path, &st) == 0)
                return 0;
        if (errno != ENOENT)
                return aj_error(reterr, errno, 0, 0, "%s: %s", path, strerror(errno));
        return setup_write_file(s, path, "", 0, 0644, 0, 0, NULL, "so that users get subordinate ids",
                                reterr);
}

static int load_ranges(const char *path, const char *user, uid_t uid, UidRange *ranges, size_t *n,
                       AjError *reterr)
{
        int r = subid_load(path, user, uid, ranges, n);

        if (r < 0)
                return aj_error(reterr, -r, 0, 0, "%s: cannot read the sandbox user's ranges: %s", path,
                                strerror(-r));
        return 0;
}

/* A range where useradd gave none: past every range in either file, the same for uids and gids. */
static int allocate_ranges(Setup *s, AjError *reterr)
{
        _cleanup_free_ char *uids = NULL, *gids = NULL, *spec = NULL;
        uint64_t start;
        int r;

        r = read_regular_nofollow(AT_FDCWD, SUBUID_PATH, SUBID_MAX_SIZE, &uids, NULL);
        if (r >= 0)
                r = read_regular_nofollow(AT_FDCWD, SUBGID_PATH, SUBID_MAX_SIZE, &gids, NULL);
        if (r < 0)
                return aj_error(reterr, -r, 0, 0, "reading %s and %s: %s", SUBUID_PATH, SUBGID_PATH,
                                strerror(-r));
        start = subid_next_free(uids);
        if (subid_next_free(gids) > start)
                start = subid_next_free(gids);
        if (start + SUBID_ALLOC_COUNT > UINT32_MAX - 1)
                return aj_error(reterr, ERANGE, 0, 0, "no room for subordinate ids above %llu",
                                (unsigned long long)start);
        if (asprintf(&spec, "%llu-%llu", (unsigned long long)start,
                     (unsigned long long)(start + SUBID_ALLOC_COUNT - 1)) < 0)
                return -ENOMEM;
        {
                char *argv[] = {
                        s->tools.usermod, (char *)"--add-subuids", spec, (char *)"--add-subgids", spec,
                        (char *)"--",     s->config->sandbox_user, NULL
                };

                setup_change(s, "usermod --add-subuids %s --add-subgids %s -- %s", spec, spec,
                             s->config->sandbox_user);
                return setup_run(argv, "giving the sandbox user subordinate ids", reterr);
        }
}

static int close_dir(const Setup *s, const char *path, const char *what, AjError *reterr)
{
        _cleanup_close_ int fd = -EBADF;
        struct stat st;

        /* Opened, never followed: a link put in a home's place is not what gets closed. */
        fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 && s->dry_run && errno == ENOENT) {
                setup_change(s, "chmod 0700 %s (%s)", path, what);
                return 0;
        }
        if (fd < 0 || fstat(fd, &st) < 0)
                return aj_error(reterr, errno, 0, 0, "%s %s: %s", what, path, strerror(errno));
        if ((st.st_mode & 07777) == 0700) {
                setup_note("%s %s is already 0700", what, path);
                return 0;
        }
        setup_change(s, "chmod 0700 %s (%s, was %04o)", path, what, (unsigned)(st.st_mode & 07777));
        if (!s->dry_run && fchmod(fd, 0700) < 0)
                return aj_error(reterr, errno, 0, 0, "chmod %s: %s", path, strerror(errno));
        return 0;
}

int stage_sandbox_user(Setup *s, AjError *reterr)
{
        const char *name = s->config->sandbox_user;
        _cleanup_free_ char *groups = NULL;
        UidRange gid_ranges[SUBID_MAX_RANGES];
        size_t n_gid_ranges = 0, len = 0;
        const struct passwd *pw;
        int r;

        for (char **g = s->config->sandbox_groups; g && *g; g++)
                len += strlen(*g) + 1;
        groups = calloc(1, len + 1);
        if (!groups)
                return -ENOMEM;
        for (char **g = s->config->sandbox_groups; g && *g; g++) {
                if (*groups)
                        strcat(groups, ",");
                strcat(groups, *g);
        }

        if ((r = ensure_subid_file(s, SUBUID_PATH, reterr)) < 0 ||
            (r = ensure_subid_file(s, SUBGID_PATH, reterr)) < 0)
                return r;
        if (!s->sandbox_exists) {
                char *argv[] = { s->tools.useradd,
                                 (char *)"--create-home",
                                 (char *)"--user-group",
                                 (char *)"--shell",
                                 (char *)"/bin/bash",
                                 (char *)"--groups",
                                 groups,
                                 (char *)"--",
                                 (char *)name,
                                 NULL };

                if (!*groups)
                        memmove(&argv[5], &argv[7], 3 * sizeof(char *));
                setup_change(s, "useradd --create-home --user-group --shell /bin/bash%s%s -- %s (home %s)",
                             *groups ? " --groups " : "", groups, name, s->sandbox_home);
                if (!s->dry_run && (r = setup_run(argv, "making the sandbox user", reterr)) < 0)
                        return r;
        } else if (*groups) {
                char *argv[] = { s->tools.usermod,
                                 (char *)"--append",
                                 (char *)"--groups",
                                 groups,
                                 (char *)"--",
                                 (char *)name,
                                 NULL };

                setup_change(s, "usermod --append --groups %s -- %s (the image's user, allowed)", groups,
                             name);
                if (!s->dry_run &&
                    (r = setup_run(argv, "adding the sandbox user to its groups", reterr)) < 0)
                        return r;
        }
        if (s->dry_run) {
                setup_change(s, "chmod 0700 %s (the sandbox user's home)", s->sandbox_home);
                setup_change(s,
                             "subordinate uids and gids for %s: useradd's, else %d allocated above every "
                             "range in %s and %s",
                             name, SUBID_ALLOC_COUNT, SUBUID_PATH, SUBGID_PATH);
                return 0;
        }

        pw = getpwnam(name);
        if (!pw)
                return aj_error(reterr, ENOENT, 0, 0, "the sandbox user %s is not there after useradd",
                                name);
        if (pw->pw_uid == 0 || pw->pw_gid == 0 || pw->pw_uid == s->runner_uid ||
            strcmp(pw->pw_dir, s->sandbox_home) != 0)
                return aj_error(reterr, EINVAL, 0, 0,
                                "the sandbox user %s is not what was expected (uid %u, gid %u, home %s)",
                                name, (unsigned)pw->pw_uid, (unsigned)pw->pw_gid, pw->pw_dir);
        s->sandbox_uid = pw->pw_uid;
        s->sandbox_gid = pw->pw_gid;
        setup_note("sandbox user %s: uid %u, gid %u, home %s", name, (unsigned)s->sandbox_uid,
                   (unsigned)s->sandbox_gid, s->sandbox_home);
        r = close_dir(s, s->sandbox_home, "the sandbox user's home", reterr);
        if (r < 0)
                return r;

        if ((r = load_ranges(SUBUID_PATH, name, pw->pw_uid, s->ranges, &s->n_ranges, reterr)) < 0 ||
            (r = load_ranges(SUBGID_PATH, name, pw->pw_uid, gid_ranges, &n_gid_ranges, reterr)) < 0)
                return r;
        if (s->n_ranges == 0 || n_gid_ranges == 0) {
                if ((r = allocate_ranges(s, reterr)) < 0 ||
                    (r = load_ranges(SUBUID_PATH, name, pw->pw_uid, s->ranges, &s->n_ranges, reterr)) < 0 ||
                    (r = load_ranges(SUBGID_PATH, name, pw->pw_uid, gid_ranges, &n_gid_ranges, reterr)) < 0)
                        return r;
                if (s->n_ranges == 0 || n_gid_ranges == 0)
                        return aj_error(reterr, ENOENT, 0, 0, "the sandbox user has no subordinate ids");
        }
        for (size_t i = 0; i < s->n_ranges; i++)
                setup_note("subordinate uids %u-%u", (unsigned)s->ranges[i].start,
                           (unsigned)(s->ranges[i].start + s->ranges[i].count - 1));
        for (size_t i = 0; i < n_gid_ranges; i++)
                setup_note("subordinate gids %u-%u", (unsigned)gid_ranges[i].start,
                           (unsigned)(gid_ranges[i].start + gid_ranges[i].count - 1));
        return 0;
}

int stage_environment(Setup *s, AjError *reterr)
{
        _cleanup_free_ char *data = NULL, *text = NULL;
        _cleanup_strv_free_ char **removed = NULL;
        size_t size = 0, text_size = 0;
        struct stat st;
        int r;

        r = read_regular_nofollow(AT_FDCWD, ENVIRONMENT_PATH, ENVIRONMENT_MAX_SIZE, &data, &size);
        if (r == -ENOENT) {
                setup_note("no %s", ENVIRONMENT_PATH);
                return 0;
        }
        if (r < 0 || lstat(ENVIRONMENT_PATH, &st) < 0)
                return aj_error(reterr, r < 0 ? -r : errno, 0, 0, "%s: %s", ENVIRONMENT_PATH,
                                strerror(r < 0 ? -r : errno));
        r = environment_filter(data, size, &text, &text_size, &removed);
        if (r < 0)
                return aj_error(reterr, -r, 0, 0, "%s: %s", ENVIRONMENT_PATH, strerror(-r));
        if (!removed[0]) {
                setup_note("%s sets neither XDG_RUNTIME_DIR nor ACTIONS_*", ENVIRONMENT_PATH);
                return 0;
        }
        for (char **n = removed; *n; n++)
                setup_change(s, "remove %s from %s", *n, ENVIRONMENT_PATH);
        return setup_write_file(s, ENVIRONMENT_PATH, text, text_size, st.st_mode & 07777, st.st_uid,
                                st.st_gid, NULL, "every login reads it", reterr);
}

int stage_close_homes(Setup *s, AjError *reterr)
{
        int r = close_dir(s, s->runner_home, "the runner's home", reterr);

        for (char **d = s->private_dirs; r >= 0 && d && *d; d++)
                r = close_dir(s, *d, "private directory", reterr);
        for (char **d = s->config->private_dirs; r >= 0 && d && *d; d++)
                if (access(*d, F_OK) < 0)
                        setup_note("private directory %s does not exist", *d);
        return r;
}

int stage_stop_services(Setup *s, AjError *reterr)
{
        Strv argv = { 0 };
        int r;

        for (char **u = s->config->stop_services; u && *u; u++) {
                bool present = false;

                for (char **p = s->services; p && *p; p++)
                        present = present || strcmp(*p, *u) == 0;
                if (!present)
                        setup_note("%s: no such unit", *u);
        }
        if (!s->services || !s->services[0])
                return 0;
        if ((r = strv_push(&argv, strdup(s->tools.systemctl))) < 0 ||
            (r = strv_push(&argv, strdup("stop"))) < 0 || (r = strv_push(&argv, strdup("--"))) < 0)
                goto out;
        for (char **p = s->services; *p; p++) {
                setup_change(s, "systemctl stop %s", *p);
                if ((r = strv_push(&argv, strdup(*p))) < 0)
                        goto out;
        }
        r = s->dry_run ? 0 : setup_run(argv.v, "stopping [sandbox] stop-services", reterr);
out:
        strv_clear(&argv);
        return r == -ENOMEM ? aj_error(reterr, ENOMEM, 0, 0, "out of memory") : r;
}
