/* SPDX-License-Identifier: MIT */
/* Small macros shared by every file: cleanup attributes and ownership transfer, in the systemd idiom. */
#pragma once

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define _cleanup_(f)   __attribute__((cleanup(f)))
#define _unused_       __attribute__((unused))
#define _noreturn_     __attribute__((noreturn))
#define _printf_(a, b) __attribute__((format(printf, a, b)))

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))

/* Hand a pointer (or descriptor) to someone else: the cleanup attribute then frees nothing. */
#define TAKE_PTR(p)                                                                                         \
        ({                                                                                                  \
                __typeof__(p) _p = (p);                                                                     \
                (p) = NULL;                                                                                 \
                _p;                                                                                         \
        })
#define TAKE_FD(fd)                                                                                         \
        ({                                                                                                  \
                int _fd = (fd);                                                                             \
                (fd) = -EBADF;                                                                              \
                _fd;                                                                                        \
        })

/* Turn a libc return (-1 and errno) into -errno. */
#define RET_NERRNO(expr)                                                                                    \
        ({                                                                                                  \
                __typeof__(expr) _r = (expr);                                                               \
                _r < 0 ? -errno : _r;                                                                       \
        })

static inline void freep(void *p)
{
        free(*(void **)p);
}
#define _cleanup_free_ _cleanup_(freep)

static inline void closep(int *fd)
{
        if (*fd >= 0) {
                int saved = errno;
                (void)close(*fd);
                errno = saved;
        }
}
#define _cleanup_close_ _cleanup_(closep)

static inline void fclosep(FILE **f)
{
        if (*f)
                (void)fclose(*f);
}
#define _cleanup_fclose_ _cleanup_(fclosep)

static inline void closedirp(DIR **d)
{
        if (*d) {
                int saved = errno;
                (void)closedir(*d);
                errno = saved;
        }
}
#define _cleanup_closedir_ _cleanup_(closedirp)

/* A NULL-terminated vector of strings, each owned. */
static inline void strv_free(char **v)
{
        if (!v)
                return;
        for (char **i = v; *i; i++)
                free(*i);
        free(v);
}
static inline void strv_freep(char ***v)
{
        strv_free(*v);
}
#define _cleanup_strv_free_ _cleanup_(strv_freep)

static inline size_t strv_length(char *const *v)
{
        size_t n = 0;
        while (v && v[n])
                n++;
        return n;
}
