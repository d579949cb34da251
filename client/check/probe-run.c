/* SPDX-License-Identifier: MIT */
#include "probe-run.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "probe-emit.h"
#include "trusted-path.h"

/* fork() and execve() rather than posix_spawn(): <spawn.h> is shadowed by the project's spawn.h. Only
 * async-signal-safe calls in the child, as a threaded parent requires. */
static pid_t start(char *const *argv, char *const *env, int out_fd, bool merge)
{
        pid_t pid = fork();

        if (pid != 0)
                return pid;
        int null = open("/dev/null", O_RDWR | O_CLOEXEC);
        int err = merge && out_fd >= 0 ? out_fd : null;
        if (null < 0 || dup2(null, 0) < 0 || dup2(out_fd >= 0 ? out_fd : null, 1) < 0 || dup2(err, 2) < 0)
                _exit(127);
        execve(argv[0], argv, env);
        _exit(127);
}

int probe_run_timed(char *const *argv, char *const *env, char *out, size_t size, bool merge, long long ms)
{
        int pipefd[2] = { -1, -1 }, status, r;
        pid_t pid;
        long long deadline = probe_now_ms() + ms;

        /* A string whatever happens: callers read out even where the program could not start. */
        if (out && size > 0)
                out[0] = '\0';
        if (out && pipe2(pipefd, O_CLOEXEC) < 0)
                return -errno;
        pid = start(argv, env, pipefd[1], merge);
        if (out)
                close(pipefd[1]);
        if (pid < 0) {
                r = -errno;
                if (out)
                        close(pipefd[0]);
                return r;
        }
        if (out) {
                size_t n = 0;

                for (;;) {
                        struct pollfd p = { pipefd[0], POLLIN, 0 };
                        long long left = deadline - probe_now_ms();
                        char buf[512];
                        ssize_t k;

                        if (left <= 0 || poll(&p, 1, (int)left) <= 0)
                                break;
                        k = read(pipefd[0], buf, sizeof(buf));
                        if (k <= 0)
                                break;
                        for (ssize_t i = 0; i < k && n + 1 < size; i++)
                                out[n++] = buf[i];
                }
                out[n] = '\0';
                close(pipefd[0]);
        }
        for (;;) {
                r = waitpid(pid, &status, WNOHANG);
                if (r == pid)
                        break;
                if (r < 0 && errno != EINTR)
                        return -errno;
                if (probe_now_ms() > deadline) {
                        (void)kill(pid, SIGKILL);
                        (void)waitpid(pid, &status, 0);
                        return PROBE_SIGNALLED + SIGKILL;
                }
                (void)nanosleep(&(struct timespec){ 0, 2 * 1000 * 1000 }, NULL);
        }
        return WIFEXITED(status) ? WEXITSTATUS(status) : PROBE_SIGNALLED + WTERMSIG(status);
}

bool probe_refused(int status)
{
        return status > 0 && status < 126;
}

const char *probe_status_text(int status, char *buf, size_t size)
{
        if (status < 0)
                (void)snprintf(buf, size, "not started: %s", strerror(-status));
        else if (status >= PROBE_SIGNALLED)
                (void)snprintf(buf, size, "killed by signal %d", status - PROBE_SIGNALLED);
        else if (status == 127)
                (void)snprintf(buf, size, "status 127: not run");
        else
                (void)snprintf(buf, size, "status %d", status);
        return buf;
}

int probe_run_capture(char *const *argv, char *const *env, char *out, size_t size, bool merge)
{
        return probe_run_timed(argv, env, out, size, merge, PROBE_PROGRAM_MS);
}

int probe_run(char *const *argv, char *const *env, char *out, size_t size)
{
        return probe_run_timed(argv, env, out, size, false, PROBE_PROGRAM_MS);
}

const char *probe_last_line(char *out)
{
        char *end = out + strlen(out), *nl;

        while (end > out && (end[-1] == '\n' || end[-1] == '\r' || end[-1] == ' '))
                *--end = '\0';
        nl = strrchr(out, '\n');
        return nl ? nl + 1 : out[0] ? out : "no output";
}

int probe_podman_info(const char *format, char *out, size_t size, char *why, size_t why_size)
{
        /* The answer after a mark of its own: podman's warnings share the stream (standard error merged)
         * and may come after it, as they do on the first use of a fresh store. */
        static const char mark[] = "agentic-job-answer=";
        char fmt[256], all[16384];
        char *const argv[] = { (char *)PROBE_PODMAN, (char *)"info", (char *)"-f", fmt, NULL };
        const char *last, *answer = NULL;
        int r;

        (void)snprintf(fmt, sizeof(fmt), "%s%s", mark, format);
        /* All of it, warnings and answer: a caller's buffer may hold less than the warnings. */
        r = probe_run_capture(argv, environ, all, sizeof(all), true);
        for (const char *l = all; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
                if (strncmp(l, mark, sizeof(mark) - 1) == 0)
                        answer = l + sizeof(mark) - 1;
        if (r == 0 && answer) {
                (void)snprintf(out, size, "%.*s", (int)strcspn(answer, "\r\n"), answer);
                return 0;
        }
        (void)snprintf(out, size, "%s", all);
        last = probe_last_line(all);
        (void)snprintf(why, why_size,
                       "rootless podman cannot start for the sandbox user (podman info: status %d: %.200s)",
                       r, r == 0 ? "no answer" : last);
        return r == 0 ? -EBADMSG : r;
}

int probe_podman_pull(const char *image, char ret_id[65], char *why, size_t why_size)
{
        static const char *const refused_transports[] = {
                "containers-storage:", "dir:", "oci:", "docker-daemon:", "ostree:", "sif:", "tarball:"
        };
        static const char *const archives[] = { "docker-archive:", "oci-archive:" };
        char out[2048];
        const char *last;
        int r;

        ret_id[0] = '\0';
        for (size_t i = 0; i < sizeof(refused_transports) / sizeof(refused_transports[0]); i++)
                if (strncmp(image, refused_transports[i], strlen(refused_transports[i])) == 0) {
                        (void)snprintf(why, why_size, "%.200s: only a registry or an archive root's alone",
                                       image);
                        return -EPERM;
                }
        for (size_t i = 0; i < sizeof(archives) / sizeof(archives[0]); i++) {
                const char *path = image + strlen(archives[i]);
                char file[1024];
                AjError e = {};

                if (strncmp(image, archives[i], strlen(archives[i])) != 0)
                        continue;
                /* The archive's path ends at a ":REFERENCE" of podman's syntax. */
                (void)snprintf(file, sizeof(file), "%.*s", (int)strcspn(path, ":"), path);
                r = trusted_path_check(file, &e);
                if (r < 0) {
                        (void)snprintf(why, why_size, "%.200s: not an archive root's alone: %.200s", image,
                                       e.message);
                        return r;
                }
        }
        r = probe_run_timed(
                (char *const[]){ (char *)PROBE_PODMAN, (char *)"pull", (char *)"-q", (char *)image, NULL },
                environ, out, sizeof(out), true, PROBE_PULL_MS);
        last = probe_last_line(out);
        if (r == 0 && strlen(last) == 64 && strspn(last, "0123456789abcdef") == 64) {
                memcpy(ret_id, last, 65);
                return 0;
        }
        (void)snprintf(why, why_size, "podman pull %.200s: status %d: %.200s", image, r, last);
        return r == 0 ? -EBADMSG : r;
}

int probe_curl_code(const char *url, bool direct, char code[8])
{
        char out[16];
        char *argv[] = { (char *)PROBE_CURL,
                         (char *)"-q",
                         (char *)"-s",
                         (char *)"-o",
                         (char *)"/dev/null",
                         (char *)"-w",
                         (char *)"%{http_code}",
                         (char *)"-m",
                         (char *)"5",
                         (char *)"--noproxy",
                         (char *)"*",
                         (char *)url,
                         NULL };
        int r;

        if (!direct) {
                argv[9] = (char *)url;
                argv[10] = NULL;
        }
        r = probe_run(argv, environ, out, sizeof(out));
        (void)snprintf(code, 8, "%.3s", r >= 0 && strlen(out) == 3 ? out : "000");
        return r;
}

void probe_last_response(const char *headers, unsigned *ret_status, bool *ret_denied)
{
        const char *p = headers, *last = NULL;

        for (const char *l = p; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
                if (strncmp(l, "HTTP/", 5) == 0)
                        last = l;
        *ret_status = 0;
        *ret_denied = false;
        if (!last)
                return;
        p = strchr(last, ' ');
        if (p && p[1] >= '1' && p[1] <= '5' && p[2] >= '0' && p[2] <= '9' && p[3] >= '0' && p[3] <= '9')
                *ret_status = (unsigned)((p[1] - '0') * 100 + (p[2] - '0') * 10 + (p[3] - '0'));
        for (const char *l = last; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
                if (strncasecmp(l, "x-egress-denied:", 16) == 0)
                        *ret_denied = true;
}
