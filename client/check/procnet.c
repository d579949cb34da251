/* SPDX-License-Identifier: MIT */
#include "procnet.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "macro.h"
#include "parse.h"

#define TCP_LISTEN 0x0A

typedef struct Field {
        const char *s;
        size_t n;
} Field;

/* Splits line at spaces; the last field (n_max) takes the rest of the line, spaces and all, without
 * its newline. Returns the number of fields. */
static size_t split(const char *line, Field *f, size_t n_max)
{
        size_t n = 0;
        const char *p = line;

        while (n < n_max) {
                while (*p == ' ')
                        p++;
                if (*p == '\0' || *p == '\n')
                        break;
                f[n].s = p;
                if (n + 1 == n_max)
                        f[n].n = strcspn(p, "\n");
                else
                        f[n].n = strcspn(p, " \n");
                p += f[n].n;
                n++;
        }
        return n;
}

static int hex(const char *s, size_t n, uint64_t max, uint64_t *ret)
{
        uint64_t v = 0;

        if (n == 0 || n > 16)
                return -EINVAL;
        for (size_t i = 0; i < n; i++) {
                int d = hex_digit_value((unsigned char)s[i]);

                if (d < 0)
                        return -EINVAL;
                v = v * 16 + (uint64_t)d;
        }
        if (v > max)
                return -EINVAL;
        *ret = v;
        return 0;
}

int procnet_tcp_line(const char *line, bool ipv6, ProcNetTcp *ret)
{
        Field f[5];
        size_t addr_len = ipv6 ? 32 : 8, colon;
        uint64_t state, port, word;
        ProcNetTcp t = {};

        /* "  sl  local_address rem_address   st ..." or " 0: 0100007F:0CEA 00000000:0000 0A ..." */
        /* The fifth field takes the rest of the line, which is not read. */
        if (split(line, f, 5) < 4)
                return -EINVAL;
        if (f[0].n == 2 && memcmp(f[0].s, "sl", 2) == 0)
                return 0;
        if (f[0].n < 2 || f[0].s[f[0].n - 1] != ':')
                return -EINVAL;
        colon = addr_len;
        if (f[1].n != addr_len + 5 || f[1].s[colon] != ':' || hex(f[1].s + colon + 1, 4, 65535, &port) < 0 ||
            hex(f[3].s, f[3].n, 0xFF, &state) < 0)
                return -EINVAL;
        /* The address: 32-bit words, each printed as the kernel holds it (host order: on the little-endian
         * machines this runs on, the bytes of each word reversed). */
        for (size_t w = 0; w < addr_len / 8; w++) {
                uint32_t v;

                if (hex(f[1].s + 8 * w, 8, UINT32_MAX, &word) < 0)
                        return -EINVAL;
                v = (uint32_t)word;
                memcpy(t.addr + 4 * w, &v, 4);
        }
        if (state != TCP_LISTEN)
                return 0;
        t.port = (unsigned)port;
        *ret = t;
        return 1;
}
