/* SPDX-License-Identifier: MIT */
#include "secret-scan.h"

#include <assert.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/param.h>

#include "macro.h"

typedef enum SecretClass {
        CLASS_NONE,  /* the prefix alone is the match */
        CLASS_ALNUM, /* A-Z a-z 0-9 */
        CLASS_UPPER, /* A-Z 0-9 */
        CLASS_WORD,  /* A-Z a-z 0-9 _ */
        CLASS_URL,   /* A-Z a-z 0-9 _ - (base64url) */
} SecretClass;

typedef struct SecretPattern {
        const char *prefix;
        SecretClass class;
        size_t min; /* bytes of the class after the prefix, at least */
        const char *what;
} SecretPattern;

/* The formats as their issuers document them; each needs enough bytes after its prefix that ordinary
 * text does not match. */
static const SecretPattern patterns[] = {
        { "ghp_", CLASS_ALNUM, 36, "a GitHub token" },
        { "gho_", CLASS_ALNUM, 36, "a GitHub token" },
        { "ghu_", CLASS_ALNUM, 36, "a GitHub token" },
        { "ghs_", CLASS_ALNUM, 36, "a GitHub token" },
        { "ghr_", CLASS_ALNUM, 36, "a GitHub token" },
        { "github_pat_", CLASS_WORD, 40, "a GitHub token" },
        { "AKIA", CLASS_UPPER, 16, "an AWS access key id" },
        { "ASIA", CLASS_UPPER, 16, "an AWS access key id" },
        { "sk-ant-", CLASS_URL, 32, "an Anthropic API key" },
        { "sk-proj-", CLASS_URL, 32, "an OpenAI API key" },
        { "sk-", CLASS_ALNUM, 40, "an OpenAI API key" },
        { "AIza", CLASS_URL, 35, "a Google API key" },
        { "xoxb-", CLASS_URL, 10, "a Slack token" },
        { "xoxp-", CLASS_URL, 10, "a Slack token" },
        { "xoxa-", CLASS_URL, 10, "a Slack token" },
        { "xoxr-", CLASS_URL, 10, "a Slack token" },
        { "xoxs-", CLASS_URL, 10, "a Slack token" },
        { "PRIVATE KEY-----", CLASS_NONE, 0, "a private key" },
};

#define N_PATTERNS ELEMENTSOF(patterns)
#define NONE       SIZE_MAX

static bool in_class(SecretClass class, unsigned char c)
{
        bool alnum = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');

        switch (class) {
        case CLASS_ALNUM:
                return alnum;
        case CLASS_UPPER:
                return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        case CLASS_WORD:
                return alnum || c == '_';
        case CLASS_URL:
                return alnum || c == '_' || c == '-';
        case CLASS_NONE:
                break;
        }
        return false;
}

static size_t pattern_shortest(const SecretPattern *p)
{
        return strlen(p->prefix) + p->min;
}

void secret_set_init(SecretSet *set)
{
        assert(set);

        *set = (SecretSet){};
        for (size_t i = 0; i < N_PATTERNS; i++)
                set->longest = MAX(set->longest, pattern_shortest(&patterns[i]));
}

int secret_set_add(SecretSet *set, const char *value, size_t size, const char *what)
{
        Secret *s;

        assert(set);
        assert(value);
        assert(what);

        if (size < SECRET_MIN_SIZE)
                return -EINVAL;
        size = MIN(size, (size_t)SECRET_MAX_SIZE);
        for (size_t i = 0; i < set->n; i++)
                if (set->items[i].size == size && memcmp(set->items[i].value, value, size) == 0)
                        return 0;
        if (set->n >= SECRET_SET_MAX)
                return -E2BIG;
        s = &set->items[set->n];
        s->value = malloc(size);
        s->what = strdup(what);
        if (!s->value || !s->what) {
                free(s->value);
                free(s->what);
                *s = (Secret){};
                return -ENOMEM;
        }
        memcpy(s->value, value, size);
        s->size = size;
        set->n++;
        set->longest = MAX(set->longest, size);
        return 0;
}

static bool secret_name(const char *name, size_t n)
{
        static const char *const words[] = { "TOKEN", "KEY", "SECRET", "PASSWORD", "PAT" };

        for (size_t i = 0; i < ELEMENTSOF(words); i++) {
                size_t w = strlen(words[i]);

                if (n == w && strncasecmp(name, words[i], w) == 0)
                        return true;
                if (n > w + 1 && name[n - w - 1] == '_' && strncasecmp(name + n - w, words[i], w) == 0)
                        return true;
        }
        return false;
}

int secret_set_add_environment(SecretSet *set, char *const *envp)
{
        assert(set);

        for (char *const *e = envp; e && *e; e++) {
                const char *eq = strchr(*e, '=');
                char what[96];
                int r;

                if (!eq || !secret_name(*e, (size_t)(eq - *e)) || strlen(eq + 1) < SECRET_MIN_SIZE)
                        continue;
                (void)snprintf(what, sizeof(what), "the value of $%.*s", (int)MIN((size_t)(eq - *e), 64U),
                               *e);
                r = secret_set_add(set, eq + 1, strlen(eq + 1), what);
                if (r < 0)
                        return r;
        }
        return 0;
}

void secret_set_done(SecretSet *set)
{
        if (!set)
                return;
        for (size_t i = 0; i < set->n; i++) {
                explicit_bzero(set->items[i].value, set->items[i].size);
                free(set->items[i].value);
                free(set->items[i].what);
        }
        *set = (SecretSet){};
}

/* The next secret of each kind from a position on, kept between calls so that a text with many is
 * searched once per kind, not once per find. */
typedef struct Finder {
        const SecretSet *set;
        const char *data;
        size_t n;
        size_t at[SECRET_SET_MAX + N_PATTERNS];   /* NONE: no more of it */
        size_t size[SECRET_SET_MAX + N_PATTERNS]; /* of the match at at[] */
        bool valid[SECRET_SET_MAX + N_PATTERNS];  /* at[] was searched for from a position <= the last */
} Finder;

/* The match of pattern p at data[i..n), its length, or 0. */
static size_t pattern_match(const SecretPattern *p, const char *data, size_t n, size_t i)
{
        size_t k = strlen(p->prefix), run = 0;

        if (n - i < k || memcmp(data + i, p->prefix, k) != 0)
                return 0;
        while (i + k + run < n && in_class(p->class, (unsigned char)data[i + k + run]))
                run++;
        return run >= p->min ? k + run : 0;
}

static void finder_next(Finder *f, size_t k, size_t from)
{
        const char *hit;

        f->valid[k] = true;
        f->at[k] = NONE;
        if (k < f->set->n) {
                const Secret *s = &f->set->items[k];

                hit = from < f->n ? memmem(f->data + from, f->n - from, s->value, s->size) : NULL;
                if (hit) {
                        f->at[k] = (size_t)(hit - f->data);
                        f->size[k] = s->size;
                }
                return;
        }
        const SecretPattern *p = &patterns[k - f->set->n];
        size_t plen = strlen(p->prefix);

        for (size_t i = from; i < f->n;) {
                size_t m;

                hit = memmem(f->data + i, f->n - i, p->prefix, plen);
                if (!hit)
                        return;
                i = (size_t)(hit - f->data);
                m = pattern_match(p, f->data, f->n, i);
                if (m > 0) {
                        f->at[k] = i;
                        f->size[k] = m;
                        return;
                }
                i++;
        }
}

static void finder_init(Finder *f, const SecretSet *set, const char *data, size_t n)
{
        f->set = set;
        f->data = data;
        f->n = n;
        for (size_t k = 0; k < set->n + N_PATTERNS; k++)
                f->valid[k] = false;
}

/* The first secret at or after from: its index, or NONE. */
static size_t finder_find(Finder *f, size_t from)
{
        size_t best = NONE;

        for (size_t k = 0; k < f->set->n + N_PATTERNS; k++) {
                if (!f->valid[k] || (f->at[k] != NONE && f->at[k] < from))
                        finder_next(f, k, from);
                if (f->at[k] == NONE)
                        continue;
                /* The earliest; of those at one place, the longest, so a redaction covers them all. */
                if (best == NONE || f->at[k] < f->at[best] ||
                    (f->at[k] == f->at[best] && f->size[k] > f->size[best]))
                        best = k;
        }
        return best;
}

static const char *finder_what(const Finder *f, size_t k)
{
        return k < f->set->n ? f->set->items[k].what : patterns[k - f->set->n].what;
}

bool secret_find(const SecretSet *set, const char *data, size_t n, size_t *ret_offset, size_t *ret_size,
                 const char **ret_what)
{
        Finder finder, *f = &finder;
        size_t k;

        assert(set);
        assert(data || n == 0);

        finder_init(f, set, data, n);
        k = finder_find(f, 0);
        if (k == NONE)
                return false;
        if (ret_offset)
                *ret_offset = f->at[k];
        if (ret_size)
                *ret_size = f->size[k];
        if (ret_what)
                *ret_what = finder_what(f, k);
        return true;
}

size_t secret_redact(const SecretSet *set, char *buf, size_t *len)
{
        Finder finder, *f = &finder;
        size_t r = 0, w = 0, count = 0, k;

        assert(set);
        assert(len);
        assert(buf || *len == 0);

        finder_init(f, set, buf, *len);
        /* The search runs over the original bytes; what is written goes at w <= r, behind it. The finder
         * reads f->data, which the writes change only behind the place it searches from. */
        while ((k = finder_find(f, r)) != NONE) {
                size_t at = f->at[k], end = at + f->size[k];

                /* Of matches that overlap this one, the longest end. */
                for (size_t j = 0; j < set->n + N_PATTERNS; j++)
                        if (f->at[j] != NONE && f->at[j] < end && f->at[j] + f->size[j] > end)
                                end = f->at[j] + f->size[j];
                memmove(buf + w, buf + r, at - r);
                w += at - r;
                memcpy(buf + w, SECRET_REDACTED, strlen(SECRET_REDACTED));
                w += strlen(SECRET_REDACTED);
                r = end;
                count++;
        }
        memmove(buf + w, buf + r, *len - r);
        w += *len - r;
        *len = w;
        return count;
}

size_t secret_redact_string(const SecretSet *set, char *s)
{
        size_t n, count;

        if (!s)
                return 0;
        n = strlen(s);
        count = secret_redact(set, s, &n);
        s[n] = '\0';
        return count;
}

int secret_stream_init(SecretStream *st, const SecretSet *set)
{
        assert(st);
        assert(set);

        *st = (SecretStream){ .set = set };
        st->carry = malloc(2 * set->longest);
        return st->carry ? 0 : -ENOMEM;
}

void secret_stream_reset(SecretStream *st)
{
        st->carry_len = 0;
        st->found = NULL;
}

void secret_stream_feed(SecretStream *st, const char *data, size_t n)
{
        size_t keep = st->set->longest - 1, head, off, size;
        const char *what;

        if (st->found || n == 0)
                return;
        /* A secret that begins in the kept bytes ends in the first longest - 1 bytes of this piece. */
        head = MIN(n, keep);
        memcpy(st->carry + st->carry_len, data, head);
        if (secret_find(st->set, st->carry, st->carry_len + head, &off, &size, &what) ||
            secret_find(st->set, data, n, &off, &size, &what)) {
                st->found = what;
                return;
        }
        if (n >= keep) {
                memcpy(st->carry, data + n - keep, keep);
                st->carry_len = keep;
        } else {
                size_t total = st->carry_len + head;
                size_t from = total > keep ? total - keep : 0;

                memmove(st->carry, st->carry + from, total - from);
                st->carry_len = total - from;
        }
}

void secret_stream_done(SecretStream *st)
{
        if (!st)
                return;
        if (st->carry)
                explicit_bzero(st->carry, 2 * st->set->longest);
        free(st->carry);
        st->carry = NULL;
}

static bool line_end(char c)
{
        return c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* Redacts what is held and passes it on, all of it (keep = 0) or but its last keep bytes. */
static int lines_pass(SecretLines *l, size_t keep, SecretWriteFn fn, void *userdata)
{
        size_t n;
        int r;

        (void)secret_redact(l->set, l->buf, &l->len);
        keep = MIN(keep, l->len);
        n = l->len - keep;
        r = n > 0 ? fn(l->buf, n, userdata) : 0;
        memmove(l->buf, l->buf + n, keep);
        l->len = keep;
        return r;
}

int secret_lines_feed(SecretLines *l, const char *data, size_t n, SecretWriteFn fn, void *userdata)
{
        int r;

        assert(l);
        assert(l->set);
        assert(fn);

        for (size_t i = 0; i < n;) {
                size_t room = sizeof(l->buf) - l->len, take = 0;
                bool ended = false;

                while (take < room && i + take < n && !ended)
                        ended = line_end(data[i + take++]);
                memcpy(l->buf + l->len, data + i, take);
                l->len += take;
                i += take;
                if (ended)
                        r = lines_pass(l, 0, fn, userdata);
                else if (l->len == sizeof(l->buf))
                        r = lines_pass(l, l->set->longest - 1, fn, userdata);
                else
                        r = 0;
                if (r < 0)
                        return r;
        }
        return 0;
}

int secret_lines_flush(SecretLines *l, SecretWriteFn fn, void *userdata)
{
        assert(l);

        return l->len > 0 ? lines_pass(l, 0, fn, userdata) : 0;
}
