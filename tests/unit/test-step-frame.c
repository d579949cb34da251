/* SPDX-License-Identifier: MIT */
/* step-frame.h: a script step's frame made and read back whole (values with newlines, quotes, non-ASCII;
 * a name the environment lacks left out; nothing past the frame read), and every malformed or hostile
 * frame refused: a header that never ends or is too long, a short script, a variable the configuration
 * could never name, a value with a NUL, a bound passed. */
#include <check.h>

#include "check-run.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "macro.h"
#include "step-frame.h"

/* A stream (as the command's standard input is) holding data, then its end; a memfd where data is more
 * than a socket holds unread. */
static int stream_of(const char *data, size_t n)
{
        int sp[2], fd;

        if (n > 65536) {
                fd = memfd_create("test-step-frame", MFD_CLOEXEC);
                ck_assert_int_ge(fd, 0);
                ck_assert_int_eq(write(fd, data, n), (ssize_t)n);
                ck_assert_int_eq(lseek(fd, 0, SEEK_SET), 0);
                return fd;
        }
        ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp), 0);
        ck_assert_int_eq(write(sp[1], data, n), (ssize_t)n);
        close(sp[1]);
        return sp[0];
}

static size_t read_all(int fd, char *buf, size_t size)
{
        size_t n = 0;
        ssize_t k;

        while (n < size && (k = read(fd, buf + n, size - n)) > 0)
                n += (size_t)k;
        return n;
}

START_TEST(test_round_trip)
{
        char *names[] = { "FOO", "ABSENT", "QUOTED", NULL };
        char *env[] = { "FOO=a b\nc", "QUOTED=\"x\" \\ \xc3\xa9", "OTHER=not named", NULL };
        const char script[] = "echo one\nread x\necho two\n";
        char frame[4096], out[256];
        char **vars = NULL;
        size_t n;
        int fd, in, script_fd = -1;
        AjError e = {};

        ck_assert_int_eq(step_frame_build(names, env, script, strlen(script), &fd), 0);
        n = read_all(fd, frame, sizeof(frame));
        close(fd);
        memcpy(frame + n, "NEXT", 4); /* what follows the frame on the stream is not the frame's */
        in = stream_of(frame, n + 4);
        ck_assert_int_eq(step_frame_read(in, &vars, &script_fd, &e), 0);
        ck_assert_ptr_nonnull(vars);
        ck_assert_str_eq(vars[0], "FOO=a b\nc");
        ck_assert_str_eq(vars[1], "QUOTED=\"x\" \\ \xc3\xa9");
        ck_assert_ptr_null(vars[2]);
        n = read_all(script_fd, out, sizeof(out) - 1);
        out[n] = '\0';
        ck_assert_str_eq(out, script);
        n = read_all(in, out, sizeof(out) - 1);
        out[n] = '\0';
        ck_assert_str_eq(out, "NEXT");
        strv_free(vars);
        close(script_fd);
        close(in);
}
END_TEST

START_TEST(test_empty)
{
        char **vars = NULL;
        int fd, script_fd = -1;
        AjError e = {};
        char c;

        ck_assert_int_eq(step_frame_build(NULL, NULL, "", 0, &fd), 0);
        ck_assert_int_eq(step_frame_read(fd, &vars, &script_fd, &e), 0);
        ck_assert_ptr_nonnull(vars);
        ck_assert_ptr_null(vars[0]);
        ck_assert_int_eq(read(script_fd, &c, 1), 0);
        strv_free(vars);
        close(script_fd);
        close(fd);
}
END_TEST

static const struct {
        const char *frame;
        size_t n; /* 0: strlen */
        const char *message;
} refused[] = {
        { "", 0, "the step's header: the input ended before it" },
        { "{\"env\":{},\"script\":3}", 0, "the step's header: the input ended before it" },
        { "{\"env\":{},\"script\":3}\nab", 0, "the step's script: the input ended before its end" },
        { "not json\n", 0, "the step's header is not JSON" },
        { "{\"env\":{},\"script\":-1}\n", 0, "the step's header is not {\"env\":{...},\"script\":N}" },
        { "{\"env\":{},\"script\":1048577}\n", 0, "the step's header is not {\"env\":{...},\"script\":N}" },
        { "{\"env\":[],\"script\":0}\n", 0, "the step's header is not {\"env\":{...},\"script\":N}" },
        { "{\"env\":{},\"script\":0,\"more\":1}\n", 0,
          "the step's header is not {\"env\":{...},\"script\":N}" },
        { "{\"env\":{},\"env\":{},\"script\":0}\n", 0, "the step's header is not JSON" },
        { "{\"env\":{\"ACTIONS_RUNTIME_TOKEN\":\"t\"},\"script\":0}\n", 0,
          "the step's header: variable ACTIONS_RUNTIME_TOKEN refused" },
        { "{\"env\":{\"actions_x\":\"t\"},\"script\":0}\n", 0,
          "the step's header: variable actions_x refused" },
        { "{\"env\":{\"A=B\":\"t\"},\"script\":0}\n", 0, "the step's header: variable A=B refused" },
        { "{\"env\":{\"A\":\"t\\u0000u\"},\"script\":0}\n", 0, "the step's header is not JSON" },
        { "{\"env\":{\"A\":1},\"script\":0}\n", 0, "the step's header: variable A refused" },
};

START_TEST(test_refused)
{
        char **vars = NULL;
        int in, script_fd = -1;
        AjError e = {};

        in = stream_of(refused[_i].frame, refused[_i].n ? refused[_i].n : strlen(refused[_i].frame));
        ck_assert_int_lt(step_frame_read(in, &vars, &script_fd, &e), 0);
        ck_assert_msg(strncmp(e.message, refused[_i].message, strlen(refused[_i].message)) == 0,
                      "case %d: '%s', not '%s'", _i, e.message, refused[_i].message);
        ck_assert_ptr_null(vars);
        ck_assert_int_eq(script_fd, -1);
        close(in);
}
END_TEST

START_TEST(test_header_bound)
{
        size_t n = STEP_HEADER_MAX + 16;
        char *frame = malloc(n), **vars = NULL;
        int in, script_fd = -1;
        AjError e = {};

        ck_assert_ptr_nonnull(frame);
        memset(frame, ' ', n); /* white space JSON would take, but never a line's end */
        in = stream_of(frame, n);
        ck_assert_int_eq(step_frame_read(in, &vars, &script_fd, &e), -EFBIG);
        ck_assert_str_eq(e.message, "the step's header is over 262144 bytes");
        close(in);
        free(frame);
}
END_TEST

START_TEST(test_build_bounds)
{
        char *names[] = { "BIG", NULL };
        char *big = malloc(STEP_HEADER_MAX + 8), *env[] = { big, NULL };
        int fd = -1;

        ck_assert_ptr_nonnull(big);
        memcpy(big, "BIG=", 4);
        memset(big + 4, 'x', STEP_HEADER_MAX);
        big[STEP_HEADER_MAX + 4] = '\0';
        ck_assert_int_eq(step_frame_build(names, env, "", 0, &fd), -EFBIG);
        ck_assert_int_eq(step_frame_build(NULL, NULL, big, STEP_SCRIPT_MAX + 1, &fd), -EFBIG);
        ck_assert_int_eq(fd, -1);
        free(big);
}
END_TEST

static Suite *step_frame_suite(void)
{
        Suite *s = suite_create("step-frame");
        TCase *tc = tcase_create("step-frame");

        /* The header is read a byte at a time (nothing of the script with it): 256 KiB of reads are slow
         * under valgrind. */
        tcase_set_timeout(tc, 60);

        tcase_add_test(tc, test_round_trip);
        tcase_add_test(tc, test_empty);
        tcase_add_loop_test(tc, test_refused, 0, (int)(sizeof(refused) / sizeof(refused[0])));
        tcase_add_test(tc, test_header_bound);
        tcase_add_test(tc, test_build_bounds);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return check_run(step_frame_suite());
}
