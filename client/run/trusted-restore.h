/* SPDX-License-Identifier: MIT */
/* The base's trusted paths put back after the setup command. The clone replaced them from the base commit,
 * but the setup command (the pull request's own install hooks, untrusted) runs before the agent and may
 * rewrite anything of the workspace: the trusted paths, the directories above them, the repository's
 * configuration and objects. So the agent's enter, with nothing else of the sandbox user alive, writes
 * them again and reads them back. */
#pragma once

#include "error.h"

typedef struct TrustedRestore {
        unsigned n_replaced; /* paths written from the base */
        unsigned n_removed;  /* paths the base lacks, where something stood */
} TrustedRestore;

/* Below workspace (a directory, not a link): for each of paths (NULL-terminated, each valid as
 * trusted_path_validate() says), whatever stands at it is removed, and at each directory of its path
 * that is not a directory (a link above all); then the base commit's entry there (a file, an executable,
 * a link, a directory whole, a submodule's empty directory) is written, when the base has one, and read
 * back against the base's object ids. The objects come from the workspace's object database alone,
 * each checked against its id as it is read: no configuration, index, attributes or hook of the
 * repository is read, and an object the setup command changed is refused, not taken. 0, or -errno with
 * reterr set. */
int trusted_paths_restore(const char *workspace, const char *base_commit, char *const *paths,
                          TrustedRestore *ret, AjError *reterr);
