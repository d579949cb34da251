/* SPDX-License-Identifier: MIT */
/* Before setup takes an existing sandbox user (allow-existing-user): nothing root runs or trusts may be
 * that user's to write. An image's own user may own a program in /usr/local/sbin that cron runs, or a file
 * in /etc/cron.d: the sandbox would rewrite it, and no o+w walk would see it. A report-only walk of the
 * root-run trees, refused before the first change. */
#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "harden-walk.h"
#include "macro.h"
#include "mountinfo.h"
#include "setup.h"

static bool under(const char *path, const char *dir)
{
        size_t n = strlen(dir);

        return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

void owned_tally_add(OwnedTally *t, const char *path)
{
        static const char *const trees[] = { HARDEN_WALK_ROOT_TREES };
        bool in_trees = false;

        for (size_t i = 0; i < ELEMENTSOF(trees); i++)
                in_trees = in_trees || under(path, trees[i]);
        if (!in_trees || (t->home && under(path, t->home)))
                return;
        if (t->found++ == 0) {
                (void)snprintf(t->first, sizeof(t->first), "%s", path);
                /* One line on the operator's terminal, whatever bytes the name holds. */
                for (char *c = t->first; *c; c++)
                        if ((unsigned char)*c < 0x20 || *c == 0x7f)
                                *c = '?';
        }
}

static int on_owned(HardenWalkEvent event, const char *path, const struct stat *st, int error,
                    void *userdata)
{
        (void)st;
        (void)error;
        if (event == HARDEN_WALK_OWNED)
                owned_tally_add(userdata, path);
        return 0;
}

int preflight_sandbox_owns_nothing(const Setup *s, AjError *reterr)
{
        static const char *const trees[] = { HARDEN_WALK_ROOT_TREES };
        MountInfo mounts = { 0 };
        OwnedTally o = { .home = s->sandbox_home };
        int r;

        assert(s->sandbox_exists && s->sandbox_home);
        r = mountinfo_read(&mounts);
        if (r >= 0)
                r = mountinfo_prune_decide(&mounts);
        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(trees); i++) {
                HardenWalkOptions opts = { .dry_run = true,
                                           .mounts = &mounts,
                                           .report_owned = true,
                                           .owned_uid = s->sandbox_uid,
                                           .owned_gid = s->sandbox_gid,
                                           .callback = on_owned,
                                           .userdata = &o };
                struct stat st;

                /* Each tree walked from its own root, so one on a filesystem of its own is walked too. */
                if (lstat(trees[i], &st) < 0 || !S_ISDIR(st.st_mode))
                        continue;
                r = harden_walk(trees[i], &opts, NULL);
        }
        mountinfo_done(&mounts);
        if (r < 0)
                return aj_error(reterr, -r, 0, 0,
                                "walking the trees root runs for the sandbox user's files: %s",
                                strerror(-r));
        if (o.found > 0)
                return aj_error(
                        reterr, EPERM, 0, 0,
                        "the existing sandbox user %s owns or may write %llu files where root runs or "
                        "trusts them, such as %s (it could rewrite them): remove them, or let setup "
                        "make a new user",
                        s->config->sandbox_user, (unsigned long long)o.found, o.first);
        return 0;
}
