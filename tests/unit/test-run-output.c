/* SPDX-License-Identifier: MIT */
/* The agent's output filter: workflow commands defused wherever the runner would take one, also when they
 * arrive byte by byte or are cut at the hold's bound; everything else passed through unchanged. */
#include <check.h>

#include "check-run.h"
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "run-output.h"

typedef struct Sink {
        char buf[3 * OUTPUT_HOLD + 64];
        size_t len;
} Sink;

static int sink_write(const char *data, size_t n, void *userdata)
{
        Sink *s = userdata;

        ck_assert_uint_le(s->len + n, sizeof(s->buf) - 1);
        memcpy(s->buf + s->len, data, n);
        s->len += n;
        s->buf[s->len] = '\0';
        return 0;
}

/* in, fed in pieces of step bytes (0: all at once), then flushed. */
static void filter(const char *in, size_t n, size_t step, Sink *out)
{
        OutputFilter f = {};

        *out = (Sink){};
        if (step == 0)
                step = n;
        for (size_t i = 0; i < n; i += step)
                ck_assert_int_eq(
                        output_filter_feed(&f, in + i, i + step > n ? n - i : step, sink_write, out), 0);
        ck_assert_int_eq(output_filter_flush(&f, sink_write, out), 0);
}

static const struct {
        const char *in, *out;
} cases[] = {
        { "plain\n", "plain\n" },
        { "::set-output name=x::y\n", ": :set-output name=x::y\n" },
        { "  \t::add-mask::s\n", "  \t: :add-mask::s\n" },
        { "a::b\n", "a::b\n" },
        { "std::vector\n::x\n", "std::vector\n: :x\n" },
        { "x ##[group]y\n", "x # #[group]y\n" },
        { "##[error]a ##[warning]b", "# #[error]a # #[warning]b" },
        { "###[", "## #[" },
        { ":\n:\n", ":\n:\n" },
        { "::", ": :" },
        { "", "" },
};

START_TEST(test_cases)
{
        size_t n = strlen(cases[_i].in);
        Sink out;

        for (size_t step = 0; step <= 3; step++) {
                filter(cases[_i].in, n, step, &out);
                ck_assert_str_eq(out.buf, cases[_i].out);
        }
}
END_TEST

/* A long line cut at the hold: a command across the cut is still seen, and a "::" after the cut is not a
 * line start. */
START_TEST(test_long_lines)
{
        _cleanup_free_ char *in = malloc(2 * OUTPUT_HOLD + 16);
        Sink out;
        size_t n;

        for (size_t cut = OUTPUT_HOLD - 3; cut <= OUTPUT_HOLD; cut++) {
                memset(in, 'a', 2 * OUTPUT_HOLD + 16);
                memcpy(in + cut, "##[", 3);
                n = cut + 3;
                filter(in, n, 0, &out);
                ck_assert_uint_eq(out.len, n + 1);
                ck_assert(memcmp(out.buf + cut, "# #[", 4) == 0);
        }
        memset(in, 'a', OUTPUT_HOLD + 8);
        memcpy(in + OUTPUT_HOLD + 2, "::", 2);
        filter(in, OUTPUT_HOLD + 8, 0, &out);
        ck_assert_uint_eq(out.len, OUTPUT_HOLD + 8);
        /* Blanks past the hold still lead to a line start. */
        memset(in, ' ', OUTPUT_HOLD + 8);
        memcpy(in + OUTPUT_HOLD + 2, "::", 2);
        for (size_t step = 0; step <= 1; step++) {
                filter(in, OUTPUT_HOLD + 8, step, &out);
                ck_assert_uint_eq(out.len, OUTPUT_HOLD + 9);
                ck_assert(memcmp(out.buf + OUTPUT_HOLD + 2, ": :", 3) == 0);
        }
}
END_TEST

static Suite *output_suite(void)
{
        Suite *s = suite_create("run-output");
        TCase *t = tcase_create("filter");

        tcase_add_loop_test(t, test_cases, 0, (int)ELEMENTSOF(cases));
        tcase_add_test(t, test_long_lines);
        suite_add_tcase(s, t);
        return s;
}

int main(void)
{
        return check_run(output_suite());
}
