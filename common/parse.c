/* SPDX-License-Identifier: MIT */
#include "parse.h"

#include <errno.h>

int parse_decimal(const char *s, size_t len, uint64_t max, uint64_t *ret)
{
        uint64_t v = 0;

        if (len == 0 || (s[0] == '0' && len > 1))
                return -EINVAL;
        for (size_t i = 0; i < len; i++) {
                unsigned d = (unsigned)(s[i] - '0');

                if (s[i] < '0' || s[i] > '9')
                        return -EINVAL;
                if (d > max || v > (max - d) / 10)
                        return -ERANGE;
                v = v * 10 + d;
        }
        *ret = v;
        return 0;
}

int hex_digit_value(int c)
{
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}
