/* SPDX-License-Identifier: MIT */
/* What the agent changed: the workspace against the exact commit it was cloned at, as a unified diff. */
#pragma once

#include <stddef.h>

#include "error.h"

/* A unified diff of the working tree of workdir (a workspace_clone() clone) against the tree of
 * commit_hex, untracked files included with their content (not those a .gitignore or .git/info/exclude
 * ignores), a link as its target text (never followed), a binary file as "Binary files ... differ",
 * submodules left out. Paths under exclude_paths (NULL-terminated, the trusted paths; may be NULL) are left
 * out. None of the repository's configuration and none of its index is used, and no conversion applies
 * while .git/info/attributes is workspace_clone()'s. *ret_patch is NUL-terminated (*ret_size without the
 * NUL), "" when nothing changed.
 *
 * Returns 0, -EINVAL (commit_hex is not 40 lowercase hex digits, workdir/.git is not a directory, or
 * patch_check_workspace() refused),
 * -EFBIG (the diff is longer than max_bytes: generation stops there), -EIO (libgit2 failed, the message in
 * *reterr, e.g. when the commit is not in the clone) or -ENOMEM. Run it as the workspace's owner (the
 * sandbox user: libgit2 refuses a repository another user owns, and no safe.directory is read) and after
 * the agent's processes are gone: the workspace, .git included, is the agent's to have changed. */
/* What patch_build() checks first, before libgit2 opens anything: every file libgit2 may open in the
 * workspace is a regular file (anything in a .git directory, at any level, a regular file or a directory;
 * every .gitignore, .gitattributes and .gitmodules a regular file), .git/config includes no other file and
 * no objects/info/alternates exists; nothing is opened but directories (without blocking) and .git/config
 * (O_NONBLOCK, regular only). 0, or -EINVAL with *reterr naming the file and what it is (or another
 * -errno). So a FIFO the agent left where libgit2 reads cannot hold the export up. */
int patch_check_workspace(const char *workdir, AjError *reterr);

int patch_build(const char *workdir, const char *commit_hex, char *const *exclude_paths, size_t max_bytes,
                char **ret_patch, size_t *ret_size, AjError *reterr);
