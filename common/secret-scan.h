/* SPDX-License-Identifier: MIT */
/* What a run must not publish: the exact values it knows to be secret (the run token, the values of the
 * runner's variables named *_TOKEN, *_KEY, *_SECRET, *_PASSWORD) and strings shaped like the well-known
 * token formats (GitHub's, AWS access key ids, Anthropic's, OpenAI's, Google's API keys, Slack's, a PEM
 * private key's armour). Found where it stands as plain bytes: a secret encoded, split or transformed by
 * whoever wrote it (base64, percent-encoding, a byte between) is not found. This keeps the careless leak
 * out of what is published; it cannot stop a program that holds the secret from sending it elsewhere. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* The shortest value of a variable that is taken as a secret: shorter ones ("1", "true") would redact
 * ordinary text. Every pattern matches at least as many bytes, so a redaction never lengthens text. */
#define SECRET_MIN_SIZE 8
/* The longest exact secret kept (longer ones are taken by their first SECRET_MAX_SIZE bytes). */
#define SECRET_MAX_SIZE 4096
/* How many exact secrets a set holds; more are refused (-E2BIG). */
#define SECRET_SET_MAX 128
/* What a redaction writes where a secret stood. */
#define SECRET_REDACTED "[secret]"

typedef struct Secret {
        char *value;
        size_t size;
        char *what; /* "the run token", "the value of $NAME": never the value */
} Secret;

typedef struct SecretSet {
        Secret items[SECRET_SET_MAX];
        size_t n;
        size_t longest; /* the longest match of an item or a pattern's shortest match: what a stream
                         * keeps between two pieces */
} SecretSet;

/* Adds an exact secret, copied (size bytes, SECRET_MIN_SIZE or more: else -EINVAL). 0 or -errno. */
int secret_set_add(SecretSet *set, const char *value, size_t size, const char *what);
/* Adds the value of every variable of envp (NAME=VALUE strings, NULL-terminated) whose name ends in
 * _TOKEN, _KEY, _SECRET or _PASSWORD (or is one of them without the underscore), and whose value has
 * SECRET_MIN_SIZE bytes or more. 0 or -errno. */
int secret_set_add_environment(SecretSet *set, char *const *envp);
/* Initialises an empty set: every pattern is in every set. */
void secret_set_init(SecretSet *set);
/* Frees and wipes the values. */
void secret_set_done(SecretSet *set);

/* The first secret in data[0..n): true with its offset, its length (a pattern: its whole run of the
 * pattern's bytes) and what it is; false if none. */
bool secret_find(const SecretSet *set, const char *data, size_t n, size_t *ret_offset, size_t *ret_size,
                 const char **ret_what);

/* Replaces every secret in buf[0..*len) with SECRET_REDACTED, in place (never longer), and updates *len.
 * The number of secrets replaced. */
size_t secret_redact(const SecretSet *set, char *buf, size_t *len);
/* The same for a NUL-terminated string. */
size_t secret_redact_string(const SecretSet *set, char *s);

/* A search along a stream given in pieces: a secret across two pieces is found. */
typedef struct SecretStream {
        const SecretSet *set;
        char *carry; /* the last set->longest - 1 bytes seen, and room for as many of the next piece */
        size_t carry_len;
        const char *found; /* what the first secret found is (a Secret's what or a pattern's), or NULL */
} SecretStream;

/* 0 or -ENOMEM. */
int secret_stream_init(SecretStream *st, const SecretSet *set);
/* Starts a new stream (a next file) with the same set. */
void secret_stream_reset(SecretStream *st);
/* Searches the next piece; sets st->found at the first secret. */
void secret_stream_feed(SecretStream *st, const char *data, size_t n);
void secret_stream_done(SecretStream *st);

/* Text on its way to a log, redacted a line at a time: a line ends at "\n", "\r", "\v" or "\f" (where the
 * Actions runner or a terminal may end one); a line longer than SECRET_LINE_HOLD is passed on in parts,
 * each keeping back what may be the start of a secret that the next part completes. */
#define SECRET_LINE_HOLD (16U * 1024U)
typedef int (*SecretWriteFn)(const char *data, size_t n, void *userdata);
typedef struct SecretLines {
        const SecretSet *set;
        char buf[SECRET_LINE_HOLD + SECRET_MAX_SIZE];
        size_t len;
} SecretLines;

/* Feeds n bytes; passes the lines that ended (redacted) to fn. 0, or fn's error. */
int secret_lines_feed(SecretLines *l, const char *data, size_t n, SecretWriteFn fn, void *userdata);
/* Passes on what is held (the stream ended). 0, or fn's error. */
int secret_lines_flush(SecretLines *l, SecretWriteFn fn, void *userdata);
