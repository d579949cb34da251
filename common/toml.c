/* SPDX-License-Identifier: MIT */
/* A recursive-descent parser for the TOML subset described in toml.h.
 *
 * The input is checked whole first (size, NUL bytes, UTF-8, line endings), so the parser proper only
 * meets valid UTF-8 in which every CR is followed by LF. Nesting is bounded by TOML_MAX_DEPTH, so the
 * recursion (here and in toml_free()) is bounded too. Tables grow a hash index once they are large, so a
 * table with many keys costs linear time, not quadratic. */
#include "toml.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "parse.h"

typedef enum TableKind {
        TABLE_ROOT,
        TABLE_IMPLICIT, /* made as the parent in a [a.b] header: a later [a] may define it, once */
        TABLE_DEFINED,  /* defined by a [header] */
        TABLE_ELEMENT,  /* an element of an array of tables, defined by a [[header]] */
        TABLE_INLINE,   /* { ... }: sealed, no header may add to it */
} TableKind;

typedef struct TomlEntry {
        char *key;
        unsigned line, column; /* where the key was written */
        TomlValue *value;
} TomlEntry;

struct TomlValue {
        TomlType type;
        unsigned line, column;
        union {
                char *string;
                int64_t integer;
                bool boolean;
                struct {
                        TomlValue **items;
                        size_t n_items, n_allocated;
                        bool of_tables; /* made by [[header]]s, which may append to it */
                } array;
                struct {
                        TomlEntry *entries;
                        size_t n_entries, n_allocated;
                        size_t *slots; /* hash index: entry number + 1, or 0 when free; NULL while small */
                        size_t n_slots;
                        TableKind kind;
                } table;
        };
};

/* A table gets a hash index once it has room for this many entries. */
#define TABLE_INDEX_THRESHOLD 16

typedef struct Position {
        unsigned line, column;
} Position;

typedef struct Parser {
        const char *data;
        size_t size;
        size_t pos;
        unsigned line;
        size_t line_start;
        AjError *error;
} Parser;

/* A table header's name, [a.b.c], one key per part. */
typedef struct HeaderName {
        char *parts[TOML_MAX_DEPTH];
        Position where[TOML_MAX_DEPTH];
        size_t n;
} HeaderName;

#define fail_at(p, at, ...) aj_error((p)->error, EINVAL, (at).line, (at).column, __VA_ARGS__)
#define fail(p, ...)        fail_at(p, here(p), __VA_ARGS__)

/* Room for one key or table name in a message. */
#define NAME_MAX_MESSAGE 96

static int oom(Parser *p)
{
        return aj_error(p->error, ENOMEM, 0, 0, "out of memory");
}

static int peek_at(const Parser *p, size_t offset)
{
        if (offset >= p->size - p->pos)
                return -1;
        return (unsigned char)p->data[p->pos + offset];
}

static int peek(const Parser *p)
{
        return peek_at(p, 0);
}

static Position here(const Parser *p)
{
        return (Position){ p->line, (unsigned)(p->pos - p->line_start + 1) };
}

static bool is_newline(int c)
{
        /* A CR is always followed by LF: check_input() saw to it. */
        return c == '\n' || c == '\r';
}

static bool is_control(int c)
{
        return (c >= 0 && c < 0x20 && c != '\t') || c == 0x7f;
}

static bool is_digit(int c)
{
        return c >= '0' && c <= '9';
}

static bool is_alpha(int c)
{
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_bare_key_char(int c)
{
        return is_alpha(c) || is_digit(c) || c == '_' || c == '-';
}

/* Characters of an unquoted value: true, false, integers, and the floats and dates we refuse. */
static bool is_word_char(int c)
{
        return is_bare_key_char(c) || c == '+' || c == '.' || c == ':';
}

/* ---- Values ---- */

static TomlValue *value_new(TomlType type, Position at)
{
        TomlValue *v = calloc(1, sizeof(*v));

        if (!v)
                return NULL;
        v->type = type;
        v->line = at.line;
        v->column = at.column;
        return v;
}

static TomlValue *table_new(TableKind kind, Position at)
{
        TomlValue *v = value_new(TOML_TABLE, at);

        if (v)
                v->table.kind = kind;
        return v;
}

void toml_free(TomlValue *v)
{
        if (!v)
                return;
        switch (v->type) {
        case TOML_STRING:
                free(v->string);
                break;
        case TOML_ARRAY:
                for (size_t i = 0; i < v->array.n_items; i++)
                        toml_free(v->array.items[i]);
                free(v->array.items);
                break;
        case TOML_TABLE:
                for (size_t i = 0; i < v->table.n_entries; i++) {
                        free(v->table.entries[i].key);
                        toml_free(v->table.entries[i].value);
                }
                free(v->table.entries);
                free(v->table.slots);
                break;
        case TOML_INTEGER:
        case TOML_BOOLEAN:
                break;
        }
        free(v);
}

/* Takes item on success only. */
static int array_append(TomlValue *a, TomlValue *item)
{
        assert(a->type == TOML_ARRAY);

        if (a->array.n_items == a->array.n_allocated) {
                size_t n = a->array.n_allocated > 0 ? 2 * a->array.n_allocated : 4;
                TomlValue **items = reallocarray(
                        a->array.items, n,
                        sizeof(*items)); /* NOLINT(bugprone-sizeof-expression): an array of pointers */

                if (!items)
                        return -ENOMEM;
                a->array.items = items;
                a->array.n_allocated = n;
        }
        a->array.items[a->array.n_items++] = item;
        return 0;
}

static uint64_t key_hash(const char *s)
{
        uint64_t h = UINT64_C(14695981039346656037); /* FNV-1a */

        for (; *s; s++)
                h = (h ^ (unsigned char)*s) * UINT64_C(1099511628211);
        return h;
}

static void index_insert(size_t *slots, size_t n_slots, const char *key, size_t entry)
{
        size_t mask = n_slots - 1;

        for (size_t s = key_hash(key) & mask;; s = (s + 1) & mask)
                if (slots[s] == 0) {
                        slots[s] = entry + 1;
                        return;
                }
}

/* Rebuilds the index with twice as many slots as there is room for entries: at most half full. */
static int table_reindex(TomlValue *t)
{
        size_t n_slots = 2 * t->table.n_allocated;
        size_t *slots = calloc(n_slots, sizeof(*slots));

        if (!slots)
                return -ENOMEM;
        for (size_t i = 0; i < t->table.n_entries; i++)
                index_insert(slots, n_slots, t->table.entries[i].key, i);
        free(t->table.slots);
        t->table.slots = slots;
        t->table.n_slots = n_slots;
        return 0;
}

static TomlEntry *table_find(const TomlValue *t, const char *key)
{
        assert(t->type == TOML_TABLE);

        if (!t->table.slots) {
                for (size_t i = 0; i < t->table.n_entries; i++)
                        if (strcmp(t->table.entries[i].key, key) == 0)
                                return &t->table.entries[i];
                return NULL;
        }

        size_t mask = t->table.n_slots - 1;
        for (size_t s = key_hash(key) & mask; t->table.slots[s] != 0; s = (s + 1) & mask) {
                TomlEntry *e = &t->table.entries[t->table.slots[s] - 1];
                if (strcmp(e->key, key) == 0)
                        return e;
        }
        return NULL;
}

/* The key must be absent. Takes key and value on success only. */
static int table_add(TomlValue *t, char *key, Position key_at, TomlValue *value)
{
        assert(t->type == TOML_TABLE);
        assert(!table_find(t, key));

        if (t->table.n_entries == t->table.n_allocated) {
                size_t n = t->table.n_allocated > 0 ? 2 * t->table.n_allocated : 8;
                TomlEntry *entries = reallocarray(t->table.entries, n, sizeof(*entries));

                if (!entries)
                        return -ENOMEM;
                t->table.entries = entries;
                t->table.n_allocated = n;
                if (n >= TABLE_INDEX_THRESHOLD) {
                        int r = table_reindex(t);
                        if (r < 0)
                                return r;
                }
        }

        size_t i = t->table.n_entries++;
        t->table.entries[i] = (TomlEntry){ key, key_at.line, key_at.column, value };
        if (t->table.slots)
                index_insert(t->table.slots, t->table.n_slots, key, i);
        return 0;
}

/* ---- Messages ---- */

const char *toml_type_name(TomlType t)
{
        static const char *const names[] = {
                [TOML_STRING] = "string", [TOML_INTEGER] = "integer", [TOML_BOOLEAN] = "boolean",
                [TOML_ARRAY] = "array",   [TOML_TABLE] = "table",
        };

        assert((size_t)t < ELEMENTSOF(names));
        return names[t];
}

const char *toml_type_description(TomlType t)
{
        static const char *const descriptions[] = {
                [TOML_STRING] = "a string", [TOML_INTEGER] = "an integer", [TOML_BOOLEAN] = "a boolean",
                [TOML_ARRAY] = "an array",  [TOML_TABLE] = "a table",
        };

        assert((size_t)t < ELEMENTSOF(descriptions));
        return descriptions[t];
}

/* Writes the escaped form of the character (or UTF-8 sequence) at s into out (room for 7 bytes); returns
 * the number of bytes written and sets *ret_consumed. */
static size_t escape_one(const char *s, char out[static 7], size_t *ret_consumed)
{
        unsigned char c = (unsigned char)s[0];
        size_t n = 1;

        *ret_consumed = 1;
        switch (c) {
        case '"':
                memcpy(out, "\\\"", 2);
                return 2;
        case '\\':
                memcpy(out, "\\\\", 2);
                return 2;
        case '\t':
                memcpy(out, "\\t", 2);
                return 2;
        case '\n':
                memcpy(out, "\\n", 2);
                return 2;
        case '\r':
                memcpy(out, "\\r", 2);
                return 2;
        default:
                break;
        }
        if (is_control(c))
                return (size_t)snprintf(out, 7, "\\u%04X", c);
        if (c >= 0xc0) /* a lead byte: keep its sequence whole */
                while (n < 4 && ((unsigned char)s[n] & 0xc0) == 0x80)
                        n++;
        memcpy(out, s, n);
        *ret_consumed = n;
        return n;
}

const char *toml_escape(const char *s, char *buf, size_t size)
{
        size_t n = 0, mark = 0; /* mark: where "..." would go, should the rest not fit */

        assert(s);
        assert(buf);
        assert(size >= 8);

        while (*s) {
                char one[7];
                size_t consumed;
                size_t k = escape_one(s, one, &consumed);

                if (n + k + 1 > size) {
                        memcpy(buf + mark, "...", 4);
                        return buf;
                }
                memcpy(buf + n, one, k);
                n += k;
                s += consumed;
                if (n + 4 <= size)
                        mark = n;
        }
        buf[n] = '\0';
        return buf;
}

/* Appends s to buf (of size bytes, NUL-terminated), truncating. */
static void append(char *buf, size_t size, const char *s)
{
        size_t n = strlen(buf);

        if (n + 1 < size)
                (void)snprintf(buf + n, size - n, "%s", s);
}

/* The first n parts of a header's name as written: a.b."c d". */
static const char *format_name(const HeaderName *h, size_t n, char *buf, size_t size)
{
        buf[0] = '\0';
        for (size_t i = 0; i < n; i++) {
                const char *part = h->parts[i];
                bool bare = *part != '\0';
                char escaped[NAME_MAX_MESSAGE];

                for (const char *c = part; *c; c++)
                        bare = bare && is_bare_key_char((unsigned char)*c);
                if (i > 0)
                        append(buf, size, ".");
                if (!bare)
                        append(buf, size, "\"");
                append(buf, size, toml_escape(part, escaped, sizeof(escaped)));
                if (!bare)
                        append(buf, size, "\"");
        }
        return buf;
}

/* ---- Input, whitespace, comments ---- */

/* The length of the valid UTF-8 sequence at s (at most n bytes), or 0. */
static size_t utf8_sequence_length(const unsigned char *s, size_t n)
{
        unsigned char lo = 0x80, hi = 0xbf;
        size_t len;

        if (s[0] < 0x80)
                return 1;
        if (s[0] >= 0xc2 && s[0] <= 0xdf)
                len = 2;
        else if (s[0] == 0xe0) {
                len = 3;
                lo = 0xa0; /* no overlong forms */
        } else if (s[0] == 0xed) {
                len = 3;
                hi = 0x9f; /* no surrogates */
        } else if (s[0] >= 0xe1 && s[0] <= 0xef)
                len = 3;
        else if (s[0] == 0xf0) {
                len = 4;
                lo = 0x90; /* no overlong forms */
        } else if (s[0] == 0xf4) {
                len = 4;
                hi = 0x8f; /* nothing past U+10FFFF */
        } else if (s[0] >= 0xf1 && s[0] <= 0xf3)
                len = 4;
        else
                return 0;

        if (n < len || s[1] < lo || s[1] > hi)
                return 0;
        for (size_t i = 2; i < len; i++)
                if (s[i] < 0x80 || s[i] > 0xbf)
                        return 0;
        return len;
}

/* Refuses NUL bytes, invalid UTF-8 and a CR not followed by LF, anywhere. */
static int check_input(Parser *p)
{
        const unsigned char *d = (const unsigned char *)p->data;
        Position at = { 1, 1 };
        size_t line_start = 0;

        for (size_t i = 0; i < p->size;) {
                size_t n;

                at.column = (unsigned)(i - line_start + 1);
                if (d[i] == '\0')
                        return fail_at(p, at, "unexpected NUL byte");
                if (d[i] == '\r' && (i + 1 >= p->size || d[i + 1] != '\n'))
                        return fail_at(p, at, "carriage return not followed by a newline");
                n = utf8_sequence_length(d + i, p->size - i);
                if (n == 0)
                        return fail_at(p, at, "invalid UTF-8");
                if (d[i] == '\n') {
                        at.line++;
                        line_start = i + 1;
                }
                i += n;
        }
        return 0;
}

static void skip_whitespace(Parser *p)
{
        while (peek(p) == ' ' || peek(p) == '\t')
                p->pos++;
}

static void consume_newline(Parser *p)
{
        if (peek(p) == '\r')
                p->pos++;
        assert(peek(p) == '\n');
        p->pos++;
        p->line++;
        p->line_start = p->pos;
}

/* From '#' to the end of the line, which is left for the caller. */
static int skip_comment(Parser *p)
{
        assert(peek(p) == '#');

        for (p->pos++; peek(p) >= 0 && !is_newline(peek(p)); p->pos++)
                if (is_control(peek(p)))
                        return fail(p, "control character in comment");
        return 0;
}

/* Whitespace, comments and newlines, as arrays allow between their values. */
static int skip_blank(Parser *p)
{
        for (;;) {
                skip_whitespace(p);
                if (peek(p) == '#') {
                        int r = skip_comment(p);
                        if (r < 0)
                                return r;
                } else if (is_newline(peek(p)))
                        consume_newline(p);
                else
                        return 0;
        }
}

/* After a key/value pair or a table header: optional whitespace and comment, then a newline or the end. */
static int expect_line_end(Parser *p, const char *after)
{
        skip_whitespace(p);
        if (peek(p) == '#') {
                int r = skip_comment(p);
                if (r < 0)
                        return r;
        }
        if (peek(p) < 0)
                return 0;
        if (!is_newline(peek(p)))
                return fail(p, "unexpected text after %s", after);
        consume_newline(p);
        return 0;
}

/* ---- Strings ---- */

static size_t utf8_encode(uint32_t cp, char *out)
{
        if (cp < 0x80) {
                out[0] = (char)cp;
                return 1;
        }
        if (cp < 0x800) {
                out[0] = (char)(0xc0 | (cp >> 6));
                out[1] = (char)(0x80 | (cp & 0x3f));
                return 2;
        }
        if (cp < 0x10000) {
                out[0] = (char)(0xe0 | (cp >> 12));
                out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
                out[2] = (char)(0x80 | (cp & 0x3f));
                return 3;
        }
        out[0] = (char)(0xf0 | (cp >> 18));
        out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
        out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
        out[3] = (char)(0x80 | (cp & 0x3f));
        return 4;
}

/* \uXXXX or \UXXXXXXXX at p->pos: writes its UTF-8 (at most 4 bytes, never more than the escape's
 * length) to out. */
static int parse_unicode_escape(Parser *p, char *out, size_t *ret_len)
{
        Position at = here(p);
        int letter = peek_at(p, 1);
        size_t digits = letter == 'u' ? 4 : 8;
        uint32_t cp = 0;

        for (size_t i = 0; i < digits; i++) {
                int h = hex_digit_value(peek_at(p, 2 + i));
                if (h < 0)
                        return fail_at(p, at, "invalid escape sequence: \\%c needs %zu hexadecimal digits",
                                       letter, digits);
                cp = cp * 16 + (uint32_t)h;
        }
        if (cp == 0)
                return fail_at(p, at, "\\%c%.*s is not allowed: strings cannot hold NUL", letter,
                               (int)digits, p->data + p->pos + 2);
        if ((cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
                return fail_at(p, at, "\\%c%.*s is not a unicode scalar value", letter, (int)digits,
                               p->data + p->pos + 2);
        p->pos += 2 + digits;
        *ret_len = utf8_encode(cp, out);
        return 0;
}

/* The escape sequence at p->pos ('\\'): writes its bytes to out. */
static int parse_escape(Parser *p, char *out, size_t *ret_len)
{
        static const char simple[][2] = {
                { 'b', '\b' }, { 't', '\t' }, { 'n', '\n' },  { 'f', '\f' },
                { 'r', '\r' }, { '"', '"' },  { '\\', '\\' },
        };
        int c = peek_at(p, 1);

        assert(peek(p) == '\\');

        if (c == 'u' || c == 'U')
                return parse_unicode_escape(p, out, ret_len);
        for (size_t i = 0; i < ELEMENTSOF(simple); i++)
                if (c == simple[i][0]) {
                        out[0] = simple[i][1];
                        *ret_len = 1;
                        p->pos += 2;
                        return 0;
                }
        if (c > 0x20 && c < 0x7f)
                return fail(p, "invalid escape sequence \\%c", c);
        return fail(p, "invalid escape sequence");
}

static int refuse_multi_line(Parser *p, char quote)
{
        if (peek_at(p, 1) == quote && peek_at(p, 2) == quote)
                return fail(p, "multi-line strings are not supported");
        return 0;
}

/* The offset of the quote closing the single-line basic string that opens at p->pos, or 0 when the line
 * or the input ends first. */
static size_t basic_string_end(const Parser *p)
{
        for (size_t i = p->pos + 1; i < p->size; i++) {
                char c = p->data[i];

                if (c == '"')
                        return i;
                if (c == '\n' || c == '\r')
                        return 0;
                if (c == '\\' && i + 1 < p->size && !is_newline(p->data[i + 1]))
                        i++; /* whatever is escaped does not end the string */
        }
        return 0;
}

static int parse_basic_string(Parser *p, char **ret)
{
        _cleanup_free_ char *s = NULL;
        Position start = here(p);
        size_t end, n = 0;
        int r;

        assert(peek(p) == '"');

        r = refuse_multi_line(p, '"');
        if (r < 0)
                return r;
        end = basic_string_end(p);
        if (end == 0)
                return fail_at(p, start, "unterminated string");

        /* Escapes only ever shrink, so the text between the quotes bounds the result. */
        s = malloc(end - p->pos);
        if (!s)
                return oom(p);
        for (p->pos++; p->pos < end;) {
                int c = peek(p);

                if (c == '\\') {
                        size_t k = 0;
                        r = parse_escape(p, s + n, &k);
                        if (r < 0)
                                return r;
                        n += k;
                        continue;
                }
                if (is_control(c))
                        return fail(p, "control character in string");
                s[n++] = (char)c;
                p->pos++;
        }
        p->pos++;
        s[n] = '\0';
        *ret = TAKE_PTR(s);
        return 0;
}

static int parse_literal_string(Parser *p, char **ret)
{
        Position start = here(p);
        size_t begin;
        char *s;
        int r;

        assert(peek(p) == '\'');

        r = refuse_multi_line(p, '\'');
        if (r < 0)
                return r;
        for (begin = ++p->pos; peek(p) != '\''; p->pos++) {
                if (peek(p) < 0 || is_newline(peek(p)))
                        return fail_at(p, start, "unterminated string");
                if (is_control(peek(p)))
                        return fail(p, "control character in string");
        }
        s = strndup(p->data + begin, p->pos - begin);
        if (!s)
                return oom(p);
        p->pos++;
        *ret = s;
        return 0;
}

/* ---- Keys ---- */

static int parse_bare_key(Parser *p, char **ret)
{
        size_t begin = p->pos;
        char *s;

        while (is_bare_key_char(peek(p)))
                p->pos++;
        assert(p->pos > begin);
        s = strndup(p->data + begin, p->pos - begin);
        if (!s)
                return oom(p);
        *ret = s;
        return 0;
}

static int parse_key(Parser *p, char **ret_key, Position *ret_at)
{
        int c = peek(p);

        *ret_at = here(p);
        if (c == '"')
                return parse_basic_string(p, ret_key);
        if (c == '\'')
                return parse_literal_string(p, ret_key);
        if (is_bare_key_char(c))
                return parse_bare_key(p, ret_key);
        return fail(p, "expected a key");
}

/* ---- Values ---- */

static int parse_value(Parser *p, unsigned depth, TomlValue **ret);
static int parse_keyval(Parser *p, TomlValue *table, unsigned depth);

static bool word_is(const char *w, size_t n, const char *s)
{
        return n == strlen(s) && memcmp(w, s, n) == 0;
}

static bool word_is_special_float(const char *w, size_t n)
{
        if (n > 0 && (w[0] == '+' || w[0] == '-')) {
                w++;
                n--;
        }
        return word_is(w, n, "inf") || word_is(w, n, "nan");
}

/* 1979-05-27..., or 07:32:00... */
static bool word_is_date(const char *w, size_t n)
{
        if (n >= 5 && is_digit(w[0]) && is_digit(w[1]) && is_digit(w[2]) && is_digit(w[3]) && w[4] == '-')
                return true;
        return n >= 3 && is_digit(w[0]) && is_digit(w[1]) && w[2] == ':';
}

static int parse_integer(Parser *p, const char *w, size_t n, Position at, int64_t *ret)
{
        bool negative = false;
        uint64_t v = 0, limit;

        if (n > 0 && (w[0] == '+' || w[0] == '-')) {
                negative = w[0] == '-';
                w++;
                n--;
        }
        if (n >= 2 && w[0] == '0' && (w[1] == 'x' || w[1] == 'o' || w[1] == 'b'))
                return fail_at(p, at, "hexadecimal, octal and binary integers are not supported");
        if (memchr(w, '.', n) || memchr(w, 'e', n) || memchr(w, 'E', n))
                return fail_at(p, at, "floats are not supported");
        if (memchr(w, '_', n))
                return fail_at(p, at, "underscores in integers are not supported");
        if (n == 0)
                return fail_at(p, at, "invalid integer");
        for (size_t i = 0; i < n; i++)
                if (!is_digit(w[i]))
                        return fail_at(p, at, "invalid integer");
        if (n > 1 && w[0] == '0')
                return fail_at(p, at, "leading zeros are not allowed");

        limit = negative ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
        for (size_t i = 0; i < n; i++) {
                unsigned digit = (unsigned)(w[i] - '0');
                if (v > (limit - digit) / 10)
                        return fail_at(p, at, "integer out of range");
                v = v * 10 + digit;
        }
        if (!negative)
                *ret = (int64_t)v;
        else if (v == (uint64_t)INT64_MAX + 1)
                *ret = INT64_MIN;
        else
                *ret = -(int64_t)v;
        return 0;
}

/* An unquoted value: true, false or an integer; floats, dates and bare words are refused by name. */
static int parse_word(Parser *p, TomlValue **ret)
{
        _cleanup_(toml_freep) TomlValue *v = NULL;
        Position at = here(p);
        const char *w = p->data + p->pos;
        size_t n = 0;

        while (is_word_char(peek(p))) {
                p->pos++;
                n++;
        }
        assert(n > 0);

        if (word_is(w, n, "true") || word_is(w, n, "false")) {
                v = value_new(TOML_BOOLEAN, at);
                if (!v)
                        return oom(p);
                v->boolean = w[0] == 't';
        } else {
                if (word_is_special_float(w, n))
                        return fail_at(p, at, "floats are not supported");
                if (word_is_date(w, n))
                        return fail_at(p, at, "dates are not supported");
                if (is_alpha((unsigned char)w[0]))
                        return fail_at(p, at, "invalid value: strings must be quoted");
                int r;

                v = value_new(TOML_INTEGER, at);
                if (!v)
                        return oom(p);
                r = parse_integer(p, w, n, at, &v->integer);
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(v);
        return 0;
}

static int parse_string_value(Parser *p, TomlValue **ret)
{
        _cleanup_(toml_freep) TomlValue *v = value_new(TOML_STRING, here(p));
        int r;

        if (!v)
                return oom(p);
        if (peek(p) == '"')
                r = parse_basic_string(p, &v->string);
        else
                r = parse_literal_string(p, &v->string);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(v);
        return 0;
}

static int check_depth(Parser *p, unsigned depth)
{
        if (depth > TOML_MAX_DEPTH)
                return fail(p, "arrays and inline tables nest deeper than %d", TOML_MAX_DEPTH);
        return 0;
}

/* [ v, v, ... ]: may span lines and hold comments; one type; a trailing comma is allowed. */
static int parse_array(Parser *p, unsigned depth, TomlValue **ret)
{
        _cleanup_(toml_freep) TomlValue *a = NULL;
        Position start = here(p);
        int r;

        assert(peek(p) == '[');

        r = check_depth(p, depth);
        if (r < 0)
                return r;
        a = value_new(TOML_ARRAY, start);
        if (!a)
                return oom(p);

        for (p->pos++;;) {
                _cleanup_(toml_freep) TomlValue *item = NULL;

                r = skip_blank(p);
                if (r < 0)
                        return r;
                if (peek(p) == ']')
                        break;
                if (peek(p) < 0)
                        return fail_at(p, start, "unterminated array");
                r = parse_value(p, depth, &item);
                if (r < 0)
                        return r;
                if (a->array.n_items > 0 && item->type != a->array.items[0]->type)
                        return fail_at(p, ((Position){ item->line, item->column }),
                                       "mixed types in array: expected %s, found %s",
                                       toml_type_description(a->array.items[0]->type),
                                       toml_type_description(item->type));
                if (array_append(a, item) < 0)
                        return oom(p);
                TAKE_PTR(item);

                r = skip_blank(p);
                if (r < 0)
                        return r;
                if (peek(p) == ',')
                        p->pos++;
                else if (peek(p) == ']')
                        break;
                else if (peek(p) < 0)
                        return fail_at(p, start, "unterminated array");
                else
                        return fail(p, "expected ',' or ']' in array");
        }
        p->pos++;
        *ret = TAKE_PTR(a);
        return 0;
}

/* { k = v, ... } on one line, without a trailing comma. */
static int parse_inline_table(Parser *p, unsigned depth, TomlValue **ret)
{
        _cleanup_(toml_freep) TomlValue *t = NULL;
        int r;

        assert(peek(p) == '{');

        r = check_depth(p, depth);
        if (r < 0)
                return r;
        t = table_new(TABLE_INLINE, here(p));
        if (!t)
                return oom(p);

        p->pos++;
        skip_whitespace(p);
        if (peek(p) == '}') {
                p->pos++;
                *ret = TAKE_PTR(t);
                return 0;
        }
        for (;;) {
                skip_whitespace(p);
                if (peek(p) == '}')
                        return fail(p, "trailing comma in inline table");
                if (peek(p) < 0 || is_newline(peek(p)) || peek(p) == '#')
                        return fail(p, "inline tables must be on one line");
                r = parse_keyval(p, t, depth);
                if (r < 0)
                        return r;
                skip_whitespace(p);
                if (peek(p) == ',')
                        p->pos++;
                else if (peek(p) == '}')
                        break;
                else if (peek(p) < 0 || is_newline(peek(p)) || peek(p) == '#')
                        return fail(p, "inline tables must be on one line");
                else
                        return fail(p, "expected ',' or '}' in inline table");
        }
        p->pos++;
        *ret = TAKE_PTR(t);
        return 0;
}

/* depth: how many arrays and inline tables enclose the value. */
static int parse_value(Parser *p, unsigned depth, TomlValue **ret)
{
        int c = peek(p);

        if (c == '"' || c == '\'')
                return parse_string_value(p, ret);
        if (c == '[')
                return parse_array(p, depth + 1, ret);
        if (c == '{')
                return parse_inline_table(p, depth + 1, ret);
        if (is_word_char(c))
                return parse_word(p, ret);
        return fail(p, "expected a value");
}

/* key = value, into table (at the top level, or inside an inline table). */
static int parse_keyval(Parser *p, TomlValue *table, unsigned depth)
{
        _cleanup_(toml_freep) TomlValue *value = NULL;
        _cleanup_free_ char *key = NULL;
        Position key_at;
        int r;

        r = parse_key(p, &key, &key_at);
        if (r < 0)
                return r;
        skip_whitespace(p);
        if (peek(p) == '.')
                return fail(p, "dotted keys are not supported");
        if (peek(p) != '=')
                return fail(p, "expected '=' after key");
        if (table_find(table, key)) {
                char escaped[NAME_MAX_MESSAGE];
                return fail_at(p, key_at, "duplicate key \"%s\"",
                               toml_escape(key, escaped, sizeof(escaped)));
        }
        p->pos++;
        skip_whitespace(p);
        r = parse_value(p, depth, &value);
        if (r < 0)
                return r;
        if (table_add(table, key, key_at, value) < 0)
                return oom(p);
        TAKE_PTR(key);
        TAKE_PTR(value);
        return 0;
}

/* ---- Table headers ---- */

static void header_name_done(HeaderName *h)
{
        for (size_t i = 0; i < h->n; i++)
                free(h->parts[i]);
}

/* key ( . key )*, with whitespace allowed around the dots. */
static int parse_header_name(Parser *p, HeaderName *h)
{
        for (;;) {
                int r;

                skip_whitespace(p);
                if (h->n == TOML_MAX_DEPTH)
                        return fail(p, "table name has more than %d parts", TOML_MAX_DEPTH);
                r = parse_key(p, &h->parts[h->n], &h->where[h->n]);
                if (r < 0)
                        return r;
                h->n++;
                skip_whitespace(p);
                if (peek(p) != '.')
                        return 0;
                p->pos++;
        }
}

/* Part i of a header names v, an existing value: the table the header continues in. */
static int descend(Parser *p, const HeaderName *h, size_t i, TomlValue *v, TomlValue **ret)
{
        char name[NAME_MAX_MESSAGE * 2];

        if (v->type == TOML_TABLE && v->table.kind != TABLE_INLINE) {
                *ret = v;
                return 0;
        }
        if (v->type == TOML_ARRAY && v->array.of_tables) {
                *ret = v->array.items[v->array.n_items - 1]; /* [[a]] then [a.b]: b is in the last a */
                return 0;
        }
        format_name(h, i + 1, name, sizeof(name));
        if (v->type == TOML_TABLE)
                return fail_at(p, h->where[i], "cannot extend inline table %s", name);
        return fail_at(p, h->where[i], "%s is already defined as %s", name, toml_type_description(v->type));
}

static int add_implicit_table(Parser *p, TomlValue *parent, const char *key, Position key_at,
                              Position header_at, TomlValue **ret)
{
        _cleanup_(toml_freep) TomlValue *t = table_new(TABLE_IMPLICIT, header_at);
        _cleanup_free_ char *k = strdup(key);

        if (!t || !k || table_add(parent, k, key_at, t) < 0)
                return oom(p);
        TAKE_PTR(k);
        *ret = TAKE_PTR(t);
        return 0;
}

/* The table holding the header's last part, creating implicit tables on the way. */
static int walk_to_parent(Parser *p, TomlValue *root, const HeaderName *h, Position header_at,
                          TomlValue **ret)
{
        TomlValue *t = root;

        for (size_t i = 0; i + 1 < h->n; i++) {
                TomlEntry *e = table_find(t, h->parts[i]);
                int r;

                if (e)
                        r = descend(p, h, i, e->value, &t);
                else
                        r = add_implicit_table(p, t, h->parts[i], h->where[i], header_at, &t);
                if (r < 0)
                        return r;
        }
        *ret = t;
        return 0;
}

/* [a.b]: defines the table, which may exist only as an implicit one. */
static int define_table(Parser *p, TomlValue *parent, const HeaderName *h, Position header_at,
                        TomlValue **ret)
{
        const char *key = h->parts[h->n - 1];
        Position key_at = h->where[h->n - 1];
        char name[NAME_MAX_MESSAGE * 2];
        TomlEntry *e = table_find(parent, key);
        TomlValue *v;

        if (!e) {
                _cleanup_(toml_freep) TomlValue *t = table_new(TABLE_DEFINED, header_at);
                _cleanup_free_ char *k = strdup(key);
                if (!t || !k || table_add(parent, k, key_at, t) < 0)
                        return oom(p);
                TAKE_PTR(k);
                *ret = TAKE_PTR(t);
                return 0;
        }

        v = e->value;
        format_name(h, h->n, name, sizeof(name));
        if (v->type == TOML_TABLE && v->table.kind == TABLE_IMPLICIT) {
                v->table.kind = TABLE_DEFINED;
                v->line = header_at.line;
                v->column = header_at.column;
                e->line = key_at.line;
                e->column = key_at.column;
                *ret = v;
                return 0;
        }
        if (v->type == TOML_TABLE && v->table.kind == TABLE_INLINE)
                return fail_at(p, key_at, "cannot extend inline table %s", name);
        if (v->type == TOML_TABLE)
                return fail_at(p, header_at, "table [%s] is defined twice", name);
        if (v->type == TOML_ARRAY && v->array.of_tables)
                return fail_at(p, header_at, "table [%s] is already an array of tables", name);
        return fail_at(p, key_at, "%s is already defined as %s", name, toml_type_description(v->type));
}

/* [[a.b]]: appends a table to the array of tables, creating it if need be. */
static int define_array_element(Parser *p, TomlValue *parent, const HeaderName *h, Position header_at,
                                TomlValue **ret)
{
        _cleanup_(toml_freep) TomlValue *element = NULL;
        const char *key = h->parts[h->n - 1];
        Position key_at = h->where[h->n - 1];
        char name[NAME_MAX_MESSAGE * 2];
        TomlEntry *e = table_find(parent, key);

        element = table_new(TABLE_ELEMENT, header_at);
        if (!element)
                return oom(p);

        if (!e) {
                _cleanup_(toml_freep) TomlValue *a = value_new(TOML_ARRAY, header_at);
                _cleanup_free_ char *k = strdup(key);
                TomlValue *first;

                if (!a || !k || array_append(a, element) < 0)
                        return oom(p);
                first = TAKE_PTR(element); /* a owns it now */
                a->array.of_tables = true;
                if (table_add(parent, k, key_at, a) < 0)
                        return oom(p);
                TAKE_PTR(k);
                TAKE_PTR(a);
                *ret = first;
                return 0;
        }

        format_name(h, h->n, name, sizeof(name));
        if (e->value->type == TOML_ARRAY && e->value->array.of_tables) {
                if (array_append(e->value, element) < 0)
                        return oom(p);
                *ret = TAKE_PTR(element);
                return 0;
        }
        if (e->value->type == TOML_ARRAY)
                return fail_at(p, key_at, "cannot append to static array %s", name);
        if (e->value->type == TOML_TABLE)
                return fail_at(p, header_at, "array of tables [[%s]] conflicts with table [%s]", name, name);
        return fail_at(p, key_at, "%s is already defined as %s", name,
                       toml_type_description(e->value->type));
}

/* [a.b] or [[a.b]]: *ret_current becomes the table that the following key/value pairs go into. */
static int parse_header(Parser *p, TomlValue *root, TomlValue **ret_current)
{
        _cleanup_(header_name_done) HeaderName h = {};
        Position header_at = here(p);
        TomlValue *parent;
        bool array;
        int r;

        assert(peek(p) == '[');

        p->pos++;
        array = peek(p) == '[';
        if (array)
                p->pos++;
        r = parse_header_name(p, &h);
        if (r < 0)
                return r;
        if (peek(p) != ']' || (array && peek_at(p, 1) != ']'))
                return fail(p, array ? "expected ']]' after table name" : "expected ']' after table name");
        p->pos += array ? 2 : 1;

        r = walk_to_parent(p, root, &h, header_at, &parent);
        if (r < 0)
                return r;
        if (array)
                return define_array_element(p, parent, &h, header_at, ret_current);
        return define_table(p, parent, &h, header_at, ret_current);
}

static int parse_document(Parser *p, TomlValue *root)
{
        TomlValue *current = root;

        for (;;) {
                int r;

                skip_whitespace(p);
                if (peek(p) < 0)
                        return 0;
                if (peek(p) == '#')
                        r = skip_comment(p);
                else if (is_newline(peek(p))) {
                        consume_newline(p);
                        r = 0;
                } else if (peek(p) == '[') {
                        r = parse_header(p, root, &current);
                        if (r >= 0)
                                r = expect_line_end(p, "table header");
                } else {
                        r = parse_keyval(p, current, 0);
                        if (r >= 0)
                                r = expect_line_end(p, "value");
                }
                if (r < 0)
                        return r;
        }
}

int toml_parse(const char *data, size_t size, TomlValue **ret_root, AjError *reterr)
{
        _cleanup_(toml_freep) TomlValue *root = NULL;
        Parser p = { .data = data, .size = size, .line = 1, .error = reterr };
        int r;

        assert(data || size == 0);
        assert(ret_root);

        if (size > TOML_MAX_INPUT)
                return aj_error(reterr, EFBIG, 0, 0, "input is larger than %d bytes", TOML_MAX_INPUT);
        r = check_input(&p);
        if (r < 0)
                return r;
        root = table_new(TABLE_ROOT, (Position){ 1, 1 });
        if (!root)
                return oom(&p);
        r = parse_document(&p, root);
        if (r < 0)
                return r;
        *ret_root = TAKE_PTR(root);
        return 0;
}

/* ---- Accessors ---- */

TomlType toml_type(const TomlValue *v)
{
        assert(v);
        return v->type;
}

unsigned toml_line(const TomlValue *v)
{
        assert(v);
        return v->line;
}

unsigned toml_column(const TomlValue *v)
{
        assert(v);
        return v->column;
}

const char *toml_string(const TomlValue *v)
{
        assert(v && v->type == TOML_STRING);
        return v->string;
}

int64_t toml_integer(const TomlValue *v)
{
        assert(v && v->type == TOML_INTEGER);
        return v->integer;
}

bool toml_boolean(const TomlValue *v)
{
        assert(v && v->type == TOML_BOOLEAN);
        return v->boolean;
}

size_t toml_array_length(const TomlValue *v)
{
        assert(v && v->type == TOML_ARRAY);
        return v->array.n_items;
}

const TomlValue *toml_array_get(const TomlValue *v, size_t i)
{
        assert(v && v->type == TOML_ARRAY);
        assert(i < v->array.n_items);
        return v->array.items[i];
}

size_t toml_table_length(const TomlValue *v)
{
        assert(v && v->type == TOML_TABLE);
        return v->table.n_entries;
}

const char *toml_table_key(const TomlValue *v, size_t i)
{
        assert(v && v->type == TOML_TABLE);
        assert(i < v->table.n_entries);
        return v->table.entries[i].key;
}

const TomlValue *toml_table_value(const TomlValue *v, size_t i)
{
        assert(v && v->type == TOML_TABLE);
        assert(i < v->table.n_entries);
        return v->table.entries[i].value;
}

unsigned toml_table_key_line(const TomlValue *v, size_t i)
{
        assert(v && v->type == TOML_TABLE);
        assert(i < v->table.n_entries);
        return v->table.entries[i].line;
}

unsigned toml_table_key_column(const TomlValue *v, size_t i)
{
        assert(v && v->type == TOML_TABLE);
        assert(i < v->table.n_entries);
        return v->table.entries[i].column;
}

const TomlValue *toml_table_get(const TomlValue *v, const char *key)
{
        const TomlEntry *e;

        assert(v && v->type == TOML_TABLE);
        assert(key);

        e = table_find(v, key);
        return e ? e->value : NULL;
}
