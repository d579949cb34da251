/* SPDX-License-Identifier: MIT */
/* A key's print: made, written and read back strictly; found by it at every offset of a buffer (its ends
 * included) and nowhere else, a key one byte different or one byte short not found; a window whose
 * rolling hash is the key's but whose digest is not (a collision made on purpose) not taken. */
#include <check.h>

#include "check-run.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "key-print.h"
#include "macro.h"

#define KEY "sk-ant-api03-0123456789abcdefghijklmnopqrstuvwxyz-ABCDEFGH"

START_TEST(test_make_format_parse)
{
        KeyPrint p, q;
        char text[KEY_PRINT_TEXT_MAX], again[KEY_PRINT_TEXT_MAX];

        ck_assert_int_eq(key_print_make(KEY, strlen(KEY), &p), 0);
        ck_assert_uint_eq(p.size, strlen(KEY));
        ck_assert_int_eq(key_print_format(&p, text, sizeof(text)), 0);
        ck_assert_msg(!strstr(text, "sk-ant"), "%s", text);
        ck_assert_int_eq(key_print_parse(text, &q), 0);
        ck_assert_int_eq(key_print_format(&q, again, sizeof(again)), 0);
        ck_assert_str_eq(text, again);
        ck_assert_int_eq(memcmp(&p, &q, sizeof(p)), 0);
        ck_assert_int_eq(key_print_format(&p, text, 40), -ENOMEM);
        ck_assert_int_eq(key_print_make(KEY, 0, &p), -EINVAL);
        ck_assert_int_eq(key_print_make_with_base(KEY, strlen(KEY), 1, &p), -EINVAL);
        ck_assert_int_eq(key_print_make_with_base(KEY, strlen(KEY), 2147483646, &p), -EINVAL);
}
END_TEST

/* The rolling hash is the polynomial of the key's bytes modulo 2^31 - 1, computed here with '%' (the code
 * reduces without dividing), for bases small and large. */
START_TEST(test_roll_is_the_polynomial)
{
        static const uint32_t bases[] = { 2, 256, 65537, 2147483645 };

        for (size_t b = 0; b < ELEMENTSOF(bases); b++) {
                uint64_t want = 0;
                KeyPrint p;

                for (const char *c = KEY; *c; c++)
                        want = (want * bases[b] + (unsigned char)*c) % 2147483647u;
                ck_assert_int_eq(key_print_make_with_base(KEY, strlen(KEY), bases[b], &p), 0);
                ck_assert_uint_eq(p.roll, want);
        }
}
END_TEST

START_TEST(test_parse_refusals)
{
        static const char *const bad[] = {
                "",
                "10:2:3",
                "0:2:3:"
                "0000000000000000000000000000000000000000000000000000000000000000",
                "4097:2:3:"
                "0000000000000000000000000000000000000000000000000000000000000000",
                "10:1:3:"
                "0000000000000000000000000000000000000000000000000000000000000000",
                "10:2147483646:3:"
                "0000000000000000000000000000000000000000000000000000000000000000",
                "10:2:2147483647:"
                "0000000000000000000000000000000000000000000000000000000000000000",
                "10:2:3:"
                "000000000000000000000000000000000000000000000000000000000000000",
                "10:2:3:"
                "00000000000000000000000000000000000000000000000000000000000000000",
                "10:2:3:"
                "000000000000000000000000000000000000000000000000000000000000000A",
                "10:2:3:"
                "000000000000000000000000000000000000000000000000000000000000000g",
                "010:2:3:"
                "0000000000000000000000000000000000000000000000000000000000000000",
                "+10:2:3:"
                "0000000000000000000000000000000000000000000000000000000000000000",
                "10:2:3:0000000000000000000000000000000000000000000000000000000000000000\n",
        };
        KeyPrint p;

        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                ck_assert_msg(key_print_parse(bad[i], &p) == -EINVAL, "case %zu taken", i);
        ck_assert_int_eq(
                key_print_parse("10:2:3:0000000000000000000000000000000000000000000000000000000000000000",
                                &p),
                0);
}
END_TEST

START_TEST(test_find_every_offset)
{
        size_t n = strlen(KEY), size = 3 * n + 7;
        char *buf = malloc(size);
        KeyPrint p;

        ck_assert_ptr_nonnull(buf);
        ck_assert_int_eq(key_print_make(KEY, n, &p), 0);
        for (size_t at = 0; at + n <= size; at++) {
                memset(buf, 'x', size);
                memcpy(buf + at, KEY, n);
                ck_assert_msg(key_print_find(&p, buf, size), "at %zu", at);
                /* One byte different, anywhere in it: not the key. */
                buf[at + (at % n)] ^= 1;
                ck_assert_msg(!key_print_find(&p, buf, size), "changed, at %zu", at);
        }
        memcpy(buf, KEY, n);
        ck_assert(key_print_find(&p, buf, n));
        ck_assert(!key_print_find(&p, buf, n - 1));
        ck_assert(!key_print_find(&p, buf + 1, n - 1));
        ck_assert(!key_print_find(&p, buf, 0));
        free(buf);
}
END_TEST

/* A print with one key's digest and another's rolling hash (forged, as a collision would be): the window
 * whose hash matches has the wrong digest, the one with the right digest never gets past the hash. */
START_TEST(test_roll_alone_is_not_a_find)
{
        KeyPrint p, other;

        ck_assert_int_eq(key_print_make_with_base("AAAAAAAAAAAAAAAA", 16, 256, &p), 0);
        ck_assert_int_eq(key_print_make_with_base("BBBBBBBBBBBBBBBB", 16, 256, &other), 0);
        ck_assert(key_print_find(&p, "xxAAAAAAAAAAAAAAAAxx", 20));
        p.roll = other.roll;
        ck_assert(!key_print_find(&p, "xxBBBBBBBBBBBBBBBBxx", 20));
        ck_assert(!key_print_find(&p, "xxAAAAAAAAAAAAAAAAxx", 20));
}
END_TEST

int main(void)
{
        Suite *s = suite_create("key-print");
        TCase *t = tcase_create("key-print");

        tcase_add_test(t, test_make_format_parse);
        tcase_add_test(t, test_roll_is_the_polynomial);
        tcase_add_test(t, test_parse_refusals);
        tcase_add_test(t, test_find_every_offset);
        tcase_add_test(t, test_roll_alone_is_not_a_find);
        suite_add_tcase(s, t);
        return check_run(s);
}
