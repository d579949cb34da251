/* SPDX-License-Identifier: MIT */
/* The processes the check's programs leave behind. Rootless podman's conmon outlives `podman run` to run
 * `podman container cleanup` when the container has ended, and that opens (and makes again) the store in
 * the check's own home; podman's pause process stays for good. Both leave their parent, so the check,
 * a subreaper, adopts them and ends them before it removes the home they write in. */
#pragma once

/* Makes this process a subreaper: every descendant that loses its parent becomes its child. 0 or -errno.
 * Call before the first program starts. */
int probe_orphans_adopt(void);

/* Reaps the children that end within grace_ms (a grace that ends early once only podman's pause process
 * is left: it never ends by itself), then SIGKILLs and reaps the rest (their own children come
 * in turn), up to kill_ms more. 0 once no child is left; -ETIMEDOUT if one still is (a process stuck in
 * the kernel); another -errno where waitpid() or the scan of /proc failed. Call only when no thread waits
 * for a child of its own any more: it reaps any child. */
int probe_orphans_end(unsigned grace_ms, unsigned kill_ms);
