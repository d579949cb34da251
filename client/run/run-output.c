/* SPDX-License-Identifier: MIT */
#include "run-output.h"

#include <string.h>

static bool line_end(unsigned char c)
{
        return c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* What the runner may trim from a line's start, and more: every byte that is not printable ASCII. */
static bool trimmable(unsigned char c)
{
        return c <= ' ' || c >= 0x7f;
}

/* Writes buf[0..n) and keeps the rest. */
static int write_out(OutputFilter *f, size_t n, OutputWriteFn fn, void *userdata)
{
        int r;

        if (n == 0)
                return 0;
        r = fn(f->buf, n, userdata);
        if (r < 0)
                return r;
        memmove(f->buf, f->buf + n, f->len - n);
        f->len -= n;
        return 0;
}

int output_filter_feed(OutputFilter *f, const char *data, size_t n, OutputWriteFn fn, void *userdata)
{
        size_t ended = 0; /* buf[0..ended) is whole lines */
        int r;

        for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char)data[i];

                if (f->len + 2 > OUTPUT_HOLD) {
                        /* Whole lines out; a line longer than the hold goes out in parts, but for a '#' or
                         * ':' that may begin a command, and its rest is taken as a line's start (a reader
                         * of the merged streams may see another write before it). */
                        if (ended == 0) {
                                size_t keep = f->colon ? 1 : f->hashes;
                                ended = f->len - keep;
                                f->mid_line = false;
                        }
                        r = write_out(f, ended, fn, userdata);
                        if (r < 0)
                                return r;
                        ended = 0;
                }
                if ((f->colon && c == ':') || (f->hashes >= 2 && c == '['))
                        f->buf[f->len++] = ' ';
                f->buf[f->len++] = (char)c;
                f->colon = !f->mid_line && c == ':';
                f->hashes = c == '#' ? (f->hashes < 2 ? f->hashes + 1 : 2) : 0;
                f->mid_line = !line_end(c) && (f->mid_line || !trimmable(c));
                if (c == '\n' || c == '\r')
                        ended = f->len;
        }
        return write_out(f, ended, fn, userdata);
}

int output_filter_flush(OutputFilter *f, OutputWriteFn fn, void *userdata)
{
        int r;

        if (f->len > 0 && f->buf[f->len - 1] != '\n' && f->buf[f->len - 1] != '\r')
                f->buf[f->len++] = '\n';
        r = write_out(f, f->len, fn, userdata);
        f->len = 0;
        f->mid_line = f->colon = false;
        f->hashes = 0;
        return r;
}
