/* SPDX-License-Identifier: MIT */
/* A strict TOML subset, for the configuration and the egress policy.
 *
 * Supported: comments; [tables], [[arrays of tables]], dotted table names ([a.b], [[a.b]]); bare and
 * quoted keys (no dotted keys in key/value lines); single-line basic ("...", with the TOML escapes) and
 * literal ('...') strings; decimal 64-bit integers with an optional sign; true/false; arrays (which may
 * span lines, may end with a comma, and hold values of one type); inline tables { k = v, ... } on one
 * line. Anything else (floats, dates, multi-line strings, hex/octal/binary or underscored integers,
 * dotted keys, a NUL byte, invalid UTF-8, a key defined twice, a table defined twice) is an error that
 * names its line and column: never a silent misread. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

typedef enum TomlType {
        TOML_STRING,
        TOML_INTEGER,
        TOML_BOOLEAN,
        TOML_ARRAY,
        TOML_TABLE,
} TomlType;

typedef struct TomlValue TomlValue;

/* Inputs larger than this are refused before parsing. */
#define TOML_MAX_INPUT (1024 * 1024)
/* Arrays and inline tables nest at most this deep; a table name ([a.b.c]) has at most this many parts. */
#define TOML_MAX_DEPTH 32

/* Parses data[0..size) (need not be NUL-terminated). On success *ret_root is a TOML_TABLE the caller
 * frees with toml_free(). On failure returns -EINVAL (or -ENOMEM, -EFBIG) and fills *reterr with the
 * line, column and a one-line message. */
int toml_parse(const char *data, size_t size, TomlValue **ret_root, AjError *reterr);
void toml_free(TomlValue *v);
static inline void toml_freep(TomlValue **v)
{
        toml_free(*v);
}

TomlType toml_type(const TomlValue *v);
const char *toml_type_name(TomlType t);   /* "string", "integer", "boolean", "array", "table" */
unsigned toml_line(const TomlValue *v);   /* where the value (or table header) starts, 1-based */
unsigned toml_column(const TomlValue *v); /* 1-based */

const char *toml_string(const TomlValue *v); /* NUL-terminated; strings never contain NUL */
int64_t toml_integer(const TomlValue *v);
bool toml_boolean(const TomlValue *v);

size_t toml_array_length(const TomlValue *v);
const TomlValue *toml_array_get(const TomlValue *v, size_t i);

/* Keys in the order they were defined. */
size_t toml_table_length(const TomlValue *v);
const char *toml_table_key(const TomlValue *v, size_t i);
const TomlValue *toml_table_value(const TomlValue *v, size_t i);
/* NULL when absent. */
const TomlValue *toml_table_get(const TomlValue *v, const char *key);

/* Where the key of entry i was written: for a table made by a header, the part of the header naming it. */
unsigned toml_table_key_line(const TomlValue *v, size_t i);
unsigned toml_table_key_column(const TomlValue *v, size_t i);

/* "a string", "an integer", "a boolean", "an array", "a table": for messages. */
const char *toml_type_description(TomlType t);

/* Copies s into buf (size bytes, at least 8) for a one-line message: '"', '\\' and control characters are
 * escaped as in a basic string, and a string too long for buf ends "...". Returns buf. */
const char *toml_escape(const char *s, char *buf, size_t size);
