/* SPDX-License-Identifier: MIT */
#include "walk-probe.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "harden-walk.h"
#include "macro.h"
#include "mountinfo.h"

typedef struct Collect {
        WalkFound *found;
        bool writable;     /* ask harden_walk() for HARDEN_WALK_WRITABLE */
        uid_t skip_uid;    /* (uid_t)-1: skip none */
        bool setuid;       /* collect set-id programs */
        bool all_writable; /* writable names everywhere, not only in WALK_PROBE_ROOT_TREES */
} Collect;

/* Appends path to the space-separated names of size bytes, "..." once there is no more room. */
static void names_add(char *names, size_t size, const char *path)
{
        size_t l = strlen(names), room = size - l;

        if (l >= 3 && strcmp(names + l - 3, "...") == 0)
                return;
        if (strlen(path) + 5 < room)
                (void)snprintf(names + l, room, "%s%s", l ? " " : "", path);
        else
                (void)snprintf(names + l, room, "%s...", l ? " " : "");
}

static bool in_root_trees(const char *path)
{
        static const char *const trees[] = { WALK_PROBE_ROOT_TREES };

        for (size_t i = 0; i < ELEMENTSOF(trees); i++) {
                size_t n = strlen(trees[i]);

                if (strncmp(path, trees[i], n) == 0 && (path[n] == '\0' || path[n] == '/'))
                        return true;
        }
        return false;
}

static int on_walk(HardenWalkEvent event, const char *path, const struct stat *st, int error, void *userdata)
{
        Collect *c = userdata;
        WalkFound *f = c->found;

        (void)error;
        switch (event) {
        case HARDEN_WALK_WORLD_WRITABLE:
                if (st && st->st_uid == c->skip_uid)
                        return 0;
                f->world_writable++;
                names_add(f->world_writable_names, sizeof(f->world_writable_names), path);
                return 0;
        case HARDEN_WALK_OWNED: /* not asked for */
                return 0;
        case HARDEN_WALK_WRITABLE:
                if (!c->all_writable && !in_root_trees(path))
                        return 0;
                f->writable++;
                names_add(f->writable_names, sizeof(f->writable_names), path);
                return 0;
        case HARDEN_WALK_SETUID_ROOT:
        case HARDEN_WALK_SETGID_ROOT:
                if (!c->setuid)
                        return 0;
                if (f->n_setuid >= WALK_PROBE_MAX_SETUID) {
                        f->setuid_truncated = true;
                        return 0;
                }
                f->setuid[f->n_setuid] = strdup(path);
                if (!f->setuid[f->n_setuid])
                        return -ENOMEM;
                f->n_setuid++;
                return 0;
        case HARDEN_WALK_MOUNT_SKIPPED:
        case HARDEN_WALK_TOO_DEEP:
        case HARDEN_WALK_ERROR:
                return 0;
        }
        return 0;
}

static int walk(const char *root, const char *const *excluded, const MountInfo *mounts, Collect *c)
{
        HardenWalkOptions opts = {
                .dry_run = true,
                .write_excluded = excluded,
                .mounts = mounts,
                .report_writable = c->writable,
                .callback = on_walk,
                .userdata = c,
        };
        HardenWalkStats st = {};
        int r = harden_walk(root, &opts, &st);

        c->found->directories += st.directories;
        c->found->denied += st.denied;
        return r;
}

void walk_probe_root(uid_t uid, bool writable, WalkFound *ret)
{
        static const char *const temporary[] = { "/tmp", "/var/tmp", NULL };
        MountInfo mounts = {};
        Collect c = { .found = ret, .skip_uid = uid, .setuid = true, .writable = writable };
        struct stat root_st;
        int r;

        *ret = (WalkFound){};
        r = mountinfo_read(&mounts);
        r = r < 0 ? r : mountinfo_prune_decide(&mounts);
        r = r < 0 ? r : stat("/", &root_st) < 0 ? -errno : 0;
        r = r < 0 ? r : walk("/", temporary, &mounts, &c);
        /* As setup does: the temporary trees for set-id programs, where they are filesystems of their own
         * (their files keep o+w: excluded there too). */
        for (const char *const *t = temporary; r >= 0 && *t; t++) {
                struct stat st;

                if (lstat(*t, &st) == 0 && S_ISDIR(st.st_mode) && st.st_dev != root_st.st_dev)
                        r = walk(*t, temporary, &mounts, &c);
        }
        mountinfo_done(&mounts);
        ret->error = r < 0 ? r : 0;
}

void walk_probe_dir(const char *dir, WalkFound *ret)
{
        Collect c = {
                .found = ret, .skip_uid = (uid_t)-1, .setuid = false, .writable = true, .all_writable = true
        };

        *ret = (WalkFound){};
        ret->error = walk(dir, NULL, NULL, &c);
        if (ret->error > 0)
                ret->error = 0;
}

static bool names_have(const char *names, const char *path)
{
        size_t n = strlen(path);

        for (const char *p = names; *p;) {
                size_t w = strcspn(p, " ");

                if (w == n && memcmp(p, path, n) == 0)
                        return true;
                p += w;
                p += *p == ' ';
        }
        return false;
}

bool walk_found_names(const WalkFound *f, const char *path)
{
        return names_have(f->world_writable_names, path);
}

bool walk_found_writable(const WalkFound *f, const char *path)
{
        return names_have(f->writable_names, path);
}

void walk_found_done(WalkFound *f)
{
        for (size_t i = 0; i < f->n_setuid; i++)
                free(f->setuid[i]);
        f->n_setuid = 0;
}
