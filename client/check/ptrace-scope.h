/* SPDX-License-Identifier: MIT */
/* Yama's ptrace scope, as the sandbox side reads it for the ptrace-scope probe. */
#pragma once

#define YAMA_PTRACE_SCOPE_PATH "/proc/sys/kernel/yama/ptrace_scope"

/* Reads the scope from path (YAMA_PTRACE_SCOPE_PATH, or a file a test made): 0 and the scope (0 to 3) in
 * *ret_scope; -ENOENT where the kernel has no Yama; -EINVAL for anything but one digit 0 to 3 and a
 * newline; another -errno where it cannot be read. */
int ptrace_scope_read(const char *path, unsigned *ret_scope);
