/* SPDX-License-Identifier: MIT */
#include "step-frame.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "config.h"
#include "macro.h"
#include "strv.h"
#include "write-all.h"

static const char *env_value(char *const *env, const char *name)
{
        size_t n = strlen(name);

        for (; env && *env; env++)
                if (strncmp(*env, name, n) == 0 && (*env)[n] == '=')
                        return *env + n + 1;
        return NULL;
}

int step_frame_build(char *const *names, char *const *env, const char *script, size_t n, int *ret_fd)
{
        _cleanup_close_ int fd = -EBADF;
        json_t *header, *vars;
        char *line = NULL;
        size_t len;
        int r = 0;

        if (n > STEP_SCRIPT_MAX)
                return -EFBIG;
        header = json_object();
        vars = json_object();
        if (!header || !vars || json_object_set_new(header, "env", vars) < 0) {
                json_decref(header);
                return -ENOMEM;
        }
        for (; names && *names && r == 0; names++) {
                const char *v = env_value(env, *names);

                if (v && json_object_set_new(vars, *names, json_stringn(v, strlen(v))) < 0)
                        r = -EINVAL; /* not UTF-8: no JSON string holds it */
        }
        if (r == 0 && json_object_set_new(header, "script", json_integer((json_int_t)n)) < 0)
                r = -ENOMEM;
        if (r == 0) {
                line = json_dumps(header, JSON_COMPACT | JSON_ENSURE_ASCII);
                r = line ? 0 : -ENOMEM;
        }
        json_decref(header);
        if (r < 0)
                return r;
        len = strlen(line);
        if (len + 1 > STEP_HEADER_MAX) {
                free(line);
                return -EFBIG;
        }
        fd = memfd_create("agentic-job-step-frame", MFD_CLOEXEC);
        if (fd < 0)
                r = -errno;
        if (r == 0 && (write_all(fd, line, len) < 0 || write_all(fd, "\n", 1) < 0 ||
                       write_all(fd, script, n) < 0 || lseek(fd, 0, SEEK_SET) < 0))
                r = -errno;
        free(line);
        if (r < 0)
                return r;
        /* cppcheck-suppress unreadVariable ; TAKE_FD() leaves -EBADF for the cleanup, which reads it */
        *ret_fd = TAKE_FD(fd);
        return 0;
}

/* Reads exactly n bytes, or fails: -EPIPE where the stream ends before. */
static int read_exactly(int fd, char *buf, size_t n)
{
        while (n > 0) {
                ssize_t k = read(fd, buf, n);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return -errno;
                if (k == 0)
                        return -EPIPE;
                buf += k;
                n -= (size_t)k;
        }
        return 0;
}

int step_frame_read(int fd, char ***ret_env, int *ret_script_fd, AjError *reterr)
{
        _cleanup_free_ char *line = NULL, *script = NULL;
        _cleanup_close_ int out = -EBADF;
        Strv env = { 0 };
        json_t *header, *vars, *size;
        json_error_t jerr;
        const char *name;
        json_t *value;
        size_t len = 0;
        json_int_t n;
        int r;

        /* The line a byte at a time: nothing of the script is read with it. */
        line = malloc(STEP_HEADER_MAX);
        if (!line)
                return aj_error(reterr, ENOMEM, 0, 0, "out of memory");
        for (;;) {
                if (len + 1 >= STEP_HEADER_MAX)
                        return aj_error(reterr, EFBIG, 0, 0, "the step's header is over %d bytes",
                                        STEP_HEADER_MAX);
                r = read_exactly(fd, line + len, 1);
                if (r < 0)
                        return aj_error(reterr, -r, 0, 0, "the step's header: %s",
                                        r == -EPIPE ? "the input ended before it" : strerror(-r));
                if (line[len] == '\n')
                        break;
                len++;
        }
        line[len] = '\0';
        header = json_loads(line, JSON_REJECT_DUPLICATES, &jerr);
        if (!header)
                return aj_error(reterr, EBADMSG, 0, 0, "the step's header is not JSON: %s", jerr.text);
        vars = json_object_get(header, "env");
        size = json_object_get(header, "script");
        if (!json_is_object(vars) || !json_is_integer(size) || json_object_size(header) != 2 ||
            (n = json_integer_value(size)) < 0 || n > STEP_SCRIPT_MAX) {
                json_decref(header);
                return aj_error(reterr, EBADMSG, 0, 0,
                                "the step's header is not {\"env\":{...},\"script\":N} with N at most %d",
                                STEP_SCRIPT_MAX);
        }
        r = 0;
        json_object_foreach(vars, name, value)
        {
                /* No value holds a NUL: json_loads() refuses \u0000 without JSON_ALLOW_NUL. */
                if (!env_name_valid(name) || !json_is_string(value)) {
                        r = aj_error(reterr, EBADMSG, 0, 0, "the step's header: variable %.64s refused",
                                     name);
                        break;
                }
                r = strv_pushf(&env, "%s=%s", name, json_string_value(value));
                if (r < 0) {
                        r = aj_error(reterr, -r, 0, 0, "out of memory");
                        break;
                }
        }
        json_decref(header);
        if (r < 0) {
                strv_clear(&env);
                return r;
        }
        script = malloc((size_t)n + 1);
        r = script ? read_exactly(fd, script, (size_t)n) : -ENOMEM;
        if (r < 0) {
                strv_clear(&env);
                return aj_error(reterr, -r, 0, 0, "the step's script: %s",
                                r == -EPIPE ? "the input ended before its end" : strerror(-r));
        }
        /* No close-on-exec: the command opens it as /dev/fd/N. */
        out = memfd_create("agentic-job-step", 0);
        if (out < 0 || write_all(out, script, (size_t)n) < 0 || lseek(out, 0, SEEK_SET) < 0) {
                r = -errno;
                strv_clear(&env);
                return aj_error(reterr, -r, 0, 0, "the step's script: %s", strerror(-r));
        }
        if (!env.v) {
                env.v = calloc(1, sizeof(char *));
                if (!env.v)
                        return aj_error(reterr, ENOMEM, 0, 0, "out of memory");
        }
        *ret_env = env.v;
        /* cppcheck-suppress unreadVariable ; TAKE_FD() leaves -EBADF for the cleanup, which reads it */
        *ret_script_fd = TAKE_FD(out);
        return 0;
}
