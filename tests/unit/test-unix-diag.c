/* SPDX-License-Identifier: MIT */
/* unix_diag_dump() and unix_diag_parse(): the sockets of this network namespace by what they are. Each
 * case binds real sockets the way a daemon hiding one would (renamed, hard-linked then unlinked, bound
 * by a relative name, an abstract name with a NUL inside, a datagram socket) and finds it in the kernel's
 * answer with the inode of its file; then malformed answers are refused. */
#include <check.h>

#include "check-run.h"
#include <errno.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/unix_diag.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "unix-diag.h"

static char tmpdir[] = "/tmp/agentic-job-test-unix-diag-XXXXXX";

static void setup(void)
{
        ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void teardown(void)
{
        char cmd[256];

        (void)snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
        ck_assert_int_eq(system(cmd), 0);
}

/* A socket of type bound to the first len bytes of name (abstract where name[0] is NUL), listening where
 * it is a stream. */
static int bound(int type, const char *name, size_t len)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);

        ck_assert_int_ge(fd, 0);
        ck_assert_uint_lt(len, sizeof(sa.sun_path));
        memcpy(sa.sun_path, name, len);
        ck_assert_int_eq(
                bind(fd, (struct sockaddr *)&sa, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len)),
                0);
        if (type == SOCK_STREAM)
                ck_assert_int_eq(listen(fd, 4), 0);
        return fd;
}

typedef struct Want {
        const char *name; /* as bound */
        size_t name_len;
        unsigned type;
        struct stat st; /* its file's, where it has one */
        bool has_file, found;
} Want;

static Want wants[8];
static size_t n_wants;

/* Expects the socket bound as name (len bytes) of type, its file at file (NULL: none). */
static void want(const char *name, size_t len, unsigned type, const char *file)
{
        Want *w = &wants[n_wants++];

        *w = (Want){ .name = name, .name_len = len, .type = type, .has_file = file != NULL };
        if (file)
                ck_assert_int_eq(lstat(file, &w->st), 0);
}

static int on_socket(const UnixSocket *s, void *userdata)
{
        (void)userdata;
        ck_assert(unix_diag_accepts(s));
        for (size_t i = 0; i < n_wants; i++) {
                Want *w = &wants[i];

                if (s->name_len != w->name_len || memcmp(s->name, w->name, w->name_len) != 0)
                        continue;
                ck_assert_uint_eq(s->type, w->type);
                if (w->has_file) {
                        ck_assert(s->has_vfs);
                        ck_assert_uint_eq(s->vfs_ino, w->st.st_ino);
                        ck_assert(unix_diag_same_dev(w->st.st_dev, s->vfs_dev));
                } else
                        ck_assert(!s->has_vfs);
                /* Whose it is: this test's own (the kernels CI and the hosts run all tell it). */
                ck_assert(s->has_uid);
                ck_assert_uint_eq(s->uid, getuid());
                w->found = true;
        }
        return 0;
}

START_TEST(test_dump_finds_hidden_sockets)
{
        char path[256], moved[256], other[256], cwd[256];
        static const char abstract_nul[] = "\0ajt-diag\0inner";
        int fds[8], n = 0;

        n_wants = 0;
        /* Bound at a path, then renamed: its file is elsewhere, /proc/net/unix still says the old name. */
        (void)snprintf(path, sizeof(path), "%s/bound.sock", tmpdir);
        (void)snprintf(moved, sizeof(moved), "%s/moved.sock", tmpdir);
        fds[n++] = bound(SOCK_STREAM, path, strlen(path));
        ck_assert_int_eq(rename(path, moved), 0);
        want(strdup(path), strlen(path), SOCK_STREAM, moved);

        /* Hard-linked elsewhere, the bound name unlinked. */
        (void)snprintf(path, sizeof(path), "%s/linked.sock", tmpdir);
        (void)snprintf(other, sizeof(other), "%s/other-name", tmpdir);
        fds[n++] = bound(SOCK_STREAM, path, strlen(path));
        ck_assert_int_eq(link(path, other), 0);
        ck_assert_int_eq(unlink(path), 0);
        want(strdup(path), strlen(path), SOCK_STREAM, other);

        /* Bound by a relative name. */
        ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
        ck_assert_int_eq(chdir(tmpdir), 0);
        fds[n++] = bound(SOCK_STREAM, "relative.sock", strlen("relative.sock"));
        want("relative.sock", strlen("relative.sock"), SOCK_STREAM, "relative.sock");
        ck_assert_int_eq(chdir(cwd), 0);

        /* A datagram socket at a path. */
        (void)snprintf(moved, sizeof(moved), "%s/dgram.sock", tmpdir);
        fds[n++] = bound(SOCK_DGRAM, moved, strlen(moved));
        want(strdup(moved), strlen(moved), SOCK_DGRAM, moved);

        /* Abstract, with a NUL inside its name; and an abstract datagram socket. */
        fds[n++] = bound(SOCK_STREAM, abstract_nul, sizeof(abstract_nul) - 1);
        want(abstract_nul, sizeof(abstract_nul) - 1, SOCK_STREAM, NULL);
        fds[n++] = bound(SOCK_DGRAM, "\0ajt-diag-dgram", 15);
        want("\0ajt-diag-dgram", 15, SOCK_DGRAM, NULL);

        ck_assert_int_eq(unix_diag_dump(100000, on_socket, NULL), 0);
        for (size_t i = 0; i < n_wants; i++)
                ck_assert_msg(wants[i].found, "socket %zu (%s) not in the dump", i,
                              wants[i].name + !wants[i].name[0]);
        free((char *)wants[0].name);
        free((char *)wants[1].name);
        free((char *)wants[3].name);
        for (int i = 0; i < n; i++)
                close(fds[i]);
}
END_TEST

/* A stream socket that does not listen, and a datagram socket connected to a peer, accept nothing. */
START_TEST(test_dump_skips_what_accepts_nothing)
{
        char path[256];
        int a, b, pair[2];

        n_wants = 0;
        (void)snprintf(path, sizeof(path), "%s/not-listening.sock", tmpdir);
        a = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        memcpy(sa.sun_path, path, strlen(path) + 1);
        ck_assert_int_eq(bind(a, (struct sockaddr *)&sa, sizeof(sa)), 0);
        ck_assert_int_eq(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, pair), 0);
        b = bound(SOCK_DGRAM, "\0ajt-diag-connected", 19);
        struct sockaddr_un peer = { .sun_family = AF_UNIX };
        memcpy(peer.sun_path, "\0ajt-diag-peer", 14);
        int p = bound(SOCK_DGRAM, "\0ajt-diag-peer", 14);
        ck_assert_int_eq(connect(b, (struct sockaddr *)&peer,
                                 (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 14)),
                         0);
        /* on_socket asserts that every socket handed to it accepts: these must not be. */
        want(path, strlen(path), SOCK_STREAM, NULL);
        want("\0ajt-diag-connected", 19, SOCK_DGRAM, NULL);
        ck_assert_int_eq(unix_diag_dump(100000, on_socket, NULL), 0);
        ck_assert(!wants[0].found);
        ck_assert(!wants[1].found);
        close(a);
        close(b);
        close(p);
        close(pair[0]);
        close(pair[1]);
}
END_TEST

static int count(const UnixSocket *s, void *userdata)
{
        (void)s;
        ++*(size_t *)userdata;
        return 0;
}

START_TEST(test_dump_bounded)
{
        int fds[4];
        size_t n = 0;

        fds[0] = bound(SOCK_STREAM, "\0ajt-diag-bound-1", 17);
        fds[1] = bound(SOCK_STREAM, "\0ajt-diag-bound-2", 17);
        ck_assert_int_eq(unix_diag_dump(1, count, &n), -E2BIG);
        ck_assert_uint_eq(n, 1);
        close(fds[0]);
        close(fds[1]);
}
END_TEST

START_TEST(test_parse_refuses_malformed)
{
        union {
                struct {
                        struct unix_diag_msg m;
                        struct rtattr a;
                        char name[120];
                } s;
                long align;
        } buf;
        UnixSocket u;

        memset(&buf, 0, sizeof(buf));
        buf.s.m.udiag_family = AF_UNIX;
        buf.s.m.udiag_type = SOCK_STREAM;
        buf.s.m.udiag_state = 10;
        ck_assert_int_eq(unix_diag_parse(&buf, sizeof(buf.s.m), &u), 0);
        ck_assert_uint_eq(u.name_len, 0);
        ck_assert(!unix_diag_accepts(&u)); /* no name: nothing to reach it by */
        ck_assert_int_eq(unix_diag_parse(&buf, sizeof(buf.s.m) - 1, &u), -EBADMSG);
        buf.s.m.udiag_family = AF_INET;
        ck_assert_int_eq(unix_diag_parse(&buf, sizeof(buf.s.m), &u), -EBADMSG);
        buf.s.m.udiag_family = AF_UNIX;

        buf.s.a.rta_type = UNIX_DIAG_NAME;
        buf.s.a.rta_len = RTA_LENGTH(3);
        memcpy(buf.s.name, "abc", 3);
        ck_assert_int_eq(unix_diag_parse(&buf, sizeof(buf.s.m) + RTA_SPACE(3), &u), 0);
        ck_assert_uint_eq(u.name_len, 3);
        ck_assert_str_eq(u.name, "abc");
        ck_assert(unix_diag_accepts(&u));
        /* An attribute longer than what is left, a name longer than sun_path, an empty one. */
        ck_assert_int_eq(unix_diag_parse(&buf, sizeof(buf.s.m) + RTA_LENGTH(2), &u), -EBADMSG);
        buf.s.a.rta_len = RTA_LENGTH(UNIX_DIAG_NAME_MAX + 1);
        ck_assert_int_eq(unix_diag_parse(&buf, sizeof(buf), &u), -EBADMSG);
        buf.s.a.rta_len = RTA_LENGTH(0);
        ck_assert_int_eq(unix_diag_parse(&buf, sizeof(buf.s.m) + RTA_SPACE(0), &u), -EBADMSG);
        /* A VFS attribute too short for its two numbers. */
        buf.s.a.rta_type = UNIX_DIAG_VFS;
        buf.s.a.rta_len = RTA_LENGTH(4);
        ck_assert_int_eq(unix_diag_parse(&buf, sizeof(buf.s.m) + RTA_SPACE(4), &u), -EBADMSG);
        /* The owner's uid: four bytes, no fewer. */
        buf.s.a.rta_type = UNIX_DIAG_UID;
        buf.s.a.rta_len = RTA_LENGTH(2);
        ck_assert_int_eq(unix_diag_parse(&buf, sizeof(buf.s.m) + RTA_SPACE(2), &u), -EBADMSG);
        buf.s.a.rta_len = RTA_LENGTH(4);
        memcpy(buf.s.name, &(uint32_t){ 1001 }, 4);
        ck_assert_int_eq(unix_diag_parse(&buf, sizeof(buf.s.m) + RTA_SPACE(4), &u), 0);
        ck_assert(u.has_uid);
        ck_assert_uint_eq(u.uid, 1001);
}
END_TEST

static Suite *unix_diag_suite(void)
{
        Suite *s = suite_create("unix-diag");
        TCase *tc = tcase_create("unix-diag");

        tcase_add_unchecked_fixture(tc, setup, teardown);
        tcase_add_test(tc, test_dump_finds_hidden_sockets);
        tcase_add_test(tc, test_dump_skips_what_accepts_nothing);
        tcase_add_test(tc, test_dump_bounded);
        tcase_add_test(tc, test_parse_refuses_malformed);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return check_run(unix_diag_suite());
}
