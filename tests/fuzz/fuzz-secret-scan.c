/* SPDX-License-Identifier: MIT */
/* secret-scan on arbitrary bytes. The first two bytes choose where the stream is cut, the rest is the
 * text. A stream given in two pieces finds a secret exactly when the whole does; a redaction never
 * lengthens the text and leaves no secret in it; the lines' redaction never passes on more bytes than
 * it took. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "secret-scan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(x)                                                                                            \
        do {                                                                                                \
                if (!(x))                                                                                   \
                        __builtin_trap();                                                                   \
        } while (0)

static int count_bytes(const char *data, size_t n, void *userdata)
{
        (void)data;
        *(size_t *)userdata += n;
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static SecretSet set;
        static bool ready;
        SecretStream st;
        SecretLines *lines;
        const char *text = (const char *)data + 2;
        size_t n, cut, len, out = 0;
        char *copy;
        bool whole;

        if (!ready) {
                secret_set_init(&set);
                CHECK(secret_set_add(&set, "run-token-0123456789abcdef", 26, "the run token") == 0);
                CHECK(secret_set_add(&set, "xxxxxxxx", 8, "eight x") == 0);
                ready = true;
        }
        if (size < 2)
                return 0;
        n = size - 2;
        cut = ((size_t)data[0] << 8 | data[1]) % (n + 1);

        whole = secret_find(&set, text, n, NULL, NULL, NULL);
        CHECK(secret_stream_init(&st, &set) == 0);
        secret_stream_feed(&st, text, cut);
        secret_stream_feed(&st, text + cut, n - cut);
        CHECK((st.found != NULL) == whole);
        secret_stream_done(&st);

        copy = malloc(n + 1);
        CHECK(copy);
        memcpy(copy, text, n);
        len = n;
        CHECK((secret_redact(&set, copy, &len) > 0) == whole);
        CHECK(len <= n);
        CHECK(!secret_find(&set, copy, len, NULL, NULL, NULL));
        free(copy);

        lines = calloc(1, sizeof(*lines));
        CHECK(lines);
        lines->set = &set;
        CHECK(secret_lines_feed(lines, text, cut, count_bytes, &out) == 0);
        CHECK(secret_lines_feed(lines, text + cut, n - cut, count_bytes, &out) == 0);
        CHECK(secret_lines_flush(lines, count_bytes, &out) == 0);
        CHECK(out <= n);
        free(lines);
        return 0;
}
