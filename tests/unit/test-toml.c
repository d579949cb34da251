/* SPDX-License-Identifier: MIT */
/* The TOML subset: every accepted construct, read back through the accessors, and a table of refusals,
 * each with its exact line, column and message. */
#include <check.h>

#include "check-run.h"
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "toml.h"

/* Parses s, which must succeed. */
static TomlValue *parse_ok_sized(const char *s, size_t size)
{
        TomlValue *root = NULL;
        AjError e = {};
        int r = toml_parse(s, size, &root, &e);

        ck_assert_msg(r == 0, "unexpected refusal at %u:%u: %s", e.line, e.column, e.message);
        ck_assert_ptr_nonnull(root);
        ck_assert_int_eq(toml_type(root), TOML_TABLE);
        return root;
}

static TomlValue *parse_ok(const char *s)
{
        return parse_ok_sized(s, strlen(s));
}

static const TomlValue *get(const TomlValue *t, const char *key)
{
        const TomlValue *v = toml_table_get(t, key);

        ck_assert_msg(v != NULL, "key \"%s\" missing", key);
        return v;
}

static const char *get_string(const TomlValue *t, const char *key)
{
        const TomlValue *v = get(t, key);

        ck_assert_int_eq(toml_type(v), TOML_STRING);
        return toml_string(v);
}

static int64_t get_integer(const TomlValue *t, const char *key)
{
        const TomlValue *v = get(t, key);

        ck_assert_int_eq(toml_type(v), TOML_INTEGER);
        return toml_integer(v);
}

static void assert_at(const TomlValue *v, unsigned line, unsigned column)
{
        ck_assert_uint_eq(toml_line(v), line);
        ck_assert_uint_eq(toml_column(v), column);
}

/* ---- Accepted ---- */

START_TEST(test_empty)
{
        static const char *const inputs[] = {
                "", "\n", "\r\n", "   \t  \n\n", "# only a comment", "# one\n\n  # two\r\n\t# three\n",
        };

        for (size_t i = 0; i < ELEMENTSOF(inputs); i++) {
                _cleanup_(toml_freep) TomlValue *root = parse_ok(inputs[i]);
                ck_assert_uint_eq(toml_table_length(root), 0);
        }

        /* NULL with size 0 is an empty document. */
        _cleanup_(toml_freep) TomlValue *root = parse_ok_sized(NULL, 0);
        ck_assert_uint_eq(toml_table_length(root), 0);
}
END_TEST

START_TEST(test_basic_strings)
{
        _cleanup_(toml_freep) TomlValue *root =
                parse_ok("plain = \"hello world\"\n"
                         "empty = \"\"\n"
                         "escapes = \"b\\bt\\tn\\nf\\fr\\rq\\\"s\\\\\"\n"
                         "u4 = \"\\u00e9\\u20AC\"\n"
                         "u8 = \"\\U0001F600\\U0000004a\"\n"
                         "max = \"\\U0010FFFF\"\n"
                         "raw = \"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"\n"
                         "edges = '\xe0\xa0\x80 \xed\x9f\xbf \xf0\x90\x80\x80 \xf4\x8f\xbf\xbf'\n"
                         "tab = \"a\tb\"\n"
                         "hash = \"# not a comment\"\n"
                         "quote = \"it's\"\n");

        ck_assert_str_eq(get_string(root, "plain"), "hello world");
        ck_assert_str_eq(get_string(root, "empty"), "");
        ck_assert_str_eq(get_string(root, "escapes"), "b\bt\tn\nf\fr\rq\"s\\");
        ck_assert_str_eq(get_string(root, "u4"), "\xc3\xa9\xe2\x82\xac");
        ck_assert_str_eq(get_string(root, "u8"), "\xf0\x9f\x98\x80J");
        ck_assert_str_eq(get_string(root, "max"), "\xf4\x8f\xbf\xbf");
        ck_assert_str_eq(get_string(root, "raw"), "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
        ck_assert_str_eq(get_string(root, "edges"),
                         "\xe0\xa0\x80 \xed\x9f\xbf \xf0\x90\x80\x80 \xf4\x8f\xbf\xbf");
        ck_assert_str_eq(get_string(root, "tab"), "a\tb");
        ck_assert_str_eq(get_string(root, "hash"), "# not a comment");
        ck_assert_str_eq(get_string(root, "quote"), "it's");
        ck_assert_uint_eq(toml_table_length(root), 11);
}
END_TEST

START_TEST(test_literal_strings)
{
        _cleanup_(toml_freep) TomlValue *root = parse_ok("path = 'C:\\Users\\nobody'\n"
                                                         "empty = ''\n"
                                                         "quoted = 'say \"hi\"'\n"
                                                         "tab = 'a\tb'\n"
                                                         "escape = '\\u0000 stays'\n");

        ck_assert_str_eq(get_string(root, "path"), "C:\\Users\\nobody");
        ck_assert_str_eq(get_string(root, "empty"), "");
        ck_assert_str_eq(get_string(root, "quoted"), "say \"hi\"");
        ck_assert_str_eq(get_string(root, "tab"), "a\tb");
        ck_assert_str_eq(get_string(root, "escape"), "\\u0000 stays");
}
END_TEST

START_TEST(test_integers)
{
        _cleanup_(toml_freep) TomlValue *root = parse_ok("zero = 0\n"
                                                         "plus_zero = +0\n"
                                                         "minus_zero = -0\n"
                                                         "answer = 42\n"
                                                         "negative = -17\n"
                                                         "positive = +99\n"
                                                         "max = 9223372036854775807\n"
                                                         "min = -9223372036854775808\n"
                                                         "tight=7#comment\n");

        ck_assert_int_eq(get_integer(root, "zero"), 0);
        ck_assert_int_eq(get_integer(root, "plus_zero"), 0);
        ck_assert_int_eq(get_integer(root, "minus_zero"), 0);
        ck_assert_int_eq(get_integer(root, "answer"), 42);
        ck_assert_int_eq(get_integer(root, "negative"), -17);
        ck_assert_int_eq(get_integer(root, "positive"), 99);
        ck_assert(get_integer(root, "max") == INT64_MAX);
        ck_assert(get_integer(root, "min") == INT64_MIN);
        ck_assert_int_eq(get_integer(root, "tight"), 7);
}
END_TEST

START_TEST(test_booleans)
{
        _cleanup_(toml_freep) TomlValue *root = parse_ok("yes = true\nno = false # comment\n");

        ck_assert_int_eq(toml_type(get(root, "yes")), TOML_BOOLEAN);
        ck_assert(toml_boolean(get(root, "yes")));
        ck_assert(!toml_boolean(get(root, "no")));
}
END_TEST

START_TEST(test_keys)
{
        _cleanup_(toml_freep) TomlValue *root = parse_ok("bare_key-1 = 1\n"
                                                         "1234 = 2\n"
                                                         "\"quoted key\" = 3\n"
                                                         "'literal \"key\"' = 4\n"
                                                         "\"\" = 5\n"
                                                         "\"\\u00e9t\\u00e9\" = 6\n"
                                                         "  indented\t=\t7  \n"
                                                         "\"a.b\" = 8\n");

        ck_assert_uint_eq(toml_table_length(root), 8);
        ck_assert_str_eq(toml_table_key(root, 0), "bare_key-1");
        ck_assert_str_eq(toml_table_key(root, 1), "1234");
        ck_assert_str_eq(toml_table_key(root, 2), "quoted key");
        ck_assert_str_eq(toml_table_key(root, 3), "literal \"key\"");
        ck_assert_str_eq(toml_table_key(root, 4), "");
        ck_assert_str_eq(toml_table_key(root, 5), "\xc3\xa9t\xc3\xa9");
        ck_assert_str_eq(toml_table_key(root, 6), "indented");
        ck_assert_str_eq(toml_table_key(root, 7), "a.b");
        for (size_t i = 0; i < 8; i++)
                ck_assert_int_eq(toml_integer(toml_table_value(root, i)), (int64_t)i + 1);
        ck_assert_ptr_null(toml_table_get(root, "a"));
        ck_assert_ptr_null(toml_table_get(root, "missing"));

        /* Keys and values know where they were written. */
        ck_assert_uint_eq(toml_table_key_line(root, 6), 7);
        ck_assert_uint_eq(toml_table_key_column(root, 6), 3);
        assert_at(toml_table_value(root, 6), 7, 14);
}
END_TEST

START_TEST(test_arrays)
{
        _cleanup_(toml_freep) TomlValue *root = parse_ok("empty = []\n"
                                                         "spaced = [ ]\n"
                                                         "ints = [1, 2, 3]\n"
                                                         "strings = ['a', \"b\"]\n"
                                                         "trailing = [true, false,]\n"
                                                         "nested = [[1, 2], [\"x\"], []]\n"
                                                         "multi = [ # comment\n"
                                                         "  1,\r\n"
                                                         "\n"
                                                         "  # another\n"
                                                         "  2 ,\n"
                                                         "]\n"
                                                         "tables = [{a = 1}, {}, {b = 'x'}]\n");
        const TomlValue *v;

        v = get(root, "empty");
        ck_assert_int_eq(toml_type(v), TOML_ARRAY);
        ck_assert_uint_eq(toml_array_length(v), 0);
        ck_assert_uint_eq(toml_array_length(get(root, "spaced")), 0);

        v = get(root, "ints");
        ck_assert_uint_eq(toml_array_length(v), 3);
        for (size_t i = 0; i < 3; i++)
                ck_assert_int_eq(toml_integer(toml_array_get(v, i)), (int64_t)i + 1);
        assert_at(toml_array_get(v, 2), 3, 15);

        v = get(root, "strings");
        ck_assert_str_eq(toml_string(toml_array_get(v, 0)), "a");
        ck_assert_str_eq(toml_string(toml_array_get(v, 1)), "b");

        v = get(root, "trailing");
        ck_assert_uint_eq(toml_array_length(v), 2);
        ck_assert(toml_boolean(toml_array_get(v, 0)));

        v = get(root, "nested");
        ck_assert_uint_eq(toml_array_length(v), 3);
        ck_assert_int_eq(toml_integer(toml_array_get(toml_array_get(v, 0), 1)), 2);
        ck_assert_str_eq(toml_string(toml_array_get(toml_array_get(v, 1), 0)), "x");
        ck_assert_uint_eq(toml_array_length(toml_array_get(v, 2)), 0);

        v = get(root, "multi");
        ck_assert_uint_eq(toml_array_length(v), 2);
        assert_at(v, 7, 9);
        assert_at(toml_array_get(v, 1), 11, 3);

        v = get(root, "tables");
        ck_assert_uint_eq(toml_array_length(v), 3);
        ck_assert_int_eq(get_integer(toml_array_get(v, 0), "a"), 1);
        ck_assert_uint_eq(toml_table_length(toml_array_get(v, 1)), 0);
        ck_assert_str_eq(get_string(toml_array_get(v, 2), "b"), "x");

        /* The line after a multi-line array is counted right. */
        assert_at(get(root, "tables"), 13, 10);
}
END_TEST

START_TEST(test_inline_tables)
{
        _cleanup_(toml_freep) TomlValue *root =
                parse_ok("empty = {}\n"
                         "point = { x = 1, y = -2 }\n"
                         "nested = {inner = {deep = {s = 'v'}}, list = [1, 2]}\n"
                         "quoted = { \"a b\" = true, 'c' = \"d\" }\n"
                         "spans = { list = [\n  1,\n  2,\n] }\n");
        const TomlValue *v;

        ck_assert_uint_eq(toml_table_length(get(root, "empty")), 0);

        v = get(root, "point");
        ck_assert_int_eq(toml_type(v), TOML_TABLE);
        ck_assert_uint_eq(toml_table_length(v), 2);
        ck_assert_str_eq(toml_table_key(v, 0), "x");
        ck_assert_str_eq(toml_table_key(v, 1), "y");
        ck_assert_int_eq(get_integer(v, "y"), -2);
        assert_at(v, 2, 9);
        assert_at(get(v, "y"), 2, 22);

        v = get(root, "nested");
        ck_assert_str_eq(get_string(get(get(v, "inner"), "deep"), "s"), "v");
        ck_assert_uint_eq(toml_array_length(get(v, "list")), 2);

        v = get(root, "quoted");
        ck_assert(toml_boolean(get(v, "a b")));
        ck_assert_str_eq(get_string(v, "c"), "d");

        /* An array inside an inline table may span lines, as in TOML 1.0. */
        ck_assert_uint_eq(toml_array_length(get(get(root, "spans"), "list")), 2);
}
END_TEST

START_TEST(test_tables)
{
        _cleanup_(toml_freep) TomlValue *root = parse_ok("top = 1\n"
                                                         "[server]\n"
                                                         "host = \"example.org\"\n"
                                                         "\n"
                                                         "[ client . \"with space\" ]\n"
                                                         "k = 'v'\n"
                                                         "[x.y.z]\n"
                                                         "deep = true\n"
                                                         "[x]\n"
                                                         "shallow = 2\n"
                                                         "[x.y]\n"
                                                         "middle = 3\n"
                                                         "['lit'.\"\"] # comment\n"
                                                         "e = 4\n");
        const TomlValue *v;

        ck_assert_uint_eq(toml_table_length(root), 5);
        ck_assert_str_eq(toml_table_key(root, 0), "top");
        ck_assert_str_eq(toml_table_key(root, 1), "server");
        ck_assert_str_eq(toml_table_key(root, 2), "client");
        ck_assert_str_eq(toml_table_key(root, 3), "x");
        ck_assert_str_eq(toml_table_key(root, 4), "lit");

        v = get(root, "server");
        ck_assert_str_eq(get_string(v, "host"), "example.org");
        assert_at(v, 2, 1);
        ck_assert_uint_eq(toml_table_key_line(root, 1), 2);
        ck_assert_uint_eq(toml_table_key_column(root, 1), 2);

        v = get(get(root, "client"), "with space");
        ck_assert_str_eq(get_string(v, "k"), "v");
        assert_at(v, 5, 1);

        v = get(root, "x");
        ck_assert_int_eq(get_integer(v, "shallow"), 2);
        assert_at(v, 9, 1); /* made implicitly on line 7, defined on line 9 */
        ck_assert_uint_eq(toml_table_length(v), 2);
        ck_assert_str_eq(toml_table_key(v, 0), "y");
        ck_assert_str_eq(toml_table_key(v, 1), "shallow");
        ck_assert_int_eq(get_integer(get(v, "y"), "middle"), 3);
        ck_assert(toml_boolean(get(get(get(v, "y"), "z"), "deep")));

        ck_assert_int_eq(get_integer(get(get(root, "lit"), ""), "e"), 4);
}
END_TEST

START_TEST(test_arrays_of_tables)
{
        _cleanup_(toml_freep) TomlValue *root = parse_ok("[[fruit]]\n"
                                                         "name = \"apple\"\n"
                                                         "[fruit.physical]\n"
                                                         "color = \"red\"\n"
                                                         "[[fruit.variety]]\n"
                                                         "name = \"red delicious\"\n"
                                                         "[[fruit.variety]]\n"
                                                         "name = \"granny smith\"\n"
                                                         "\n"
                                                         "[[fruit]]\n"
                                                         "name = \"banana\"\n"
                                                         "[[fruit.variety]]\n"
                                                         "name = \"plantain\"\n"
                                                         "[[ empty ]]\n"
                                                         "[[empty]]\n"
                                                         "[[a.b]]\n"
                                                         "n = 1\n");
        const TomlValue *fruit, *apple, *banana;

        fruit = get(root, "fruit");
        ck_assert_int_eq(toml_type(fruit), TOML_ARRAY);
        ck_assert_uint_eq(toml_array_length(fruit), 2);
        assert_at(fruit, 1, 1);

        apple = toml_array_get(fruit, 0);
        ck_assert_str_eq(get_string(apple, "name"), "apple");
        ck_assert_str_eq(get_string(get(apple, "physical"), "color"), "red");
        ck_assert_uint_eq(toml_array_length(get(apple, "variety")), 2);
        ck_assert_str_eq(get_string(toml_array_get(get(apple, "variety"), 1), "name"), "granny smith");

        banana = toml_array_get(fruit, 1);
        assert_at(banana, 10, 1);
        ck_assert_str_eq(get_string(banana, "name"), "banana");
        ck_assert_ptr_null(toml_table_get(banana, "physical"));
        ck_assert_uint_eq(toml_array_length(get(banana, "variety")), 1);

        ck_assert_uint_eq(toml_array_length(get(root, "empty")), 2);
        ck_assert_uint_eq(toml_table_length(toml_array_get(get(root, "empty"), 0)), 0);

        ck_assert_int_eq(get_integer(toml_array_get(get(get(root, "a"), "b"), 0), "n"), 1);
}
END_TEST

START_TEST(test_line_endings)
{
        _cleanup_(toml_freep) TomlValue *root =
                parse_ok("a = 1\r\n[t]\r\nb = 'x' # c\r\nc = [\r\n 1,\r\n]\r\nd = 4");

        ck_assert_int_eq(get_integer(root, "a"), 1);
        ck_assert_str_eq(get_string(get(root, "t"), "b"), "x");
        ck_assert_uint_eq(toml_array_length(get(get(root, "t"), "c")), 1);
        assert_at(get(get(root, "t"), "d"), 7, 5);
}
END_TEST

START_TEST(test_not_nul_terminated)
{
        /* Only size bytes are read: what follows is not part of the input. */
        static const char buf[] = "a = 12345";
        _cleanup_(toml_freep) TomlValue *root = parse_ok_sized(buf, 7);

        ck_assert_int_eq(get_integer(root, "a"), 123);
}
END_TEST

/* "a = " followed by n nested arrays. */
static char *nested_arrays(unsigned n)
{
        size_t size = 4 + 2 * (size_t)n + 2;
        char *s = malloc(size);

        ck_assert_ptr_nonnull(s);
        memcpy(s, "a = ", 4);
        memset(s + 4, '[', n);
        memset(s + 4 + n, ']', n);
        s[4 + 2 * n] = '\n';
        s[4 + 2 * n + 1] = '\0';
        return s;
}

START_TEST(test_depth_limits)
{
        _cleanup_free_ char *arrays = nested_arrays(TOML_MAX_DEPTH);
        _cleanup_(toml_freep) TomlValue *root = parse_ok(arrays);
        const TomlValue *v = get(root, "a");

        for (unsigned i = 1; i < TOML_MAX_DEPTH; i++) {
                ck_assert_uint_eq(toml_array_length(v), 1);
                v = toml_array_get(v, 0);
        }
        ck_assert_uint_eq(toml_array_length(v), 0);

        /* A table name of TOML_MAX_DEPTH parts. */
        char header[4 * TOML_MAX_DEPTH + 8] = "[";
        for (unsigned i = 0; i < TOML_MAX_DEPTH; i++)
                strcat(header, i == 0 ? "p" : ".p");
        strcat(header, "]\nk = 1\n");
        _cleanup_(toml_freep) TomlValue *root2 = parse_ok(header);
        v = root2;
        for (unsigned i = 0; i < TOML_MAX_DEPTH; i++)
                v = get(v, "p");
        ck_assert_int_eq(get_integer(v, "k"), 1);
}
END_TEST

START_TEST(test_many_keys)
{
        enum { N = 20000 };
        size_t size = (size_t)N * 24 + 64;
        _cleanup_free_ char *s = malloc(size);
        size_t n = 0;
        TomlValue *root = NULL;
        AjError e = {};

        ck_assert_ptr_nonnull(s);
        for (unsigned i = 0; i < N; i++)
                n += (size_t)snprintf(s + n, size - n, "key%u = %u\n", i, i);
        {
                _cleanup_(toml_freep) TomlValue *ok = parse_ok_sized(s, n);
                ck_assert_uint_eq(toml_table_length(ok), N);
                for (unsigned i = 0; i < N; i += 997) {
                        char key[32];
                        (void)snprintf(key, sizeof(key), "key%u", i);
                        ck_assert_int_eq(get_integer(ok, key), i);
                        ck_assert_str_eq(toml_table_key(ok, i), key);
                }
                ck_assert_ptr_null(toml_table_get(ok, "key20000"));
        }

        /* A duplicate found through the hash index, on the last line. */
        n += (size_t)snprintf(s + n, size - n, "key12345 = 0\n");
        ck_assert_int_eq(toml_parse(s, n, &root, &e), -EINVAL);
        ck_assert_ptr_null(root);
        ck_assert_uint_eq(e.line, N + 1);
        ck_assert_uint_eq(e.column, 1);
        ck_assert_str_eq(e.message, "duplicate key \"key12345\"");
}
END_TEST

START_TEST(test_many_tables)
{
        enum { N = 5000 };
        size_t size = (size_t)N * 32 + 64;
        _cleanup_free_ char *s = malloc(size);
        size_t n = 0;

        ck_assert_ptr_nonnull(s);
        for (unsigned i = 0; i < N; i++)
                n += (size_t)snprintf(s + n, size - n, "[t.s%u]\n[[arr]]\nv = %u\n", i, i);
        _cleanup_(toml_freep) TomlValue *root = parse_ok_sized(s, n);
        ck_assert_uint_eq(toml_table_length(get(root, "t")), N);
        ck_assert_uint_eq(toml_array_length(get(root, "arr")), N);
        ck_assert_int_eq(get_integer(toml_array_get(get(root, "arr"), N - 1), "v"), N - 1);
}
END_TEST

START_TEST(test_size_limit)
{
        size_t size = TOML_MAX_INPUT + 1;
        _cleanup_free_ char *s = malloc(size);
        TomlValue *root = NULL;
        AjError e = {};

        ck_assert_ptr_nonnull(s);
        memset(s, '\n', size);
        s[0] = '#';
        ck_assert_int_eq(toml_parse(s, size, &root, &e), -EFBIG);
        ck_assert_ptr_null(root);
        ck_assert_ptr_nonnull(strstr(e.message, "larger than"));

        /* Exactly the limit is fine. */
        ck_assert_int_eq(toml_parse(s, size - 1, &root, &e), 0);
        toml_free(root);
}
END_TEST

START_TEST(test_type_names)
{
        ck_assert_str_eq(toml_type_name(TOML_STRING), "string");
        ck_assert_str_eq(toml_type_name(TOML_INTEGER), "integer");
        ck_assert_str_eq(toml_type_name(TOML_BOOLEAN), "boolean");
        ck_assert_str_eq(toml_type_name(TOML_ARRAY), "array");
        ck_assert_str_eq(toml_type_name(TOML_TABLE), "table");
        ck_assert_str_eq(toml_type_description(TOML_STRING), "a string");
        ck_assert_str_eq(toml_type_description(TOML_INTEGER), "an integer");
        ck_assert_str_eq(toml_type_description(TOML_BOOLEAN), "a boolean");
        ck_assert_str_eq(toml_type_description(TOML_ARRAY), "an array");
        ck_assert_str_eq(toml_type_description(TOML_TABLE), "a table");
}
END_TEST

START_TEST(test_escape)
{
        char buf[16];

        ck_assert_str_eq(toml_escape("plain", buf, sizeof(buf)), "plain");
        ck_assert_str_eq(toml_escape("a\"b\\c", buf, sizeof(buf)), "a\\\"b\\\\c");
        ck_assert_str_eq(toml_escape("\t\n\r\x01\x7f", buf, sizeof(buf)), "\\t\\n\\r\\u0001...");
        ck_assert_str_eq(toml_escape("\x01\x7f", buf, sizeof(buf)), "\\u0001\\u007F");
        ck_assert_str_eq(toml_escape("0123456789abcdef", buf, sizeof(buf)), "0123456789ab...");
        ck_assert_str_eq(toml_escape("0123456789abcde", buf, sizeof(buf)), "0123456789abcde");
        /* A UTF-8 sequence is never cut. */
        ck_assert_str_eq(toml_escape("0123456789\xf0\x9f\x98\x80xyz", buf, sizeof(buf)), "0123456789...");
        ck_assert_str_eq(toml_escape("\xc3\xa9", buf, sizeof(buf)), "\xc3\xa9");
        ck_assert_str_eq(toml_escape("", buf, sizeof(buf)), "");
}
END_TEST

START_TEST(test_error_may_be_null)
{
        TomlValue *root = NULL;

        ck_assert_int_eq(toml_parse("a = ", 4, &root, NULL), -EINVAL);
        ck_assert_ptr_null(root);
}
END_TEST

/* ---- Refused ---- */

typedef struct Refusal {
        const char *input;
        size_t size; /* 0: strlen(input) */
        unsigned line, column;
        const char *message; /* a substring of the message */
} Refusal;

#define SIZED(s) s, sizeof(s) - 1

static const Refusal refusals[] = {
        /* Keys */
        { "a = 1\na = 2\n", 0, 2, 1, "duplicate key \"a\"" },
        { " a = 1\n  \"a\" = 2\n", 0, 2, 3, "duplicate key \"a\"" },
        { "a.b = 1\n", 0, 1, 2, "dotted keys are not supported" },
        { "a . b = 1\n", 0, 1, 3, "dotted keys are not supported" },
        { "a 1\n", 0, 1, 3, "expected '=' after key" },
        { "a\n", 0, 1, 2, "expected '=' after key" },
        { "= 1\n", 0, 1, 1, "expected a key" },
        { "\xef\xbb\xbf"
          "a = 1\n",
          0, 1, 1, "expected a key" },
        { "\"\\u0000\" = 1\n", 0, 1, 2, "cannot hold NUL" },
        { "\"a\\nb\" = 1\n\"a\\nb\" = 2\n", 0, 2, 1, "duplicate key \"a\\nb\"" },
        /* Strings */
        { "a = \"abc\n", 0, 1, 5, "unterminated string" },
        { "a = 'abc\n", 0, 1, 5, "unterminated string" },
        { "a = \"abc", 0, 1, 5, "unterminated string" },
        { "a = \"abc\\\"\n", 0, 1, 5, "unterminated string" },
        { "a = \"\\\n\"\n", 0, 1, 5, "unterminated string" },
        { "a = \"\"\"x\"\"\"\n", 0, 1, 5, "multi-line strings are not supported" },
        { "a = '''x'''\n", 0, 1, 5, "multi-line strings are not supported" },
        { "a = \"\\x\"\n", 0, 1, 6, "invalid escape sequence \\x" },
        { "a = \"ok\\ \"\n", 0, 1, 8, "invalid escape sequence" },
        { "a = \"\\u12\"\n", 0, 1, 6, "\\u needs 4 hexadecimal digits" },
        { "a = \"\\U0001F60\"\n", 0, 1, 6, "\\U needs 8 hexadecimal digits" },
        { "a = \"\\uD800\"\n", 0, 1, 6, "\\uD800 is not a unicode scalar value" },
        { "a = \"x\\uDFFF\"\n", 0, 1, 7, "not a unicode scalar value" },
        { "a = \"\\U00110000\"\n", 0, 1, 6, "\\U00110000 is not a unicode scalar value" },
        { "a = \"\\U80000000\"\n", 0, 1, 6, "not a unicode scalar value" },
        { "a = \"\\u0000\"\n", 0, 1, 6, "\\u0000 is not allowed: strings cannot hold NUL" },
        { "a = \"\\U00000000\"\n", 0, 1, 6, "strings cannot hold NUL" },
        { "a = \"x\x01y\"\n", 0, 1, 7, "control character in string" },
        { "a = \"x\x1b\"\n", 0, 1, 7, "control character in string" },
        { "a = 'x\x7fy'\n", 0, 1, 7, "control character in string" },
        { "a = 'x\x08'\n", 0, 1, 7, "control character in string" },
        /* Numbers and other values */
        { "a = 3.14\n", 0, 1, 5, "floats are not supported" },
        { "a = -0.5\n", 0, 1, 5, "floats are not supported" },
        { "a = 1e5\n", 0, 1, 5, "floats are not supported" },
        { "a = 6E-3\n", 0, 1, 5, "floats are not supported" },
        { "a = inf\n", 0, 1, 5, "floats are not supported" },
        { "a = -nan\n", 0, 1, 5, "floats are not supported" },
        { "a = +inf\n", 0, 1, 5, "floats are not supported" },
        { "a = 1979-05-27\n", 0, 1, 5, "dates are not supported" },
        { "a = 1979-05-27T07:32:00Z\n", 0, 1, 5, "dates are not supported" },
        { "a = 1979-05-27 07:32:00\n", 0, 1, 5, "dates are not supported" },
        { "a = 07:32:00\n", 0, 1, 5, "dates are not supported" },
        { "a = 0x1F\n", 0, 1, 5, "hexadecimal, octal and binary integers are not supported" },
        { "a = 0o17\n", 0, 1, 5, "hexadecimal, octal and binary integers are not supported" },
        { "a = 0b101\n", 0, 1, 5, "hexadecimal, octal and binary integers are not supported" },
        { "a = 1_000\n", 0, 1, 5, "underscores in integers are not supported" },
        { "a = 012\n", 0, 1, 5, "leading zeros are not allowed" },
        { "a = -01\n", 0, 1, 5, "leading zeros are not allowed" },
        { "a = 9223372036854775808\n", 0, 1, 5, "integer out of range" },
        { "a = -9223372036854775809\n", 0, 1, 5, "integer out of range" },
        { "a = 99999999999999999999999\n", 0, 1, 5, "integer out of range" },
        { "a = +\n", 0, 1, 5, "invalid integer" },
        { "a = 1-2\n", 0, 1, 5, "invalid integer" },
        { "a = 12abc\n", 0, 1, 5, "invalid integer" },
        { "a = hello\n", 0, 1, 5, "strings must be quoted" },
        { "a = True\n", 0, 1, 5, "strings must be quoted" },
        { "a = truex\n", 0, 1, 5, "strings must be quoted" },
        { "a =\n", 0, 1, 4, "expected a value" },
        { "a = ", 0, 1, 5, "expected a value" },
        { "a = # comment\n", 0, 1, 5, "expected a value" },
        { "a = @\n", 0, 1, 5, "expected a value" },
        { "\ta = @\n", 0, 1, 6, "expected a value" },
        { "a = 1 b = 2\n", 0, 1, 7, "unexpected text after value" },
        { "a = \"\xc3\xa9\" x\n", 0, 1, 10, "unexpected text after value" },
        { "a = true false\n", 0, 1, 10, "unexpected text after value" },
        /* Arrays */
        { "a = [1, \"x\"]\n", 0, 1, 9, "mixed types in array: expected an integer, found a string" },
        { "a = [[1], 2]\n", 0, 1, 11, "mixed types in array: expected an array, found an integer" },
        { "a = [{}, []]\n", 0, 1, 10, "mixed types in array: expected a table, found an array" },
        { "a = [\n  true,\n  'x',\n]\n", 0, 3, 3, "mixed types in array" },
        { "a = [1 2]\n", 0, 1, 8, "expected ',' or ']' in array" },
        { "a = [1,\n2\n", 0, 1, 5, "unterminated array" },
        { "a = [", 0, 1, 5, "unterminated array" },
        { "a = [,]\n", 0, 1, 6, "expected a value" },
        { "a = [1,,2]\n", 0, 1, 8, "expected a value" },
        { "a = [1,]]\n", 0, 1, 9, "unexpected text after value" },
        { "a = [ # x\x02\n]\n", 0, 1, 10, "control character in comment" },
        { "a = [1 # x\x02\n]\n", 0, 1, 11, "control character in comment" },
        /* Inline tables */
        { "a = {b = 1,}\n", 0, 1, 12, "trailing comma in inline table" },
        { "a = {b = 1\n}\n", 0, 1, 11, "inline tables must be on one line" },
        { "a = {\nb = 1}\n", 0, 1, 6, "inline tables must be on one line" },
        { "a = { # c\n}\n", 0, 1, 7, "inline tables must be on one line" },
        { "a = {b = 1, # c\n}\n", 0, 1, 13, "inline tables must be on one line" },
        { "a = {", 0, 1, 6, "inline tables must be on one line" },
        { "a = {b = 1, b = 2}\n", 0, 1, 13, "duplicate key \"b\"" },
        { "a = {b.c = 1}\n", 0, 1, 7, "dotted keys are not supported" },
        { "a = {b = 1 c = 2}\n", 0, 1, 12, "expected ',' or '}' in inline table" },
        { "a = {b}\n", 0, 1, 7, "expected '=' after key" },
        { "a = {,}\n", 0, 1, 6, "expected a key" },
        /* Tables */
        { "[a]\n[a]\n", 0, 2, 1, "table [a] is defined twice" },
        { "[a.b]\n[a]\n[a]\n", 0, 3, 1, "table [a] is defined twice" },
        { "[a]\n[b]\n[ a ]\n", 0, 3, 1, "table [a] is defined twice" },
        { "[a.b.c]\n[a.b.c]\n", 0, 2, 1, "table [a.b.c] is defined twice" },
        { "[\"x y\".z]\n['x y'.z]\n", 0, 2, 1, "table [\"x y\".z] is defined twice" },
        { "[[a]]\n[a]\n", 0, 2, 1, "table [a] is already an array of tables" },
        { "[a]\n[[a]]\n", 0, 2, 1, "array of tables [[a]] conflicts with table [a]" },
        { "[a.b]\n[[a]]\n", 0, 2, 1, "array of tables [[a]] conflicts with table [a]" },
        { "x = []\n[[x]]\n", 0, 2, 3, "cannot append to static array x" },
        { "x = 1\n[[x]]\n", 0, 2, 3, "x is already defined as an integer" },
        { "a = {b = 1}\n[a]\n", 0, 2, 2, "cannot extend inline table a" },
        { "a = {b = 1}\n[a.c]\n", 0, 2, 2, "cannot extend inline table a" },
        { "[t]\na = {}\n[t.a.b]\n", 0, 3, 4, "cannot extend inline table t.a" },
        { "a = 1\n[a.b]\n", 0, 2, 2, "a is already defined as an integer" },
        { "[t]\ns = 'x'\n[t.s]\n", 0, 3, 4, "t.s is already defined as a string" },
        { "a = [1]\n[a.b]\n", 0, 2, 2, "a is already defined as an array" },
        { "[a.b]\n[a]\nb = 1\n", 0, 3, 1, "duplicate key \"b\"" },
        { "[[a]]\nb = 1\n[a.b]\n", 0, 3, 4, "a.b is already defined as an integer" },
        { "[a\n", 0, 1, 3, "expected ']' after table name" },
        { "[a b]\n", 0, 1, 4, "expected ']' after table name" },
        { "[[a]\n", 0, 1, 4, "expected ']]' after table name" },
        { "[[a] ]\n", 0, 1, 4, "expected ']]' after table name" },
        { "[ [a] ]\n", 0, 1, 3, "expected a key" },
        { "[]\n", 0, 1, 2, "expected a key" },
        { "[a.]\n", 0, 1, 4, "expected a key" },
        { "[\"a\n\"]\n", 0, 1, 2, "unterminated string" },
        { "[a] b = 1\n", 0, 1, 5, "unexpected text after table header" },
        { "[a]]\n", 0, 1, 4, "unexpected text after table header" },
        /* Comments, bytes, line endings */
        { "a = 1 # ok\x01\n", 0, 1, 11, "control character in comment" },
        { "# \x7f\n", 0, 1, 3, "control character in comment" },
        { SIZED("a = 1\0\n"), 1, 6, "NUL byte" },
        { SIZED("\n\n\0"), 3, 1, "NUL byte" },
        { "a = \"\xff\"\n", 0, 1, 6, "invalid UTF-8" },
        { "a = 1\n# \xc0\xaf\n", 0, 2, 3, "invalid UTF-8" },
        { "# \xed\xa0\x80\n", 0, 1, 3, "invalid UTF-8" },
        { "# \xf4\x90\x80\x80\n", 0, 1, 3, "invalid UTF-8" },
        { "# \xe2\x82\n", 0, 1, 3, "invalid UTF-8" },
        { "# \xe0\x80\x80\n", 0, 1, 3, "invalid UTF-8" },
        { "# \xf0\x80\x80\x80\n", 0, 1, 3, "invalid UTF-8" },
        { "# \xf5\x80\x80\x80\n", 0, 1, 3, "invalid UTF-8" },
        { "# \xc3\xa9\xc3\n", 0, 1, 5, "invalid UTF-8" },
        { "# \xe2\x82", 0, 1, 3, "invalid UTF-8" },
        { "# \x80\n", 0, 1, 3, "invalid UTF-8" },
        { "a = 1\rb = 2\n", 0, 1, 6, "carriage return not followed by a newline" },
        { "a = 1\r", 0, 1, 6, "carriage return not followed by a newline" },
        { "a = 1\r\nb = 2\r\nc = x\r\n", 0, 3, 5, "strings must be quoted" },
        /* Nesting */
        { "a = [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]\n", 0, 1, 37,
          "arrays and inline tables nest deeper than 32" },
        { "a = "
          "{b={b={b={b={b={b={b={b={b={b={b={b={b={b={b={b={b={b={b={b={b={b={b={b={b={b={b={b={b={b={b={b={"
          "}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}\n",
          0, 1, 101, "arrays and inline tables nest deeper than 32" },
        { "[p.p.p.p.p.p.p.p.p.p.p.p.p.p.p.p.p.p.p.p.p.p.p.p.p.p.p.p.p.p.p.p.p]\n", 0, 1, 66,
          "table name has more than 32 parts" },
};

START_TEST(test_refusals)
{
        const Refusal *t = &refusals[_i];
        size_t size = t->size > 0 ? t->size : strlen(t->input);
        TomlValue *root = NULL;
        AjError e = {};
        int r;

        r = toml_parse(t->input, size, &root, &e);
        ck_assert_msg(r == -EINVAL, "case %d: accepted or wrong error %d", _i, r);
        ck_assert_ptr_null(root);
        ck_assert_msg(strstr(e.message, t->message), "case %d: message \"%s\" lacks \"%s\"", _i, e.message,
                      t->message);
        ck_assert_msg(e.line == t->line && e.column == t->column, "case %d (%s): at %u:%u, expected %u:%u",
                      _i, e.message, e.line, e.column, t->line, t->column);
        /* One line, lowercase start, no trailing period. */
        ck_assert_msg(!strchr(e.message, '\n'), "case %d: message spans lines", _i);
        ck_assert_msg(e.message[0] < 'A' || e.message[0] > 'Z', "case %d: message starts uppercase", _i);
        ck_assert_msg(e.message[strlen(e.message) - 1] != '.', "case %d: message ends with a period", _i);
}
END_TEST

static Suite *toml_suite(void)
{
        Suite *s = suite_create("toml");
        TCase *accepted = tcase_create("accepted");
        TCase *refused = tcase_create("refused");

        tcase_add_test(accepted, test_empty);
        tcase_add_test(accepted, test_basic_strings);
        tcase_add_test(accepted, test_literal_strings);
        tcase_add_test(accepted, test_integers);
        tcase_add_test(accepted, test_booleans);
        tcase_add_test(accepted, test_keys);
        tcase_add_test(accepted, test_arrays);
        tcase_add_test(accepted, test_inline_tables);
        tcase_add_test(accepted, test_tables);
        tcase_add_test(accepted, test_arrays_of_tables);
        tcase_add_test(accepted, test_line_endings);
        tcase_add_test(accepted, test_not_nul_terminated);
        tcase_add_test(accepted, test_depth_limits);
        tcase_add_test(accepted, test_many_keys);
        tcase_add_test(accepted, test_many_tables);
        tcase_add_test(accepted, test_size_limit);
        tcase_add_test(accepted, test_type_names);
        tcase_add_test(accepted, test_escape);
        tcase_add_test(accepted, test_error_may_be_null);
        tcase_set_timeout(accepted, 60);
        suite_add_tcase(s, accepted);

        tcase_add_loop_test(refused, test_refusals, 0, (int)ELEMENTSOF(refusals));
        suite_add_tcase(s, refused);
        return s;
}

int main(void)
{
        return check_run(toml_suite());
}
