/* SPDX-License-Identifier: MIT */
/* A script step (sandbox exec --script) on its way to the sandbox side: the command's standard input is
 * one line of JSON, {"env":{"NAME":"VALUE",...},"script":N}, then the script's N bytes. The sandbox side
 * (sandbox step-inside) makes the script a file of its own, gives the command /dev/null for its standard
 * input and the variables of [sandbox] step-env: a command of the step that reads its standard input can
 * no longer take the rest of the script. */
#pragma once

#include <stddef.h>

#include "error.h"

#define STEP_SCRIPT_MAX (1024 * 1024) /* a step's script */
#define STEP_HEADER_MAX (256 * 1024)  /* the JSON line: the variables' values */

/* The frame of script (n bytes) and of the variables named in names that env holds ("NAME=VALUE"
 * entries; a name env lacks is left out), in a memfd at offset 0. 0, -EFBIG (the script or the values
 * over their bounds), other -errno. */
int step_frame_build(char *const *names, char *const *env, const char *script, size_t n, int *ret_fd);

/* Reads a frame from fd (a stream; nothing past it is read): the variables as "NAME=VALUE" entries
 * (NULL-terminated, for strv_free()), the script in a memfd at offset 0 without close-on-exec, so that
 * the command can open it by /dev/fd/N. 0, or -errno with the reason in *reterr. */
int step_frame_read(int fd, char ***ret_env, int *ret_script_fd, AjError *reterr);
