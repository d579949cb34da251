/* SPDX-License-Identifier: MIT */
/* The export's receiver (export-receive.h). The output directory is the runner's and fresh, but the test of
 * "nothing is followed" is made here anyway: each component is opened with O_NOFOLLOW from the directory
 * above it, and each file is created with O_EXCL. */
#include "export-receive.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "macro.h"
#include "strv.h"
#include "write-all.h"

typedef struct Receiver {
        int outdir_fd;
        const ExportLimits *limits;
        ExportEntry *entries;
        ExportEntry **by_name; /* the entries sorted by name, for bsearch() */
        size_t n_entries;
        Strv dirs;            /* the directories this call made, parents first */
        ExportEntry *current; /* between FILE and DONE */
        size_t current_dirs;  /* dirs.n when the current file began */
        int dir_fd, fd;       /* the current file's directory and the file, while it is being written */
        const char *base;     /* the current file's last component */
        uint64_t current_bytes, total_bytes;
        unsigned n_files;
        bool scan; /* secrets were given: stream searches each file */
        SecretStream stream;
        AjError *reterr;
} Receiver;

/* Opens the directory that holds name's last component, one component at a time from outdir_fd, never
 * through a link; with create, makes the missing ones (0700) and records them. */
static int open_parent(Receiver *rc, const char *name, bool create, int *ret_fd, const char **ret_base)
{
        _cleanup_close_ int fd = -EBADF;
        char path[EXPORT_NAME_MAX + 1];
        size_t start = 0, len = strlen(name);

        assert(len <= EXPORT_NAME_MAX);
        memcpy(path, name, len + 1);
        fd = openat(rc->outdir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        for (size_t i = 0; i < len; i++) {
                int next;

                if (path[i] != '/')
                        continue;
                path[i] = '\0';
                if (create) {
                        if (mkdirat(fd, path + start, 0700) == 0) {
                                int r = strv_push(&rc->dirs, strndup(name, i));
                                if (r < 0)
                                        return r;
                        } else if (errno != EEXIST)
                                return -errno;
                }
                next = openat(fd, path + start, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
                if (next < 0)
                        return -errno;
                (void)close(fd);
                fd = next;
                start = i + 1;
        }
        /* cppcheck-suppress unreadVariable ; TAKE_FD() leaves -EBADF for the cleanup, which reads it */
        *ret_fd = TAKE_FD(fd);
        *ret_base = name + start;
        return 0;
}

static void remove_at(Receiver *rc, const char *name, int flags)
{
        _cleanup_close_ int fd = -EBADF;
        const char *base = NULL;

        if (open_parent(rc, name, false, &fd, &base) >= 0 && base)
                (void)unlinkat(fd, base, flags);
}

/* Removes the directories made since dirs.n was from, deepest first: they are empty by then. */
static void remove_dirs(Receiver *rc, size_t from)
{
        while (rc->dirs.n > from) {
                rc->dirs.n--;
                remove_at(rc, rc->dirs.v[rc->dirs.n], AT_REMOVEDIR);
                free(rc->dirs.v[rc->dirs.n]);
                rc->dirs.v[rc->dirs.n] = NULL;
        }
}

/* Drops what was written of the current file and the directories made for it. */
static void drop_current(Receiver *rc)
{
        if (rc->fd >= 0) {
                (void)close(TAKE_FD(rc->fd));
                (void)unlinkat(rc->dir_fd, rc->base, 0);
        }
        if (rc->dir_fd >= 0)
                (void)close(TAKE_FD(rc->dir_fd));
        remove_dirs(rc, rc->current_dirs);
}

_printf_(4, 5) static void refuse(Receiver *rc, bool limit, int error, const char *fmt, ...)
{
        ExportEntry *e = rc->current;
        va_list ap;

        drop_current(rc);
        e->state = EXPORT_REFUSED;
        e->limit = limit;
        e->error = error;
        va_start(ap, fmt);
        (void)vsnprintf(e->reason, sizeof(e->reason), fmt, ap);
        va_end(ap);
}

static void refuse_error(Receiver *rc, int error)
{
        switch (error) {
        case EEXIST:
                refuse(rc, false, error, "exists in the output directory");
                break;
        case ELOOP:
        case ENOTDIR:
                refuse(rc, false, error, "a link or a file where a directory of its path should be");
                break;
        default:
                refuse(rc, false, error, "could not be written: %s", strerror(error));
        }
}

static int compare_entries(const void *a, const void *b)
{
        return strcmp((*(ExportEntry *const *)a)->name, (*(ExportEntry *const *)b)->name);
}

static int find_entry(Receiver *rc, const char *name, ExportEntry **ret)
{
        ExportEntry key = { .name = name }, *k = &key, **found;

        found = bsearch(&k, rc->by_name, rc->n_entries, sizeof(ExportEntry *), compare_entries);
        if (!found)
                return aj_error(rc->reterr, EBADMSG, 0, 0, "\"%.256s\" was not requested", name);
        /* Every entry named before is decided by now: FILE and REFUSE come only outside a file. */
        if ((*found)->state != EXPORT_MISSING)
                return aj_error(rc->reterr, EBADMSG, 0, 0, "a second record for \"%.256s\"", name);
        *ret = *found;
        return 0;
}

static int on_file_begin(const char *name, void *userdata)
{
        Receiver *rc = userdata;
        int r;

        r = find_entry(rc, name, &rc->current);
        if (r < 0)
                return r;
        rc->current_bytes = 0;
        rc->current_dirs = rc->dirs.n;
        if (rc->scan)
                secret_stream_reset(&rc->stream);
        if (rc->n_files >= rc->limits->max_files) {
                refuse(rc, true, 0, "over the limit of %u files", rc->limits->max_files);
                return 0;
        }
        rc->n_files++;
        /* The entry's name, not name: that is the reader's, and rc->base must outlive this call. */
        r = open_parent(rc, rc->current->name, true, &rc->dir_fd, &rc->base);
        if (r >= 0) {
                rc->fd = openat(rc->dir_fd, rc->base,
                                O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0600);
                r = rc->fd < 0 ? -errno : 0;
        }
        if (r < 0)
                refuse_error(rc, -r);
        return 0;
}

static int on_data(const void *data, size_t size, void *userdata)
{
        Receiver *rc = userdata;
        uint64_t max = rc->limits->max_file_bytes;
        int r;

        rc->current_bytes += size;
        if (rc->current_bytes > max && rc->current_bytes - max > 1)
                return aj_error(
                        rc->reterr, EBADMSG, 0, 0,
                        "more than the per-file limit and one byte of \"%.256s\": the sender stops there",
                        rc->current->name);
        if (rc->fd < 0)
                return 0; /* refused already: what is left of it is only counted */
        if (rc->current_bytes > max)
                refuse(rc, true, 0, "over the per-file limit of %" PRIu64 " bytes", max);
        else if (rc->current_bytes > rc->limits->max_total_bytes - rc->total_bytes)
                refuse(rc, true, 0, "over the total limit of %" PRIu64 " bytes",
                       rc->limits->max_total_bytes);
        else {
                /* Searched before it is written: a secret that came whole in this piece never reaches
                 * the disk, and one across pieces is removed with the file. */
                if (rc->scan)
                        secret_stream_feed(&rc->stream, data, size);
                if (rc->scan && rc->stream.found) {
                        refuse(rc, false, 0, "holds %s: not exported", rc->stream.found);
                        rc->current->secret = true;
                } else if ((r = write_all(rc->fd, data, size)) < 0)
                        refuse_error(rc, -r);
        }
        return 0;
}

static int on_file_end(void *userdata)
{
        Receiver *rc = userdata;
        ExportEntry *e = rc->current;

        if (rc->fd >= 0 && close(TAKE_FD(rc->fd)) < 0 && errno != EINTR) {
                /* The data may not all have reached the disk. */
                int error = errno;
                (void)unlinkat(rc->dir_fd, rc->base, 0);
                refuse_error(rc, error);
        } else if (e->state == EXPORT_MISSING) {
                e->state = EXPORT_EXPORTED;
                e->bytes = rc->current_bytes;
                rc->total_bytes += rc->current_bytes;
        }
        if (rc->dir_fd >= 0)
                (void)close(TAKE_FD(rc->dir_fd));
        rc->current = NULL;
        return 0;
}

static int on_refusal(const char *name, const char *reason, bool limit, void *userdata)
{
        Receiver *rc = userdata;
        ExportEntry *e;
        int r;

        r = find_entry(rc, name, &e);
        if (r < 0)
                return r;
        e->state = EXPORT_REFUSED;
        e->limit = limit;
        (void)snprintf(e->reason, sizeof(e->reason), "%s", reason);
        return 0;
}

static const ExportReaderCallbacks callbacks = {
        .file_begin = on_file_begin,
        .data = on_data,
        .file_end = on_file_end,
        .refusal = on_refusal,
};

struct ExportReceiver {
        Receiver rc;
        ExportReader reader;
        int error; /* the first error of the stream (the reader's or a callback's), sticky: -errno */
};

int export_receiver_new(int outdir_fd, char *const *names, const ExportLimits *limits,
                        const SecretSet *secrets, ExportReceiver **ret, AjError *reterr)
{
        ExportReceiver *x;

        assert(outdir_fd >= 0);
        assert(limits);
        assert(ret);

        if (export_names_check(names) < 0)
                return aj_error(reterr, EINVAL, 0, 0,
                                "the requested outputs are not distinct plain relative paths");
        x = calloc(1, sizeof(*x));
        if (!x)
                return aj_error(reterr, ENOMEM, 0, 0, "out of memory");
        x->rc = (Receiver){
                .outdir_fd = outdir_fd, .limits = limits, .dir_fd = -EBADF, .fd = -EBADF, .reterr = reterr
        };
        x->rc.n_entries = strv_length(names);
        x->rc.entries = calloc(x->rc.n_entries + 1, sizeof(ExportEntry));
        x->rc.by_name = calloc(x->rc.n_entries + 1, sizeof(ExportEntry *));
        if (!x->rc.entries || !x->rc.by_name) {
                free(x->rc.entries);
                free(x->rc.by_name);
                free(x);
                return aj_error(reterr, ENOMEM, 0, 0, "out of memory");
        }
        if (secrets && secret_stream_init(&x->rc.stream, secrets) < 0) {
                free(x->rc.entries);
                free(x->rc.by_name);
                free(x);
                return aj_error(reterr, ENOMEM, 0, 0, "out of memory");
        }
        x->rc.scan = secrets != NULL;
        for (size_t i = 0; i < x->rc.n_entries; i++) {
                x->rc.entries[i].name = names[i];
                x->rc.by_name[i] = &x->rc.entries[i];
        }
        qsort(x->rc.by_name, x->rc.n_entries, sizeof(ExportEntry *), compare_entries);
        export_reader_init(&x->reader, &callbacks, &x->rc);
        *ret = x;
        return 0;
}

int export_receiver_feed(ExportReceiver *x, const void *data, size_t size)
{
        assert(x);

        if (x->error == 0)
                x->error = export_reader_feed(&x->reader, data, size, x->rc.reterr);
        return x->error < 0 ? x->error : 0;
}

/* Nothing half-exported remains: this call's files, then its directories. */
static void receiver_undo(Receiver *rc)
{
        if (rc->current)
                drop_current(rc);
        for (size_t i = 0; i < rc->n_entries; i++)
                if (rc->entries[i].state == EXPORT_EXPORTED)
                        remove_at(rc, rc->entries[i].name, 0);
        remove_dirs(rc, 0);
}

int export_receiver_end(ExportReceiver *x, ExportResult *ret)
{
        Receiver *rc;
        ExportResult result = {};
        int r;

        assert(x);
        assert(ret);

        rc = &x->rc;
        r = x->error < 0 ? x->error : export_reader_end(&x->reader, rc->reterr);
        if (r < 0) {
                export_receiver_free(x);
                return r;
        }
        result.entries = rc->entries;
        rc->entries = NULL; /* the result's now: nothing is undone */
        result.n_entries = rc->n_entries;
        result.total_bytes = rc->total_bytes;
        for (size_t i = 0; i < result.n_entries; i++) {
                const ExportEntry *e = &result.entries[i];

                result.n_exported += e->state == EXPORT_EXPORTED;
                result.n_refused += e->state == EXPORT_REFUSED;
                result.n_missing += e->state == EXPORT_MISSING;
                result.n_failed += e->state == EXPORT_REFUSED && e->error != 0;
                result.n_secret += e->state == EXPORT_REFUSED && e->secret;
                result.limit_hit = result.limit_hit || e->limit;
        }
        export_receiver_free(x);
        *ret = result;
        return 0;
}

void export_receiver_free(ExportReceiver *x)
{
        if (!x)
                return;
        if (x->rc.entries)
                receiver_undo(&x->rc);
        if (x->rc.dir_fd >= 0)
                (void)close(x->rc.dir_fd);
        strv_clear(&x->rc.dirs);
        if (x->rc.scan)
                secret_stream_done(&x->rc.stream);
        free(x->rc.entries);
        free(x->rc.by_name);
        free(x);
}

int export_receive(int in_fd, int outdir_fd, char *const *names, const ExportLimits *limits,
                   const SecretSet *secrets, ExportResult *ret, AjError *reterr)
{
        _cleanup_free_ char *buf = NULL;
        ExportReceiver *x = NULL;
        int r;

        assert(in_fd >= 0);

        r = export_receiver_new(outdir_fd, names, limits, secrets, &x, reterr);
        if (r < 0)
                return r;
        buf = malloc(EXPORT_CHUNK_MAX);
        if (!buf) {
                export_receiver_free(x);
                return aj_error(reterr, ENOMEM, 0, 0, "out of memory");
        }
        for (;;) {
                ssize_t k = read(in_fd, buf, EXPORT_CHUNK_MAX);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0) {
                        int error = errno;
                        export_receiver_free(x);
                        return aj_error(reterr, error, 0, 0, "reading the export stream: %s",
                                        strerror(error));
                }
                if (k == 0)
                        return export_receiver_end(x, ret);
                if (export_receiver_feed(x, buf, (size_t)k) < 0)
                        return export_receiver_end(x, ret);
        }
}

void export_result_done(ExportResult *result)
{
        if (!result)
                return;
        free(result->entries);
        *result = (ExportResult){};
}
