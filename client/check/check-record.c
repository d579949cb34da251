/* SPDX-License-Identifier: MIT */
#include "check-record.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "build-config.h"
#include "macro.h"
#include "read-file.h"
#include "write-all.h"

#define MAGIC "agentic-job-sandbox-checked 1\n"

typedef struct FieldDef {
        const char *key;
        size_t offset;
} FieldDef;

static const FieldDef fields[] = {
        { "run-id", offsetof(Record, run_id) },
        { "run-attempt", offsetof(Record, attempt) },
        { "job", offsetof(Record, job) },
        { "version", offsetof(Record, version) },
        { "binary-sha256", offsetof(Record, binary) },
        { "config-sha256", offsetof(Record, config) },
        { "policy-sha256", offsetof(Record, policy) },
};

static bool value_valid(const char *v, size_t n)
{
        if (n == 0 || n >= RECORD_FIELD)
                return false;
        for (size_t i = 0; i < n; i++)
                if (v[i] <= ' ' || v[i] >= 0x7f)
                        return false;
        return true;
}

int record_format(const Record *r, char *buf, size_t size)
{
        size_t o;

        if (size < sizeof(MAGIC))
                return -EINVAL;
        memcpy(buf, MAGIC, sizeof(MAGIC));
        o = sizeof(MAGIC) - 1;
        for (size_t i = 0; i < ELEMENTSOF(fields); i++) {
                const char *v = (const char *)r + fields[i].offset;
                int k;

                if (!value_valid(v, strlen(v)))
                        return -EINVAL;
                k = snprintf(buf + o, size - o, "%s=%s\n", fields[i].key, v);
                if (k < 0 || (size_t)k >= size - o)
                        return -EINVAL;
                o += (size_t)k;
        }
        return (int)o;
}

int record_parse(const char *data, size_t n, Record *ret)
{
        Record r = {};
        size_t o = sizeof(MAGIC) - 1;

        if (n > RECORD_MAX_SIZE || n < o || memcmp(data, MAGIC, o) != 0)
                return -EINVAL;
        for (size_t i = 0; i < ELEMENTSOF(fields); i++) {
                size_t kl = strlen(fields[i].key);
                const char *v, *nl;

                if (n - o < kl + 1 || memcmp(data + o, fields[i].key, kl) != 0 || data[o + kl] != '=')
                        return -EINVAL;
                v = data + o + kl + 1;
                nl = memchr(v, '\n', n - (size_t)(v - data));
                if (!nl || !value_valid(v, (size_t)(nl - v)))
                        return -EINVAL;
                memcpy((char *)&r + fields[i].offset, v, (size_t)(nl - v));
                o = (size_t)(nl - data) + 1;
        }
        if (o != n)
                return -EINVAL;
        *ret = r;
        return 0;
}

bool record_matches(const Record *taken, const Record *self, char *why, size_t size)
{
        if (!self->run_id[0] || strcmp(self->run_id, "-") == 0) {
                (void)snprintf(why, size, "not taken: not in a GitHub Actions job (no GITHUB_RUN_ID)");
                return false;
        }
        for (size_t i = 0; i < ELEMENTSOF(fields); i++) {
                const char *a = (const char *)taken + fields[i].offset,
                           *b = (const char *)self + fields[i].offset;

                if (strcmp(a, b) != 0) {
                        (void)snprintf(why, size, "not taken: its %s is not this one's", fields[i].key);
                        return false;
                }
        }
        (void)snprintf(why, size, "matches");
        return true;
}

static void hex(const unsigned char *md, unsigned n, char *out)
{
        for (unsigned i = 0; i < n; i++)
                (void)sprintf(out + 2 * i, "%02x", md[i]);
}

static int sha256_data(const char *data, size_t n, char out[RECORD_FIELD])
{
        unsigned char md[EVP_MAX_MD_SIZE];
        unsigned len = 0;

        if (EVP_Digest(data, n, md, &len, EVP_sha256(), NULL) != 1)
                return -EIO;
        hex(md, len, out);
        return 0;
}

static int sha256_fd(int fd, char out[RECORD_FIELD])
{
        EVP_MD_CTX *ctx = EVP_MD_CTX_new();
        unsigned char md[EVP_MAX_MD_SIZE];
        unsigned len = 0;
        char buf[65536];
        int r = 0;

        if (!ctx || EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1)
                r = -EIO;
        while (r == 0) {
                ssize_t k = read(fd, buf, sizeof(buf));
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        r = -errno;
                else if (k == 0)
                        break;
                else if (EVP_DigestUpdate(ctx, buf, (size_t)k) != 1)
                        r = -EIO;
        }
        if (r == 0 && EVP_DigestFinal_ex(ctx, md, &len) != 1)
                r = -EIO;
        EVP_MD_CTX_free(ctx);
        if (r == 0)
                hex(md, len, out);
        return r;
}

static void env_field(const char *name, char out[RECORD_FIELD])
{
        const char *v = getenv(name);

        (void)snprintf(out, RECORD_FIELD, "%s", v && value_valid(v, strlen(v)) ? v : "-");
}

int record_self(const char *config_data, size_t config_size, const char *policy_data, size_t policy_size,
                Record *ret)
{
        _cleanup_close_ int fd = -EBADF;
        Record r = {};
        int k;

        env_field("GITHUB_RUN_ID", r.run_id);
        env_field("GITHUB_RUN_ATTEMPT", r.attempt);
        env_field("GITHUB_JOB", r.job);
        (void)snprintf(r.version, sizeof(r.version), "%s", PACKAGE_VERSION);
        fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        k = sha256_fd(fd, r.binary);
        if (k < 0)
                return k;
        k = sha256_data(config_data, config_size, r.config);
        if (k < 0)
                return k;
        if (policy_data) {
                k = sha256_data(policy_data, policy_size, r.policy);
                if (k < 0)
                        return k;
        } else
                (void)snprintf(r.policy, sizeof(r.policy), "none");
        *ret = r;
        return 0;
}

/* The directory, opened without following a link; *why set when it is not the runner's alone. */
static int open_dir(const char *dir, const char *prefix, bool *own, char *why, size_t size)
{
        struct stat st;
        int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0) {
                int r = -errno;
                close(fd);
                return r;
        }
        *own = st.st_uid == getuid() && !(st.st_mode & 022);
        if (!*own)
                (void)snprintf(why, size,
                               "%s%s is not a directory of the runner's that no one else can write", prefix,
                               dir);
        return fd;
}

int record_take(const char *dir, RecordTaken *ret)
{
        _cleanup_close_ int dfd = -EBADF;
        /* cppcheck-suppress unreadVariable ; the cleanup reads it on the paths that never open the file */
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *data = NULL;
        RecordTaken t = {};
        struct stat st;
        size_t n = 0;
        bool own = false;
        int r;

        *ret = t;
        if (!dir || !dir[0])
                return 0;
        dfd = open_dir(dir, "the record was not taken: ", &own, t.note, sizeof(t.note));
        if (dfd < 0)
                return dfd == -ENOENT ? 0 : dfd;
        /* What is there, without following a link; then opened without following one, and checked to be
         * the same file. A file of another owner is judged before it is opened, since the runner may not
         * be able to open it at all. */
        if (fstatat(dfd, RECORD_NAME, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                if (errno != ENOENT)
                        return -errno;
                *ret = (RecordTaken){};
                return 0;
        }
        if (!own)
                ; /* t.note says why */
        else if (S_ISLNK(st.st_mode))
                (void)snprintf(t.note, sizeof(t.note), "the record was not taken: it is a link");
        else if (!S_ISREG(st.st_mode))
                (void)snprintf(t.note, sizeof(t.note), "the record was not taken: not a regular file");
        else if (st.st_uid != getuid())
                (void)snprintf(t.note, sizeof(t.note), "the record was not taken: not the runner's file");
        else {
                struct stat st2;

                fd = openat(dfd, RECORD_NAME, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
                if (fd < 0 || fstat(fd, &st2) < 0 || !S_ISREG(st2.st_mode) || st2.st_uid != getuid() ||
                    st2.st_ino != st.st_ino || st2.st_dev != st.st_dev)
                        (void)snprintf(t.note, sizeof(t.note),
                                       "the record was not taken: it changed while read");
                else if (read_regular_fd(fd, RECORD_MAX_SIZE, &data, &n) < 0 ||
                         record_parse(data, n, &t.record) < 0)
                        (void)snprintf(t.note, sizeof(t.note), "the record was not taken: malformed");
                else
                        t.found = true;
        }
        r = unlinkat(dfd, RECORD_NAME, 0);
        if (r < 0 && errno != ENOENT)
                return -errno;
        *ret = t;
        return 0;
}

int record_remove(const char *dir)
{
        _cleanup_close_ int dfd = -EBADF;

        if (!dir || !dir[0])
                return 0;
        dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dfd < 0)
                return errno == ENOENT ? 0 : -errno;
        if (unlinkat(dfd, RECORD_NAME, 0) < 0 && errno != ENOENT)
                return -errno;
        return 0;
}

int record_write(const char *dir, const Record *self, char *why, size_t size)
{
        _cleanup_close_ int dfd = -EBADF, fd = -EBADF;
        char text[RECORD_MAX_SIZE];
        bool own = false;
        int n;

        if (!dir || !dir[0]) {
                (void)snprintf(why, size, "no record written: RUNNER_TEMP is not set");
                return -EINVAL;
        }
        if (strcmp(self->run_id, "-") == 0 || strcmp(self->attempt, "-") == 0 ||
            strcmp(self->job, "-") == 0) {
                (void)snprintf(
                        why, size,
                        "no record written: GITHUB_RUN_ID, GITHUB_RUN_ATTEMPT or GITHUB_JOB is not set");
                return -EINVAL;
        }
        dfd = open_dir(dir, "no record written: ", &own, why, size);
        if (dfd < 0) {
                (void)snprintf(why, size, "no record written: %s: %s", dir, strerror(-dfd));
                return dfd;
        }
        if (!own)
                return -EINVAL;
        n = record_format(self, text, sizeof(text));
        if (n < 0) {
                (void)snprintf(why, size, "no record written: a field is malformed");
                return n;
        }
        fd = openat(dfd, RECORD_NAME, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0 || write_all(fd, text, (size_t)n) < 0 || fsync(fd) < 0) {
                int e = errno;
                (void)snprintf(why, size, "no record written: %s", strerror(e));
                if (fd >= 0) /* ours, half written; never one that was there before */
                        (void)unlinkat(dfd, RECORD_NAME, 0);
                return -e;
        }
        (void)snprintf(why, size, "record written: %s/" RECORD_NAME, dir);
        return 0;
}
