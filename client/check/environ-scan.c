/* SPDX-License-Identifier: MIT */
#include "environ-scan.h"

#include <assert.h>
#include <errno.h>
#include <openssl/evp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "parse.h"

static int sha256(const void *data, size_t n, unsigned char out[32])
{
        unsigned int len = 0;

        if (EVP_Digest(data, n, out, &len, EVP_sha256(), NULL) != 1 || len != 32)
                return -EIO;
        return 0;
}

static bool is_name(const char *s, size_t n)
{
        if (n == 0 || n > ENVIRON_NAME_MAX || (s[0] >= '0' && s[0] <= '9'))
                return false;
        for (size_t i = 0; i < n; i++)
                if (!((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') ||
                      (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
                        return false;
        return true;
}

static void add_job_name(EnvironScan *s, const char *name, size_t n)
{
        size_t have = strlen(s->job_names), room = sizeof(s->job_names) - have;

        s->job_found = true;
        for (const char *p = s->job_names; *p;) { /* each name once */
                size_t w = strcspn(p, " ");
                if (w == n && memcmp(p, name, n) == 0)
                        return;
                p += w;
                p += *p == ' ';
        }
        if (have >= 3 && strcmp(s->job_names + have - 3, "...") == 0)
                return;
        if (n + (have > 0) + 4 > room) {
                (void)snprintf(s->job_names + have, room, "%s...", have ? " " : "");
                return;
        }
        (void)snprintf(s->job_names + have, room, "%s%.*s", have ? " " : "", (int)n, name);
}

static bool secret_at(const EnvironSecret *sec, const char *p, size_t left)
{
        unsigned char md[32];

        return sec->size <= left && sha256(p, sec->size, md) == 0 && memcmp(md, sec->sha256, 32) == 0;
}

static void scan_entry(EnvironScan *s, const char *e, size_t n)
{
        const char *eq = memchr(e, '=', n);

        if (s->canary && !s->canary_found && n >= strlen(s->canary) &&
            memmem(e, n, s->canary, strlen(s->canary)))
                s->canary_found = true;
        if (s->entry && strlen(s->entry) == n && memcmp(e, s->entry, n) == 0)
                s->entry_found = true;
        if (eq && (size_t)(eq - e) >= strlen(ENVIRON_JOB_PREFIX) &&
            strncasecmp(e, ENVIRON_JOB_PREFIX, strlen(ENVIRON_JOB_PREFIX)) == 0)
                add_job_name(s, e, (size_t)(eq - e));
        for (size_t i = 0; i < n; i++) {
                /* Where a value would begin: the entry's start, or after a separator. */
                if (i > 0 && !strchr(" \t:=,;\"'", e[i - 1]))
                        continue;
                for (size_t k = 0; k < s->n_secrets && k < ENVIRON_MAX_SECRETS; k++)
                        if (!s->secret_found[k] && secret_at(&s->secrets[k], e + i, n - i))
                                s->secret_found[k] = true;
        }
}

void environ_scan_block(EnvironScan *s, const char *block, size_t n)
{
        assert(s);

        for (size_t i = 0; i < n;) {
                const char *end = memchr(block + i, '\0', n - i);
                size_t len = end ? (size_t)(end - (block + i)) : n - i;

                scan_entry(s, block + i, len);
                i += len + 1;
        }
}

static int hex_digit(char c)
{
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        return -1;
}

int environ_secret_parse(const char *s, EnvironSecret *ret)
{
        EnvironSecret sec = {};
        const char *eq = strchr(s, '='), *colon = eq ? strchr(eq, ':') : NULL;
        uint64_t size;

        assert(ret);
        if (!eq || !colon || !is_name(s, (size_t)(eq - s)))
                return -EINVAL;
        if (parse_decimal(eq + 1, (size_t)(colon - eq - 1), ENVIRON_SECRET_MAX, &size) < 0 || size == 0)
                return -EINVAL;
        if (strlen(colon + 1) != 64)
                return -EINVAL;
        for (size_t i = 0; i < 32; i++) {
                int hi = hex_digit(colon[1 + 2 * i]), lo = hex_digit(colon[2 + 2 * i]);
                if (hi < 0 || lo < 0)
                        return -EINVAL;
                sec.sha256[i] = (unsigned char)(hi << 4 | lo);
        }
        memcpy(sec.name, s, (size_t)(eq - s));
        sec.size = (size_t)size;
        *ret = sec;
        return 0;
}

int environ_secret_format(const char *name, const char *value, char *buf, size_t size)
{
        unsigned char md[32];
        size_t n = strlen(value);
        int k;

        if (!is_name(name, strlen(name)) || n == 0 || n > ENVIRON_SECRET_MAX)
                return -EINVAL;
        if (sha256(value, n, md) < 0)
                return -EIO;
        k = snprintf(buf, size, "%s=%zu:", name, n);
        if (k < 0 || (size_t)k + 65 > size)
                return -ENOMEM;
        for (size_t i = 0; i < 32; i++)
                (void)snprintf(buf + k + 2 * i, 3, "%02x", md[i]);
        return 0;
}
