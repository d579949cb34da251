/* SPDX-License-Identifier: MIT */
/* Becoming an unprivileged user with nothing of root left: what the helper's direct enter does, and what
 * setup does to run anything as the sandbox user. */
#pragma once

#include <pwd.h>
#include <stdbool.h>

/* As root: pw's groups (initgroups()), its gid and uid as real, effective and saved ids, every capability
 * set empty (the bounding set while still allowed to, ambient and inheritable explicitly, permitted and
 * effective by the uid change and then explicitly), and no_new_privs. On failure returns -errno and sets
 * *ret_step to what could not be done ("set its uid", ...). */
int creds_drop_to_user(const struct passwd *pw, const char **ret_step);

/* Reads back whether the process is exactly that: ids, groups' gid, every capability set empty,
 * no_new_privs, and no way back to uid 0. */
bool creds_dropped_to(const struct passwd *pw);
