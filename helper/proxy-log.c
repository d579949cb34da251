/* SPDX-License-Identifier: MIT */
/* proxy-log --from N: the egress proxy's log from byte N to its end as it was when opened, at most
 * PROXY_LOG_MAX_OUTPUT bytes a call (then status EXIT_PROXY_LOG_MORE: call again from N plus what came);
 * proxy-log --from end: the log's size, one decimal line, where a later --from starts after it. The
 * path is fixed; it is opened without following any link and without blocking on a FIFO, and read only if it
 * is a regular file of the proxy user. */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <syslog.h>
#include <unistd.h>

#include "helper.h"
#include "macro.h"
#include "write-all.h"

void op_proxy_log(const Helper *h)
{
        struct open_how how = { .flags = O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC,
                                .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
        _cleanup_close_ int fd = -EBADF;
        struct passwd *pw;
        struct stat st;
        uint64_t from = h->args->from, end, left;
        int r;
        bool more;
        char buf[65536];

        fd = (int)syscall(SYS_openat2, AT_FDCWD, PROXY_LOG_PATH, &how, sizeof(how));
        if (fd < 0 && errno == ENOENT)
                die(EXIT_PROXY_LOG_ABSENT, "proxy-log: there is no log %s", PROXY_LOG_PATH);
        if (fd < 0 && errno == ELOOP)
                die(EXIT_FAILED, "proxy-log: refused: %s or a directory above it is a link", PROXY_LOG_PATH);
        if (fd < 0)
                die(EXIT_FAILED, "proxy-log: %s: %s", PROXY_LOG_PATH, strerror(errno));
        if (fstat(fd, &st) < 0)
                die(EXIT_FAILED, "proxy-log: %s: %s", PROXY_LOG_PATH, strerror(errno));
        pw = getpwnam(PROXY_USER);
        if (!pw)
                die(EXIT_FAILED, "proxy-log: the proxy user %s does not exist", PROXY_USER);
        if (!S_ISREG(st.st_mode))
                die(EXIT_FAILED, "proxy-log: refused: %s is not a regular file", PROXY_LOG_PATH);
        if (st.st_uid != pw->pw_uid)
                die(EXIT_FAILED, "proxy-log: refused: %s is owned by uid %u, not %s", PROXY_LOG_PATH,
                    (unsigned)st.st_uid, PROXY_USER);
        /* Where the next call should start: taken from the inode, so its cost does not grow with the log. */
        if (h->args->from_end) {
                if (printf("%lld\n", (long long)st.st_size) < 0 || fflush(stdout) != 0)
                        die(EXIT_FAILED, "proxy-log: cannot write: %s", strerror(errno));
                audit(LOG_INFO, "done: the log's end is %lld", (long long)st.st_size);
                _exit(0);
        }
        if ((uint64_t)st.st_size < from)
                die(EXIT_PROXY_LOG_TRUNCATED,
                    "proxy-log: the log is %lld bytes, shorter than --from %llu: it was truncated or "
                    "replaced",
                    (long long)st.st_size, (unsigned long long)from);

        end = (uint64_t)st.st_size;
        more = end - from > PROXY_LOG_MAX_OUTPUT;
        if (more)
                end = from + PROXY_LOG_MAX_OUTPUT;
        for (left = end - from; left > 0;) {
                ssize_t k = pread(fd, buf, left < sizeof(buf) ? left : sizeof(buf), (off_t)(end - left));
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        die(EXIT_FAILED, "proxy-log: read: %s", strerror(errno));
                if (k == 0)
                        die(EXIT_PROXY_LOG_TRUNCATED, "proxy-log: the log shrank while being read");
                r = write_all(STDOUT_FILENO, buf, (size_t)k);
                if (r < 0)
                        die(EXIT_FAILED, "proxy-log: cannot write: %s", strerror(-r));
                left -= (uint64_t)k;
        }
        audit(LOG_INFO, "done: %llu bytes from %llu%s", (unsigned long long)(end - from),
              (unsigned long long)from, more ? ", more follows" : "");
        _exit(more ? EXIT_PROXY_LOG_MORE : 0);
}
