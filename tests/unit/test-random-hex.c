/* SPDX-License-Identifier: MIT */
/* random_hex(): exactly 2 * n lower-case hexadecimal digits and a NUL, different each call; too many
 * bytes refused, with nothing written past the buffer. */
#include <check.h>

#include "check-run.h"
#include <errno.h>
#include <string.h>

#include "random-hex.h"

START_TEST(test_random_hex)
{
        char a[2 * RANDOM_HEX_MAX + 2], b[2 * RANDOM_HEX_MAX + 2];

        memset(a, 'Z', sizeof(a));
        ck_assert_int_eq(random_hex(a, 24), 0);
        ck_assert_uint_eq(strlen(a), 48);
        ck_assert_uint_eq(strspn(a, "0123456789abcdef"), 48);
        ck_assert_int_eq(a[49], 'Z');
        ck_assert_int_eq(random_hex(b, 24), 0);
        ck_assert_str_ne(a, b);
        ck_assert_int_eq(random_hex(a, 0), 0);
        ck_assert_str_eq(a, "");
        ck_assert_int_eq(random_hex(a, RANDOM_HEX_MAX), 0);
        ck_assert_uint_eq(strlen(a), 2 * RANDOM_HEX_MAX);
        memset(b, 'Z', sizeof(b));
        ck_assert_int_eq(random_hex(b, RANDOM_HEX_MAX + 1), -EIO);
        ck_assert_int_eq(b[0], 'Z');
}
END_TEST

int main(void)
{
        Suite *s = suite_create("random-hex");
        TCase *t = tcase_create("random-hex");

        tcase_add_test(t, test_random_hex);
        suite_add_tcase(s, t);
        return check_run(s);
}
