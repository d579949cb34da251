/* SPDX-License-Identifier: MIT */
/* Whether a package owns a program: what vouches for a set-id program of root's. Setup strips the bit
 * from those no package owns; the check's setuid-unowned probe finds any that remain. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "error.h"

/* For each of the n programs (absolute paths), whether a package owns it: owned[i]. Asks dpkg-query -S
 * (dpkg_query, an absolute path) once for all of them, each also under the other name of a merged /usr;
 * where dpkg_query is NULL, rpm -qf (rpm) for each. 0, or -errno with *reterr (the query failed). */
int package_owners(const char *dpkg_query, const char *rpm, char **programs, size_t n, bool *owned,
                   AjError *reterr);
