/* SPDX-License-Identifier: MIT */
/* The sandbox side's result stream on arbitrary bytes, fed in two pieces at a point the input chooses. A
 * line it accepts must obey every rule: the checks below repeat them, so a line that slipped past the
 * reader is a crash. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "check-line.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(x)                                                                                            \
        do {                                                                                                \
                if (!(x))                                                                                   \
                        __builtin_trap();                                                                   \
        } while (0)

static char *const expected[] = { (char *)"sudo", (char *)"groups", (char *)"private-dir:/home/runner",
                                  NULL };

static void on_line(const CheckLine *l, void *userdata)
{
        unsigned *n = userdata;
        bool known = false;

        for (size_t i = 0; expected[i]; i++)
                known = known || strcmp(expected[i], l->name) == 0;
        CHECK(known);
        CHECK(l->status == CHECK_OK || l->status == CHECK_FAIL || l->status == CHECK_NOTE);
        CHECK(strlen(l->detail) <= CHECK_DETAIL_MAX);
        CHECK(l->ms <= 10000000);
        (*n)++;
        CHECK(*n <= 3); /* never more results than names */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        bool seen[3] = {};
        CheckStream s;
        AjError e = {};
        unsigned n = 0;
        size_t cut;

        if (size == 0)
                return 0;
        cut = data[0] % size;
        check_stream_init(&s, expected, seen);
        if (check_stream_feed(&s, (const char *)data + 1, cut, on_line, &n, &e) == 0 &&
            check_stream_feed(&s, (const char *)data + 1 + cut, size - 1 - cut, on_line, &n, &e) == 0)
                (void)check_stream_end(&s, &e);
        return 0;
}
