/* SPDX-License-Identifier: MIT */
/* The agent's output filter, read the way the GitHub Actions runner reads a step's output
 * (actions/runner: ProcessInvoker reads each stream with StreamReader.ReadLine, which decodes UTF-8 with
 * U+FFFD for what is not UTF-8 and ends a line at "\r", "\n" or "\r\n"; OutputManager gives each line to
 * ActionCommandManager, where ActionCommand.TryParseV2 takes "::" at the start of the line after
 * String.TrimStart(), which trims every char.IsWhiteSpace, and ActionCommand.TryParse takes "##[" anywhere).
 * Over a corpus of attacks, fed whole, byte by byte, in every cut, across the hold's bound and through two
 * streams merged into one pipe, no line of what the filter writes is a command; and what is no command
 * passes unchanged. */
#include <check.h>

#include "check-run.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "run-output.h"

/* ---- the runner's reading ---- */

/* .NET's char.IsWhiteSpace: the categories Zs, Zl and Zp, U+0009-U+000D and U+0085. */
static bool dotnet_white_space(uint32_t c)
{
        return (c >= 0x09 && c <= 0x0d) || c == 0x20 || c == 0x85 || c == 0xa0 || c == 0x1680 ||
               (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 || c == 0x202f || c == 0x205f ||
               c == 0x3000;
}

/* One code point of UTF-8 at s[0..n), as .NET's decoder reads it: an ill-formed sequence's maximal
 * subpart (Unicode's "substitution of maximal subparts") becomes one U+FFFD. How many bytes it took. */
static size_t utf8_next(const unsigned char *s, size_t n, uint32_t *ret)
{
        unsigned char c = s[0];
        size_t need;
        uint32_t v, lo = 0x80, hi = 0xbf;

        if (c < 0x80) {
                *ret = c;
                return 1;
        }
        if (c >= 0xc2 && c <= 0xdf) {
                need = 1;
                v = c & 0x1f;
        } else if (c >= 0xe0 && c <= 0xef) {
                need = 2;
                v = c & 0x0f;
                lo = c == 0xe0 ? 0xa0 : 0x80;
                hi = c == 0xed ? 0x9f : 0xbf;
        } else if (c >= 0xf0 && c <= 0xf4) {
                need = 3;
                v = c & 0x07;
                lo = c == 0xf0 ? 0x90 : 0x80;
                hi = c == 0xf4 ? 0x8f : 0xbf;
        } else {
                *ret = 0xfffd;
                return 1;
        }
        for (size_t i = 1; i <= need; i++) {
                if (i >= n || s[i] < lo || s[i] > hi) {
                        *ret = 0xfffd;
                        return i;
                }
                v = v << 6 | (s[i] & 0x3f);
                lo = 0x80;
                hi = 0xbf;
        }
        *ret = v;
        return need + 1;
}

/* Whether one line (code points) is a workflow command to the runner. Its matching is culture-sensitive
 * (String.StartsWith and IndexOf with the job's culture, ICU), which also finds "::" or "##[" with
 * ignorable code points between or before them; but the command's name is then taken at a fixed offset
 * (2 past the start, 3 past "##["), and a registered name starts with a letter: only the literal markers
 * give a command. This reading is stricter than the runner's: "::" after the trim is a command whatever
 * follows it, "##[" anywhere is one. */
static bool line_is_command(const uint32_t *l, size_t n)
{
        size_t i = 0;

        while (i < n && dotnet_white_space(l[i]))
                i++;
        if (i + 1 < n && l[i] == ':' && l[i + 1] == ':')
                return true;
        for (i = 0; i + 2 < n; i++)
                if (l[i] == '#' && l[i + 1] == '#' && l[i + 2] == '[')
                        return true;
        return false;
}

/* The first line of out[0..n) that the runner takes for a command (its offset), or -1. */
static long runner_command(const char *out, size_t n)
{
        const unsigned char *s = (const unsigned char *)out;
        uint32_t *line = calloc(n + 1, sizeof(uint32_t));
        size_t k = 0, line_at = 0;
        long found = -1;

        ck_assert_ptr_nonnull(line);
        for (size_t i = 0; i <= n && found < 0;) {
                uint32_t c = 0;

                if (i < n)
                        i += utf8_next(s + i, n - i, &c);
                else
                        i++;
                if (i > n || c == '\r' || c == '\n') {
                        if (line_is_command(line, k))
                                found = (long)line_at;
                        k = 0;
                        if (c == '\r' && i < n && s[i] == '\n')
                                i++;
                        line_at = i;
                        continue;
                }
                line[k++] = c;
        }
        free(line);
        return found;
}

/* ---- feeding the filter ---- */

typedef struct Sink {
        char *buf;
        size_t len, size;
        size_t writes;
} Sink;

static int sink_write(const char *data, size_t n, void *userdata)
{
        Sink *s = userdata;

        if (n == 0)
                ck_abort_msg("an empty write");
        if (s->len + n + 1 > s->size) {
                s->size = (s->len + n + 1) * 2;
                s->buf = realloc(s->buf, s->size);
                ck_assert_ptr_nonnull(s->buf);
        }
        memcpy(s->buf + s->len, data, n);
        s->len += n;
        s->buf[s->len] = '\0';
        s->writes++;
        return 0;
}

static void sink_reset(Sink *s)
{
        free(s->buf);
        *s = (Sink){};
}

/* in[0..n), fed in pieces of step bytes (0: all at once), then flushed. */
static void filter(const char *in, size_t n, size_t step, Sink *out)
{
        OutputFilter f = {};

        sink_reset(out);
        if (step == 0)
                step = n ? n : 1;
        for (size_t i = 0; i < n; i += step)
                if (output_filter_feed(&f, in + i, i + step > n ? n - i : step, sink_write, out) != 0)
                        ck_abort_msg("output_filter_feed() failed");
        ck_assert_int_eq(output_filter_flush(&f, sink_write, out), 0);
}

/* ---- the attacks ---- */

/* A: a command to the runner as it stands; N: none (what is not UTF-8 is no white space to it), but
 * near enough to one that the filter must not make it one. */
#define A(s)                                                                                                \
        {                                                                                                   \
                s, sizeof(s) - 1, true                                                                      \
        }
#define N(s)                                                                                                \
        {                                                                                                   \
                s, sizeof(s) - 1, false                                                                     \
        }
static const struct {
        const char *in;
        size_t n;
        bool live;
} attacks[] = {
        A("::set-output name=verdict::approved\n"),
        A("progress\r::set-output name=verdict::approved\n"),
        A("progress\r\n::error::x\r\n"),
        A("a\r\r::error::x"),
        A("\t \t::add-mask::x\n"),
        A("\v::add-mask::x\n"),
        A("\f::add-mask::x\n"),
        A("\r::stop-commands::tok\n"),
        A("\xc2\x85::error::x\n"),     /* U+0085 */
        A("\xc2\xa0::error::x\n"),     /* U+00A0 */
        A("\xe1\x9a\x80::error::x\n"), /* U+1680 */
        A("\xe2\x80\x80::error::x\n"), /* U+2000 */
        A("\xe2\x80\x85::error::x\n"), /* U+2005 */
        A("\xe2\x80\x8a::error::x\n"), /* U+200A */
        A("\xe2\x80\xa8::error::x\n"), /* U+2028 */
        A("\xe2\x80\xa9::error::x\n"), /* U+2029 */
        A("\xe2\x80\xaf::error::x\n"), /* U+202F */
        A("\xe2\x81\x9f::error::x\n"), /* U+205F */
        A("\xe3\x80\x80::error::x\n"), /* U+3000 */
        A(" \xc2\xa0\v\xe3\x80\x80\t::warning::x"),
        A("x\n\xc2\xa0\r\xe2\x80\xa8 ::notice::x\n"),
        A("##[error]forged\n"),
        A("text ##[warning]forged\n"),
        A("###[group]x\n"),
        A("#\r##[endgroup]\n"),
        A("\xc2\xa0##[error]x"),
        /* Invalid UTF-8 around it: a lead byte without its tail, a tail without its lead, an overlong space,
         * a surrogate, a byte UTF-8 never has. */
        A("\xc2\n::error::x\n"),
        A("\xe2\x80\r::error::x\n"),
        N("\x80::error::x\n"),
        N("\xc0\xa0::error::x\n"),
        N("\xed\xa0\x80::error::x\n"),
        N("\xff\xc2\xa0::error::x\xc2\n"),
        N("\xe2\x80\xa8\xe2\x80::error::x\n"),
        A("\xc2\xa0\xc2##[error]x\xc2"),
        A("::"),
        A("\n::"),
        A("##["),
};
#undef A
#undef N

static void assert_no_command(const Sink *out, const char *what, size_t i, size_t step)
{
        long at = runner_command(out->buf ? out->buf : "", out->len);

        ck_assert_msg(at < 0, "attack %zu (%s, pieces of %zu): a command at byte %ld of \"%s\"", i, what,
                      step, at, out->buf + at);
}

START_TEST(test_attacks)
{
        Sink out = {};

        /* The attack is one, or is not, as said: the runner's reading here is the runner's. */
        ck_assert_msg((runner_command(attacks[_i].in, attacks[_i].n) >= 0) == attacks[_i].live,
                      "attack %d: the runner's reading says otherwise", _i);
        for (size_t step = 0; step <= 3; step++) {
                filter(attacks[_i].in, attacks[_i].n, step, &out);
                assert_no_command(&out, "alone", (size_t)_i, step);
        }
        sink_reset(&out);
}
END_TEST

/* Every attack cut in two at every byte and fed in those two reads. */
START_TEST(test_attacks_cut)
{
        const char *in = attacks[_i].in;
        size_t n = attacks[_i].n;
        Sink out = {};

        for (size_t cut = 0; cut <= n; cut++) {
                OutputFilter f = {};

                sink_reset(&out);
                ck_assert_int_eq(output_filter_feed(&f, in, cut, sink_write, &out), 0);
                ck_assert_int_eq(output_filter_feed(&f, in + cut, n - cut, sink_write, &out), 0);
                ck_assert_int_eq(output_filter_flush(&f, sink_write, &out), 0);
                assert_no_command(&out, "cut", (size_t)_i, cut);
        }
        sink_reset(&out);
}
END_TEST

/* Each attack after a long line without its end, so that it meets the hold's bound at every offset. */
START_TEST(test_attacks_at_the_hold)
{
        size_t n = attacks[_i].n;
        char *in = malloc(2 * OUTPUT_HOLD + n);
        Sink out = {};

        ck_assert_ptr_nonnull(in);
        for (size_t pad = OUTPUT_HOLD - n - 4; pad <= OUTPUT_HOLD + 4; pad++) {
                for (int fill = 0; fill < 2; fill++) {
                        memset(in, fill ? ' ' : 'a', pad);
                        memcpy(in + pad, attacks[_i].in, n);
                        filter(in, pad + n, 0, &out);
                        assert_no_command(&out, fill ? "after blanks" : "after a long line", (size_t)_i,
                                          pad);
                        filter(in, pad + n, 7, &out);
                        assert_no_command(&out, fill ? "after blanks" : "after a long line", (size_t)_i,
                                          pad);
                }
        }
        free(in);
        sink_reset(&out);
}
END_TEST

/* Standard output and error merged into one pipe (a step's "2>&1"): run writes each stream's filtered
 * output as it comes, so the pipe holds the two filters' writes interleaved. Whatever the interleaving, no
 * line is a command: no write ends in what the next write of the other stream could complete, and none
 * starts with what a line's start would make a command. */
typedef struct Merged {
        Sink *pipe;
} Merged;

static int merged_write(const char *data, size_t n, void *userdata)
{
        return sink_write(data, n, ((Merged *)userdata)->pipe);
}

START_TEST(test_attacks_merged)
{
        Sink pipe = {};
        Merged m = { &pipe };

        for (size_t a = (size_t)_i, b = 0; b < ELEMENTSOF(attacks); b++) {
                const char *x = attacks[a].in, *y = attacks[b].in;
                size_t nx = attacks[a].n, ny = attacks[b].n;

                /* Each cut at its start, in its middle and at its end. */
                for (size_t i = 0; i < 9; i++) {
                        size_t cuts_x[] = { 0, nx / 2, nx }, cuts_y[] = { 0, ny / 2, ny };
                        size_t cx = cuts_x[i / 3], cy = cuts_y[i % 3];
                        OutputFilter fo = {}, fe = {};

                        sink_reset(&pipe);
                        /* x's first part, y's first part, x's rest, y's rest, both ends. */
                        ck_assert_int_eq(output_filter_feed(&fo, x, cx, merged_write, &m), 0);
                        ck_assert_int_eq(output_filter_feed(&fe, y, cy, merged_write, &m), 0);
                        ck_assert_int_eq(output_filter_feed(&fo, x + cx, nx - cx, merged_write, &m), 0);
                        ck_assert_int_eq(output_filter_feed(&fe, y + cy, ny - cy, merged_write, &m), 0);
                        ck_assert_int_eq(output_filter_flush(&fo, merged_write, &m), 0);
                        ck_assert_int_eq(output_filter_flush(&fe, merged_write, &m), 0);
                        assert_no_command(&pipe, "merged", a * 1000 + b, cx * 1000 + cy);
                }
        }
        sink_reset(&pipe);
}
END_TEST

/* ---- what passes, and how the markers are defused ---- */

static const struct {
        const char *in, *out;
} cases[] = {
        { "plain\n", "plain\n" },
        { "::set-output name=x::y\n", ": :set-output name=x::y\n" },
        { "  \t::add-mask::s\n", "  \t: :add-mask::s\n" },
        { "a\r::b\r\n", "a\r: :b\r\n" },
        { "\xc2\xa0::e\n", "\xc2\xa0: :e\n" },
        { "a::b\n", "a::b\n" },
        { "std::vector\n::x\n", "std::vector\n: :x\n" },
        { "x ##[group]y\n", "x ## [group]y\n" },
        { "##[error]a ##[warning]b\n", "## [error]a ## [warning]b\n" },
        { "###[\n", "### [\n" },
        { "# #[ #[ [\n", "# #[ #[ [\n" },
        { ":\n:\n", ":\n:\n" },
        { "caf\xc3\xa9 na\xc3\xafve \xe2\x9c\x93\n", "caf\xc3\xa9 na\xc3\xafve \xe2\x9c\x93\n" },
        /* An unended last line is ended: what the other stream writes next starts a line of its own. */
        { "::", ": :\n" },
        { "end", "end\n" },
        { "", "" },
};

START_TEST(test_cases)
{
        size_t n = strlen(cases[_i].in);
        Sink out = {};

        for (size_t step = 0; step <= 3; step++) {
                filter(cases[_i].in, n, step, &out);
                ck_assert_str_eq(out.buf ? out.buf : "", cases[_i].out);
        }
        sink_reset(&out);
}
END_TEST

/* A line is written once it has ended, so that its start is decided before it goes out; a long one in
 * parts of at most OUTPUT_HOLD bytes. */
START_TEST(test_lines_held)
{
        OutputFilter f = {};
        Sink out = {};
        char *in = malloc(3 * OUTPUT_HOLD);

        ck_assert_int_eq(output_filter_feed(&f, "a line", 6, sink_write, &out), 0);
        ck_assert_uint_eq(out.len, 0);
        ck_assert_int_eq(output_filter_feed(&f, " ended\rnext", 11, sink_write, &out), 0);
        ck_assert_str_eq(out.buf, "a line ended\r");
        ck_assert_int_eq(output_filter_flush(&f, sink_write, &out), 0);
        ck_assert_str_eq(out.buf, "a line ended\rnext\n");
        sink_reset(&out);

        ck_assert_ptr_nonnull(in);
        memset(in, 'a', 3 * OUTPUT_HOLD);
        f = (OutputFilter){};
        ck_assert_int_eq(output_filter_feed(&f, in, 3 * OUTPUT_HOLD, sink_write, &out), 0);
        ck_assert_uint_ge(out.len, 2 * OUTPUT_HOLD);
        ck_assert_uint_le(out.len, 3 * OUTPUT_HOLD);
        ck_assert_uint_le(out.len / out.writes, OUTPUT_HOLD);
        ck_assert_int_eq(output_filter_flush(&f, sink_write, &out), 0);
        ck_assert_uint_eq(out.len, 3 * OUTPUT_HOLD + 1);
        free(in);
        sink_reset(&out);
}
END_TEST

static Suite *output_suite(void)
{
        Suite *s = suite_create("run-output");
        TCase *t = tcase_create("attacks");

        tcase_add_loop_test(t, test_attacks, 0, (int)ELEMENTSOF(attacks));
        tcase_add_loop_test(t, test_attacks_cut, 0, (int)ELEMENTSOF(attacks));
        tcase_add_loop_test(t, test_attacks_at_the_hold, 0, (int)ELEMENTSOF(attacks));
        tcase_add_loop_test(t, test_attacks_merged, 0, (int)ELEMENTSOF(attacks));
        tcase_set_timeout(t, 60);
        suite_add_tcase(s, t);
        t = tcase_create("filter");
        tcase_add_loop_test(t, test_cases, 0, (int)ELEMENTSOF(cases));
        tcase_add_test(t, test_lines_held);
        suite_add_tcase(s, t);
        return s;
}

int main(void)
{
        return check_run(output_suite());
}
