/* SPDX-License-Identifier: MIT */
/* The export stream's reader on arbitrary bytes: once whole, once in pieces whose sizes the input's first
 * byte chooses. What it reports must obey the format (the checks below repeat its rules, so a record that
 * slipped past the reader is a crash) and must not depend on how the input was split. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "export-frame.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(x)                                                                                            \
        do {                                                                                                \
                if (!(x))                                                                                   \
                        __builtin_trap();                                                                   \
        } while (0)

typedef struct Seen {
        uint64_t hash; /* FNV-1a of every event and byte, in order */
        bool in_file, ended;
} Seen;

static void mix(Seen *s, const void *p, size_t n)
{
        const unsigned char *c = p;

        for (size_t i = 0; i < n; i++)
                s->hash = (s->hash ^ c[i]) * 1099511628211ULL;
}

static int on_begin(const char *name, void *userdata)
{
        Seen *s = userdata;

        CHECK(!s->in_file && !s->ended);
        CHECK(export_name_valid(name, strlen(name)));
        s->in_file = true;
        mix(s, "B", 1);
        mix(s, name, strlen(name) + 1);
        return 0;
}

static int on_data(const void *data, size_t size, void *userdata)
{
        Seen *s = userdata;

        CHECK(s->in_file && !s->ended);
        CHECK(size > 0 && size <= EXPORT_CHUNK_MAX);
        mix(s, data, size);
        return 0;
}

static int on_end(void *userdata)
{
        Seen *s = userdata;

        CHECK(s->in_file && !s->ended);
        s->in_file = false;
        mix(s, "E", 1);
        return 0;
}

static int on_refusal(const char *name, const char *reason, bool limit, void *userdata)
{
        Seen *s = userdata;
        size_t n = strlen(reason);

        CHECK(!s->in_file && !s->ended);
        CHECK(export_name_valid(name, strlen(name)));
        CHECK(n > 0 && n <= EXPORT_REASON_MAX);
        for (size_t i = 0; i < n; i++)
                CHECK((unsigned char)reason[i] >= 0x20 && reason[i] != 0x7f);
        mix(s, limit ? "L" : "R", 1);
        mix(s, name, strlen(name) + 1);
        mix(s, reason, n + 1);
        return 0;
}

static int on_stream_end(void *userdata)
{
        Seen *s = userdata;

        CHECK(!s->in_file && !s->ended);
        s->ended = true;
        mix(s, "Z", 1);
        return 0;
}

static const ExportReaderCallbacks callbacks = {
        .file_begin = on_begin,
        .data = on_data,
        .file_end = on_end,
        .refusal = on_refusal,
        .stream_end = on_stream_end,
};

/* 0 if the whole stream was accepted, else the first error; the events until then in *seen. */
static int run(const char *p, size_t size, unsigned split, Seen *seen)
{
        uint32_t state = split * 2654435761U + 1;
        ExportReader r;
        AjError e = {};
        int q = 0;

        *seen = (Seen){ .hash = 14695981039346656037ULL };
        export_reader_init(&r, &callbacks, seen);
        for (size_t i = 0; i < size && q == 0;) {
                size_t k = size - i;

                if (split > 0) {
                        state = state * 1103515245U + 12345U;
                        k = 1 + (state >> 16) % (split < 128 ? split : 70000);
                        if (k > size - i)
                                k = size - i;
                }
                q = export_reader_feed(&r, p + i, k, &e);
                i += k;
        }
        if (q == 0)
                q = export_reader_end(&r, &e);
        if (q < 0) {
                CHECK(e.message[0] != '\0');
                CHECK(export_reader_feed(&r, "END\n", 4, &e) < 0);
                CHECK(export_reader_end(&r, &e) < 0);
        } else
                CHECK(seen->ended && !seen->in_file);
        return q;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        Seen whole, pieces;
        int a, b;

        if (size == 0)
                return 0;
        a = run((const char *)data + 1, size - 1, 0, &whole);
        b = run((const char *)data + 1, size - 1, data[0] + 1U, &pieces);
        CHECK(a == b);
        /* Accepted both ways: the same events. A refused stream stops wherever the refusal is found. */
        if (a == 0)
                CHECK(whole.hash == pieces.hash);
        return 0;
}
