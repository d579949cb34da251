/* SPDX-License-Identifier: MIT */
/* The programs the sandbox side's probes run, and what they make of curl's answers. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#define PROBE_CURL       "/usr/bin/curl"
#define PROBE_PODMAN     "/usr/bin/podman"
#define PROBE_PROGRAM_MS 10000 /* any program a probe runs */
#define PROBE_PULL_MS    30000 /* an image through the proxy, or from an archive */
#define PROBE_POLKIT_MS  20000 /* what waits on polkitd: one thread for every question of the machine */
#define PROBE_SIGNALLED  256   /* probe_run_timed()'s status for a program signal N ended: 256+N */

/* Runs argv (argv[0] absolute) with environment env, standard input from /dev/null, its standard output
 * (with merge its standard error too; else that is discarded) in out, at most size - 1 bytes,
 * NUL-terminated, when out is not NULL. The exit status (PROBE_SIGNALLED+N for signal N; killed with
 * SIGKILL after ms), or -errno when it could not be started. Safe in a threaded process. */
int probe_run_timed(char *const *argv, char *const *env, char *out, size_t size, bool merge, long long ms);

/* Whether a program's end is its refusal: it ran and exited by itself with a status of its own other than
 * 0. A program a signal ended (the deadline's, or one code it loaded sent), that could not start or whose
 * execve failed (127) tells nothing: a probe reads that as "cannot tell", a failure, never as refused. */
bool probe_refused(int status);

/* How a program ended, for a detail: "status N", "killed by signal N" or "not started: ERROR". */
const char *probe_status_text(int status, char *buf, size_t size);

/* The same, killed after PROBE_PROGRAM_MS. */
int probe_run_capture(char *const *argv, char *const *env, char *out, size_t size, bool merge);
int probe_run(char *const *argv, char *const *env, char *out, size_t size);

/* The last line of out that says something (a program's error comes last), trimmed in place; "no output"
 * where there is none. */
const char *probe_last_line(char *out);

/* podman info -f FORMAT as the sandbox user, standard error merged: 0 with podman's answer (the line it
 * printed for FORMAT, told from its warnings by a mark of its own) in out; else podman's status (or
 * -EBADMSG for no answer), with the note that rootless podman cannot start, and podman's last line, in
 * why. Both callers of the container probes start with it. */
int probe_podman_info(const char *format, char *out, size_t size, char *why, size_t why_size);

/* podman pull -q image into the store of the sandbox side's own home (probe_home_enter(): never the
 * sandbox user's own store, where an earlier step may have put any image under any name), within
 * PROBE_PULL_MS: 0
 * with the image's id in ret_id (65 bytes); else its status or -errno, and why. An image on this machine
 * (docker-archive:PATH or oci-archive:PATH) must be a file root's alone; the transports that read other
 * places of this machine (containers-storage:, dir:, oci:, docker-daemon:, ...) are refused (-EPERM). */
int probe_podman_pull(const char *image, char ret_id[65], char *why, size_t why_size);

/* curl's HTTP code for url ("000" when none) with our environment, direct: bypassing any proxy; its
 * status. */
int probe_curl_code(const char *url, bool direct, char code[8]);

/* The status of the last response in curl's headers (after a CONNECT's own), and whether it carries
 * X-Egress-Denied, the proxy's mark on a refusal. */
void probe_last_response(const char *headers, unsigned *ret_status, bool *ret_denied);
