/* SPDX-License-Identifier: MIT */
#include "random-hex.h"

#include <errno.h>
#include <stdio.h>
#include <unistd.h>

int random_hex(char *buf, size_t bytes)
{
        unsigned char raw[RANDOM_HEX_MAX];

        if (bytes > sizeof(raw) || getentropy(raw, bytes) < 0)
                return -EIO;
        for (size_t i = 0; i < bytes; i++)
                (void)snprintf(buf + 2 * i, 3, "%02x", raw[i]);
        buf[2 * bytes] = '\0';
        return 0;
}
