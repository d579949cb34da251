/* SPDX-License-Identifier: MIT */
/* A secret's print: what the sandbox side is given to know the model's key when it sees it, without the
 * key. The print is the key's length, a rolling hash of it (Rabin-Karp, modulo the prime 2^31 - 1, with a
 * random base chosen by whoever made the print) and its SHA-256. A search rolls the hash over every
 * window of that length, in one pass, and takes a window only when its SHA-256 is the key's as well: the
 * rolling hash makes the search fast, the digest makes a find certain. Neither gives the key back; the
 * digest only confirms a guess, and a key is no guess (at least TOKEN_MIN printable bytes, a provider's
 * random ones). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KEY_PRINT_SIZE_MAX 4096 /* the longest key a print is made of */
#define KEY_PRINT_TEXT_MAX 96   /* "SIZE:BASE:ROLL:SHA256" and its NUL */

typedef struct KeyPrint {
        size_t size;              /* the key's length in bytes, 1 to KEY_PRINT_SIZE_MAX */
        uint32_t base;            /* of the rolling hash, 2 to 2^31 - 2 */
        uint32_t roll;            /* the key's rolling hash */
        unsigned char sha256[32]; /* the key's digest */
} KeyPrint;

/* The print of key[0..size) with a random base. 0, -EINVAL (size out of bounds), -EIO (no randomness or
 * no digest). */
int key_print_make(const char *key, size_t size, KeyPrint *ret);

/* The same with the base given (the tests). */
int key_print_make_with_base(const char *key, size_t size, uint32_t base, KeyPrint *ret);

/* "SIZE:BASE:ROLL:SHA256" (decimal, decimal, decimal, 64 lower-case hexadecimal digits) in buf. */
int key_print_format(const KeyPrint *p, char *buf, size_t buf_size);

/* The reverse, strictly: -EINVAL for anything else. */
int key_print_parse(const char *text, KeyPrint *ret);

/* Whether data[0..size) holds the key the print is of, anywhere. */
bool key_print_find(const KeyPrint *p, const char *data, size_t size);
