/* SPDX-License-Identifier: MIT */
/* The export's stream (export-frame.h): its writers and its strict incremental reader. The reader keeps
 * only one header line; a chunk's bytes go to the callback as they arrive. */
#include "export-frame.h"

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "parse.h"
#include "write-all.h"

static bool is_control(char c)
{
        return (unsigned char)c < 0x20 || c == 0x7f;
}

bool export_name_valid(const char *name, size_t size)
{
        size_t start = 0;

        assert(name || size == 0);

        if (size == 0 || size > EXPORT_NAME_MAX)
                return false;
        /* A leading or trailing '/' makes an empty first or last component. */
        for (size_t i = 0; i <= size; i++) {
                size_t len;

                if (i < size && name[i] != '/') {
                        if (is_control(name[i]))
                                return false;
                        continue;
                }
                len = i - start;
                if (len == 0 || (len == 1 && name[start] == '.') ||
                    (len == 2 && name[start] == '.' && name[start + 1] == '.'))
                        return false;
                start = i + 1;
        }
        return true;
}

static int compare_names(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

int export_names_check(char *const *names)
{
        _cleanup_free_ char **sorted = NULL;
        size_t n = 0;

        for (; names && names[n]; n++)
                if (!export_name_valid(names[n], strlen(names[n])))
                        return -EINVAL;
        if (n < 2)
                return 0;
        /* Sorted, so that a twice-named output is found in n log n, not n squared (10,000 outputs). */
        sorted = malloc(n * sizeof(char *));
        if (!sorted)
                return -ENOMEM;
        memcpy(sorted, names, n * sizeof(char *));
        qsort(sorted, n, sizeof(char *), compare_names);
        for (size_t i = 1; i < n; i++)
                if (strcmp(sorted[i - 1], sorted[i]) == 0)
                        return -EINVAL;
        return 0;
}

static bool reason_valid(const char *reason, size_t size)
{
        if (size == 0 || size > EXPORT_REASON_MAX)
                return false;
        for (size_t i = 0; i < size; i++)
                if (is_control(reason[i]))
                        return false;
        return true;
}

int export_write_file_begin(int fd, const char *name)
{
        char line[EXPORT_LINE_MAX + 2];
        int n;

        assert(name);
        if (!export_name_valid(name, strlen(name)))
                return -EINVAL;
        n = snprintf(line, sizeof(line), "FILE %s\n", name);
        return write_all(fd, line, (size_t)n);
}

int export_write_data(int fd, const void *data, size_t size)
{
        const char *p = data;

        assert(data || size == 0);
        while (size > 0) {
                size_t k = size < EXPORT_CHUNK_MAX ? size : EXPORT_CHUNK_MAX;
                char header[32];
                int n = snprintf(header, sizeof(header), "DATA %zu\n", k);
                int r = write_all(fd, header, (size_t)n);

                if (r < 0)
                        return r;
                r = write_all(fd, p, k);
                if (r < 0)
                        return r;
                p += k;
                size -= k;
        }
        return 0;
}

int export_write_file_end(int fd)
{
        return write_all(fd, "DONE\n", 5);
}

int export_write_refusal(int fd, const char *name, const char *reason, bool limit)
{
        char line[EXPORT_LINE_MAX + 2];
        int n;

        assert(name);
        assert(reason);
        if (!export_name_valid(name, strlen(name)) || !reason_valid(reason, strlen(reason)))
                return -EINVAL;
        n = snprintf(line, sizeof(line), "%s %s\t%s\n", limit ? "LIMIT" : "REFUSE", name, reason);
        return write_all(fd, line, (size_t)n);
}

int export_write_stream_end(int fd)
{
        return write_all(fd, "END\n", 4);
}

void export_reader_init(ExportReader *r, const ExportReaderCallbacks *callbacks, void *userdata)
{
        static const ExportReaderCallbacks none = {};

        assert(r);
        *r = (ExportReader){ .callbacks = callbacks ? callbacks : &none, .userdata = userdata };
}

/* Whether line is word followed by a space; *ret_rest is what follows the space. */
static bool record_is(const char *line, size_t len, const char *word, const char **ret_rest,
                      size_t *ret_rest_len)
{
        size_t n = strlen(word);

        if (len <= n || memcmp(line, word, n) != 0 || line[n] != ' ')
                return false;
        *ret_rest = line + n + 1;
        *ret_rest_len = len - n - 1;
        return true;
}

static int reader_line(ExportReader *r, AjError *reterr)
{
        const ExportReaderCallbacks *cb = r->callbacks;
        char *line = r->line;
        size_t len = r->line_len;
        const char *rest;
        size_t rest_len;
        bool limit = false;

        r->line[len] = '\0';
        if (record_is(line, len, "FILE", &rest, &rest_len)) {
                if (r->in_file)
                        return aj_error(reterr, EBADMSG, 0, 0,
                                        "record %" PRIu64 ": a file begun inside another", r->n_records);
                if (!export_name_valid(rest, rest_len))
                        return aj_error(reterr, EBADMSG, 0, 0,
                                        "record %" PRIu64 ": not a plain relative path", r->n_records);
                r->in_file = true;
                return cb->file_begin ? cb->file_begin(rest, r->userdata) : 0;
        }
        if (record_is(line, len, "DATA", &rest, &rest_len)) {
                uint64_t n;

                if (!r->in_file)
                        return aj_error(reterr, EBADMSG, 0, 0, "record %" PRIu64 ": data outside a file",
                                        r->n_records);
                if (parse_decimal(rest, rest_len, EXPORT_CHUNK_MAX, &n) < 0 || n == 0)
                        return aj_error(reterr, EBADMSG, 0, 0,
                                        "record %" PRIu64 ": a chunk length that is not 1 to %d",
                                        r->n_records, EXPORT_CHUNK_MAX);
                r->chunk_left = (size_t)n;
                return 0;
        }
        if (len == 4 && memcmp(line, "DONE", 4) == 0) {
                if (!r->in_file)
                        return aj_error(reterr, EBADMSG, 0, 0, "record %" PRIu64 ": an end outside a file",
                                        r->n_records);
                r->in_file = false;
                return cb->file_end ? cb->file_end(r->userdata) : 0;
        }
        if (record_is(line, len, "REFUSE", &rest, &rest_len) ||
            (limit = record_is(line, len, "LIMIT", &rest, &rest_len))) {
                char *tab = memchr(rest, '\t', rest_len);
                size_t name_len = tab ? (size_t)(tab - rest) : 0;

                if (r->in_file)
                        return aj_error(reterr, EBADMSG, 0, 0, "record %" PRIu64 ": a refusal inside a file",
                                        r->n_records);
                if (!tab || !export_name_valid(rest, name_len) ||
                    !reason_valid(tab + 1, rest_len - name_len - 1))
                        return aj_error(reterr, EBADMSG, 0, 0,
                                        "record %" PRIu64 ": a refusal that is not NAME, tab, reason",
                                        r->n_records);
                *tab = '\0';
                return cb->refusal ? cb->refusal(rest, tab + 1, limit, r->userdata) : 0;
        }
        if (len == 3 && memcmp(line, "END", 3) == 0) {
                if (r->in_file)
                        return aj_error(reterr, EBADMSG, 0, 0, "record %" PRIu64 ": the end inside a file",
                                        r->n_records);
                r->ended = true;
                return cb->stream_end ? cb->stream_end(r->userdata) : 0;
        }
        return aj_error(reterr, EBADMSG, 0, 0, "record %" PRIu64 ": not a record", r->n_records);
}

static int reader_feed(ExportReader *r, const char *p, size_t size, AjError *reterr)
{
        while (size > 0) {
                const char *nl;
                size_t k;
                int q;

                if (r->ended)
                        return aj_error(reterr, EBADMSG, 0, 0, "bytes after the end record");
                if (r->chunk_left > 0) {
                        k = size < r->chunk_left ? size : r->chunk_left;
                        r->chunk_left -= k;
                        q = r->callbacks->data ? r->callbacks->data(p, k, r->userdata) : 0;
                        if (q < 0)
                                return q;
                        p += k;
                        size -= k;
                        continue;
                }
                nl = memchr(p, '\n', size);
                k = nl ? (size_t)(nl - p) : size;
                if (k > EXPORT_LINE_MAX - r->line_len)
                        return aj_error(reterr, EBADMSG, 0, 0, "record %" PRIu64 ": longer than %zu bytes",
                                        r->n_records + 1, EXPORT_LINE_MAX);
                memcpy(r->line + r->line_len, p, k);
                r->line_len += k;
                p += k;
                size -= k;
                if (!nl)
                        break;
                p++;
                size--;
                r->n_records++;
                q = reader_line(r, reterr);
                r->line_len = 0;
                if (q < 0)
                        return q;
        }
        return 0;
}

int export_reader_feed(ExportReader *r, const void *data, size_t size, AjError *reterr)
{
        int q;

        assert(r);
        assert(data || size == 0);

        if (r->broken)
                return aj_error(reterr, EBADMSG, 0, 0, "the stream was refused before");
        q = reader_feed(r, data, size, reterr);
        if (q < 0)
                r->broken = true;
        return q;
}

int export_reader_end(ExportReader *r, AjError *reterr)
{
        assert(r);

        if (r->broken)
                return aj_error(reterr, EBADMSG, 0, 0, "the stream was refused before");
        if (!r->ended) {
                r->broken = true;
                return aj_error(reterr, EBADMSG, 0, 0, "the stream ended without its end record");
        }
        return 0;
}
