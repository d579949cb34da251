/* SPDX-License-Identifier: MIT */
/* A growing NULL-terminated vector of owned strings, for command lines and environments. */
#pragma once

#include <stddef.h>

typedef struct Strv {
        char **v; /* NULL-terminated once anything was added; NULL before */
        size_t n, allocated;
} Strv;

/* Appends owned (which may be NULL after a failed allocation: then -ENOMEM). Takes ownership always. */
int strv_push(Strv *s, char *owned);
int strv_pushf(Strv *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Sets NAME=VALUE (entry), replacing an entry of the same name: later sources override earlier ones. */
int strv_env_set(Strv *s, const char *entry);
/* Frees what was added and empties s. */
void strv_clear(Strv *s);
