/* SPDX-License-Identifier: MIT */
#include "token-probes.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "check-line.h"
#include "macro.h"
#include "probe-emit.h"
#include "probe-run.h"
#include "read-file.h"
#include "token-scan.h"

const char *const token_probe_names[] = {
        "token-config-control",    "token-config-mode",
        "token-config-dir-mode",   "token-files",
        "token-processes",         "token-runner-file",
        "token-container-control", "token-container-subuid-control",
        "token-container-subuid",  NULL,
};

#define HOLDERS_MAX 32
#define HOLDER_MAX  (1024 * 1024) /* bytes read of a holder, for its control */
#define SCAN_FILES  200000
#define SCAN_BYTES  (8ULL << 30)
#define SCAN_DEPTH  64
#define MOUNTED     "/agentic-job-token" /* the token's directory, in the container */
#define SUBUID      "1000:1000"          /* a uid of the container's but its root: a subordinate one */

static const char *dir_of(const char *path, char *buf, size_t size)
{
        const char *slash = strrchr(path, '/');
        size_t n = slash && slash != path ? (size_t)(slash - path) : 1;

        if (n >= size)
                n = size - 1;
        memcpy(buf, path, n);
        buf[n] = '\0';
        return buf;
}

/* The control: each holder is a plain file holding the token (else the probes below prove nothing). */
static bool probe_config_control(const TokenProbeInput *in, struct stat *held, size_t *n_held)
{
        long long t0 = probe_now_ms();

        for (char *const *h = in->holders; *h; h++) {
                _cleanup_free_ char *data = NULL;
                size_t size = 0;
                int r = read_regular_nofollow(AT_FDCWD, *h, HOLDER_MAX, &data, &size);

                if (r < 0)
                        return probe_emit_ok("token-config-control", false, t0, "%s: %s", *h, strerror(-r));
                if (!memmem(data, size, in->token, in->token_size))
                        return probe_emit_ok("token-config-control", false, t0, "%s does not hold the token",
                                             *h);
                if (*n_held < HOLDERS_MAX && lstat(*h, &held[*n_held]) == 0)
                        (*n_held)++;
        }
        return probe_emit_ok("token-config-control", true, t0, "%zu file(s) hold the token", *n_held);
}

static bool probe_config_mode(const TokenProbeInput *in)
{
        long long t0 = probe_now_ms();
        size_t n = 0;

        for (char *const *h = in->holders; *h; h++, n++) {
                struct stat st;

                if (lstat(*h, &st) < 0)
                        return probe_emit_ok("token-config-mode", false, t0, "%s: %s", *h, strerror(errno));
                if (!S_ISREG(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 07077) != 0 ||
                    st.st_nlink != 1)
                        return probe_emit_ok(
                                "token-config-mode", false, t0,
                                "%s is mode %04o, uid %u, %ju link(s): not the sandbox user's alone, mode "
                                "0600, one link",
                                *h, (unsigned)(st.st_mode & 07777), (unsigned)st.st_uid,
                                (uintmax_t)st.st_nlink);
        }
        return probe_emit_ok("token-config-mode", true, t0, "%zu file(s) of mode 0600, the sandbox user's",
                             n);
}

static bool probe_config_dir_mode(const TokenProbeInput *in)
{
        long long t0 = probe_now_ms();
        size_t n = 0;

        for (char *const *h = in->holders; *h; h++, n++) {
                char dir[PATH_MAX];
                struct stat st;

                dir_of(*h, dir, sizeof(dir));
                if (lstat(dir, &st) < 0)
                        return probe_emit_ok("token-config-dir-mode", false, t0, "%s: %s", dir,
                                             strerror(errno));
                if (!S_ISDIR(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 077) != 0)
                        return probe_emit_ok(
                                "token-config-dir-mode", false, t0,
                                "%s is mode %04o, uid %u: not the sandbox user's alone, mode 0700", dir,
                                (unsigned)(st.st_mode & 07777), (unsigned)st.st_uid);
        }
        return probe_emit_ok("token-config-dir-mode", true, t0,
                             "%zu directory(ies) of mode 0700, the sandbox user's", n);
}

bool token_scan_report(const char *name, long long start, int r, const TokenScan *s, const char *secret,
                       const char *where)
{
        if (r < 0)
                return probe_emit_ok(name, false, start, "the search failed: %s", strerror(-r));
        if (s->found)
                return probe_emit_ok(name, false, start, "%s is in %s", secret, s->found);
        if (s->truncated)
                return probe_emit_ok(
                        name, false, start,
                        "the search stopped at a limit (%ju files, %ju bytes): it is incomplete",
                        (uintmax_t)s->files, (uintmax_t)s->bytes);
        return probe_emit_ok(name, true, start, "not in %s (%ju files, %ju processes read, %ju unreadable)",
                             where, (uintmax_t)s->files, (uintmax_t)s->processes, (uintmax_t)s->denied);
}

static bool probe_files(const TokenProbeInput *in, const struct stat *held, size_t n_held)
{
        static const TokenScanLimits lim = { SCAN_FILES, SCAN_BYTES, SCAN_DEPTH };
        struct stat skip[HOLDERS_MAX + 1];
        const struct passwd *pw = getpwuid(getuid());
        char run_user[64];
        const char *roots[] = { pw ? pw->pw_dir : NULL, run_user, "/tmp", "/var/tmp", "/dev/shm" };
        TokenScan s = {};
        long long t0 = probe_now_ms();
        size_t n_skip = n_held;
        int r = 0;
        bool ok;

        if (!pw)
                return probe_emit_ok("token-files", false, t0,
                                     "the sandbox user has no home in the user database");
        memcpy(skip, held, n_held * sizeof(*held));
        if (lstat(in->workspace, &skip[n_skip]) == 0)
                n_skip++;
        (void)snprintf(run_user, sizeof(run_user), "/run/user/%u", (unsigned)getuid());
        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(roots); i++)
                r = token_scan_tree(roots[i], in->token, in->token_size, skip, n_skip, &lim, &s);
        ok = token_scan_report("token-files", t0, r, &s, "the token",
                               "the home (but the workspace), /run/user/UID, /tmp, /var/tmp, /dev/shm");
        token_scan_done(&s);
        return ok;
}

static bool probe_processes(const TokenProbeInput *in)
{
        TokenScan s = {};
        long long t0 = probe_now_ms();
        int r = token_scan_processes("/proc", in->token, in->token_size, &s);
        bool ok = token_scan_report("token-processes", t0, r, &s, "the token",
                                    "any environment or command line");

        token_scan_done(&s);
        return ok;
}

static bool probe_runner_file(const TokenProbeInput *in)
{
        static const TokenScanLimits lim = { SCAN_FILES, SCAN_BYTES, SCAN_DEPTH };
        TokenScan s = {};
        long long t0 = probe_now_ms();
        int r = 0;
        bool ok;

        if (in->n_runner_dirs == 0)
                return probe_emit_ok("token-runner-file", false, t0, "no place of the runner's to search");
        for (size_t i = 0; r >= 0 && i < in->n_runner_dirs; i++)
                r = token_scan_tree(in->runner_dirs[i], in->token, in->token_size, NULL, 0, &lim, &s);
        ok = token_scan_report("token-runner-file", t0, r, &s, "the token",
                               "the runner's home, RUNNER_TEMP or workspace");
        token_scan_done(&s);
        return ok;
}

static void container_notes(size_t first, long long t, const char *why)
{
        static const char *const names[] = { "token-container-control", "token-container-subuid-control",
                                             "token-container-subuid" };

        for (size_t i = first; i < ELEMENTSOF(names); i++)
                probe_emit(names[i], "note", t, "not probed: %s", why);
}

/* podman run --rm --pull=never --network=none [--user U] [-v DIR:MOUNTED:ro] IMAGE cat FILE: its status,
 * and whether its standard output (standard error discarded) holds the token. */
static int container_cat(const TokenProbeInput *in, const char *image, const char *user, const char *dir,
                         const char *file, bool *ret_token)
{
        _cleanup_free_ char *volume = NULL, *out = malloc(TOKEN_MAX + 4096);
        const char *argv[16] = { PROBE_PODMAN, "run", "--rm", "--pull=never", "--network=none" };
        size_t k = 5;
        int r;

        *ret_token = false;
        if (!out || (dir && asprintf(&volume, "%s:" MOUNTED ":ro", dir) < 0))
                return -ENOMEM;
        if (user) {
                argv[k++] = "--user";
                argv[k++] = user;
        }
        if (volume) {
                argv[k++] = "-v";
                argv[k++] = volume;
        }
        argv[k++] = image;
        argv[k++] = "cat";
        argv[k++] = file;
        argv[k] = NULL;
        r = probe_run((char *const *)argv, environ, out, TOKEN_MAX + 4096);
        *ret_token = memmem(out, strlen(out), in->token, in->token_size) != NULL;
        explicit_bzero(out, TOKEN_MAX + 4096);
        return r;
}

/* The token's file read from rootless containers: by the container's root, which is the sandbox uid
 * (the control), and by a subordinate uid, which the file's mode must refuse. */
static int probe_containers(const TokenProbeInput *in)
{
        char dir[PATH_MAX], file[PATH_MAX], out[512], why[320], image[65], pull_why[512];
        long long t = probe_now_ms();
        bool got;
        int r, failed = 0;

        if (!in->container_image) {
                container_notes(0, t, "[sandbox.check] before-agent = false or containers = false");
                return 0;
        }
        if (access(PROBE_PODMAN, X_OK) < 0) {
                container_notes(0, t, "no " PROBE_PODMAN " that the sandbox user may run");
                return 0;
        }
        if (probe_podman_info("{{len .Host.IDMappings.UIDMap}}", out, sizeof(out), why, sizeof(why)) != 0) {
                container_notes(0, t, why);
                return 0;
        }
        /* The image pulled into the probes' own store, never the sandbox user's (probe_podman_pull()). */
        r = probe_podman_pull(in->container_image, image, pull_why, sizeof(pull_why));
        if (r != 0) {
                failed += !probe_emit_ok("token-container-control", false, t, "%s", pull_why);
                container_notes(1, probe_now_ms(), "token-container-control failed");
                return failed;
        }
        (void)dir_of(in->holders[0], dir, sizeof(dir));
        (void)snprintf(file, sizeof(file), MOUNTED "/%s", strrchr(in->holders[0], '/') + 1);
        r = container_cat(in, image, NULL, dir, file, &got);
        if (r < 0 || !got) {
                failed +=
                        !probe_emit_ok("token-container-control", false, t,
                                       "the container's root (the sandbox uid) did not read %s (status %d)",
                                       in->holders[0], r);
                container_notes(1, probe_now_ms(), "token-container-control failed");
                return failed;
        }
        probe_emit_ok("token-container-control", true, t, "the container's root (the sandbox uid) reads %s",
                      in->holders[0]);
        t = probe_now_ms();
        /* One mapping: the sandbox uid alone, no subordinate uid to read as. */
        if (strcmp(out, "1") == 0) {
                container_notes(1, t, "the sandbox user has no subordinate uid (podman maps its uid alone)");
                return 0;
        }
        r = container_cat(in, image, SUBUID, NULL, "/etc/os-release", &got);
        if (r != 0) {
                failed += !probe_emit_ok(
                        "token-container-subuid-control", false, t,
                        "uid " SUBUID " of the container did not read /etc/os-release (status %d)", r);
                container_notes(2, probe_now_ms(), "token-container-subuid-control failed");
                return failed;
        }
        probe_emit_ok("token-container-subuid-control", true, t,
                      "uid " SUBUID " of the container reads /etc/os-release");
        t = probe_now_ms();
        r = container_cat(in, image, SUBUID, dir, file, &got);
        failed += !probe_emit_ok("token-container-subuid", !got, t,
                                 "uid " SUBUID " of the container %s %s (status %d)",
                                 got ? "read" : "did not read", in->holders[0], r);
        return failed;
}

int token_probes_run(const TokenProbeInput *in)
{
        struct stat held[HOLDERS_MAX];
        size_t n_held = 0;
        int failed = 0;

        failed += !probe_config_control(in, held, &n_held);
        failed += !probe_config_mode(in);
        failed += !probe_config_dir_mode(in);
        failed += !probe_files(in, held, n_held);
        failed += !probe_processes(in);
        failed += !probe_runner_file(in);
        failed += probe_containers(in);
        return failed;
}
