/* SPDX-License-Identifier: MIT */
/* What a checkout would write, measured from the objects' headers before it is made: a blob of 1 GiB of
 * zeros is a kilobyte in a pack, and libgit2 inflates each file whole to check it out. */
#pragma once

#include <git2.h>

#include "clone.h"
#include "error.h"

/* Walks the tree tree_id, and the tree base_tree_id at each of trusted_paths (NULL-terminated, each valid;
 * may be NULL), as a checkout of both would: every entry counts against limits->max_files; every tree and
 * file against max_object_bytes by the size its header gives (a tree is read only after its header passed);
 * the files (links included) together against max_checkout_bytes. A bound of 0 is none. Returns 0, -EFBIG
 * with *reterr naming the bound, its key in [run] and the path (control bytes replaced), -EIO when an object
 * cannot be read, or -ENOMEM. */
int checkout_bounds_check(git_repository *repo, const git_oid *tree_id, const git_oid *base_tree_id,
                          char *const *trusted_paths, const CloneLimits *limits, AjError *reterr);
