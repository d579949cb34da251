/* SPDX-License-Identifier: MIT */
/* The export's receiver, on the runner's side: it reads the sender's stream (export-frame.h), which it
 * believes no further than the format and its own limits, and writes the requested outputs into a fresh
 * directory of the runner's. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "export-frame.h"
#include "secret-scan.h"

typedef enum ExportState {
        EXPORT_MISSING,  /* the stream never named it */
        EXPORT_EXPORTED, /* written whole, bytes long */
        EXPORT_REFUSED,  /* not written (nothing of it remains): reason says why */
} ExportState;

typedef struct ExportEntry {
        const char *name; /* the requested name: the caller's string, not a copy */
        ExportState state;
        uint64_t bytes; /* EXPORT_EXPORTED: the file's size; else 0 */
        /* EXPORT_REFUSED because a limit was hit: the sender's LIMIT record ("larger than the per-file
         * limit of N bytes", by its size) or the receiver's own count of the bytes and files received
         * ("over the per-file limit of N bytes", "over the total limit of N bytes", "over the limit of N
         * files"). */
        bool limit;
        /* EXPORT_REFUSED because it holds a secret of the receiver's set (secret-scan.h); reason names
         * which kind, never the secret. */
        bool secret;
        /* EXPORT_REFUSED because the receiver could not write it: the positive errno (EEXIST: something
         * of that name was already in the output directory, which is left as it was; ELOOP or ENOTDIR: a
         * link or a file where a directory of its path should be, never followed; ENOSPC, EIO, ...).
         * 0 otherwise. */
        int error;
        char reason[EXPORT_REASON_MAX + 1]; /* EXPORT_REFUSED: one line without control characters */
} ExportEntry;

typedef struct ExportResult {
        ExportEntry *entries; /* one per requested name, in the order of names; export_result_done() */
        size_t n_entries;
        size_t n_exported, n_refused, n_missing; /* entries in each state; they add up to n_entries */
        size_t n_failed;                         /* refused entries with error != 0 */
        size_t n_secret;                         /* refused entries with secret set */
        uint64_t total_bytes;                    /* the exported files' bytes together */
        bool limit_hit;                          /* some entry has limit set: the caller exits 3 */
} ExportResult;

/* Reads the stream from in_fd (blocking reads, to end of file) and writes each file the sender sends into
 * outdir_fd under its name: intermediate directories made 0700 (mkdirat()), the file created 0600 with
 * O_EXCL, each component opened with O_NOFOLLOW, so that nothing in outdir_fd is followed or overwritten.
 * names (NULL-terminated) are the requested outputs, each a plain relative path, none twice (else
 * -EINVAL). Limits count the bytes and files actually received; a file over a limit is removed and its
 * entry refused with limit set; a file that could not be written is removed and its entry refused with
 * error set; secrets (may be NULL) are searched for in each file as it comes, across its pieces, and a
 * file that holds one is removed (what was written of it) and its entry refused with secret set; in each
 * case the stream goes on. On 0, *ret holds the result (free with
 * export_result_done()). A stream that breaks the format, names a file not requested or a name twice,
 * sends more than max_file_bytes + 1 bytes of one file (the sender stops there), ends without END, or
 * cannot be read is an error: -EBADMSG or the read's -errno, with *reterr; every file and directory this
 * call created is then removed again, so nothing half-exported remains, and *ret is not set. */
int export_receive(int in_fd, int outdir_fd, char *const *names, const ExportLimits *limits,
                   const SecretSet *secrets, ExportResult *ret, AjError *reterr);

/* The same, fed by the caller as the stream comes (from a pump that also watches a deadline and the
 * run's signals): export_receiver_new() checks names as export_receive() does; export_receiver_feed()
 * takes each piece of the stream (-EBADMSG or -errno once the stream broke, and from then on);
 * export_receiver_end() at the stream's end gives *ret as export_receive() does, or the error, with
 * everything this receiver wrote removed again; export_receiver_free() without an end (a cancel, a
 * deadline) also removes everything it wrote. end and free both free the receiver. */
typedef struct ExportReceiver ExportReceiver;
int export_receiver_new(int outdir_fd, char *const *names, const ExportLimits *limits,
                        const SecretSet *secrets, ExportReceiver **ret, AjError *reterr);
int export_receiver_feed(ExportReceiver *x, const void *data, size_t size);
int export_receiver_end(ExportReceiver *x, ExportResult *ret);
void export_receiver_free(ExportReceiver *x);

void export_result_done(ExportResult *result);
