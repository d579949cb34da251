/* SPDX-License-Identifier: MIT */
/* The helper's install, and "root's alone": the helper, /etc/agentic-job and every directory of the fixed
 * PATH root's programs are found on, with all their ancestors, owned by root and writable by nobody else
 * (group write only where the group is root). sudo runs the helper as root, and the helper trusts its
 * configuration and the programs it runs because of this. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "build-config.h"
#include "egress-paths.h"
#include "egress-policy.h"
#include "macro.h"
#include "setup.h"
#include "strv.h"

/* What root trusts besides the fixed PATH: the helper, the configuration's directory, and the egress
 * proxy's decision helper, squid's template, the shipped and the installed policy and the threat list. */
static const char *const root_files[] = {
        HELPER_PATH,         SETUP_STATE_DIR,    EGRESS_ACL_PATH,     EGRESS_SQUID_DATA_DIR,
        SHIPPED_POLICY_PATH, EGRESS_POLICY_PATH, EGRESS_THREATS_PATH,
};

/* Each of root_files and each directory of the fixed PATH, and every ancestor, once. */
static int roots_alone_paths(Strv *ret)
{
        _cleanup_free_ char *search = strdup(SETUP_ROOT_PATH);
        char *saveptr = NULL;
        Strv bases = { 0 };
        int r = 0;

        if (!search)
                return -ENOMEM;
        for (size_t i = 0; i < ELEMENTSOF(root_files); i++)
                if ((r = strv_push(&bases, strdup(root_files[i]))) < 0)
                        goto out;
        for (char *d = strtok_r(search, ":", &saveptr); d; d = strtok_r(NULL, ":", &saveptr))
                if ((r = strv_push(&bases, strdup(d))) < 0)
                        goto out;
        for (char **b = bases.v; *b; b++) {
                _cleanup_free_ char *p = strdup(*b);
                char *slash;

                if (!p) {
                        r = -ENOMEM;
                        goto out;
                }
                for (;;) {
                        bool seen = false;

                        for (char **q = ret->v; q && *q && !seen; q++)
                                seen = strcmp(*q, p) == 0;
                        if (!seen && (r = strv_push(ret, strdup(p))) < 0)
                                goto out;
                        if (strcmp(p, "/") == 0)
                                break;
                        slash = strrchr(p, '/');
                        if (slash == p)
                                slash[1] = '\0';
                        else
                                *slash = '\0';
                }
        }
out:
        strv_clear(&bases);
        return r;
}

static bool needs_fix(const struct stat *st)
{
        return (st->st_mode & S_IWOTH) || ((st->st_mode & S_IWGRP) && st->st_gid != 0);
}

int roots_alone_check(AjError *reterr)
{
        Strv paths = { 0 };
        int r = roots_alone_paths(&paths);

        for (char **p = paths.v; r >= 0 && *p; p++) {
                struct stat st;

                if (lstat(*p, &st) < 0) {
                        if (errno != ENOENT)
                                r = aj_error(reterr, errno, 0, 0, "%s: %s", *p, strerror(errno));
                        continue;
                }
                if (st.st_uid != 0)
                        r = aj_error(reterr, EPERM, 0, 0,
                                     "%s is owned by uid %u: root's programs and the helper must be root's "
                                     "alone, and setup does not take a path from its owner",
                                     *p, (unsigned)st.st_uid);
        }
        strv_clear(&paths);
        return r;
}

static int make_root_alone(const Setup *s, const char *path, AjError *reterr)
{
        _cleanup_close_ int fd = -EBADF;
        struct stat st;
        mode_t mode;

        if (lstat(path, &st) < 0)
                return errno == ENOENT ? 0 : aj_error(reterr, errno, 0, 0, "%s: %s", path, strerror(errno));
        if (S_ISLNK(st.st_mode) || !needs_fix(&st)) /* a link's target is on the list itself */
                return st.st_uid == 0 ? 0 : aj_error(reterr, EPERM, 0, 0, "%s is not root's", path);
        mode = st.st_mode & 07777 & ~(mode_t)(S_IWOTH | (st.st_gid != 0 ? S_IWGRP : 0));
        setup_change(s, "chmod %04o %s (was %04o, group %u): root's alone", (unsigned)mode, path,
                     (unsigned)(st.st_mode & 07777), (unsigned)st.st_gid);
        if (s->dry_run)
                return 0;
        fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
        if (fd < 0 || fstat(fd, &st) < 0)
                return aj_error(reterr, errno, 0, 0, "%s: %s", path, strerror(errno));
        if (st.st_uid != 0)
                return aj_error(reterr, EPERM, 0, 0, "%s is not root's", path);
        if (fchmod(fd, mode) < 0)
                return aj_error(reterr, errno, 0, 0, "chmod %s: %s", path, strerror(errno));
        return 0;
}

static int make_parent(const Setup *s, AjError *reterr)
{
        _cleanup_free_ char *dir = strdup(HELPER_PATH);
        char *slash;

        if (!dir)
                return -ENOMEM;
        slash = strrchr(dir, '/');
        *slash = '\0';
        if (access(dir, F_OK) == 0)
                return 0;
        setup_change(s, "mkdir %s (0755, root:root)", dir);
        if (!s->dry_run && mkdir(dir, 0755) < 0)
                return aj_error(reterr, errno, 0, 0, "mkdir %s: %s", dir, strerror(errno));
        return 0;
}

int stage_helper(Setup *s, AjError *reterr)
{
        Strv paths = { 0 };
        int r;

        r = make_parent(s, reterr);
        if (r >= 0)
                r = roots_alone_paths(&paths);
        /* Ancestors first: root_file_write() wants the helper's directory root's alone. */
        for (size_t i = paths.n; r >= 0 && i > 0; i--)
                if (strcmp(paths.v[i - 1], HELPER_PATH) != 0)
                        r = make_root_alone(s, paths.v[i - 1], reterr);
        if (r >= 0 && s->helper_source)
                r = setup_write_file(s, HELPER_PATH, s->helper_data, s->helper_size, 0755, 0, 0, NULL,
                                     "the helper, a copy of --helper", reterr);
        if (r >= 0 && !s->helper_source) {
                _cleanup_close_ int fd = open(HELPER_PATH, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
                struct stat st;

                if (fd < 0 || fstat(fd, &st) < 0)
                        r = aj_error(reterr, errno, 0, 0, "%s: %s", HELPER_PATH, strerror(errno));
                else if (!S_ISREG(st.st_mode) || st.st_uid != 0)
                        r = aj_error(reterr, EPERM, 0, 0, "%s is not a regular file of root's", HELPER_PATH);
                else if ((st.st_mode & 07777) != 0755 || st.st_gid != 0) {
                        setup_change(s, "chown root:root %s; chmod 0755 (was %04o, group %u)", HELPER_PATH,
                                     (unsigned)(st.st_mode & 07777), (unsigned)st.st_gid);
                        if (!s->dry_run && (fchown(fd, 0, 0) < 0 || fchmod(fd, 0755) < 0))
                                r = aj_error(reterr, errno, 0, 0, "%s: %s", HELPER_PATH, strerror(errno));
                } else
                        setup_note("%s: the installed helper, 0755 root:root", HELPER_PATH);
        }
        strv_clear(&paths);
        return r;
}
