/* SPDX-License-Identifier: MIT */
/* The amounts of [run] budget and [run.prices]: parsed exactly (no float, six places at most), the price
 * that applies to a model (exact name first, else the longest prefix), costs that saturate rather than
 * wrap, and the text a summary states, rounded up. */
#include <check.h>

#include "check-run.h"
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "macro.h"
#include "price.h"

START_TEST(test_amount_parse)
{
        static const struct {
                const char *text;
                uint64_t micro;
        } good[] = {
                { "0", 0 },
                { "12", 12000000 },
                { "0.5", 500000 },
                { "2.50", 2500000 },
                { "3.000001", 3000001 },
                { "10000", 10000000000ULL },
                { "0.000001", 1 },
                { "9999.999999", 9999999999ULL },
        };
        static const char *const bad[] = { "",   ".5", "5.",  "1.0000001", "-1",  "+1",    "1e3",
                                           " 1", "1 ", "007", "0x10",      "1,5", "1.2.3", "1.000000x" };
        uint64_t v;

        for (size_t i = 0; i < ELEMENTSOF(good); i++) {
                ck_assert_msg(amount_parse(good[i].text, PRICE_MAX_MICRO, &v) == 0, "%s refused",
                              good[i].text);
                ck_assert_msg(v == good[i].micro, "%s: %ju", good[i].text, (uintmax_t)v);
        }
        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                ck_assert_msg(amount_parse(bad[i], PRICE_MAX_MICRO, &v) == -EINVAL, "%s taken", bad[i]);
        ck_assert_int_eq(amount_parse("10000.000001", PRICE_MAX_MICRO, &v), -ERANGE);
        ck_assert_int_eq(amount_parse("10001", PRICE_MAX_MICRO, &v), -ERANGE);
        ck_assert_int_eq(amount_parse("99999999999999999999999", PRICE_MAX_MICRO, &v), -ERANGE);
        ck_assert_int_eq(amount_parse("1000000", BUDGET_MAX_MICRO, &v), 0);
        ck_assert_uint_eq(v, BUDGET_MAX_MICRO);
}
END_TEST

START_TEST(test_price_find)
{
        Price prices[] = {
                { (char *)"claude-sonnet-4-5", 3000000, 15000000 },
                { (char *)"claude-*", 1, 2 },
                { (char *)"claude-sonnet-*", 3, 4 },
                { (char *)"gpt-5.1", 5, 6 },
        };

        ck_assert_ptr_eq(price_find(prices, ELEMENTSOF(prices), "claude-sonnet-4-5"), &prices[0]);
        ck_assert_ptr_eq(price_find(prices, ELEMENTSOF(prices), "claude-sonnet-4-5-20250929"), &prices[2]);
        ck_assert_ptr_eq(price_find(prices, ELEMENTSOF(prices), "claude-opus-4"), &prices[1]);
        ck_assert_ptr_eq(price_find(prices, ELEMENTSOF(prices), "gpt-5.1"), &prices[3]);
        ck_assert_ptr_null(price_find(prices, ELEMENTSOF(prices), "gpt-5.1-mini"));
        ck_assert_ptr_null(price_find(prices, ELEMENTSOF(prices), "claude"));
        ck_assert_ptr_null(price_find(prices, ELEMENTSOF(prices), ""));
        ck_assert_ptr_null(price_find(prices, 0, "claude-sonnet-4-5"));
}
END_TEST

START_TEST(test_price_cost)
{
        /* 3 and 15 per million tokens: 1,000 in and 200 out cost 0.003 + 0.003 = 0.006. */
        Price p = { (char *)"m", 3000000, 15000000 };
        Price huge = { (char *)"m", PRICE_MAX_MICRO, PRICE_MAX_MICRO };
        char text[AMOUNT_TEXT_MAX];

        ck_assert_uint_eq(price_cost(&p, 1000, 200), 6000000000ULL);
        ck_assert_str_eq(amount_format(price_cost(&p, 1000, 200), text), "0.006000");
        ck_assert_uint_eq(price_cost(&p, 0, 0), 0);
        ck_assert_uint_eq(price_cost(&huge, UINT64_MAX / 2, 1), UINT64_MAX);
        ck_assert_uint_eq(price_cost(&huge, 1, UINT64_MAX), UINT64_MAX);
        ck_assert_uint_eq(amount_add(UINT64_MAX - 1, 2), UINT64_MAX);
        ck_assert_uint_eq(amount_add(1, 2), 3);
}
END_TEST

START_TEST(test_amount_format)
{
        char text[AMOUNT_TEXT_MAX];

        ck_assert_str_eq(amount_format(0, text), "0.000000");
        /* Rounded up: a part of a micro-dollar spent shows as one. */
        ck_assert_str_eq(amount_format(1, text), "0.000001");
        ck_assert_str_eq(amount_format(PRICE_PICO_PER_MICRO, text), "0.000001");
        ck_assert_str_eq(amount_format(PRICE_PICO_PER_MICRO + 1, text), "0.000002");
        ck_assert_str_eq(amount_format(2500000ULL * PRICE_PICO_PER_MICRO, text), "2.500000");
        ck_assert_str_eq(amount_format(UINT64_MAX, text), "18446744.073710");
}
END_TEST

int main(void)
{
        Suite *s = suite_create("price");
        TCase *t = tcase_create("price");

        tcase_add_test(t, test_amount_parse);
        tcase_add_test(t, test_price_find);
        tcase_add_test(t, test_price_cost);
        tcase_add_test(t, test_amount_format);
        suite_add_tcase(s, t);
        return check_run(s);
}
