/* SPDX-License-Identifier: MIT */
/* Text from the sandbox side, made safe to print on one result line: it can start no line of its own,
 * forge no result and no GitHub Actions workflow command. */
#pragma once

#include <stddef.h>

/* Copies s into buf (size bytes, at least 16), NUL-terminated: bytes below 0x20, 0x7f and above, and
 * backslash as \xNN (\\ for backslash); the second ':' of "::" and the second '#' of "##" as \x3a and
 * \x23; '|' as \x7c (it would end a Markdown table cell). Text that does not fit ends "...". Returns buf. */
const char *check_escape(const char *s, char *buf, size_t size);
