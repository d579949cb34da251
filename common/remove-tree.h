/* SPDX-License-Identifier: MIT */
/* The disposal's removal of a tree: the sandbox user removes its own run directory, whatever an agent left
 * in it (links to anywhere, FIFOs, sockets, directories without write permission), never following a link
 * and never leaving its file system. */
#pragma once

#include <stdbool.h>

/* The walk holds one descriptor per level, this many at most: a directory deeper than this below the top
 * is moved up into the top (as ".remove-tree-N") and removed from there, so no depth stops the removal. */
#define REMOVE_TREE_DEPTH_MAX 256

/* Removes name (relative to dirfd) and everything below it. A link is removed, never followed; a
 * directory the caller owns is first given u+rwx, so one an agent left 0500 or 0000 can be emptied; a
 * directory on another file system or mount (st_dev, or the mount id where statx() gives it) is not
 * entered: -EXDEV. 0 when name is gone, also when it was not there to begin with; else -errno, with
 * part of the tree possibly removed (and parts deeper than REMOVE_TREE_DEPTH_MAX possibly moved up into
 * name). */
int remove_tree_at(int dirfd, const char *name);

/* 1 when name (relative to dirfd) does not exist, 0 when it does (a dangling link too), or -errno. */
int tree_is_gone_at(int dirfd, const char *name);

/* Removes path (relative, '/'-separated) below rootfd, following no link: something that is not a
 * directory on the way (a link above all) is removed itself, so that nothing stands where a directory of
 * the path would be. *ret_removed says whether anything was there. 0, or -errno. */
int remove_path_nofollow(int rootfd, const char *path, bool *ret_removed);
