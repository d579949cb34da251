/* SPDX-License-Identifier: MIT */
/* toml_parse() on arbitrary bytes. On success the whole tree is walked through the accessors and its
 * invariants checked (keys unique and found by lookup, arrays of one type, nesting bounded, places
 * set); on failure the error is checked (one line, a place when it is about the input). */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "toml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(x)                                                                                            \
        do {                                                                                                \
                if (!(x))                                                                                   \
                        __builtin_trap();                                                                   \
        } while (0)

static void walk(const TomlValue *v, unsigned depth)
{
        char buf[64];

        /* Header-made tables nest one level per name part, arrays of tables two; values add their own. */
        CHECK(depth <= 3 * TOML_MAX_DEPTH + 2);
        CHECK(toml_line(v) >= 1 && toml_column(v) >= 1);
        CHECK(toml_type_name(toml_type(v)) != NULL);
        CHECK(toml_type_description(toml_type(v)) != NULL);

        switch (toml_type(v)) {
        case TOML_STRING:
                CHECK(strlen(toml_escape(toml_string(v), buf, sizeof(buf))) < sizeof(buf));
                break;
        case TOML_INTEGER:
                (void)toml_integer(v);
                break;
        case TOML_BOOLEAN:
                (void)toml_boolean(v);
                break;
        case TOML_ARRAY:
                for (size_t i = 0; i < toml_array_length(v); i++) {
                        const TomlValue *item = toml_array_get(v, i);
                        CHECK(toml_type(item) == toml_type(toml_array_get(v, 0)));
                        walk(item, depth + 1);
                }
                break;
        case TOML_TABLE:
                for (size_t i = 0; i < toml_table_length(v); i++) {
                        const char *key = toml_table_key(v, i);
                        CHECK(toml_table_get(v, key) == toml_table_value(v, i));
                        CHECK(toml_table_key_line(v, i) >= 1 && toml_table_key_column(v, i) >= 1);
                        (void)toml_escape(key, buf, sizeof(buf));
                        walk(toml_table_value(v, i), depth + 1);
                }
                break;
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        TomlValue *root = NULL;
        AjError e = {};
        int r;

        r = toml_parse((const char *)data, size, &root, &e);
        if (r < 0) {
                CHECK(r == -EINVAL || r == -ENOMEM || r == -EFBIG);
                CHECK(root == NULL);
                CHECK(e.message[0] != '\0' && !strchr(e.message, '\n'));
                CHECK(r != -EINVAL || (e.line >= 1 && e.column >= 1));
                return 0;
        }
        CHECK(toml_type(root) == TOML_TABLE);
        walk(root, 0);
        toml_free(root);
        return 0;
}
