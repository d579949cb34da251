/* SPDX-License-Identifier: MIT */
/* The walk reads each directory with getdents64() on a descriptor and looks at each name with one
 * fstatat() relative to it. Why not fts(3): fts keeps a structure per name, and to act on one safely we
 * would still need the directory's descriptor, which fts does not hand out; and no path is ever resolved
 * from the root again, so a directory renamed or replaced by a link during the walk cannot redirect it. */
#include "harden-walk.h"

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "macro.h"

/* One getdents64() buffer per level of depth and thread, made when the thread first gets there. */
#define DENTS_SIZE (32 * 1024)

/* What the walk needs of a directory it opened. */
typedef struct Dir {
        struct stat st;
        unsigned mnt_id;
        bool has_mnt_id;
} Dir;

/* A directory handed from a busy thread to an idle one: its descriptor (owned) and its path. */
typedef struct Job {
        int fd;
        char *path;
        Dir dir;
        unsigned depth;
        bool excluded;
} Job;

/* What the threads share. The queue and the counts of idle threads under lock; the callback under
 * report_lock. */
typedef struct Shared {
        const HardenWalkOptions *opts;
        unsigned max_depth;
        dev_t root_dev;
        dev_t *prune_devs; /* of pseudo mounts */
        size_t n_prune_devs;
        unsigned *prune_ids; /* of read-only nosuid mounts */
        size_t n_prune_ids;
        const char **prune_paths; /* the same, by mount point, for kernels without STATX_MNT_ID */
        size_t n_prune_paths;

        pthread_mutex_t lock, report_lock;
        pthread_cond_t cond;
        Job *queue;
        size_t n_queue, queue_max;
        unsigned n_threads;
        unsigned idle; /* atomic: read without the lock to decide whether to hand work over */
        bool done;     /* atomic: the queue is drained and every thread idle, or a thread failed */
        int error;     /* the first negative result */
} Shared;

/* One thread's own state. */
typedef struct Walk {
        Shared *s;
        const HardenWalkOptions *opts;
        HardenWalkStats stats;
        char *path; /* the current path; path_len bytes are in use */
        size_t path_len, path_allocated;
        char **dents; /* [max_depth + 2] */
} Walk;

const char *harden_walk_event_to_string(HardenWalkEvent event)
{
        switch (event) {
        case HARDEN_WALK_WORLD_WRITABLE:
                return "world-writable";
        case HARDEN_WALK_SETUID_ROOT:
                return "setuid-root";
        case HARDEN_WALK_SETGID_ROOT:
                return "setgid-root";
        case HARDEN_WALK_MOUNT_SKIPPED:
                return "mount-skipped";
        case HARDEN_WALK_TOO_DEEP:
                return "too-deep";
        case HARDEN_WALK_ERROR:
                return "error";
        case HARDEN_WALK_WRITABLE:
                return "writable";
        case HARDEN_WALK_OWNED:
                return "owned";
        }
        return "unknown";
}

static int report(Walk *w, HardenWalkEvent event, const struct stat *st, int error)
{
        int r;

        if (!w->opts->callback)
                return 0;
        pthread_mutex_lock(&w->s->report_lock);
        r = w->opts->callback(event, w->path_len > 0 ? w->path : "/", st, error, w->opts->userdata);
        pthread_mutex_unlock(&w->s->report_lock);
        return r;
}

/* Counts a failure to read or open the current path and reports it. ENOENT and ENOTDIR are races with
 * whoever removed or replaced it; the walk goes on either way. */
static int fail(Walk *w, const struct stat *st, int error)
{
        if (error == ENOENT || error == ENOTDIR)
                w->stats.vanished++;
        else if (error == EACCES || error == EPERM)
                w->stats.denied++;
        else
                w->stats.errors++;
        return report(w, HARDEN_WALK_ERROR, st, error);
}

static int path_reserve(Walk *w, size_t need)
{
        if (need > w->path_allocated) {
                size_t want = need * 2;
                char *grown = realloc(w->path, want);

                if (!grown)
                        return -ENOMEM;
                w->path = grown;
                w->path_allocated = want;
        }
        return 0;
}

static int path_push(Walk *w, const char *name, size_t *ret_saved)
{
        size_t len = strlen(name);
        int r;

        r = path_reserve(w, w->path_len + 1 + len + 1);
        if (r < 0)
                return r;
        *ret_saved = w->path_len;
        w->path[w->path_len++] = '/';
        memcpy(w->path + w->path_len, name, len + 1);
        w->path_len += len;
        return 0;
}

static void path_pop(Walk *w, size_t saved)
{
        w->path_len = saved;
        w->path[saved] = '\0';
}

static bool is_world_writable(mode_t mode)
{
        if (!(mode & S_IWOTH) || S_ISLNK(mode))
                return false;
        return !(S_ISDIR(mode) && (mode & S_ISVTX));
}

static bool write_excluded(const Walk *w)
{
        const char *p = w->path_len > 0 ? w->path : "/";

        for (const char *const *x = w->opts->write_excluded; x && *x; x++)
                if (strcmp(p, *x) == 0)
                        return true;
        return false;
}

/* statx() on an open directory: the stat fields the walk uses, and the mount id where the kernel has it
 * (Linux 5.8). */
static int dir_stat(int fd, Dir *ret)
{
        struct statx sx = { 0 };

        if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW,
                  STATX_TYPE | STATX_MODE | STATX_UID | STATX_GID | STATX_INO | STATX_MNT_ID, &sx) < 0)
                return -errno;
        *ret = (Dir){
                .st.st_dev = makedev(sx.stx_dev_major, sx.stx_dev_minor),
                .st.st_ino = sx.stx_ino,
                .st.st_mode = sx.stx_mode,
                .st.st_uid = sx.stx_uid,
                .st.st_gid = sx.stx_gid,
                .st.st_nlink = sx.stx_nlink,
                .mnt_id = (unsigned)sx.stx_mnt_id,
                .has_mnt_id = (sx.stx_mask & STATX_MNT_ID) != 0,
        };
        return 0;
}

/* Removes o+w from the directory open at fd, or reports that it would. */
static int fix_dir(Walk *w, int fd, const struct stat *st)
{
        int error = 0;

        if (!w->opts->dry_run && fchmod(fd, (st->st_mode & 07777) & ~(mode_t)S_IWOTH) < 0) {
                error = errno;
                w->stats.errors++;
        } else
                w->stats.world_writable++;
        return report(w, HARDEN_WALK_WORLD_WRITABLE, st, error);
}

/* Removes o+w from the non-directory name in dfd that fstatat() described as st. It is opened with
 * O_PATH (no open side effects: a FIFO, a device, a lock) and O_NOFOLLOW, checked to be the very inode
 * that was looked at and still world-writable, and changed through /proc/self/fd: chmod() there acts on
 * the inode the descriptor holds, so a name swapped for a link in a world-writable directory in between
 * redirects nothing. */
static int fix_file(Walk *w, int dfd, const char *name, const struct stat *st)
{
        _cleanup_close_ int fd = -EBADF;
        struct stat now;
        char proc[64];

        if (w->opts->dry_run) {
                w->stats.world_writable++;
                return report(w, HARDEN_WALK_WORLD_WRITABLE, st, 0);
        }
        fd = openat(dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return fail(w, st, errno);
        if (fstat(fd, &now) < 0)
                return fail(w, st, errno);
        if (now.st_dev != st->st_dev || now.st_ino != st->st_ino)
                return fail(w, st, ENOENT); /* replaced: whatever is there now is another walk's */
        if (!is_world_writable(now.st_mode))
                return 0;
        (void)snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
        if (chmod(proc, (now.st_mode & 07777) & ~(mode_t)S_IWOTH) < 0) {
                w->stats.errors++;
                return report(w, HARDEN_WALK_WORLD_WRITABLE, &now, errno);
        }
        w->stats.world_writable++;
        return report(w, HARDEN_WALK_WORLD_WRITABLE, &now, 0);
}

static bool dev_pruned(const Walk *w, dev_t dev)
{
        for (size_t i = 0; i < w->s->n_prune_devs; i++)
                if (w->s->prune_devs[i] == dev)
                        return true;
        return false;
}

static bool mount_pruned(const Walk *w, const Dir *d)
{
        if (d->has_mnt_id) {
                for (size_t i = 0; i < w->s->n_prune_ids; i++)
                        if (w->s->prune_ids[i] == d->mnt_id)
                                return true;
                return false;
        }
        for (size_t i = 0; i < w->s->n_prune_paths; i++)
                if (strcmp(w->path_len > 0 ? w->path : "/", w->s->prune_paths[i]) == 0)
                        return true;
        return false;
}

static int walk_dir(Walk *w, int fd, const Dir *self, unsigned depth, bool excluded);

/* Gives the directory open at *fd to an idle thread when one waits and the queue has room: 1 if it was
 * handed over (the descriptor with it), 0 if the caller walks it itself. Only idle threads are fed, so
 * a walk on one CPU, or with every thread busy, goes depth first and never takes the lock. */
static int hand_over(Walk *w, int *fd, const Dir *d, unsigned depth, bool excluded)
{
        Shared *s = w->s;
        char *path;

        if (s->n_threads < 2 || __atomic_load_n(&s->idle, __ATOMIC_RELAXED) == 0)
                return 0;
        path = strdup(w->path);
        if (!path)
                return -ENOMEM;
        pthread_mutex_lock(&s->lock);
        if (s->n_queue == s->queue_max) {
                pthread_mutex_unlock(&s->lock);
                free(path);
                return 0;
        }
        s->queue[s->n_queue++] =
                (Job){ .fd = TAKE_FD(*fd), .path = path, .dir = *d, .depth = depth, .excluded = excluded };
        pthread_cond_signal(&s->cond);
        pthread_mutex_unlock(&s->lock);
        return 1;
}

/* A directory named name in dfd (parent described by parent) that fstatat() described as st. */
static int visit_dir(Walk *w, int dfd, const Dir *parent, const char *name, const struct stat *st,
                     unsigned depth, bool excluded)
{
        _cleanup_close_ int fd = -EBADF;
        bool crossing, other_device = st->st_dev != parent->st.st_dev;
        Dir d = { 0 };
        int r;

        /* A pseudo filesystem is known by its device before it is opened: opening an automount point
         * would mount it. */
        if (other_device && dev_pruned(w, st->st_dev)) {
                w->stats.mounts_skipped++;
                return report(w, HARDEN_WALK_MOUNT_SKIPPED, st, 0);
        }

        fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0)
                return fail(w, st, errno);
        r = dir_stat(fd, &d);
        if (r < 0)
                return fail(w, st, -r);
        if (d.st.st_dev != st->st_dev || d.st.st_ino != st->st_ino)
                return fail(w, st, ENOENT); /* replaced between fstatat() and open */

        crossing = other_device || (d.has_mnt_id && parent->has_mnt_id && d.mnt_id != parent->mnt_id);
        if ((crossing || !d.has_mnt_id) && mount_pruned(w, &d)) {
                w->stats.mounts_skipped++;
                return report(w, HARDEN_WALK_MOUNT_SKIPPED, &d.st, 0);
        }

        if (!excluded)
                excluded = write_excluded(w);
        if (!excluded && is_world_writable(d.st.st_mode)) {
                r = fix_dir(w, fd, &d.st);
                if (r < 0)
                        return r;
        }

        if (d.st.st_dev != w->s->root_dev && !w->opts->cross_devices) {
                w->stats.mounts_skipped++;
                return report(w, HARDEN_WALK_MOUNT_SKIPPED, &d.st, 0);
        }
        if (depth > w->s->max_depth) {
                w->stats.too_deep++;
                return report(w, HARDEN_WALK_TOO_DEEP, &d.st, 0);
        }
        r = hand_over(w, &fd, &d, depth, excluded);
        if (r != 0)
                return r < 0 ? r : 0;
        return walk_dir(w, fd, &d, depth, excluded);
}

static int visit_file(Walk *w, int dfd, const char *name, const struct stat *st, bool excluded)
{
        if (S_ISREG(st->st_mode) && st->st_uid == 0) {
                int r;

                if (st->st_mode & S_ISUID) {
                        w->stats.setuid_root++;
                        r = report(w, HARDEN_WALK_SETUID_ROOT, st, 0);
                        if (r < 0)
                                return r;
                }
                if (st->st_mode & S_ISGID) {
                        w->stats.setgid_root++;
                        r = report(w, HARDEN_WALK_SETGID_ROOT, st, 0);
                        if (r < 0)
                                return r;
                }
        }
        if (!excluded && is_world_writable(st->st_mode))
                return fix_file(w, dfd, name, st);
        return 0;
}

/* HARDEN_WALK_WRITABLE for the name in dfd, where it is asked for and the walking process may write
 * what is there. */
static int report_writable(Walk *w, int dfd, const char *name, const struct stat *st)
{
        if (!w->opts->report_writable || S_ISLNK(st->st_mode) || (st->st_mode & S_IWOTH) ||
            faccessat(dfd, name, W_OK, AT_EACCESS | AT_SYMLINK_NOFOLLOW) < 0)
                return 0;
        w->stats.writable++;
        return report(w, HARDEN_WALK_WRITABLE, st, 0);
}

/* HARDEN_WALK_OWNED for what is there, where it is asked for. */
static int report_owned(Walk *w, const struct stat *st)
{
        if (!w->opts->report_owned || S_ISLNK(st->st_mode) ||
            !(st->st_uid == w->opts->owned_uid ||
              (st->st_gid == w->opts->owned_gid && (st->st_mode & S_IWGRP))))
                return 0;
        w->stats.owned++;
        return report(w, HARDEN_WALK_OWNED, st, 0);
}

/* The directory open at fd, at the given depth, described by self. */
static int walk_dir(Walk *w, int fd, const Dir *self, unsigned depth, bool excluded)
{
        char *buf;

        /* Another thread failed: stop soon, without reading further. */
        if (__atomic_load_n(&w->s->done, __ATOMIC_RELAXED))
                return 0;
        w->stats.directories++;
        if (!w->dents[depth]) {
                w->dents[depth] = malloc(DENTS_SIZE);
                if (!w->dents[depth])
                        return -ENOMEM;
        }
        buf = w->dents[depth];

        for (;;) {
                ssize_t n = getdents64(fd, buf, DENTS_SIZE);

                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return fail(w, &self->st, errno);
                }
                if (n == 0)
                        return 0;
                for (ssize_t off = 0; off < n;) {
                        const struct dirent64 *de = (const struct dirent64 *)(buf + off);
                        const char *name = de->d_name;
                        struct stat st;
                        size_t saved;
                        int r;

                        off += de->d_reclen;
                        if (name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0')))
                                continue;
                        w->stats.entries++;
                        /* A link's own mode means nothing and its target is not this walk's business
                         * (the target is found where it lives, if it is on the walked tree). */
                        if (de->d_type == DT_LNK)
                                continue;
                        r = path_push(w, name, &saved);
                        if (r < 0)
                                return r;
                        if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT) < 0)
                                r = fail(w, NULL, errno);
                        else {
                                r = report_writable(w, fd, name, &st);
                                if (r >= 0)
                                        r = report_owned(w, &st);
                                if (r >= 0 && S_ISDIR(st.st_mode))
                                        r = visit_dir(w, fd, self, name, &st, depth + 1, excluded);
                                else if (r >= 0 && !S_ISLNK(st.st_mode))
                                        r = visit_file(w, fd, name, &st, excluded);
                        }
                        path_pop(w, saved);
                        if (r < 0)
                                return r;
                }
        }
}

static int prune_sets(Shared *s)
{
        const MountInfo *m = s->opts->mounts;

        if (!m || m->n == 0)
                return 0;
        s->prune_devs = calloc(m->n, sizeof(*s->prune_devs));
        s->prune_ids = calloc(m->n, sizeof(*s->prune_ids));
        s->prune_paths = calloc(m->n, sizeof(*s->prune_paths));
        if (!s->prune_devs || !s->prune_ids || !s->prune_paths)
                return -ENOMEM;
        for (size_t i = 0; i < m->n; i++) {
                const MountInfoEntry *e = &m->entries[i];

                if (e->prune == MOUNT_PRUNE_PSEUDO)
                        s->prune_devs[s->n_prune_devs++] = e->dev;
                else if (e->prune == MOUNT_PRUNE_RO_NOSUID) {
                        s->prune_ids[s->n_prune_ids++] = e->id;
                        s->prune_paths[s->n_prune_paths++] = e->mount_point;
                }
        }
        return 0;
}

static int run_job(Walk *w, const Job *job)
{
        size_t len = strlen(job->path);
        int r;

        r = path_reserve(w, len + 1);
        if (r < 0)
                return r;
        memcpy(w->path, job->path, len + 1);
        w->path_len = len;
        return walk_dir(w, job->fd, &job->dir, job->depth, job->excluded);
}

/* Takes directories from the queue until every thread waits on an empty one, or one failed. */
static void *worker(void *userdata)
{
        Walk *w = userdata;
        Shared *s = w->s;

        pthread_mutex_lock(&s->lock);
        for (;;) {
                Job job;
                int r;

                while (s->n_queue == 0 && !s->done) {
                        if (__atomic_add_fetch(&s->idle, 1, __ATOMIC_RELAXED) == s->n_threads) {
                                /* Nothing queued and nobody walking who could queue more: finished. */
                                __atomic_store_n(&s->done, true, __ATOMIC_RELAXED);
                                pthread_cond_broadcast(&s->cond);
                        } else
                                pthread_cond_wait(&s->cond, &s->lock);
                        __atomic_sub_fetch(&s->idle, 1, __ATOMIC_RELAXED);
                }
                if (s->done)
                        break;
                job = s->queue[--s->n_queue];
                pthread_mutex_unlock(&s->lock);

                r = run_job(w, &job);
                (void)close(job.fd);
                free(job.path);

                pthread_mutex_lock(&s->lock);
                if (r < 0 && s->error == 0) {
                        s->error = r;
                        __atomic_store_n(&s->done, true, __ATOMIC_RELAXED);
                        pthread_cond_broadcast(&s->cond);
                }
        }
        pthread_mutex_unlock(&s->lock);
        return NULL;
}

static void walk_done(Walk *w, unsigned max_depth)
{
        if (w->dents)
                for (unsigned i = 0; i <= max_depth + 1; i++)
                        free(w->dents[i]);
        free(w->dents);
        free(w->path);
}

static void stats_add(HardenWalkStats *a, const HardenWalkStats *b)
{
        a->directories += b->directories;
        a->entries += b->entries;
        a->world_writable += b->world_writable;
        a->writable += b->writable;
        a->owned += b->owned;
        a->setuid_root += b->setuid_root;
        a->setgid_root += b->setgid_root;
        a->mounts_skipped += b->mounts_skipped;
        a->too_deep += b->too_deep;
        a->vanished += b->vanished;
        a->denied += b->denied;
        a->errors += b->errors;
}

static unsigned thread_count(unsigned wanted)
{
        long cpus;

        if (wanted > 0)
                return wanted < HARDEN_WALK_THREADS_MAX ? wanted : HARDEN_WALK_THREADS_MAX;
        cpus = sysconf(_SC_NPROCESSORS_ONLN);
        if (cpus < 1)
                return 1;
        return cpus < HARDEN_WALK_THREADS_MAX ? (unsigned)cpus : HARDEN_WALK_THREADS_MAX;
}

/* Some threads could not be started: the ones already waiting count again against the smaller number. */
static void threads_fewer(Shared *s, unsigned missing)
{
        pthread_mutex_lock(&s->lock);
        s->n_threads -= missing;
        pthread_cond_broadcast(&s->cond);
        pthread_mutex_unlock(&s->lock);
}

int harden_walk(const char *root, const HardenWalkOptions *opts, HardenWalkStats *ret_stats)
{
        int fd = -EBADF;
        _cleanup_free_ pthread_t *threads = NULL;
        _cleanup_free_ Walk *walks = NULL;
        Shared s = {
                .opts = opts,
                .lock = PTHREAD_MUTEX_INITIALIZER,
                .report_lock = PTHREAD_MUTEX_INITIALIZER,
                .cond = PTHREAD_COND_INITIALIZER,
        };
        HardenWalkStats total = { 0 };
        unsigned n_threads, started = 0;
        bool excluded;
        size_t len;
        Dir d = { 0 };
        int r;

        assert(root);
        assert(root[0] == '/');
        assert(opts);

        s.max_depth = opts->max_depth > 0 ? opts->max_depth : HARDEN_WALK_DEPTH_DEFAULT;
        n_threads = thread_count(opts->threads);
        s.n_threads = n_threads;
        s.queue_max = 4 * (size_t)n_threads;

        walks = calloc(n_threads, sizeof(*walks));
        threads = calloc(n_threads, sizeof(*threads));
        s.queue = calloc(s.queue_max, sizeof(*s.queue));
        if (!walks || !threads || !s.queue) {
                r = -ENOMEM;
                goto finish;
        }
        /* The path without a trailing slash: "/" is the empty string, so children are "/name". */
        len = strlen(root);
        while (len > 0 && root[len - 1] == '/')
                len--;
        for (unsigned i = 0; i < n_threads; i++) {
                walks[i] = (Walk){ .s = &s, .opts = opts, .path_allocated = len + 256 };
                walks[i].path = malloc(walks[i].path_allocated);
                walks[i].dents = calloc(s.max_depth + 2, sizeof(char *));
                if (!walks[i].path || !walks[i].dents) {
                        r = -ENOMEM;
                        goto finish;
                }
                walks[i].path[0] = '\0';
        }
        memcpy(walks[0].path, root, len);
        walks[0].path[len] = '\0';
        walks[0].path_len = len;

        r = prune_sets(&s);
        if (r < 0)
                goto finish;

        /* The root is the one path resolved by name; a link there is refused, not followed. */
        fd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
                r = -errno;
                goto finish;
        }
        r = dir_stat(fd, &d);
        if (r < 0)
                goto finish;
        s.root_dev = d.st.st_dev;

        excluded = write_excluded(&walks[0]);
        if (!excluded && is_world_writable(d.st.st_mode)) {
                r = fix_dir(&walks[0], fd, &d.st);
                if (r < 0)
                        goto finish;
        }
        s.queue[0] = (Job){ .fd = fd, .path = strdup(walks[0].path), .dir = d, .excluded = excluded };
        fd = -EBADF; /* the queue's now */
        s.n_queue = 1;
        if (!s.queue[0].path) {
                r = -ENOMEM;
                goto finish;
        }

        for (unsigned i = 1; i < n_threads; i++) {
                if (pthread_create(&threads[i], NULL, worker, &walks[i]) != 0) {
                        threads_fewer(&s, n_threads - i);
                        break;
                }
                started++;
        }
        (void)worker(&walks[0]);
        for (unsigned i = 1; i <= started; i++)
                (void)pthread_join(threads[i], NULL);
        r = s.error;

finish:
        if (fd >= 0)
                (void)close(fd);
        /* Left in the queue only when a thread failed. */
        for (size_t i = 0; i < s.n_queue; i++) {
                (void)close(s.queue[i].fd);
                free(s.queue[i].path);
        }
        free(s.queue);
        for (unsigned i = 0; walks && i < n_threads; i++) {
                stats_add(&total, &walks[i].stats);
                walk_done(&walks[i], s.max_depth);
        }
        free(s.prune_devs);
        free(s.prune_ids);
        free(s.prune_paths);
        if (ret_stats)
                *ret_stats = total;
        return r < 0 ? r : 0;
}
