/* SPDX-License-Identifier: MIT */
/* The files setup writes to deny the sandbox user (and, when locking, the runner) root's ways in: the sudo
 * rule, the polkit rule, and the cron and at deny lists. Text only, every name checked; writing the files
 * safely is setup's. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "error.h"

/* No dot in the name, so sudo reads it; "zz" so that it is read last and its rules win. */
#define SUDOERS_PATH "/etc/sudoers.d/zz-agentic-job"
/* "00" so that it runs first: polkit takes the first rule that answers. */
#define POLKIT_RULES_DIR  "/etc/polkit-1/rules.d"
#define POLKIT_RULES_PATH POLKIT_RULES_DIR "/00-agentic-job.rules"

/* The sudo rule: the sandbox user may run nothing; with lock_runner, the runner loses every grant it had
 * elsewhere (sudo applies the last rule that matches, and this file is read last); either way the runner
 * may run the helper's four forms as root without a password. sudoers.d/agentic-job in the source tree is
 * this text for lock_runner = false with @HELPER@, @RUNNER@ and @SANDBOX@ in place of the three values
 * (a unit test holds them equal). -EINVAL with *reterr for a user name that is not valid
 * (user_name_valid()), root, the same user twice, or a helper path that is not plain and absolute or holds
 * a byte other than letters, digits, '/', '.', '_' and '-' (sudoers gives others a meaning); -ENOMEM. */
int sudoers_text(const char *helper_path, const char *sandbox_user, const char *runner_user,
                 bool lock_runner, char **ret_text, AjError *reterr);

/* The polkit rule: every action refused (polkit.Result.NO, not even an administrator's password) for the
 * sandbox user and, with lock_runner, for runner_user (which may be NULL otherwise). The same checks and
 * errors as sudoers_text(). */
int polkit_rules_text(const char *sandbox_user, const char *runner_user, bool lock_runner, char **ret_text,
                      AjError *reterr);

typedef enum DenyListKind {
        DENY_LIST_CRON, /* /etc/cron.allow, /etc/cron.deny: no list at all admits everyone (Debian) */
        DENY_LIST_AT,   /* /etc/at.allow, /etc/at.deny: no list at all admits root alone */
} DenyListKind;

typedef struct DenyListDecision {
        bool write;         /* whether to write the deny list (create it, mode 0644, when absent) */
        char *deny_text;    /* when write: the whole new deny list, NUL-terminated; owned */
        size_t deny_size;   /* its length */
        const char *reason; /* one line, for setup's output; static */
} DenyListDecision;

/* What to do so that user may not use cron (or at), given the allow and deny lists' contents (NULL: the
 * file does not exist). An allow list that exists decides alone: if it lists user (a line equal to it,
 * blanks and a carriage return around it ignored, to fail closed) that is -EPERM, since setup does not
 * edit an administrator's allow list; else nothing to do. Without one: a deny list that lists user on a
 * line of its own, newline-terminated, needs nothing; otherwise user is appended on a line of its own
 * (after a newline, if the list did not end with one: a cron reading it may skip a partial line). With
 * neither list, cron's deny list is created with user alone, and at is left as it is. -EINVAL for a
 * user name that is not valid or is root; -ENOMEM. */
int deny_list_decide(DenyListKind kind, const char *user, const char *allow, size_t allow_size,
                     const char *deny, size_t deny_size, DenyListDecision *ret, AjError *reterr);
void deny_list_decision_done(DenyListDecision *d);

const char *deny_list_allow_path(DenyListKind kind); /* "/etc/cron.allow", "/etc/at.allow" */
const char *deny_list_deny_path(DenyListKind kind);  /* "/etc/cron.deny", "/etc/at.deny" */

/* Whether sudoers text has a line "@includedir DIR" (or the older "#includedir DIR"), blanks around the
 * words and a trailing '/' allowed: only then is a drop-in in DIR read at all. */
bool sudoers_includes_dir(const char *text, const char *dir);

/* Whether path can be asked of `dpkg-query -S` as it is: absolute, and none of the glob characters
 * dpkg-query gives a meaning ("*?[]\\") nor a newline. A path that cannot is treated as owned by no
 * package (its set-id bit goes: the safe side). */
bool package_query_literal(const char *path);

/* Whether `dpkg-query -S` output (lines "PACKAGE[, PACKAGE...]: PATH") names exactly path as owned.
 * Diversion lines ("diversion by PACKAGE from: PATH") do not count. */
bool dpkg_query_lists(const char *out, const char *path);

/* The configuration text (size bytes) with `runner-user = "RUNNER"` added: on the line after a
 * "[sandbox]" header (blanks and a comment allowed around it), or in a new [sandbox] table at the end.
 * The caller parses the result to be sure. *ret is NUL-terminated, its length in *ret_size. -EINVAL for
 * a runner name that is not valid (user_name_valid()); -ENOMEM. */
int config_add_runner(const char *text, size_t size, const char *runner, char **ret, size_t *ret_size);

/* The number of the first line of sudoers text after its include of dir (sudoers_includes_dir()) that
 * is neither blank, a comment nor a Defaults entry (or a continuation of one): a user specification or
 * an include there is read after every drop-in, so its rules would win over setup's. 0 when there is
 * none (or no include). */
unsigned sudoers_rule_after_dir(const char *text, const char *dir);
