/* SPDX-License-Identifier: MIT */
/* The check's plan and the sandbox side's inputs: the names the runner waits for against the probe table,
 * the sandbox side's command line, and its readers of /proc/net/tcp, tcp6 and unix (lines as the kernel
 * writes them, and lines of other shapes). */
#include <check.h>

#include "check-run.h"
#include <arpa/inet.h>
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <string.h>
#include <sys/wait.h>

#include "check-inside.h"
#include "config.h"
#include "egress-plan.h"
#include "environ-scan.h"
#include "macro.h"
#include "probes.h"
#include "procnet.h"
#include "ptrace-scope.h"
#include "sudo-list.h"
#include "walk-probe.h"
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

START_TEST(test_plan_matches_table)
{
        char *const dirs[] = { (char *)"/home/runner", (char *)"/opt/x" };
        char *const secrets[] = { (char *)"ACTIONS_ID_TOKEN_REQUEST_URL",
                                  (char *)"ACTIONS_ID_TOKEN_REQUEST_TOKEN" };
        _cleanup_strv_free_ char **names = NULL;
        size_t n_sandbox = 0, n_param = 0;

        char *const services[] = { (char *)"docker.service", NULL };
        EgressPlanned planned[EGRESS_PLANNED] = {
                { .name = "egress-git" },
                { .name = "egress-cargo-refused", .refused = true },
                { .name = "egress-npm" },
                { .name = "egress-push", .refused = true },
        };
        /* Each planned probe is waited for in one of its two forms. */
        static const char *const alternates[] = { "egress-git",   "egress-git-refused",
                                                  "egress-cargo", "egress-cargo-refused",
                                                  "egress-npm",   "egress-npm-refused" };

        ck_assert_int_eq(
                inside_expected_names(dirs, 2, secrets, 2, services, planned, EGRESS_PLANNED, true, &names),
                0);
        /* Every name the runner waits for is a sandbox-side probe of the table... */
        for (char **n = names; *n; n++) {
                const ProbeDef *d = probe_lookup(*n);
                ck_assert_msg(d, "%s is not in the table", *n);
                ck_assert_msg(d->side == PROBE_SANDBOX, "%s is not the sandbox side's", *n);
                ck_assert_msg(!d->control || probe_lookup(d->control), "%s: control %s unknown", *n,
                              d->control);
        }
        /* ...and every sandbox-side probe of the table is waited for (a parametrized one once per path). */
        for (size_t i = 0; i < probe_table_size; i++) {
                const char *t = probe_table[i].name;
                bool found = false;

                if (probe_table[i].side != PROBE_SANDBOX)
                        continue;
                if (t[strlen(t) - 1] == ':') {
                        n_param++;
                        continue;
                }
                for (size_t k = 0; k < ELEMENTSOF(alternates); k++)
                        found = found || strcmp(alternates[k], t) == 0;
                if (found)
                        continue;
                n_sandbox++;
                for (char **n = names; *n; n++)
                        found = found || strcmp(*n, t) == 0;
                ck_assert_msg(found, "%s is never waited for", t);
        }
        for (size_t k = 0; k < ELEMENTSOF(alternates); k++)
                ck_assert_msg(probe_lookup(alternates[k]), "%s is not in the table", alternates[k]);
        /* private-dir: twice, oidc-value: twice, service: once, three planned probes of two forms; the
         * walk's last */
        ck_assert_uint_eq(n_param, 3);
        ck_assert_uint_eq(strv_length(names), n_sandbox + 5 + 3);
        ck_assert_str_eq(names[strv_length(names) - 14], "private-dir:/opt/x");
        ck_assert_str_eq(names[strv_length(names) - 12], "oidc-value:ACTIONS_ID_TOKEN_REQUEST_TOKEN");
        ck_assert_str_eq(names[strv_length(names) - 11], "service:docker.service");
        ck_assert_str_eq(names[strv_length(names) - 9], "egress-cargo-refused");
        ck_assert_str_eq(names[strv_length(names) - 7], "egress-push");
        ck_assert_str_eq(names[strv_length(names) - 4], "sandbox-writable-control");
        ck_assert_str_eq(names[strv_length(names) - 1], "setuid-unowned");
        {
                _cleanup_strv_free_ char **plain = NULL;

                /* Without the walk, none of its names is waited for. */
                ck_assert_int_eq(inside_expected_names(dirs, 2, secrets, 2, services, planned,
                                                       EGRESS_PLANNED, false, &plain),
                                 0);
                ck_assert_uint_eq(strv_length(plain), strv_length(names) - 6);
                for (char **n = plain; *n; n++)
                        ck_assert_msg(strcmp(*n, "world-writable") != 0, "the walk's name without --walk");
        }
        ck_assert_ptr_nonnull(probe_lookup("oidc-value:X"));
        ck_assert(probe_group_known("processes"));
        ck_assert(!probe_group_known("nothing"));
        ck_assert_ptr_null(probe_lookup("private-dir:"));
        ck_assert_ptr_null(probe_lookup("nothing"));
}
END_TEST

START_TEST(test_inside_args)
{
        char *ok[] = { "probe-inside",
                       "--proxy-port",
                       "3128",
                       "--user-manager",
                       "masked",
                       "--tasks-max",
                       "8192",
                       "--post",
                       "refused",
                       "--control-url",
                       "https://x/",
                       "--fetch-repo",
                       "https://x/r.git",
                       "--egress",
                       "egress-git-refused POST https://x/r.git/git-upload-pack",
                       "--egress",
                       "egress-push",
                       "--egress-addr6",
                       "2001:db8::10",
                       "--resolve-name",
                       "agentic-job-check-00ff.x",
                       "--front",
                       "www.x",
                       "--tcp-control",
                       "4000",
                       "--udp-target",
                       "4001",
                       "--abstract",
                       PROBE_ABSTRACT_PREFIX "ab",
                       "--socket-control",
                       "/tmp/" PROBE_ABSTRACT_PREFIX "x1/socket",
                       "--private",
                       "/home/r",
                       "--allow-tcp",
                       "53",
                       "--allow-socket",
                       "@x",
                       "--decoy",
                       "4242",
                       "--decoy-tty",
                       "/dev/pts/3",
                       "--canary",
                       "0123456789abcdef0123456789abcdef",
                       "--secret",
                       "ACTIONS_ID_TOKEN_REQUEST_TOKEN=3:"
                       "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
                       "--service",
                       "docker.service",
                       "--egress-addr",
                       "203.0.113.10",
                       "--egress-port",
                       "443",
                       "--nameserver",
                       "2001:db8::53",
                       "--walk",
                       "/tmp/" PROBE_ABSTRACT_PREFIX "x1",
                       "--only",
                       "processes",
                       "--container-image",
                       "registry.example/x/y:1@sha256:00ff",
                       NULL };
        InsideArgs a;
        AjError e = {};

        ck_assert_int_eq(inside_args_parse((int)ELEMENTSOF(ok) - 1, ok, &a, &e), 0);
        ck_assert_str_eq(a.container_image, "registry.example/x/y:1@sha256:00ff");
        ck_assert_uint_eq(a.proxy_port, 3128);
        ck_assert_uint_eq(a.tasks_max, 8192);
        ck_assert_uint_eq(a.tcp_control, 4000);
        ck_assert_uint_eq(a.udp_target, 4001);
        ck_assert_uint_eq(a.n_private, 1);
        ck_assert_uint_eq(a.allow_tcp[0], 53);
        ck_assert_str_eq(a.allow_socket[0], "@x");
        ck_assert_int_eq(a.decoy, 4242);
        ck_assert_str_eq(a.decoy_tty, "/dev/pts/3");
        ck_assert_uint_eq(a.n_secrets, 1);
        ck_assert_str_eq(a.secrets[0].name, "ACTIONS_ID_TOKEN_REQUEST_TOKEN");
        ck_assert_uint_eq(a.secrets[0].size, 3);
        ck_assert_uint_eq(a.secrets[0].sha256[0], 0xba);
        ck_assert_uint_eq(a.n_only, 1);
        ck_assert_uint_eq(a.n_service, 1);
        ck_assert_str_eq(a.egress_addr, "203.0.113.10");
        ck_assert_uint_eq(a.egress_port, 443);
        ck_assert_str_eq(a.nameserver[0], "2001:db8::53");
        ck_assert_str_eq(a.walk_dir, "/tmp/" PROBE_ABSTRACT_PREFIX "x1");
        ck_assert_str_eq(a.fetch_repo, "https://x/r.git");
        ck_assert_uint_eq(a.n_planned, 2);
        ck_assert_str_eq(a.planned[0].name, "egress-git-refused");
        ck_assert(a.planned[0].refused);
        ck_assert_str_eq(a.planned[0].method, "POST");
        ck_assert_str_eq(a.planned[0].url, "https://x/r.git/git-upload-pack");
        ck_assert_str_eq(a.planned[1].name, "egress-push");
        ck_assert(!a.planned[1].refused);
        ck_assert_str_eq(a.egress_addr6, "2001:db8::10");
        ck_assert_str_eq(a.resolve_name, "agentic-job-check-00ff.x");
        ck_assert_str_eq(a.front, "www.x");
        ck_assert_str_eq(a.control_host, "x");
        ck_assert_uint_eq(a.control_port, 443);

        static const char *const bad[][3] = {
                { "--proxy-port", "3128", NULL },       /* repeated */
                { "--tcp-control", "0", NULL },         /* not a port */
                { "--udp-target", "4002", NULL },       /* repeated */
                { "--abstract", "other", NULL },        /* not the check's */
                { "--private", "relative", NULL },      /* not absolute */
                { "--allow-tcp", "65536", NULL },       /* not a port */
                { "--bogus", "1", NULL },               /* unknown */
                { "--control-url", "ftp://x/", NULL },  /* repeated, and not http */
                { "--private", NULL, NULL },            /* no value */
                { "--decoy", "1", NULL },               /* repeated */
                { "--decoy-tty", "/dev/pts/4", NULL },  /* repeated */
                { "--canary", "00", NULL },             /* repeated */
                { "--only", "nothing", NULL },          /* no such group */
                { "--service", "-x.service", NULL },    /* not a unit name */
                { "--socket-control", "/tmp/y", NULL }, /* repeated, and not the check's */
                { "--service", "a b.service", NULL },   /* not a unit name */
                { "--fetch-repo", "https://y/", NULL }, /* repeated */
                { "--egress", "egress-git", NULL },     /* egress-git twice, in its other form */
                { "--egress", "egress-push POST https://x/r.git/git-receive-pack", NULL }, /* twice */
                { "--egress", "egress-npm-refused", NULL },        /* refused without its request */
                { "--egress", "egress-npm GET https://x/", NULL }, /* admitted with a request */
                { "--egress", "egress-cargo-refused PUT https://x/", NULL },    /* a method it never makes */
                { "--egress", "egress-cargo-refused GET ftp://x/", NULL },      /* not http(s) */
                { "--egress", "egress-cargo-refused GET https://x/\ty", NULL }, /* a control character */
                { "--egress", "egress-bogus", NULL },                           /* no such probe */
                { "--egress-addr6", "2001:db8::11", NULL },                     /* repeated */
                { "--resolve-name", "agentic-job-check-1.x", NULL },            /* repeated */
                { "--container-image", "other", NULL },                         /* repeated */
                { "--tasks-max", "9000", NULL },                                /* repeated */
                /* the same name twice */
                { "--secret",
                  "ACTIONS_ID_TOKEN_REQUEST_TOKEN=3:"
                  "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
                  NULL },
        };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                char *argv[96];
                int n = 0;

                for (size_t j = 0; ok[j]; j++)
                        argv[n++] = ok[j];
                argv[n++] = (char *)bad[i][0];
                if (bad[i][1])
                        argv[n++] = (char *)bad[i][1];
                argv[n] = NULL;
                ck_assert_msg(inside_args_parse(n, argv, &a, &e) == -EINVAL, "case %zu accepted", i);
        }
        ck_assert_int_eq(inside_args_parse(1, (char *[]){ "probe-inside", NULL }, &a, &e), -EINVAL);

        /* control-url's host and port, parsed once: an IPv6 address keeps its brackets, normalized. */
        static const char *const urls[][3] = {
                { "https://[2001:DB8::1]:8443/p", "[2001:db8::1]", "8443" },
                { "http://WWW.Fake.Test/", "www.fake.test", "80" },
                { "https://203.0.113.5:444", "203.0.113.5", "444" },
        };
        for (size_t i = 0; i < ELEMENTSOF(urls); i++) {
                char *argv[ELEMENTSOF(ok)];

                for (size_t j = 0; j < ELEMENTSOF(ok); j++)
                        argv[j] = j > 0 && strcmp(ok[j - 1], "--control-url") == 0 ? (char *)urls[i][0]
                                                                                   : ok[j];
                ck_assert_int_eq(inside_args_parse((int)ELEMENTSOF(ok) - 1, argv, &a, &e), 0);
                ck_assert_str_eq(a.control_host, urls[i][1]);
                ck_assert_uint_eq(a.control_port, strtoul(urls[i][2], NULL, 10));
        }
        static const char *const bad_urls[] = { "https://[2001:db8::1/", "https://a@x/", "https://x:0/",
                                                "https://x:65536/", "https:///" };
        for (size_t i = 0; i < ELEMENTSOF(bad_urls); i++) {
                char *argv[ELEMENTSOF(ok)];

                for (size_t j = 0; j < ELEMENTSOF(ok); j++)
                        argv[j] = j > 0 && strcmp(ok[j - 1], "--control-url") == 0 ? (char *)bad_urls[i]
                                                                                   : ok[j];
                ck_assert_msg(inside_args_parse((int)ELEMENTSOF(ok) - 1, argv, &a, &e) == -EINVAL,
                              "control-url %s accepted", bad_urls[i]);
        }

        /* Without --container-image (containers = false), none; a name podman could read as an option,
         * or as anything but a name, refused. */
        ck_assert_int_eq(inside_args_parse((int)ELEMENTSOF(ok) - 3, ok, &a, &e), 0);
        ck_assert_ptr_null(a.container_image);
        char long_name[300];
        memset(long_name, 'a', 256);
        long_name[256] = '\0';
        const char *const bad_images[] = { "", "-x", "--rm", "a b", "a\tb", "a;b", "a$b", long_name };
        for (size_t i = 0; i < ELEMENTSOF(bad_images); i++) {
                char *argv[ELEMENTSOF(ok)];

                for (size_t j = 0; j < ELEMENTSOF(ok); j++)
                        argv[j] = j > 0 && strcmp(ok[j - 1], "--container-image") == 0
                                          ? (char *)bad_images[i]
                                          : ok[j];
                ck_assert_msg(inside_args_parse((int)ELEMENTSOF(ok) - 1, argv, &a, &e) == -EINVAL,
                              "image %s accepted", bad_images[i]);
        }
        long_name[255] = '\0';
        ck_assert(config_image_name_ok(long_name));
}
END_TEST

/* A front is a DNS name, for both sides: the runner picks it from a certificate, the sandbox side takes it.
 */
START_TEST(test_front_name)
{
        static const char *const good[] = { "www.x", "cdn.Fake.test", "a-b.c" };
        static const char *const bad[] = { "",    "-x",  ".x",    "*.x", "203.0.113.5",
                                           "a b", "a/b", "[::1]", "x:80" };

        for (size_t i = 0; i < ELEMENTSOF(good); i++)
                ck_assert_msg(inside_front_name_ok(good[i]), "%s refused", good[i]);
        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                ck_assert_msg(!inside_front_name_ok(bad[i]), "%s taken", bad[i]);
}
END_TEST

/* The decoy's options, each malformed in turn where the others are right; each of the three needed. */
START_TEST(test_inside_args_decoy)
{
        static const char *const good[] = { "--decoy",    "4242",     "--decoy-tty",
                                            "/dev/pts/3", "--canary", "0123456789abcdef0123456789abcdef" };
        static const char *const bad[][2] = {
                { "--decoy", "1" },
                { "--decoy", "-5" },
                { "--decoy", "x" },
                { "--decoy-tty", "/dev/tty" },
                { "--decoy-tty", "/dev/pts/../sda" },
                { "--decoy-tty", "/dev/pts/" },
                { "--canary", "0123456789ABCDEF0123456789ABCDEF" },
                { "--canary", "00" },
        };
        static const char *const bad_secrets[] = {
                "X=3:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015a",      /* 63 digits */
                "X=3:BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD",     /* upper case */
                "X=0:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",     /* empty value */
                "X=65537:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", /* too long */
                "1X=3:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",    /* not a name */
                "X-Y=3:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
                "X:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
        };
        char *base[] = { "probe-inside",
                         "--proxy-port",
                         "0",
                         "--user-manager",
                         "kept",
                         "--post",
                         "none",
                         "--control-url",
                         "http://x/",
                         "--fetch-repo",
                         "http://x/r",
                         "--tcp-control",
                         "1",
                         "--udp-target",
                         "2",
                         "--abstract",
                         PROBE_ABSTRACT_PREFIX "a",
                         "--socket-control",
                         "/tmp/" PROBE_ABSTRACT_PREFIX "x/socket" };
        InsideArgs a;
        AjError e = {};

        for (size_t i = 0; i < ELEMENTSOF(bad) + 3; i++) {
                char *argv[96];
                int n = 0;

                for (size_t j = 0; j < ELEMENTSOF(base); j++)
                        argv[n++] = base[j];
                for (size_t j = 0; j < ELEMENTSOF(good); j += 2) {
                        bool replaced = i < ELEMENTSOF(bad) && strcmp(bad[i][0], good[j]) == 0;
                        if (i >= ELEMENTSOF(bad) && j / 2 == i - ELEMENTSOF(bad))
                                continue; /* left out */
                        argv[n++] = (char *)good[j];
                        argv[n++] = (char *)(replaced ? bad[i][1] : good[j + 1]);
                }
                argv[n] = NULL;
                ck_assert_msg(inside_args_parse(n, argv, &a, &e) == -EINVAL, "case %zu accepted", i);
        }
        for (size_t i = 0; i < ELEMENTSOF(bad_secrets); i++) {
                EnvironSecret sec;
                ck_assert_msg(environ_secret_parse(bad_secrets[i], &sec) == -EINVAL, "%s accepted",
                              bad_secrets[i]);
        }
}
END_TEST

/* What the sandbox side finds in an environment block: the canary anywhere, the control's entry whole,
 * ACTIONS_* names once each, and a value known only by its digest where a value starts or after a
 * separator, never elsewhere, never beyond a block's end. */
START_TEST(test_environ_scan)
{
        static const char block[] = "HOME=/home/s\0PATH=/bin\0ACTIONS_RUNTIME_TOKEN=x\0actions_cache_url=y\0"
                                    "ACTIONS_RUNTIME_TOKEN=z\0LEAK=Bearer s3cr3t-value\0NOTE=xx"
                                    "c0ffeec0ffeec0ffeec0ffeec0ffee00yy";
        char arg[ENVIRON_SECRET_ARG_MAX];
        EnvironSecret sec[3];
        EnvironScan s = {};

        ck_assert_int_eq(environ_secret_format("LEAKED", "s3cr3t-value", arg, sizeof(arg)), 0);
        ck_assert_int_eq(environ_secret_parse(arg, &sec[0]), 0);
        ck_assert_str_eq(sec[0].name, "LEAKED");
        ck_assert_uint_eq(sec[0].size, 12);
        /* "cr3t" is inside a word: not where a value starts. */
        ck_assert_int_eq(environ_secret_format("INNER", "cr3t-value", arg, sizeof(arg)), 0);
        ck_assert_int_eq(environ_secret_parse(arg, &sec[1]), 0);
        ck_assert_int_eq(environ_secret_format("ABSENT", "nothing", arg, sizeof(arg)), 0);
        ck_assert_int_eq(environ_secret_parse(arg, &sec[2]), 0);
        ck_assert_int_eq(environ_secret_format("BAD-NAME", "v", arg, sizeof(arg)), -EINVAL);
        ck_assert_int_eq(environ_secret_format("X", "", arg, sizeof(arg)), -EINVAL);
        ck_assert_int_eq(environ_secret_format("X", "v", arg, 20), -ENOMEM);

        s.canary = "c0ffeec0ffeec0ffeec0ffeec0ffee00";
        s.entry = "HOME=/home/s";
        s.secrets = sec;
        s.n_secrets = 3;
        environ_scan_block(&s, block, sizeof(block) - 1); /* the last entry without its NUL */
        ck_assert(s.canary_found);
        ck_assert(s.entry_found);
        ck_assert(s.secret_found[0]);
        ck_assert(!s.secret_found[1]);
        ck_assert(!s.secret_found[2]);
        ck_assert(s.job_found);
        ck_assert_str_eq(s.job_names, "ACTIONS_RUNTIME_TOKEN actions_cache_url");

        /* Cut short: what a bounded read leaves is searched as far as it goes, no further. */
        s = (EnvironScan){ .canary = "c0ffeec0ffeec0ffeec0ffeec0ffee00",
                           .entry = "HOME=/home/s",
                           .secrets = sec,
                           .n_secrets = 1 };
        environ_scan_block(&s, block, 12);
        ck_assert(s.entry_found);
        environ_scan_block(&s, block + 13, sizeof(block) - 1 - 13 - 10);
        ck_assert(!s.canary_found);
        ck_assert(s.secret_found[0]);
        /* An entry is whole or not at all: "HOME=/home/st" is not "HOME=/home/s". */
        s = (EnvironScan){ .entry = "HOME=/home/s" };
        environ_scan_block(&s, "HOME=/home/st", 13);
        ck_assert(!s.entry_found);
        ck_assert(!s.job_found);
        ck_assert_str_eq(s.job_names, "");
}
END_TEST

/* Many job names: the list stops with "..." and stays within its bound. */
START_TEST(test_environ_scan_names_bounded)
{
        EnvironScan s = {};

        for (int i = 0; i < 200; i++) {
                char e[64];
                int n = snprintf(e, sizeof(e), "ACTIONS_VARIABLE_NUMBER_%d=1", i);
                environ_scan_block(&s, e, (size_t)n);
        }
        ck_assert(s.job_found);
        ck_assert_uint_lt(strlen(s.job_names), sizeof(s.job_names));
        ck_assert_str_eq(s.job_names + strlen(s.job_names) - 3, "...");
        ck_assert_ptr_nonnull(strstr(s.job_names, "ACTIONS_VARIABLE_NUMBER_0 "));
}
END_TEST

/* The values the runner side computes for the network probes, each malformed in turn on an otherwise
 * good command line (which parses, with each good value, first). */
START_TEST(test_inside_args_network)
{
        static const char *const good[][2] = {
                { "--front", "upload.fake.test" },
                { "--resolve-name", "agentic-job-check-0123abcd.www.fake.test" },
                { "--egress", "egress-cargo" },
                { "--egress",
                  "egress-npm-refused POST https://registry.npmjs.org/-/npm/v1/security/audits/quick" },
        };
        static const char *const bad[][2] = {
                { "--front", "-x" },
                { "--front", "a b" },
                { "--front", "" },
                { "--resolve-name", "other.x" },
                { "--resolve-name", "agentic-job-check-AB.x" },
                { "--egress-addr6", "203.0.113.1" },
                { "--egress", "egress-cargo-refused" },
                { "--egress", "egress-npm-refused POST  https://x/" },
        };
        char *base[] = { "probe-inside",
                         "--proxy-port",
                         "3128",
                         "--user-manager",
                         "masked",
                         "--post",
                         "refused",
                         "--control-url",
                         "https://www.fake.test/",
                         "--fetch-repo",
                         "https://www.fake.test/git/fixture.git",
                         "--tcp-control",
                         "1",
                         "--udp-target",
                         "2",
                         "--abstract",
                         PROBE_ABSTRACT_PREFIX "a",
                         "--socket-control",
                         "/tmp/" PROBE_ABSTRACT_PREFIX "x/socket",
                         "--decoy",
                         "4242",
                         "--decoy-tty",
                         "/dev/pts/3",
                         "--canary",
                         "0123456789abcdef0123456789abcdef",
                         "--egress-addr",
                         "203.0.113.10",
                         "--egress-port",
                         "443" };
        InsideArgs a;
        AjError e = {};

        for (size_t i = 0; i < ELEMENTSOF(good) + ELEMENTSOF(bad); i++) {
                const char *const *pair = i < ELEMENTSOF(good) ? good[i] : bad[i - ELEMENTSOF(good)];
                char *argv[64];
                int n = 0;

                for (size_t j = 0; j < ELEMENTSOF(base); j++)
                        argv[n++] = base[j];
                argv[n++] = (char *)pair[0];
                argv[n++] = (char *)pair[1];
                argv[n] = NULL;
                ck_assert_msg(inside_args_parse(n, argv, &a, &e) == (i < ELEMENTSOF(good) ? 0 : -EINVAL),
                              "%s %s: %s", pair[0], pair[1], e.message);
        }
        /* An IPv6 address of control-url's host needs its port: the line without --egress-addr and
         * --egress-port (its last four), with --egress-addr6. */
        {
                char *argv[64];
                int n = 0;

                for (size_t j = 0; j + 4 < ELEMENTSOF(base); j++)
                        argv[n++] = base[j];
                argv[n] = NULL;
                ck_assert_int_eq(inside_args_parse(n, argv, &a, &e), 0);
                argv[n++] = (char *)"--egress-addr6";
                argv[n++] = (char *)"2001:db8::1";
                argv[n] = NULL;
                ck_assert_int_eq(inside_args_parse(n, argv, &a, &e), -EINVAL);
                ck_assert_str_eq(e.message, "--egress-addr and --egress-addr6 need --egress-port");
        }
}
END_TEST

/* The planned probes' forms, asked of a policy as the proxy would: git's POST admitted only for the hosts
 * of its rule, npm's audit refused without its rule, cargo's reads admitted, a push refused; and the one
 * argument each travels in, both ways. */
START_TEST(test_egress_plan)
{
        static const char policy_text[] = "[[write]]\nname = \"git-fetch\"\nwhy = \"t\"\n"
                                          "hosts = [\"git.example\"]\nmethods = [\"POST\"]\n"
                                          "paths = [\"/**/git-upload-pack\"]\n";
        EgressPolicy *policy = NULL;
        EgressPlanned p[EGRESS_PLANNED], back;
        char arg[64 + EGRESS_PLAN_URL_MAX];
        AjError e = {};

        ck_assert_int_eq(egress_policy_parse(policy_text, sizeof(policy_text) - 1, &policy, &e), 0);
        ck_assert_int_eq(egress_plan(policy, "https://git.example/r.git/", p, &e), 0);
        ck_assert_str_eq(p[0].name, "egress-git");
        ck_assert(!p[0].refused);
        ck_assert_str_eq(p[1].name, "egress-cargo");
        ck_assert(!p[1].refused);
        ck_assert_str_eq(p[2].name, "egress-npm-refused");
        ck_assert_str_eq(p[2].method, "POST");
        ck_assert_str_eq(p[2].url, "https://registry.npmjs.org/-/npm/v1/security/advisories/bulk");
        ck_assert_str_eq(p[3].name, "egress-push");
        ck_assert(p[3].refused);
        ck_assert_str_eq(p[3].url, "https://git.example/r.git/git-receive-pack");

        ck_assert_int_eq(egress_plan(policy, "https://other.example/r", p, &e), 0);
        ck_assert_str_eq(p[0].name, "egress-git-refused");
        ck_assert_str_eq(p[0].method, "POST");
        ck_assert_str_eq(p[0].url, "https://other.example/r/git-upload-pack");

        for (size_t i = 0; i < EGRESS_PLANNED; i++) {
                ck_assert_int_eq(egress_planned_format(&p[i], arg, sizeof(arg)), 0);
                ck_assert_int_eq(egress_planned_parse(arg, &back), 0);
                ck_assert_str_eq(back.name, p[i].name);
                ck_assert_int_eq(back.refused, p[i].refused);
                ck_assert_str_eq(back.method, p[i].method);
                ck_assert_str_eq(back.url, p[i].url);
        }
        ck_assert_int_eq(egress_planned_format(&p[0], arg, 10), -ENOBUFS);
        ck_assert_int_eq(egress_planned_parse("egress-git-refused POST", &back), -EINVAL);
        ck_assert_int_eq(egress_planned_parse("egress-gitx", &back), -EINVAL);
        ck_assert_int_eq(egress_planned_parse("egress-push-refused GET https://x/", &back), -EINVAL);
        ck_assert_int_eq(egress_planned_parse("egress-git-refused POST https://x/ y", &back), -EINVAL);
        egress_policy_free(policy);
}
END_TEST

START_TEST(test_tcp_lines)
{
        ProcNetTcp t;
        char text[INET6_ADDRSTRLEN];

        ck_assert_int_eq(
                procnet_tcp_line("  sl  local_address rem_address   st tx_queue rx_queue tr tm->when "
                                 "retrnsmt   uid  timeout inode\n",
                                 false, &t),
                0);
        ck_assert_int_eq(
                procnet_tcp_line("   0: 0100007F:0C38 00000000:0000 0A 00000000:00000000 00:00000000 "
                                 "00000000   106        0 21512 1 0000000000000000 100 0 0 10 0\n",
                                 false, &t),
                1);
        ck_assert_uint_eq(t.port, 3128);
        ck_assert_str_eq(inet_ntop(AF_INET, t.addr, text, sizeof(text)), "127.0.0.1");
        /* Established: not a listener. */
        ck_assert_int_eq(
                procnet_tcp_line("   1: 0100007F:0C38 0100007F:A2C4 01 00000000:00000000 00:00000000 "
                                 "00000000   106        0 0 1\n",
                                 false, &t),
                0);
        ck_assert_int_eq(
                procnet_tcp_line("   2: 00000000000000000000000001000000:0C38 "
                                 "00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 "
                                 "00000000 106 0 21513 1\n",
                                 true, &t),
                1);
        ck_assert_str_eq(inet_ntop(AF_INET6, t.addr, text, sizeof(text)), "::1");
        ck_assert_int_eq(procnet_tcp_line("   3: 00000000:0016 00000000:0000 0A\n", false, &t), 1);
        ck_assert_str_eq(inet_ntop(AF_INET, t.addr, text, sizeof(text)), "0.0.0.0");
        ck_assert_uint_eq(t.port, 22);

        static const char *const bad[] = {
                "",
                "garbage\n",
                "   0 0100007F:0C38 00000000:0000 0A\n",   /* no colon after the slot */
                "   0: 0100007F0C38 00000000:0000 0A\n",   /* no colon in the address */
                "   0: 0100007G:0C38 00000000:0000 0A\n",  /* not hex */
                "   0: 100007F:0C38 00000000:0000 0A\n",   /* short */
                "   0: 0100007F:0C38 00000000:0000\n",     /* no state */
                "   0: 0100007F:0C38 00000000:0000 100\n", /* state too large */
                "   0: 0100007F:10000 00000000:0000 0A\n", /* port too long */
        };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                ck_assert_msg(procnet_tcp_line(bad[i], false, &t) == -EINVAL, "accepted: %s", bad[i]);
        /* An IPv4 line in the IPv6 file is of another shape. */
        ck_assert_int_eq(procnet_tcp_line("   3: 00000000:0016 00000000:0000 0A\n", true, &t), -EINVAL);
}
END_TEST

/* The walk's probes on a tree made here: a file and a directory all may write are found (a directory
 * with the sticky bit is not), the walker's own are left out of the root walk, a link is not followed. */
START_TEST(test_walk_probe_dir)
{
        char dir[] = "/tmp/test-walk-probe.XXXXXX", path[128];
        WalkFound f;

        ck_assert_ptr_nonnull(mkdtemp(dir));
        ck_assert_int_eq(chmod(dir, 0755), 0);
        (void)snprintf(path, sizeof(path), "%s/open", dir);
        ck_assert_int_eq(close(open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600)), 0);
        ck_assert_int_eq(chmod(path, 0666), 0);
        walk_probe_dir(dir, &f);
        ck_assert_int_eq(f.error, 0);
        ck_assert_uint_eq(f.world_writable, 1);
        ck_assert_str_eq(f.world_writable_names + strlen(dir), "/open");
        walk_found_done(&f);

        (void)snprintf(path, sizeof(path), "%s/sticky", dir);
        ck_assert_int_eq(mkdir(path, 0755), 0);
        ck_assert_int_eq(chmod(path, 01777), 0);
        (void)snprintf(path, sizeof(path), "%s/link", dir);
        ck_assert_int_eq(symlink("/tmp", path), 0); /* a link to a 1777 directory with o+w entries */
        walk_probe_dir(dir, &f);
        ck_assert_uint_eq(f.world_writable, 1);
        walk_found_done(&f);

        (void)snprintf(path, sizeof(path), "%s/sticky", dir);
        ck_assert_int_eq(chmod(path, 0777), 0);
        walk_probe_dir(dir, &f);
        ck_assert_uint_eq(f.world_writable, 2);
        ck_assert_ptr_nonnull(strstr(f.world_writable_names, "/sticky"));
        walk_found_done(&f);

        (void)snprintf(path, sizeof(path), "rm -rf %s", dir);
        ck_assert_int_eq(system(path), 0);
        walk_probe_dir(dir, &f);
        ck_assert_int_lt(f.error, 0); /* no such directory */
}
END_TEST

/* What a user may write other than by o+w: as nobody, in a tree of root's, a file whose ACL names it and a
 * file it owns are found; a file of root's 0644, a link, and the o+w file (world-writable's) are not.
 * Needs root (to make the files and become nobody) and setfacl, as the CI machine has. */
START_TEST(test_walk_probe_writable)
{
        char dir[] = "/tmp/test-walk-writable.XXXXXX", path[160], cmd[256];
        struct passwd *nobody = getpwnam("nobody");
        pid_t pid;
        int status;

        if (geteuid() != 0) {
                fprintf(stderr, "test_walk_probe_writable: needs root; as the CI runs it\n");
                ck_abort_msg("not root: this test cannot tell");
        }
        ck_assert_ptr_nonnull(nobody);
        ck_assert_ptr_nonnull(mkdtemp(dir));
        ck_assert_int_eq(chmod(dir, 0755), 0);
        (void)snprintf(path, sizeof(path), "%s/acl", dir);
        ck_assert_int_eq(close(open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0640)), 0);
        (void)snprintf(cmd, sizeof(cmd), "setfacl -m u:nobody:rw %s", path);
        ck_assert_int_eq(system(cmd), 0);
        (void)snprintf(path, sizeof(path), "%s/owned", dir);
        ck_assert_int_eq(close(open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644)), 0);
        ck_assert_int_eq(chown(path, nobody->pw_uid, 0), 0);
        (void)snprintf(path, sizeof(path), "%s/roots", dir);
        ck_assert_int_eq(close(open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644)), 0);
        (void)snprintf(path, sizeof(path), "%s/open", dir);
        ck_assert_int_eq(close(open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644)), 0);
        ck_assert_int_eq(chmod(path, 0666), 0);
        (void)snprintf(path, sizeof(path), "%s/link", dir);
        ck_assert_int_eq(symlink("owned", path), 0);

        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                WalkFound f;
                char want[160];

                if (setgroups(0, NULL) < 0 || setgid(nobody->pw_gid) < 0 || setuid(nobody->pw_uid) < 0)
                        _exit(10);
                walk_probe_dir(dir, &f);
                if (f.error != 0 || f.writable != 2 || f.world_writable != 1)
                        _exit(11);
                (void)snprintf(want, sizeof(want), "%s/acl", dir);
                if (!walk_found_writable(&f, want))
                        _exit(12);
                (void)snprintf(want, sizeof(want), "%s/owned", dir);
                if (!walk_found_writable(&f, want))
                        _exit(13);
                walk_found_done(&f);
                _exit(0);
        }
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        (void)snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
        ck_assert_int_eq(system(cmd), 0);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the walk as nobody: status %d",
                      WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}
END_TEST

#define H "/usr/local/libexec/agentic-job"
#define HELPER_RULE                                                                                         \
        "    (root) NOPASSWD: " H " helper ping, " H " helper kill-user, " H                                \
        " helper proxy-log --from *, " H " helper enter --chdir *\n"

/* What sudo -n -l leaves the runner: the helper's rule alone after the last deny of everything. */
START_TEST(test_sudo_list)
{
        char why[320];

        ck_assert(runner_sudo_list_locked("Matching Defaults entries for runner on h:\n    env_reset\n\n"
                                          "User runner may run the following commands on h:\n"
                                          "    (ALL) NOPASSWD: ALL\n"
                                          "    (ALL : ALL) !ALL\n" HELPER_RULE,
                                          H, why, sizeof(why)));
        /* A grant read after the lock: sudo applies it. */
        ck_assert(!runner_sudo_list_locked("User runner may run the following commands on h:\n"
                                           "    (ALL : ALL) !ALL\n" HELPER_RULE "    (ALL) NOPASSWD: ALL\n",
                                           H, why, sizeof(why)));
        ck_assert_msg(strstr(why, "(ALL) NOPASSWD: ALL"), "%s", why);
        /* A rule of the helper's line with another command slipped in. */
        ck_assert(!runner_sudo_list_locked("User runner may run the following commands on h:\n"
                                           "    (ALL : ALL) !ALL\n"
                                           "    (root) NOPASSWD: " H " helper ping, /bin/sh\n",
                                           H, why, sizeof(why)));
        /* Another helper path, or one that only starts like it. */
        ck_assert(!runner_sudo_list_locked("User runner may run the following commands on h:\n"
                                           "    (ALL : ALL) !ALL\n"
                                           "    (root) NOPASSWD: " H "x helper ping\n",
                                           H, why, sizeof(why)));
        /* No deny at all: the lock is not there. */
        ck_assert(!runner_sudo_list_locked("User runner may run the following commands on h:\n" HELPER_RULE,
                                           H, why, sizeof(why)));
        ck_assert_msg(strstr(why, "!ALL"), "%s", why);
        ck_assert(!runner_sudo_list_locked("Sorry, user runner may not run sudo on h.\n", H, why,
                                           sizeof(why)));
        /* As root, not the runner: a rule for another user than root. */
        ck_assert(!runner_sudo_list_locked("User runner may run the following commands on h:\n"
                                           "    (ALL : ALL) !ALL\n"
                                           "    (ALL) NOPASSWD: " H " helper ping\n",
                                           H, why, sizeof(why)));
}
END_TEST

/* The scope as the kernel writes it, and what it never writes: the reader answers only for the former. */
START_TEST(test_ptrace_scope)
{
        static const struct {
                const char *text;
                int r;
                unsigned scope;
        } cases[] = {
                { "0\n", 0, 0 },        { "1\n", 0, 1 },        { "3\n", 0, 3 },
                { "4\n", -EINVAL, 0 },  { "1", -EINVAL, 0 },    { "", -EINVAL, 0 },
                { "01\n", -EINVAL, 0 }, { " 1\n", -EINVAL, 0 }, { "1\n\n", -EINVAL, 0 },
        };
        char dir[] = "/tmp/test-ptrace-scope.XXXXXX", path[64], link[64];
        unsigned scope;

        ck_assert_ptr_nonnull(mkdtemp(dir));
        (void)snprintf(path, sizeof(path), "%s/scope", dir);
        (void)snprintf(link, sizeof(link), "%s/link", dir);
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                FILE *f = fopen(path, "w");

                ck_assert_ptr_nonnull(f);
                fputs(cases[i].text, f);
                fclose(f);
                scope = 99;
                ck_assert_int_eq(ptrace_scope_read(path, &scope), cases[i].r);
                if (cases[i].r == 0)
                        ck_assert_uint_eq(scope, cases[i].scope);
        }
        /* No Yama: no file. A link where the file should be is not followed. */
        ck_assert_int_eq(unlink(path), 0);
        ck_assert_int_eq(ptrace_scope_read(path, &scope), -ENOENT);
        ck_assert_int_eq(symlink("/proc/sys/kernel/osrelease", link), 0);
        ck_assert_int_eq(ptrace_scope_read(link, &scope), -ELOOP);
        ck_assert_int_eq(unlink(link), 0);
        ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

static Suite *probes_suite(void)
{
        Suite *s = suite_create("check-probes");
        TCase *tc = tcase_create("probes");

        tcase_add_test(tc, test_plan_matches_table);
        tcase_add_test(tc, test_sudo_list);
        tcase_add_test(tc, test_ptrace_scope);
        tcase_add_test(tc, test_inside_args);
        tcase_add_test(tc, test_front_name);
        tcase_add_test(tc, test_inside_args_decoy);
        tcase_add_test(tc, test_egress_plan);
        tcase_add_test(tc, test_inside_args_network);
        tcase_add_test(tc, test_environ_scan);
        tcase_add_test(tc, test_environ_scan_names_bounded);
        tcase_add_test(tc, test_tcp_lines);
        tcase_add_test(tc, test_walk_probe_dir);
        tcase_add_test(tc, test_walk_probe_writable);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return check_run(probes_suite());
}
