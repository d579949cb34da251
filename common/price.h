/* SPDX-License-Identifier: MIT */
/* What a model's tokens cost and what a run may spend ([run] budget and [run.prices],
 * agentic-job.toml(5)). Amounts are whole numbers of picodollars (1e-12 of the unit the prices are given
 * in, a dollar): a price per million tokens in micro-dollars is then a price per token in picodollars,
 * and no amount is ever a float. Sums and products saturate at UINT64_MAX: an overflowed cost is one
 * over any budget, never a small one. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#define PRICE_PICO_PER_MICRO UINT64_C(1000000)             /* picodollars in a micro-dollar */
#define PRICE_MICRO_PER_UNIT UINT64_C(1000000)             /* micro-dollars in a dollar */
#define PRICE_MAX_MICRO      (UINT64_C(10000) * 1000000)   /* a price per million tokens at most: 10,000 */
#define BUDGET_MAX_MICRO     (UINT64_C(1000000) * 1000000) /* [run] budget at most: 1,000,000 */
#define PRICES_MAX           64                            /* entries of [run.prices] at most */
#define PRICE_MODEL_MAX      128                           /* bytes of a model's name (or prefix) at most */
#define AMOUNT_TEXT_MAX      32                            /* amount_format()'s text, its NUL included */

typedef struct Price {
        char *model;     /* the model's name as the request gives it, or a prefix ending in '*' */
        uint64_t input;  /* picodollars per input token (micro-dollars per million) */
        uint64_t output; /* picodollars per output token */
} Price;

/* A decimal amount, "12", "0.5" or "3.000001": digits, then at most one '.' and at most six digits after
 * it, at most max_micro micro-dollars. 0 or -EINVAL (its shape), -ERANGE (past max_micro). */
int amount_parse(const char *s, uint64_t max_micro, uint64_t *ret_micro);

/* The price that applies to model: an entry naming it exactly, else the entry with the longest prefix
 * ("claude-sonnet-4-5*") that it starts with; NULL when none does. */
const Price *price_find(const Price *prices, size_t n_prices, const char *model);

/* What input and output tokens cost at p, in picodollars, saturated. */
uint64_t price_cost(const Price *p, uint64_t input_tokens, uint64_t output_tokens);

/* a + b, saturated. */
uint64_t amount_add(uint64_t a, uint64_t b);

/* picodollars as a decimal with six places ("0.004500"), rounded up: the cost a summary states is never
 * less than what was spent. */
const char *amount_format(uint64_t picodollars, char buf[static AMOUNT_TEXT_MAX]);
