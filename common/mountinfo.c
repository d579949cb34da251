/* SPDX-License-Identifier: MIT */
#include "mountinfo.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "macro.h"
#include "read-file.h"

/* A field of a line: not NUL-terminated, the text is the caller's. */
typedef struct Span {
        const char *p;
        size_t len;
} Span;

static bool span_eq(Span s, const char *word)
{
        return s.len == strlen(word) && memcmp(s.p, word, s.len) == 0;
}

static int is_octal(char c)
{
        return c >= '0' && c <= '7';
}

/* The kernel's mangle(): space, tab, newline and backslash become \ooo. Anything else after a backslash
 * is not something the kernel wrote, so the line is not understood. */
static int decode(Span s, char **ret)
{
        _cleanup_free_ char *out = malloc(s.len + 1);
        char *o = out;

        if (!out)
                return -ENOMEM;
        for (size_t i = 0; i < s.len; i++) {
                unsigned v;

                if (s.p[i] != '\\') {
                        *o++ = s.p[i];
                        continue;
                }
                if (s.len - i < 4 || !is_octal(s.p[i + 1]) || !is_octal(s.p[i + 2]) || !is_octal(s.p[i + 3]))
                        return -EINVAL;
                v = (unsigned)(s.p[i + 1] - '0') * 64 + (unsigned)(s.p[i + 2] - '0') * 8 +
                    (unsigned)(s.p[i + 3] - '0');
                /* \000 would end the string early and \4xx is not a byte. */
                if (v == 0 || v > 0xff)
                        return -EINVAL;
                *o++ = (char)v;
                i += 3;
        }
        *o = '\0';
        *ret = TAKE_PTR(out);
        return 0;
}

static int copy_span(Span s, char **ret)
{
        char *c = strndup(s.p, s.len);

        if (!c)
                return -ENOMEM;
        *ret = c;
        return 0;
}

static int parse_uint(Span s, unsigned max, unsigned *ret)
{
        unsigned long long v = 0;

        if (s.len == 0 || s.len > 10)
                return -EINVAL;
        for (size_t i = 0; i < s.len; i++) {
                if (s.p[i] < '0' || s.p[i] > '9')
                        return -EINVAL;
                v = v * 10 + (unsigned)(s.p[i] - '0');
        }
        if (v > max)
                return -EINVAL;
        *ret = (unsigned)v;
        return 0;
}

/* Whether the comma-separated option list (as reported, undecoded: an escaped comma stays \054 and so
 * cannot split a value) holds word as a whole option. */
static bool has_option(Span opts, const char *word)
{
        size_t start = 0;

        for (size_t i = 0; i <= opts.len; i++) {
                if (i < opts.len && opts.p[i] != ',')
                        continue;
                if (span_eq((Span){ opts.p + start, i - start }, word))
                        return true;
                start = i + 1;
        }
        return false;
}

static void entry_done(MountInfoEntry *e)
{
        free(e->root);
        free(e->mount_point);
        free(e->fstype);
        free(e->source);
        free(e->mount_options);
        free(e->super_options);
}

/* The fields before the separator are id, parent, major:minor, root, mount point, options and the
 * optional fields (shared:N, master:N, propagate_from:N, unbindable), which may be none. */
#define FIELDS_MAX 64

static int parse_line(Span line, MountInfoEntry *ret)
{
        Span f[FIELDS_MAX], dev_major, dev_minor;
        MountInfoEntry e = { 0 };
        size_t n = 0, sep = 0, start = 0;
        const char *colon;
        unsigned maj, min;
        int r;

        /* Split on single spaces: the kernel writes exactly one between fields and escapes the rest. */
        for (size_t i = 0; i <= line.len; i++) {
                if (i < line.len && line.p[i] != ' ')
                        continue;
                if (n == FIELDS_MAX)
                        return -EINVAL;
                f[n++] = (Span){ line.p + start, i - start };
                start = i + 1;
        }
        for (size_t i = 6; i < n; i++)
                if (span_eq(f[i], "-")) {
                        sep = i;
                        break;
                }
        /* After the separator: fstype, source, super options; nothing else. */
        if (sep == 0 || n != sep + 4)
                return -EINVAL;

        if (parse_uint(f[0], UINT_MAX, &e.id) < 0 || parse_uint(f[1], UINT_MAX, &e.parent_id) < 0)
                return -EINVAL;
        colon = memchr(f[2].p, ':', f[2].len);
        if (!colon)
                return -EINVAL;
        dev_major = (Span){ f[2].p, (size_t)(colon - f[2].p) };
        dev_minor = (Span){ colon + 1, f[2].len - dev_major.len - 1 };
        if (parse_uint(dev_major, UINT32_MAX, &maj) < 0 || parse_uint(dev_minor, UINT32_MAX, &min) < 0)
                return -EINVAL;
        e.dev = makedev(maj, min);

        /* Empty fields (two spaces) are refused but for the source, which may be "" when the mount's
         * device name was. */
        if (f[3].len == 0 || f[4].len == 0 || f[5].len == 0 || f[sep + 1].len == 0)
                return -EINVAL;
        /* The root is a path but for nsfs ("net:[4026532281]"); the mount point is always absolute. */
        if (f[4].p[0] != '/')
                return -EINVAL;

        e.read_only = has_option(f[5], "ro") || has_option(f[sep + 3], "ro");
        e.nosuid = has_option(f[5], "nosuid") || has_option(f[sep + 3], "nosuid");

        if ((r = decode(f[3], &e.root)) < 0 || (r = decode(f[4], &e.mount_point)) < 0 ||
            (r = decode(f[sep + 1], &e.fstype)) < 0 || (r = decode(f[sep + 2], &e.source)) < 0 ||
            (r = copy_span(f[5], &e.mount_options)) < 0 ||
            (r = copy_span(f[sep + 3], &e.super_options)) < 0) {
                entry_done(&e);
                return r;
        }
        *ret = e;
        return 0;
}

void mountinfo_done(MountInfo *m)
{
        if (!m)
                return;
        for (size_t i = 0; i < m->n; i++)
                entry_done(&m->entries[i]);
        free(m->entries);
        m->entries = NULL;
        m->n = 0;
}

static int parse_lines(const char *text, size_t size, MountInfo *m)
{
        size_t allocated = 0;

        for (size_t pos = 0; pos < size;) {
                const char *nl = memchr(text + pos, '\n', size - pos);
                size_t len = nl ? (size_t)(nl - (text + pos)) : size - pos;
                int r;

                if (m->n == MOUNTINFO_ENTRIES_MAX)
                        return -EFBIG;
                if (m->n == allocated) {
                        size_t want = allocated ? allocated * 2 : 64;
                        MountInfoEntry *grown = reallocarray(m->entries, want, sizeof(*grown));

                        if (!grown)
                                return -ENOMEM;
                        m->entries = grown;
                        allocated = want;
                }
                r = parse_line((Span){ text + pos, len }, &m->entries[m->n]);
                if (r < 0)
                        return r;
                m->n++;
                pos += len + 1;
        }
        return 0;
}

int mountinfo_parse(const char *text, size_t size, MountInfo *ret)
{
        MountInfo m = { 0 };
        int r;

        assert(text || size == 0);
        assert(ret);

        if (size > MOUNTINFO_SIZE_MAX)
                return -EFBIG;
        if (size > 0 && memchr(text, '\0', size))
                return -EINVAL;
        r = parse_lines(text, size, &m);
        if (r < 0) {
                mountinfo_done(&m);
                return r;
        }
        *ret = m;
        return 0;
}

int mountinfo_read(MountInfo *ret)
{
        _cleanup_free_ char *text = NULL;
        size_t size;
        int r;

        assert(ret);

        r = read_regular_nofollow(AT_FDCWD, "/proc/self/mountinfo", MOUNTINFO_SIZE_MAX, &text, &size);
        if (r < 0)
                return r;
        return mountinfo_parse(text, size, ret);
}

bool mountinfo_fstype_pseudo(const char *fstype)
{
        /* Kernel interfaces (their modes are the kernel's to set, and chmod there changes kernel state or
         * fails), device node trees (/dev/null must stay 0666), and autofs (entering triggers a mount).
         * tmpfs and the like are real filesystems with user files: not listed. */
        static const char *const pseudo[] = {
                "autofs", "binfmt_misc", "bpf",        "cgroup",     "cgroup2",   "configfs", "debugfs",
                "devpts", "devtmpfs",    "efivarfs",   "fusectl",    "hugetlbfs", "mqueue",   "nsfs",
                "proc",   "pstore",      "rpc_pipefs", "securityfs", "selinuxfs", "sysfs",    "tracefs",
        };

        assert(fstype);
        for (size_t i = 0; i < ELEMENTSOF(pseudo); i++)
                if (strcmp(fstype, pseudo[i]) == 0)
                        return true;
        return false;
}

const char *mount_prune_to_string(MountPrune p)
{
        switch (p) {
        case MOUNT_PRUNE_PSEUDO:
                return "pseudo";
        case MOUNT_PRUNE_RO_NOSUID:
                return "ro,nosuid";
        default:
                return "none";
        }
}

/* The distinct mount points in strcmp() order, each with whether a walked writable mount is at or below
 * it. */
typedef struct Point {
        const char *path;
        bool writable_below;
} Point;

static int point_cmp(const void *a, const void *b)
{
        return strcmp(((const Point *)a)->path, ((const Point *)b)->path);
}

/* The point whose path is the first len bytes of prefix, or NULL. */
static Point *point_find(Point *points, size_t n, const char *prefix, size_t len)
{
        size_t lo = 0, hi = n;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                const char *p = points[mid].path;
                int c = strncmp(p, prefix, len);

                if (c == 0)
                        c = p[len] == '\0' ? 0 : 1;
                if (c == 0)
                        return &points[mid];
                if (c < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return NULL;
}

int mountinfo_prune_decide(MountInfo *m)
{
        _cleanup_free_ Point *points = NULL;
        size_t n = 0;

        assert(m);

        for (size_t i = 0; i < m->n; i++)
                m->entries[i].prune = mountinfo_fstype_pseudo(m->entries[i].fstype) ? MOUNT_PRUNE_PSEUDO
                                                                                    : MOUNT_PRUNE_NONE;
        if (m->n == 0)
                return 0;

        points = calloc(m->n, sizeof(*points));
        if (!points)
                return -ENOMEM;
        for (size_t i = 0; i < m->n; i++)
                points[i].path = m->entries[i].mount_point;
        qsort(points, m->n, sizeof(*points), point_cmp);
        for (size_t i = 0; i < m->n; i++)
                if (n == 0 || strcmp(points[n - 1].path, points[i].path) != 0)
                        points[n++] = points[i];

        /* Mark every mount point at or above a writable mount the walk enters: its own path, then each
         * prefix ending before a '/', then "/". The work is bounded by the text's size times log n. */
        for (size_t i = 0; i < m->n; i++) {
                const MountInfoEntry *e = &m->entries[i];
                const char *path = e->mount_point;
                Point *p;

                if (e->read_only || e->prune == MOUNT_PRUNE_PSEUDO)
                        continue;
                for (size_t len = strlen(path); len > 1; len--) {
                        if (path[len] != '\0' && path[len] != '/')
                                continue;
                        p = point_find(points, n, path, len);
                        if (p)
                                p->writable_below = true;
                }
                p = point_find(points, n, "/", 1);
                if (p)
                        p->writable_below = true;
        }

        for (size_t i = 0; i < m->n; i++) {
                MountInfoEntry *e = &m->entries[i];
                const Point *p;

                if (e->prune != MOUNT_PRUNE_NONE || !e->read_only || !e->nosuid)
                        continue;
                p = point_find(points, n, e->mount_point, strlen(e->mount_point));
                assert(p);
                if (!p->writable_below)
                        e->prune = MOUNT_PRUNE_RO_NOSUID;
        }
        return 0;
}
