/* SPDX-License-Identifier: MIT */
/* The search the sandbox user makes, before an agent starts, for copies of a secret (the run token) in
 * what it can read: the files below some roots, and the environment and command line of every process. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "key-print.h"

/* Files are read in chunks of this size; the last secret_size - 1 bytes of one chunk are kept before the
 * next, so a secret across the boundary is found. */
#define TOKEN_SCAN_CHUNK (64U * 1024U)
/* What is read of each /proc/PID/environ and /proc/PID/cmdline; past it the search is truncated. */
#define TOKEN_SCAN_PROC_MAX (1024U * 1024U)

typedef struct TokenScanLimits {
        uint64_t max_files; /* regular files read, in all */
        uint64_t max_bytes; /* bytes read, in all */
        unsigned max_depth; /* directory depth below a root: 0 reads only the root's own files */
} TokenScanLimits;

typedef struct TokenScan {
        uint64_t files, dirs, bytes; /* read so far by token_scan_tree() */
        uint64_t processes;          /* processes whose environ or cmdline token_scan_processes() read */
        uint64_t denied;             /* entries skipped because EACCES/EPERM (what the caller cannot read) */
        bool truncated;              /* a limit was hit: the search is incomplete */
        /* The first place holding the secret (a path, or "pid N environ" / "pid N cmdline"), malloc'd;
         * NULL if none. */
        char *found;
} TokenScan;

/* Searches every regular file below root (a directory, opened without following a link) for the secret,
 * never following a link, never crossing into another filesystem (st_dev of root), never opening
 * anything but a regular file (checked with fstat after an O_NONBLOCK|O_NOFOLLOW|O_NOCTTY open too, since
 * the entry can be swapped between the stat and the open), skipping the files and directories whose
 * (st_dev, st_ino) is in skip (the expected holders of the secret, a tree known not to hold it), counting
 * what it cannot read in denied. Stops at the first find or when max_files or max_bytes is reached
 * (truncated); a directory deeper than max_depth, or whose path would not fit in PATH_MAX, is left out
 * (truncated) and the search goes on. A missing root (ENOENT) is not an error: nothing searched; nor is a
 * root the caller may not open (counted in denied). Accumulates into *scan (so several roots share the
 * limits; nothing is searched once scan->found is set). Returns 0 or -errno (not for EACCES: those are
 * counted). */
int token_scan_tree(const char *root, const char *secret, size_t secret_size, const struct stat *skip,
                    size_t n_skip, const TokenScanLimits *lim, TokenScan *scan);

/* Searches /proc/PID/environ and /proc/PID/cmdline of every process the caller can read (proc_root is
 * "/proc", a parameter for the tests), each read bounded by TOKEN_SCAN_PROC_MAX (truncated past it);
 * processes that vanish or deny are skipped (counted in denied for EACCES/EPERM). Stops at the first
 * find. Returns 0 or -errno. */
int token_scan_processes(const char *proc_root, const char *secret, size_t secret_size, TokenScan *scan);

/* The same two searches for a secret the caller knows only by its print (key-print.h): the model's key,
 * which the sandbox side is never given. */
int key_scan_tree(const char *root, const KeyPrint *print, const struct stat *skip, size_t n_skip,
                  const TokenScanLimits *lim, TokenScan *scan);
int key_scan_processes(const char *proc_root, const KeyPrint *print, TokenScan *scan);

/* Frees found. */
void token_scan_done(TokenScan *scan);
