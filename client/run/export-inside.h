/* SPDX-License-Identifier: MIT */
/* The export's sender, run as the sandbox user once nothing else of that user is alive: it writes the
 * requested outputs of the workspace to the stream (export-frame.h), never through a link, never more of
 * a file than the per-file limit allows. */
#pragma once

#include <stddef.h>

#include "export-frame.h"

/* For each of names (NULL-terminated, each a plain relative path, see export_name_valid()), opened below
 * workdir_fd through no link and no mount point: a FILE record and its data, or a refusal record saying
 * why not (a link in its path, not a regular file, more than one hard link, missing, larger than
 * limits->max_file_bytes: a LIMIT record). A file that grows while it is read is cut after
 * max_file_bytes + 1 bytes, which the receiver refuses. Only the per-file limit is applied here; the
 * total and the count are the receiver's. Writes no END record (export_send_end()), so a buffer may
 * follow. 0; -EINVAL, with nothing written, when a name is not a plain relative path; -errno when out_fd
 * cannot be written, when openat2() is missing, or when reading a file failed after its data began (the
 * stream then stops without END, which the receiver refuses). */
int export_send(int workdir_fd, char *const *names, const ExportLimits *limits, int out_fd);

/* An output made in memory (the patch) as one file, whatever its size: the receiver applies its
 * limits. 0, -EINVAL for a name that is not a plain relative path, or -errno. */
int export_send_buffer(int out_fd, const char *name, const void *data, size_t size);

/* The END record, after everything else. */
int export_send_end(int out_fd);

/* Ends this process (_exit(status)) once the peer of fd (the runner's end of the stream, on standard
 * output) is gone: the runner died, however it was killed. A thread polls fd for POLLHUP or POLLERR, so
 * that whatever the process is doing (a patch of a huge tree, a disposal, a read the sandbox user made
 * block), it does not outlive its caller. 0 or -errno. */
int export_watch_caller(int fd, int status);
