/* SPDX-License-Identifier: MIT */
#include "run-output.h"

#include <string.h>

static int write_space(OutputWriteFn fn, void *userdata)
{
        return fn(" ", 1, userdata);
}

/* Writes buf[0..n) with "##[" and, at a line's start, "::" defused, looking at buf[0..visible) (visible >=
 * n) so that a command cut across two parts is still seen. Sets *blank when what was written is blanks
 * only (the line's start then carries over to the next part). */
static int write_defused(const char *buf, size_t n, size_t visible, bool line_start, bool *blank,
                         OutputWriteFn fn, void *userdata)
{
        size_t i = 0, from = 0;
        int r;

        if (line_start) {
                while (i < n && (buf[i] == ' ' || buf[i] == '\t'))
                        i++;
                *blank = i == n;
                if (i < n && i + 1 < visible && buf[i] == ':' && buf[i + 1] == ':') {
                        r = fn(buf, i + 1, userdata);
                        if (r < 0 || (r = write_space(fn, userdata)) < 0)
                                return r;
                        from = i + 1;
                }
        } else
                *blank = false;
        for (i = from; i < n && i + 2 < visible; i++)
                if (buf[i] == '#' && buf[i + 1] == '#' && buf[i + 2] == '[') {
                        r = fn(buf + from, i + 1 - from, userdata);
                        if (r < 0 || (r = write_space(fn, userdata)) < 0)
                                return r;
                        from = i + 1;
                }
        return n > from ? fn(buf + from, n - from, userdata) : 0;
}

int output_filter_feed(OutputFilter *f, const char *data, size_t n, OutputWriteFn fn, void *userdata)
{
        for (size_t i = 0; i < n; i++) {
                bool blank;
                int r;

                f->buf[f->len++] = data[i];
                if (data[i] == '\n') {
                        r = write_defused(f->buf, f->len, f->len, !f->mid_line, &blank, fn, userdata);
                        f->len = 0;
                        f->mid_line = false;
                } else if (f->len == OUTPUT_HOLD) {
                        /* A long line goes out in parts; the last two bytes wait for the next. */
                        size_t keep = 2;
                        r = write_defused(f->buf, f->len - keep, f->len, !f->mid_line, &blank, fn, userdata);
                        memmove(f->buf, f->buf + f->len - keep, keep);
                        f->len = keep;
                        f->mid_line = f->mid_line || !blank;
                } else
                        continue;
                if (r < 0)
                        return r;
        }
        return 0;
}

int output_filter_flush(OutputFilter *f, OutputWriteFn fn, void *userdata)
{
        bool blank;
        int r = f->len ? write_defused(f->buf, f->len, f->len, !f->mid_line, &blank, fn, userdata) : 0;

        f->len = 0;
        f->mid_line = false;
        return r;
}
