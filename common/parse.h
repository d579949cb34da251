/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* The decimal number in s[0..len): digits only (no sign, space or "0x"), no leading zero but in "0"
 * itself, at most max. -EINVAL otherwise, -ERANGE past max. */
int parse_decimal(const char *s, size_t len, uint64_t max, uint64_t *ret);

/* The value of one hexadecimal digit (either case), or -1. */
int hex_digit_value(int c);
