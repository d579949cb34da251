/* SPDX-License-Identifier: MIT */
/* Writing a root-owned file so that no link, no other user and no crash can make it anything but the old
 * file or the whole new one. */
#pragma once

#include <stddef.h>
#include <sys/types.h>

#include "error.h"

/* Replaces the file at path (absolute) with size bytes of data, owned by uid:gid with exactly mode (any of
 * 07777; the umask plays no part). The steps:
 *
 *  - the parent directory is opened with O_DIRECTORY|O_NOFOLLOW (a link as the last component of the
 *    parent is refused; links higher up are followed) and must be owned by root, or by the effective
 *    uid (the same thing when the caller is root, as setup is), and writable by nobody else: only then
 *    can nobody plant or swap a name in it;
 *  - the new content goes to ".NAME.tmp-" plus 16 random hex digits in that directory, created with
 *    O_CREAT|O_EXCL|O_NOFOLLOW (a name already there, link or not, is never opened: a new random name is
 *    tried, 16 times at most). The name contains dots, so sudo's and cron's include directories skip it;
 *  - written whole, fchown()ed, fchmod()ed to mode (after the chown, which clears set-id bits), fsync()ed;
 *  - validator, when not NULL, is run: an argv whose first element is an absolute program path, the
 *    temporary file's absolute path appended as the last argument (e.g. { "/usr/sbin/visudo", "-c", "-f",
 *    NULL } or { "/usr/sbin/nft", "-c", "-f", NULL }). It runs with an empty environment, standard input
 *    from /dev/null, standard output and error captured (the first 4096 bytes kept). Anything but exit
 *    status 0 fails with -EINVAL and the first line of its output in *reterr;
 *  - renameat() onto NAME. This never follows a link at NAME: a link there is itself replaced, and what
 *    it pointed to is left alone. Then the directory is fsync()ed.
 *
 * Returns 0, or: -EINVAL (path not absolute or without a last component, validator program not absolute,
 * validator failed), -E2BIG (validator has more than 32 elements), -EPERM (the parent is not root's alone),
 * -ELOOP (the parent is a link), -EEXIST (no free temporary name), or another -errno. On any failure before
 * the rename the temporary file is removed and the old file (or its absence) is untouched. Only a failure of
 * the final directory fsync() comes after the rename: then the new file is in place but perhaps not yet
 * durable. *reterr names the path and what went wrong. */
int root_file_write(const char *path, const void *data, size_t size, mode_t mode, uid_t uid, gid_t gid,
                    char *const *validator, AjError *reterr);

/* root_file_write() in a directory that dir_owner may own instead of root: a system daemon's own
 * directory, such as polkit's rules.d, which Debian 12 gives to polkitd (a daemon that decides who is
 * root anyway). (uid_t)-1: root's alone, as root_file_write(). */
int root_file_write_in(const char *path, uid_t dir_owner, const void *data, size_t size, mode_t mode,
                       uid_t uid, gid_t gid, char *const *validator, AjError *reterr);

/* The directory checks of root_file_write_in() alone, writing nothing: whether a write to path could
 * happen. 0, or the error root_file_write_in() would return for its directory. */
int root_file_check_parent(const char *path, uid_t dir_owner, AjError *reterr);
