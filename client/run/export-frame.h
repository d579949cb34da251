/* SPDX-License-Identifier: MIT */
/* The export's stream, from the sender (the sandbox side, export-inside.c) to the receiver (the runner,
 * export-receive.c), which believes the sender's output no further than this format. Records, each a
 * header line ending in "\n", the data chunk's bytes after its header:
 *
 *   FILE <name>\n                 a file begins
 *   DATA <n>\n<n bytes>           n from 1 to EXPORT_CHUNK_MAX, decimal, no leading zero; any bytes
 *   DONE\n                        the file ends
 *   REFUSE <name>\t<reason>\n     the sender does not send name, and says why
 *   LIMIT <name>\t<reason>\n      the same, because a limit would be passed (a limit hit for the caller)
 *   END\n                         the stream ends; nothing may follow
 *
 * DATA and DONE come only inside a file; FILE, REFUSE, LIMIT and END only outside one. A name is 1 to
 * EXPORT_NAME_MAX bytes and a plain relative path (export_name_valid()); a reason is 1 to EXPORT_REASON_MAX
 * bytes with no control character. No size is declared anywhere: a file is as long as its chunks, so the
 * receiver's limits count the bytes that actually arrive. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

#define EXPORT_NAME_MAX   4096
#define EXPORT_REASON_MAX 256
#define EXPORT_CHUNK_MAX  (64 * 1024)
/* The longest header line, without its newline: "REFUSE " name "\t" reason. */
#define EXPORT_LINE_MAX (sizeof("REFUSE ") + EXPORT_NAME_MAX + EXPORT_REASON_MAX)

typedef struct ExportLimits {
        uint64_t max_file_bytes;  /* the most one file may hold */
        uint64_t max_total_bytes; /* the most all exported files together may hold */
        unsigned max_files;       /* the most files the stream may carry (refusals are not files) */
} ExportLimits;

/* Whether name[0..size) is a plain relative path: 1 to EXPORT_NAME_MAX bytes, no control byte (NUL
 * included), no leading or trailing '/', no empty, "." or ".." component. */
bool export_name_valid(const char *name, size_t size);
/* Whether a list of requested outputs (NULL-terminated) is usable: each name valid, none twice. 0 or
 * -EINVAL. */
int export_names_check(char *const *names);

/* Writers. fd must be blocking; short writes and EINTR are handled. 0 or -errno; -EINVAL (nothing
 * written) for a name or reason the format does not allow. */
int export_write_file_begin(int fd, const char *name);
/* Any size, as chunks of at most EXPORT_CHUNK_MAX bytes; nothing for size 0. */
int export_write_data(int fd, const void *data, size_t size);
int export_write_file_end(int fd);
int export_write_refusal(int fd, const char *name, const char *reason, bool limit);
int export_write_stream_end(int fd);

/* What the reader found, in stream order. Each may be NULL. A negative return breaks the reader:
 * export_reader_feed() returns it as it is and leaves *reterr to the callback. Strings are valid during
 * the call only. */
typedef struct ExportReaderCallbacks {
        int (*file_begin)(const char *name, void *userdata);
        /* A piece of the current file: a chunk may come in several calls, never two files in one. */
        int (*data)(const void *data, size_t size, void *userdata);
        int (*file_end)(void *userdata);
        int (*refusal)(const char *name, const char *reason, bool limit, void *userdata);
        int (*stream_end)(void *userdata);
} ExportReaderCallbacks;

typedef struct ExportReader {
        const ExportReaderCallbacks *callbacks;
        void *userdata;
        char line[EXPORT_LINE_MAX + 1]; /* the header line read so far */
        size_t line_len;
        size_t chunk_left; /* bytes of the current chunk still to come */
        uint64_t n_records;
        bool in_file; /* between FILE and DONE */
        bool ended;   /* END was read */
        bool broken;  /* an error was returned: every later call fails too */
} ExportReader;

void export_reader_init(ExportReader *r, const ExportReaderCallbacks *callbacks, void *userdata);
/* Feeds size bytes, in pieces of any size. -EBADMSG with *reterr ("record N: ...") at the first thing
 * the format does not allow, or a callback's error. */
int export_reader_feed(ExportReader *r, const void *data, size_t size, AjError *reterr);
/* At the end of the input: -EBADMSG unless the stream ended with END. */
int export_reader_end(ExportReader *r, AjError *reterr);
