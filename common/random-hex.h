/* SPDX-License-Identifier: MIT */
/* Random names: bytes of the kernel's randomness, written as lower-case hexadecimal. */
#pragma once

#include <stddef.h>

/* The most bytes one call makes. */
#define RANDOM_HEX_MAX 32

/* Writes 2 * bytes hexadecimal digits and a NUL to buf (which holds 2 * bytes + 1). 0, or -EIO where
 * the kernel gave no randomness (or bytes is over RANDOM_HEX_MAX). */
int random_hex(char *buf, size_t bytes);
