/* SPDX-License-Identifier: MIT */
#include "price.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "parse.h"

int amount_parse(const char *s, uint64_t max_micro, uint64_t *ret_micro)
{
        size_t whole = strspn(s, "0123456789");
        uint64_t units, part = 0;
        int r;

        if (whole == 0)
                return -EINVAL;
        if (s[whole] == '.') {
                size_t frac = strspn(s + whole + 1, "0123456789");

                if (frac == 0 || frac > 6 || s[whole + 1 + frac] != '\0')
                        return -EINVAL;
                for (size_t i = 0; i < 6; i++)
                        part = part * 10 + (i < frac ? (uint64_t)(s[whole + 1 + i] - '0') : 0);
        } else if (s[whole] != '\0')
                return -EINVAL;
        /* "007" is refused, as the configuration's integers are; "0.5" is not. */
        r = parse_decimal(s, whole, max_micro / PRICE_MICRO_PER_UNIT, &units);
        if (r < 0)
                return r;
        if (units * PRICE_MICRO_PER_UNIT + part > max_micro)
                return -ERANGE;
        *ret_micro = units * PRICE_MICRO_PER_UNIT + part;
        return 0;
}

const Price *price_find(const Price *prices, size_t n_prices, const char *model)
{
        const Price *best = NULL;
        size_t best_size = 0;

        for (size_t i = 0; i < n_prices; i++) {
                size_t n = strlen(prices[i].model);

                if (n > 0 && prices[i].model[n - 1] == '*') {
                        if (strncmp(model, prices[i].model, n - 1) == 0 && (!best || n - 1 > best_size)) {
                                best = &prices[i];
                                best_size = n - 1;
                        }
                } else if (strcmp(model, prices[i].model) == 0)
                        return &prices[i];
        }
        return best;
}

uint64_t amount_add(uint64_t a, uint64_t b)
{
        uint64_t sum;

        return __builtin_add_overflow(a, b, &sum) ? UINT64_MAX : sum;
}

static uint64_t amount_mul(uint64_t a, uint64_t b)
{
        uint64_t product;

        return __builtin_mul_overflow(a, b, &product) ? UINT64_MAX : product;
}

uint64_t price_cost(const Price *p, uint64_t input_tokens, uint64_t output_tokens)
{
        return amount_add(amount_mul(p->input, input_tokens), amount_mul(p->output, output_tokens));
}

const char *amount_format(uint64_t picodollars, char buf[static AMOUNT_TEXT_MAX])
{
        uint64_t micro = picodollars / PRICE_PICO_PER_MICRO + (picodollars % PRICE_PICO_PER_MICRO != 0);

        (void)snprintf(buf, AMOUNT_TEXT_MAX, "%" PRIu64 ".%06" PRIu64, micro / PRICE_MICRO_PER_UNIT,
                       micro % PRICE_MICRO_PER_UNIT);
        return buf;
}
