/* SPDX-License-Identifier: MIT */
/* Whether root may trust a file: the file and every directory on the way to it (links followed, each
 * link's own owner checked too) are owned by root and writable by nobody else (group write only where
 * the group is root). */
#pragma once

#include <stddef.h>

#include "error.h"

/* Returns 0 when path is trusted. Otherwise -EPERM (something on the way is not root's alone), -ENOENT,
 * -ELOOP (too many links), -EINVAL (not absolute), or another -errno; *reterr names the component and
 * what is wrong with it. */
int trusted_path_check(const char *path, AjError *reterr);

/* The same walk, with ownership (and no access ACL) checked but not write bits: for setup's preflight,
 * about paths whose group and other write it removes before it relies on them. */
int trusted_path_check_owners(const char *path, AjError *reterr);

/* Looks a program up on the given ':'-separated list of absolute directories (first regular file with an
 * execute bit wins), then trusted_path_check()s it. *ret_path is the directory joined with name. */
int trusted_program_find(const char *search_path, const char *name, char **ret_path, AjError *reterr);

/* trusted_path_check() for every directory of a ':'-separated list that exists; a missing one is
 * skipped (nothing can be found there). */
int trusted_search_path_check(const char *search_path, AjError *reterr);
