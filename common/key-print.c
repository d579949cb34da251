/* SPDX-License-Identifier: MIT */
#include "key-print.h"

#include <errno.h>
#include <inttypes.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include "parse.h"

#define MODULUS UINT32_C(2147483647) /* 2^31 - 1, prime */

/* x modulo 2^31 - 1, without a division: 2^31 is 1 there. Two folds take any 64-bit x below 2^31 + 7,
 * one subtraction below 2^31 - 1. */
static uint32_t reduce(uint64_t x)
{
        x = (x & MODULUS) + (x >> 31);
        x = (x & MODULUS) + (x >> 31);
        return (uint32_t)(x >= MODULUS ? x - MODULUS : x);
}

static uint32_t mulmod(uint32_t a, uint32_t b)
{
        return reduce((uint64_t)a * b);
}

static uint32_t roll_of(const unsigned char *data, size_t size, uint32_t base)
{
        uint32_t h = 0;

        for (size_t i = 0; i < size; i++)
                h = reduce((uint64_t)mulmod(h, base) + data[i]);
        return h;
}

static bool sha256_of(const char *data, size_t size, unsigned char out[static 32])
{
        unsigned int len = 0;

        return EVP_Digest(data, size, out, &len, EVP_sha256(), NULL) == 1 && len == 32;
}

int key_print_make_with_base(const char *key, size_t size, uint32_t base, KeyPrint *ret)
{
        if (size == 0 || size > KEY_PRINT_SIZE_MAX || base < 2 || base >= MODULUS - 1)
                return -EINVAL;
        *ret = (KeyPrint){ .size = size,
                           .base = base,
                           .roll = roll_of((const unsigned char *)key, size, base) };
        return sha256_of(key, size, ret->sha256) ? 0 : -EIO;
}

int key_print_make(const char *key, size_t size, KeyPrint *ret)
{
        uint32_t base;

        if (getrandom(&base, sizeof(base), 0) != (ssize_t)sizeof(base))
                return -EIO;
        return key_print_make_with_base(key, size, 2 + base % (MODULUS - 3), ret);
}

int key_print_format(const KeyPrint *p, char *buf, size_t buf_size)
{
        int n = snprintf(buf, buf_size, "%zu:%" PRIu32 ":%" PRIu32 ":", p->size, p->base, p->roll);

        if (n < 0 || (size_t)n + 65 > buf_size)
                return -ENOMEM;
        for (size_t i = 0; i < 32; i++)
                (void)snprintf(buf + n + 2 * i, 3, "%02x", p->sha256[i]);
        return 0;
}

/* One decimal field of text ending at stop; *text moved past it and its stop. */
static int field(const char **text, char stop, uint64_t max, uint64_t *ret)
{
        const char *end = strchr(*text, stop);
        int r;

        if (!end)
                return -EINVAL;
        r = parse_decimal(*text, (size_t)(end - *text), max, ret);
        if (r < 0)
                return -EINVAL;
        *text = end + 1;
        return 0;
}

int key_print_parse(const char *text, KeyPrint *ret)
{
        uint64_t size, base, roll;
        KeyPrint p;

        if (field(&text, ':', KEY_PRINT_SIZE_MAX, &size) < 0 || field(&text, ':', MODULUS - 2, &base) < 0 ||
            field(&text, ':', MODULUS - 1, &roll) < 0 || size == 0 || base < 2 || strlen(text) != 64 ||
            strspn(text, "0123456789abcdef") != 64)
                return -EINVAL;
        p = (KeyPrint){ .size = (size_t)size, .base = (uint32_t)base, .roll = (uint32_t)roll };
        for (size_t i = 0; i < 32; i++) {
                p.sha256[i] = (unsigned char)(hex_digit_value(text[2 * i]) << 4 |
                                              hex_digit_value(text[2 * i + 1]));
        }
        *ret = p;
        return 0;
}

bool key_print_find(const KeyPrint *p, const char *data, size_t size)
{
        const unsigned char *d = (const unsigned char *)data;
        uint32_t h, top = 1, leaving[256];

        if (size < p->size)
                return false;
        /* What each byte leaving the window weighs there (byte * base^(size - 1)), negated: one lookup and
         * one multiplication a byte instead of two. */
        for (size_t i = 1; i < p->size; i++)
                top = mulmod(top, p->base);
        for (unsigned c = 0; c < 256; c++)
                leaving[c] = (MODULUS - mulmod(c, top)) % MODULUS;
        h = roll_of(d, p->size, p->base);
        for (size_t i = 0;; i++) {
                unsigned char digest[32];

                if (h == p->roll && sha256_of(data + i, p->size, digest) &&
                    memcmp(digest, p->sha256, 32) == 0)
                        return true;
                if (i + p->size >= size)
                        return false;
                h = reduce((uint64_t)(h + leaving[d[i]]) * p->base + d[i + p->size]);
        }
}
