/* SPDX-License-Identifier: MIT */
/* The /etc/environment filter setup applies: every login of the sandbox user reads that file (pam_env,
 * and systemd's user managers through environment.d), so a runner token (ACTIONS_*) or the runner's
 * runtime directory (XDG_RUNTIME_DIR) left there would be handed to the sandbox. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#define ENVIRONMENT_PATH     "/etc/environment"
#define ENVIRONMENT_MAX_SIZE (1024 * 1024)

/* Whether the variable name[0..len) is one the filter removes: XDG_RUNTIME_DIR exactly (names are
 * case-sensitive and nothing reads another spelling), or any name beginning ACTIONS_ in any case (as the
 * configuration refuses them: fail closed). */
bool environment_name_removed(const char *name, size_t len);

/* Returns data (size bytes, any bytes) without the lines that set a removed name, every other byte kept
 * as it was: line endings (LF or CRLF), comments, quoting, a missing final newline.
 *
 * A line sets NAME when it is, after optional spaces and tabs and an optional "export" with spaces or
 * tabs after it, NAME (bytes up to a space, tab or '='), optional spaces or tabs, then '='. Each line is
 * examined on its own, so no line that would set a removed name survives whichever reader joins lines.
 * The readers differ, so the filter takes the union of what they do:
 *  - a removed line whose end (before spaces, tabs and carriage returns) is a backslash continues on the
 *    next line in pam_env and systemd alike: the lines it continues onto go with it, so no piece of its
 *    value becomes a line of its own;
 *  - systemd also ends a line at a lone carriage return, so each part of a line between carriage returns
 *    is examined too, and a line with a part that sets a removed name goes whole.
 * A quoted value that spans lines (systemd) is not followed: its later lines are examined as lines, so at
 * worst a piece of such a value is removed, never kept as a removed name's setting.
 *
 * *ret_text is NUL-terminated (for convenience; the text may hold NULs), its length in *ret_size;
 * *ret_removed is a NULL-terminated vector of the removed names as written, each once, in order (empty
 * when nothing was removed). -ENOMEM. */
int environment_filter(const char *data, size_t size, char **ret_text, size_t *ret_size,
                       char ***ret_removed);
