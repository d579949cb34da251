/* SPDX-License-Identifier: MIT */
#include "procnet.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "macro.h"
#include "parse.h"

#define SO_ACCEPTCON   0x10000
#define TCP_LISTEN     0x0A
#define UNIX_STREAM    1
#define UNIX_SEQPACKET 5
#define UNIX_DGRAM     2

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

/* The fields of one line of /proc/net/unix: 0 for the header, the number of fields (7, or 8 with a
 * name), -EINVAL for a line of another shape. */
static int unix_fields(const char *line, Field f[8], uint64_t *flags, uint64_t *type)
{
        uint64_t v;
        size_t n;

        /* "Num       RefCount Protocol Flags    Type St Inode Path" */
        n = split(line, f, 8);
        if (n >= 1 && f[0].n == 3 && memcmp(f[0].s, "Num", 3) == 0)
                return 0;
        if (n < 7 || f[0].n < 2 || f[0].s[f[0].n - 1] != ':' ||
            hex(f[0].s, f[0].n - 1, UINT64_MAX, &v) < 0 || hex(f[1].s, f[1].n, UINT64_MAX, &v) < 0 ||
            hex(f[2].s, f[2].n, UINT64_MAX, &v) < 0 || hex(f[3].s, f[3].n, UINT64_MAX, flags) < 0 ||
            hex(f[4].s, f[4].n, 0xFFFF, type) < 0 || hex(f[5].s, f[5].n, 0xFF, &v) < 0 ||
            parse_decimal(f[6].s, f[6].n, UINT64_MAX, &v) < 0)
                return -EINVAL;
        return (int)n;
}

int procnet_unix_line(const char *line, ProcNetUnix *ret)
{
        Field f[8];
        uint64_t flags = 0, type = 0;
        int n = unix_fields(line, f, &flags, &type);

        if (n <= 0)
                return n;
        if (n < 8 || f[7].s[0] != '@' || f[7].n < 2 || !(flags & SO_ACCEPTCON) ||
            (type != UNIX_STREAM && type != UNIX_SEQPACKET))
                return 0;
        if (f[7].n - 1 >= sizeof(ret->name))
                return -EINVAL;
        memcpy(ret->name, f[7].s + 1, f[7].n - 1);
        ret->name[f[7].n - 1] = '\0';
        return 1;
}

int procnet_unix_path_line(const char *line, ProcNetUnixPath *ret)
{
        Field f[8];
        uint64_t flags = 0, type = 0;
        int n = unix_fields(line, f, &flags, &type);

        if (n <= 0)
                return n;
        if (n < 8 || f[7].s[0] == '@')
                return 0;
        if (type == UNIX_DGRAM)
                ret->type = SOCK_DGRAM;
        else if ((type == UNIX_STREAM || type == UNIX_SEQPACKET) && (flags & SO_ACCEPTCON))
                ret->type = type == UNIX_STREAM ? SOCK_STREAM : SOCK_SEQPACKET;
        else
                return 0;
        if (f[7].n >= sizeof(ret->path) || memchr(f[7].s, '\0', f[7].n))
                return -EINVAL;
        memcpy(ret->path, f[7].s, f[7].n);
        ret->path[f[7].n] = '\0';
        return 1;
}
