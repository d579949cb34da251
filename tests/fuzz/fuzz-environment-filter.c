/* SPDX-License-Identifier: MIT */
/* environment_filter() on arbitrary bytes. What it keeps must be the input's own lines, in order and
 * unchanged; filtering its output again must remove nothing (so no kept line sets a removed name); every
 * name it reports must be one it removes. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "environment-filter.h"
#include "macro.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(x)                                                                                            \
        do {                                                                                                \
                if (!(x))                                                                                   \
                        __builtin_trap();                                                                   \
        } while (0)

/* Whether out is made of whole lines of in, in order (each line with its '\n', the last maybe without). */
static bool lines_of(const char *in, size_t in_size, const char *out, size_t out_size)
{
        size_t i = 0, o = 0;

        while (o < out_size) {
                const char *nl;
                size_t n;

                if (i >= in_size)
                        return false;
                nl = memchr(in + i, '\n', in_size - i);
                n = nl ? (size_t)(nl - (in + i)) + 1 : in_size - i;
                if (n <= out_size - o && memcmp(in + i, out + o, n) == 0)
                        o += n;
                i += n;
        }
        return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char *text = NULL, *again = NULL, **removed = NULL, **removed_again = NULL;
        size_t text_size = 0, again_size = 0;
        int r;

        r = environment_filter((const char *)data, size, &text, &text_size, &removed);
        if (r < 0) {
                CHECK(r == -ENOMEM);
                return 0;
        }
        CHECK(text && removed);
        CHECK(text_size <= size && text[text_size] == '\0');
        CHECK(lines_of((const char *)data, size, text, text_size));
        CHECK((strv_length(removed) == 0) == (text_size == size));
        for (char **n = removed; *n; n++)
                CHECK(environment_name_removed(*n, strlen(*n)));

        r = environment_filter(text, text_size, &again, &again_size, &removed_again);
        if (r == 0) {
                CHECK(strv_length(removed_again) == 0);
                CHECK(again_size == text_size && memcmp(again, text, text_size) == 0);
                free(again);
                strv_free(removed_again);
        }
        free(text);
        strv_free(removed);
        return 0;
}
