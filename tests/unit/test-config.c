/* SPDX-License-Identifier: MIT */
/* The configuration: defaults, every key read back, the rules, config_load()'s messages, and a table of
 * refusals, each with its exact line, column and message. */
#include <check.h>

#include "check-run.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "macro.h"

static Config *parse_ok(const char *s)
{
        Config *c = NULL;
        AjError e = {};
        int r = config_parse(s, strlen(s), &c, &e);

        ck_assert_msg(r == 0, "unexpected refusal at %u:%u: %s", e.line, e.column, e.message);
        ck_assert_ptr_nonnull(c);
        return c;
}

static void assert_strv(char *const *v, const char *const *expected, size_t n)
{
        ck_assert_ptr_nonnull(v);
        ck_assert_uint_eq(strv_length(v), n);
        for (size_t i = 0; i < n; i++)
                ck_assert_str_eq(v[i], expected[i]);
}

static void assert_defaults(const Config *c)
{
        ck_assert_str_eq(c->sandbox_user, "runner-sandbox");
        assert_strv(c->sandbox_groups, (const char *const[]){ "kvm" }, 1);
        ck_assert(!c->allow_existing_user);
        ck_assert_ptr_null(c->runner_user);
        ck_assert(c->lock_runner);
        assert_strv(c->private_dirs, NULL, 0);
        assert_strv(c->stop_services, NULL, 0);
        assert_strv(c->env, NULL, 0);
        ck_assert_int_eq(c->enter, ENTER_AUTO);
        ck_assert(c->egress_proxy);
        ck_assert_uint_eq(c->egress_log_max_bytes, 1ULL << 30);
        ck_assert(!c->user_manager);
        ck_assert_str_eq(c->check_control_url, "https://github.com/");
        ck_assert_str_eq(c->check_fetch_repo, "https://github.com/bootc-dev/bootc");
        ck_assert_str_eq(c->check_container_image, "registry.access.redhat.com/ubi10/ubi-minimal");
        ck_assert(c->check_containers);
        ck_assert(!c->check_before_agent);
        assert_strv(c->check_allow_sockets, NULL, 0);
        ck_assert_uint_eq(c->n_check_allow_tcp_ports, 0);
        assert_strv(c->run_trusted_paths, (const char *const[]){ ".agentic-job", ".claude", ".codex" }, 3);
        assert_strv(c->run_env, NULL, 0);
        assert_strv(c->step_env, NULL, 0);
        ck_assert_uint_eq(c->run_timeout, 3600);
        ck_assert_uint_eq(c->sandbox_tasks_max, 8192);
        ck_assert_uint_eq(c->sandbox_memory_max_percent, 75);
        ck_assert_uint_eq(c->run_max_file_bytes, 16ULL << 20);
        ck_assert_uint_eq(c->run_max_total_bytes, 64ULL << 20);
        ck_assert_uint_eq(c->run_max_files, 100);
        ck_assert_uint_eq(c->run_max_requests, 0);
        ck_assert_uint_eq(c->run_clone_max_bytes, 4ULL << 30);
        ck_assert_uint_eq(c->run_clone_max_object_bytes, 256ULL << 20);
        ck_assert_uint_eq(c->run_clone_max_files, 1000000);
        ck_assert_uint_eq(c->run_clone_max_checkout_bytes, 8ULL << 30);
        ck_assert_uint_eq(c->run_clone_max_memory, 2ULL << 30);
        ck_assert_int_eq(c->run_confine, RUN_CONFINE_BUBBLEWRAP);
        ck_assert_str_eq(c->run_profile, "command");
        ck_assert(!c->egress_reads_listed);
}

/* ---- Accepted ---- */

START_TEST(test_egress_reads)
{
        _cleanup_(config_freep) Config *listed = parse_ok("[egress]\nreads = \"listed\"\n");
        _cleanup_(config_freep) Config *any = parse_ok("[egress]\nreads = \"any\"\n");

        ck_assert(listed->egress_reads_listed);
        ck_assert(!any->egress_reads_listed);
}
END_TEST

START_TEST(test_run_table)
{
        _cleanup_(config_freep) Config *c =
                parse_ok("[run]\n"
                         "trusted-paths = [\".claude/\", \"a/b.toml\", \"x\"]\n"
                         "env = [\"MODEL\", \"_X1\"]\n"
                         "timeout = 60\n"
                         "max-file-bytes = 1\n"
                         "max-total-bytes = 1099511627776\n"
                         "max-files = 100000\n"
                         "max-requests = 1000000\n"
                         "confine = \"none\"\n"
                         "profile = \"claude\"\n"
                         "clone-max-bytes = 1\n"
                         "clone-max-object-bytes = 2\n"
                         "clone-max-files = 100000000\n"
                         "clone-max-checkout-bytes = 3\n"
                         "clone-max-memory = 67108864\n"
                         "budget = \"2.50\"\n"
                         "[run.prices]\n"
                         "claude-sonnet-4-5 = { input = 3, output = \"15.00\" }\n"
                         "\"gpt-5.1*\" = { input = \"1.25\", output = 10 }\n");

        ck_assert_uint_eq(c->run_budget, 2500000);
        ck_assert_uint_eq(c->n_run_prices, 2);
        ck_assert_str_eq(c->run_prices[0].model, "claude-sonnet-4-5");
        ck_assert_uint_eq(c->run_prices[0].input, 3000000);
        ck_assert_uint_eq(c->run_prices[0].output, 15000000);
        ck_assert_str_eq(c->run_prices[1].model, "gpt-5.1*");
        ck_assert_uint_eq(c->run_prices[1].input, 1250000);
        ck_assert_uint_eq(c->run_prices[1].output, 10000000);
        ck_assert_uint_eq(c->run_clone_max_bytes, 1);
        ck_assert_uint_eq(c->run_clone_max_object_bytes, 2);
        ck_assert_uint_eq(c->run_clone_max_files, 100000000);
        ck_assert_uint_eq(c->run_clone_max_checkout_bytes, 3);
        ck_assert_uint_eq(c->run_clone_max_memory, 64ULL << 20);
        assert_strv(c->run_trusted_paths, (const char *const[]){ ".claude", "a/b.toml", "x" }, 3);
        assert_strv(c->run_env, (const char *const[]){ "MODEL", "_X1" }, 2);
        ck_assert_uint_eq(c->run_timeout, 60);
        ck_assert_uint_eq(c->run_max_file_bytes, 1);
        ck_assert_uint_eq(c->run_max_total_bytes, 1ULL << 40);
        ck_assert_uint_eq(c->run_max_files, 100000);
        ck_assert_uint_eq(c->run_max_requests, 1000000);
        ck_assert_int_eq(c->run_confine, RUN_CONFINE_NONE);
        ck_assert_str_eq(run_confine_name(c->run_confine), "none");
        ck_assert_str_eq(c->run_profile, "claude");
}
END_TEST

START_TEST(test_relative_path_rule)
{
        static const char *const good[] = { "a", ".claude", "a/b", "a/b/", "..a", "a..", ".a/.b" };
        static const char *const bad[] = { "",      "/",      "/a",   "a//b", "a//",  ".",    "..",
                                           "a/./b", "a/../b", "a/..", "./a",  "a\tb", "a\nb", "a/\x7f" };

        for (size_t i = 0; i < ELEMENTSOF(good); i++)
                ck_assert_msg(path_is_plain_relative(good[i], true), "%s refused", good[i]);
        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                ck_assert_msg(!path_is_plain_relative(bad[i], true), "%s accepted", bad[i]);
        ck_assert(!path_is_plain_relative("a/", false));
        ck_assert(path_is_plain_relative("a/b", false));
        ck_assert(env_name_is_job_command_file("GITHUB_ENV"));
        ck_assert(env_name_is_job_command_file("github_output"));
        ck_assert(!env_name_is_job_command_file("GITHUB_SHA"));
}
END_TEST

START_TEST(test_defaults)
{
        static const char *const inputs[] = {
                "",
                "\n",
                "# nothing here\n",
                "[sandbox]\n",
                "[egress]\n",
                "[sandbox]\n[egress]\n",
                "[sandbox.env]\n",
        };

        for (size_t i = 0; i < ELEMENTSOF(inputs); i++) {
                _cleanup_(config_freep) Config *c = parse_ok(inputs[i]);
                assert_defaults(c);
        }
}
END_TEST

START_TEST(test_every_key)
{
        _cleanup_(config_freep) Config *c =
                parse_ok("# a full configuration\r\n"
                         "[sandbox]\r\n"
                         "user = \"ci-sandbox\"\r\n"
                         "groups = [\"kvm\", \"video\", \"render\"]\r\n"
                         "allow-existing-user = true\r\n"
                         "runner-user = \"runner\"\r\n"
                         "lock-runner = false\r\n"
                         "private-dirs = [\r\n"
                         "  \"/opt/secrets\",\r\n"
                         "  '/var/lib/private data',\r\n"
                         "]\r\n"
                         "stop-services = [\"walinuxagent.service\", \"hv-kvp.socket\"]\r\n"
                         "env = { ZED = \"last\", A1 = \"x=y\", A = \"\", _B = 'it' }\r\n"
                         "enter = \"systemd-run\"\r\n"
                         "\r\n"
                         "[egress]\r\n"
                         "proxy = false\r\n");

        ck_assert_str_eq(c->sandbox_user, "ci-sandbox");
        assert_strv(c->sandbox_groups, (const char *const[]){ "kvm", "video", "render" }, 3);
        ck_assert(c->allow_existing_user);
        ck_assert_str_eq(c->runner_user, "runner");
        ck_assert(!c->lock_runner);
        assert_strv(c->private_dirs, (const char *const[]){ "/opt/secrets", "/var/lib/private data" }, 2);
        assert_strv(c->stop_services, (const char *const[]){ "walinuxagent.service", "hv-kvp.socket" }, 2);
        /* Sorted by name: "A" before "A1" even though '=' sorts after '1'. */
        assert_strv(c->env, (const char *const[]){ "A=", "A1=x=y", "ZED=last", "_B=it" }, 4);
        ck_assert_int_eq(c->enter, ENTER_SYSTEMD_RUN);
        ck_assert(!c->egress_proxy);
}
END_TEST

START_TEST(test_check_table)
{
        _cleanup_(config_freep) Config *c =
                parse_ok("[sandbox]\n"
                         "user-manager = true\n"
                         "step-env = [\"NPM_CONFIG_REGISTRY\", \"_Y\"]\n"
                         "tasks-max = 64\n"
                         "memory-max-percent = 100\n"
                         "[sandbox.check]\n"
                         "control-url = \"http://www.fake.test/\"\n"
                         "fetch-repo = 'https://www.fake.test/repo.git'\n"
                         "container-image = \"localhost/probe:1\"\n"
                         "containers = false\n"
                         "before-agent = true\n"
                         "allow-sockets = [\"@/tmp/.X11-unix/X0\", \"/run/a/\"]\n"
                         "allow-tcp-ports = [53, 65535, 1]\n");

        ck_assert(c->user_manager);
        assert_strv(c->step_env, (const char *const[]){ "NPM_CONFIG_REGISTRY", "_Y" }, 2);
        ck_assert_uint_eq(c->sandbox_tasks_max, 64);
        ck_assert_uint_eq(c->sandbox_memory_max_percent, 100);
        ck_assert_str_eq(c->check_control_url, "http://www.fake.test/");
        ck_assert_str_eq(c->check_fetch_repo, "https://www.fake.test/repo.git");
        ck_assert_str_eq(c->check_container_image, "localhost/probe:1");
        ck_assert(!c->check_containers);
        ck_assert(c->check_before_agent);
        assert_strv(c->check_allow_sockets, (const char *const[]){ "@/tmp/.X11-unix/X0", "/run/a/" }, 2);
        ck_assert_uint_eq(c->n_check_allow_tcp_ports, 3);
        ck_assert_uint_eq(c->check_allow_tcp_ports[0], 53);
        ck_assert_uint_eq(c->check_allow_tcp_ports[1], 65535);
        ck_assert_uint_eq(c->check_allow_tcp_ports[2], 1);
}
END_TEST

START_TEST(test_env_table)
{
        _cleanup_(config_freep) Config *c = parse_ok("[sandbox.env]\n"
                                                     "http_proxy = \"http://127.0.0.1:3128\"\n"
                                                     "LANG = 'C.UTF-8'\n"
                                                     "EMPTY = \"\"\n"
                                                     "TABBED = \"a\\tb\"\n"
                                                     "[sandbox]\n"
                                                     "user = \"sb\"\n");

        ck_assert_str_eq(c->sandbox_user, "sb");
        assert_strv(c->env,
                    (const char *const[]){ "EMPTY=", "LANG=C.UTF-8", "TABBED=a\tb",
                                           "http_proxy=http://127.0.0.1:3128" },
                    4);
}
END_TEST

START_TEST(test_empty_lists)
{
        _cleanup_(config_freep) Config *c = parse_ok("[sandbox]\ngroups = []\nprivate-dirs = []\n"
                                                     "stop-services = []\nenv = {}\n");

        assert_strv(c->sandbox_groups, NULL, 0);
        assert_strv(c->private_dirs, NULL, 0);
        assert_strv(c->stop_services, NULL, 0);
        assert_strv(c->env, NULL, 0);
}
END_TEST

START_TEST(test_enter_values)
{
        static const struct {
                const char *text;
                EnterBackend backend;
        } cases[] = {
                { "auto", ENTER_AUTO },
                { "run0", ENTER_RUN0 },
                { "systemd-run", ENTER_SYSTEMD_RUN },
                { "direct", ENTER_DIRECT },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char text[64];
                (void)snprintf(text, sizeof(text), "[sandbox]\nenter = '%s'\n", cases[i].text);
                _cleanup_(config_freep) Config *c = parse_ok(text);
                ck_assert_int_eq(c->enter, cases[i].backend);
                ck_assert_str_eq(enter_backend_to_string(cases[i].backend), cases[i].text);
        }
}
END_TEST

START_TEST(test_inline_sections)
{
        /* Tables written inline are tables too. */
        _cleanup_(config_freep) Config *c =
                parse_ok("sandbox = { user = \"x_y\", groups = [] }\n"
                         "egress = { proxy = false, log-max-bytes = 1048576 }\n");

        ck_assert_str_eq(c->sandbox_user, "x_y");
        assert_strv(c->sandbox_groups, NULL, 0);
        ck_assert(!c->egress_proxy);
        ck_assert_uint_eq(c->egress_log_max_bytes, 1048576);
}
END_TEST

START_TEST(test_runner_user_after_user)
{
        /* runner-user is compared with user once both are read, in either order. */
        _cleanup_(config_freep) Config *c =
                parse_ok("[sandbox]\nrunner-user = \"runner\"\nuser = \"sandbox\"\n");

        ck_assert_str_eq(c->runner_user, "runner");
        ck_assert_str_eq(c->sandbox_user, "sandbox");
}
END_TEST

/* ---- The rules ---- */

START_TEST(test_user_name_rule)
{
        static const char *const valid[] = {
                "a", "_", "runner-sandbox", "ci_user", "a0-_", "_abc", "abcdefghijklmnopqrstuvwxyz012345",
        };
        static const char *const invalid[] = {
                "",
                "A",
                "Runner",
                "0abc",
                "-abc",
                "a.b",
                "a b",
                "a$",
                "\xc3\xa9t\xc3\xa9",
                "a\n",
                "abcdefghijklmnopqrstuvwxyz0123456",
        };

        for (size_t i = 0; i < ELEMENTSOF(valid); i++) {
                ck_assert_msg(user_name_valid(valid[i]), "\"%s\" refused", valid[i]);
                ck_assert(group_name_valid(valid[i]));
        }
        for (size_t i = 0; i < ELEMENTSOF(invalid); i++) {
                ck_assert_msg(!user_name_valid(invalid[i]), "\"%s\" accepted", invalid[i]);
                ck_assert(!group_name_valid(invalid[i]));
        }
        ck_assert(!user_name_valid(NULL));
}
END_TEST

START_TEST(test_root_equivalent_groups)
{
        static const char *const forbidden[] = {
                "root",   "wheel",  "sudo", "admin", "adm",         "disk",    "shadow",
                "docker", "podman", "lxd",  "incus", "incus-admin", "libvirt", "systemd-journal",
        };
        static const char *const allowed[] = { "kvm", "video", "render", "users", "dockers", "Root", "" };

        for (size_t i = 0; i < ELEMENTSOF(forbidden); i++)
                ck_assert_msg(group_is_root_equivalent(forbidden[i]), "%s allowed", forbidden[i]);
        for (size_t i = 0; i < ELEMENTSOF(allowed); i++)
                ck_assert_msg(!group_is_root_equivalent(allowed[i]), "%s refused", allowed[i]);
}
END_TEST

START_TEST(test_env_rules)
{
        ck_assert(env_name_valid("PATH"));
        ck_assert(env_name_valid("_x1"));
        ck_assert(env_name_valid("a"));
        ck_assert(env_name_valid("ACTIONS"));
        ck_assert(env_name_valid("MY_ACTIONS_X"));
        ck_assert(!env_name_valid("ACTIONS_RUNTIME_TOKEN"));
        ck_assert(!env_name_valid("ACTIONS_"));
        ck_assert(!env_name_valid(""));
        ck_assert(!env_name_valid("1X"));
        ck_assert(!env_name_valid("A-B"));
        ck_assert(!env_name_valid("A=B"));
        ck_assert(!env_name_valid("A B"));
        ck_assert(!env_name_valid(NULL));

        ck_assert(env_value_valid(""));
        ck_assert(env_value_valid("a b\tc=d"));
        ck_assert(!env_value_valid("a\nb"));
        ck_assert(!env_value_valid("a\rb"));
        ck_assert(!env_value_valid(NULL));
}
END_TEST

START_TEST(test_path_rule)
{
        static const char *const valid[] = { "/",      "/a",         "/opt/hca", "/var/run/tailscale",
                                             "/a b/c", "/..a/.b/c.." };
        static const char *const invalid[] = {
                "",    "a",      "a/b",     "//",   "/a//b", "/a/", "/.",
                "/..", "/a/./b", "/a/../b", "/a/.", "/a/..", "./a",
        };

        for (size_t i = 0; i < ELEMENTSOF(valid); i++)
                ck_assert_msg(path_is_plain_absolute(valid[i]), "\"%s\" refused", valid[i]);
        for (size_t i = 0; i < ELEMENTSOF(invalid); i++)
                ck_assert_msg(!path_is_plain_absolute(invalid[i]), "\"%s\" accepted", invalid[i]);
        ck_assert(!path_is_plain_absolute(NULL));
}
END_TEST

START_TEST(test_unit_rule)
{
        static const char *const valid[] = { "a.service", "walinuxagent.service", "x@1.service", "a.b.c" };
        static const char *const invalid[] = {
                "", "service", "-a.service", "a .service", "a\t.service", "a.service\n", "a\x7f.service",
        };

        for (size_t i = 0; i < ELEMENTSOF(valid); i++)
                ck_assert_msg(unit_name_valid(valid[i]), "\"%s\" refused", valid[i]);
        for (size_t i = 0; i < ELEMENTSOF(invalid); i++)
                ck_assert_msg(!unit_name_valid(invalid[i]), "\"%s\" accepted", invalid[i]);
        ck_assert(!unit_name_valid(NULL));
}
END_TEST

/* Every list holds CONFIG_LIST_MAX entries and is refused whole with one more, never cut: what the load
 * accepts, the check's sandbox side takes whole (it once dropped the 65th allowed port). */
static const struct {
        const char *table, *key, *before, *after; /* entry k is before, k, after */
} lists[] = {
        { "sandbox", "groups", "\"g", "\"" },
        { "sandbox", "private-dirs", "\"/srv/d", "\"" },
        { "sandbox", "stop-services", "\"u", ".service\"" },
        { "sandbox.check", "allow-sockets", "\"/run/s", "\"" },
        { "sandbox.check", "allow-tcp-ports", "", "" },
        { "run", "trusted-paths", "\"t", "\"" },
        { "run", "env", "\"V", "\"" },
};

static char *list_config(size_t i, int n)
{
        char *s = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&s, &size);

        ck_assert_ptr_nonnull(f);
        fprintf(f, "[%s]\n%s = [", lists[i].table, lists[i].key);
        for (int k = 1; k <= n; k++)
                fprintf(f, "%s%s%d%s", k > 1 ? ", " : "", lists[i].before, k, lists[i].after);
        fprintf(f, "]\n");
        ck_assert_int_eq(fclose(f), 0);
        return s;
}

START_TEST(test_list_bounds)
{
        for (size_t i = 0; i < ELEMENTSOF(lists); i++) {
                _cleanup_free_ char *full = list_config(i, CONFIG_LIST_MAX);
                _cleanup_free_ char *over = list_config(i, CONFIG_LIST_MAX + 1);
                char where[64];
                Config *c = parse_ok(full), *d = NULL;
                AjError e = {};

                config_free(c);
                ck_assert_msg(config_parse(over, strlen(over), &d, &e) == -EINVAL, "%s: %d entries accepted",
                              lists[i].key, CONFIG_LIST_MAX + 1);
                ck_assert_ptr_null(d);
                (void)snprintf(where, sizeof(where), "[%s] %s: ", lists[i].table, lists[i].key);
                ck_assert_msg(strncmp(e.message, where, strlen(where)) == 0, "%s", e.message);
                ck_assert_msg(strstr(e.message, "more than") && !strchr(e.message, '\n'), "%s", e.message);
        }
}
END_TEST

START_TEST(test_too_large)
{
        size_t size = CONFIG_MAX_SIZE + 1;
        _cleanup_free_ char *s = malloc(size);
        Config *c = NULL;
        AjError e = {};

        ck_assert_ptr_nonnull(s);
        memset(s, '\n', size);
        ck_assert_int_eq(config_parse(s, size, &c, &e), -EFBIG);
        ck_assert_ptr_null(c);
        ck_assert_ptr_nonnull(strstr(e.message, "262144"));
}
END_TEST

/* ---- config_load() ---- */

static char tmpdir[] = "/tmp/test-config-XXXXXX";

static void setup_tmpdir(void)
{
        ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void teardown_tmpdir(void)
{
        static const char *const names[] = { "ok.toml", "bad.toml", "link.toml", "big.toml", "dir", "fifo" };
        char path[sizeof(tmpdir) + 32];

        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                (void)snprintf(path, sizeof(path), "%s/%s", tmpdir, names[i]);
                (void)unlink(path);
                (void)rmdir(path);
        }
        (void)rmdir(tmpdir);
        memcpy(tmpdir + strlen(tmpdir) - 6, "XXXXXX", 6);
}

static const char *tmp_path(const char *name)
{
        static char path[sizeof(tmpdir) + 32];

        (void)snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
        return path;
}

static void write_file(const char *name, const char *data, size_t size)
{
        FILE *f = fopen(tmp_path(name), "we");

        ck_assert_ptr_nonnull(f);
        ck_assert_uint_eq(fwrite(data, 1, size, f), size);
        ck_assert_int_eq(fclose(f), 0);
}

static void write_string(const char *name, const char *s)
{
        write_file(name, s, strlen(s));
}

/* config_load() of name fails with the message "PATH<suffix>", at line:column. */
static void assert_load_fails(const char *name, int err, unsigned line, unsigned column, const char *suffix)
{
        char expected[512];
        Config *c = NULL;
        AjError e = {};

        (void)snprintf(expected, sizeof(expected), "%s%s", tmp_path(name), suffix);
        ck_assert_int_eq(config_load(tmp_path(name), &c, &e), -err);
        ck_assert_ptr_null(c);
        ck_assert_str_eq(e.message, expected);
        ck_assert_uint_eq(e.line, line);
        ck_assert_uint_eq(e.column, column);
}

START_TEST(test_load_ok)
{
        _cleanup_(config_freep) Config *c = NULL;
        AjError e = {};

        write_string("ok.toml", "[sandbox]\nuser = \"loaded\"\n");
        ck_assert_int_eq(config_load(tmp_path("ok.toml"), &c, &e), 0);
        ck_assert_str_eq(c->sandbox_user, "loaded");
}
END_TEST

START_TEST(test_load_parse_error)
{
        write_string("bad.toml", "[sandbox]\nuser = 5\n");
        assert_load_fails("bad.toml", EINVAL, 2, 8,
                          ":2:8: [sandbox] user: expected a string, found an integer");
}
END_TEST

START_TEST(test_load_missing)
{
        assert_load_fails("missing.toml", ENOENT, 0, 0, ": No such file or directory");
}
END_TEST

START_TEST(test_load_link)
{
        write_string("ok.toml", "");
        ck_assert_int_eq(symlink("ok.toml", tmp_path("link.toml")), 0);
        assert_load_fails("link.toml", ELOOP, 0, 0, ": is a link");
}
END_TEST

START_TEST(test_load_not_regular)
{
        ck_assert_int_eq(mkdir(tmp_path("dir"), 0700), 0);
        assert_load_fails("dir", EBADFD, 0, 0, ": is not a regular file");
        ck_assert_int_eq(mkfifo(tmp_path("fifo"), 0600), 0);
        assert_load_fails("fifo", EBADFD, 0, 0, ": is not a regular file");
}
END_TEST

START_TEST(test_load_too_large)
{
        size_t size = CONFIG_MAX_SIZE + 1;
        _cleanup_free_ char *s = malloc(size);

        ck_assert_ptr_nonnull(s);
        memset(s, '\n', size);
        write_file("big.toml", s, size);
        assert_load_fails("big.toml", EFBIG, 0, 0, ": is larger than 262144 bytes");
}
END_TEST

/* ---- Refused ---- */

typedef struct Refusal {
        const char *input;
        unsigned line, column;
        const char *message; /* a substring of the message */
} Refusal;

static const Refusal refusals[] = {
        /* [run] */
        { "[run]\ntrusted-paths = [\"/etc\"]\n", 2, 18,
          "[run] trusted-paths: \"/etc\" is not a plain relative path" },
        { "[run]\ntrusted-paths = [\"a/../b\"]\n", 2, 18, "is not a plain relative path" },
        { "[run]\ntrusted-paths = [\"a\", \"a/\"]\n", 2, 23, "\"a/\" is listed twice" },
        { "[run]\nenv = [\"ACTIONS_RUNTIME_TOKEN\"]\n", 2, 8, "names starting ACTIONS_ are refused" },
        { "[run]\nenv = [\"GITHUB_ENV\"]\n", 2, 8,
          "GITHUB_ENV is refused: it names one of the job's command files" },
        { "[run]\nenv = [\"A-B\"]\n", 2, 8, "\"A-B\" is not a valid variable name" },
        { "[run]\nenv = [\"A\", \"A\"]\n", 2, 13, "A is listed twice" },
        { "[sandbox]\nstep-env = [\"ACTIONS_ID_TOKEN_REQUEST_TOKEN\"]\n", 2, 13,
          "[sandbox] step-env: ACTIONS_ID_TOKEN_REQUEST_TOKEN: names starting ACTIONS_ are refused" },
        { "[sandbox]\nstep-env = [\"github_output\"]\n", 2, 13,
          "github_output is refused: it names one of the job's command files" },
        { "[sandbox]\nstep-env = [\"1A\"]\n", 2, 13, "\"1A\" is not a valid variable name" },
        { "[sandbox]\nstep-env = [\"A\", \"A\"]\n", 2, 18, "A is listed twice" },
        { "[sandbox]\nstep-env = \"A\"\n", 2, 12,
          "[sandbox] step-env: expected an array of strings, found a string" },
        { "[run]\ntimeout = 0\n", 2, 11, "[run] timeout: 0 is out of range (1 to 604800)" },
        { "[sandbox]\ntasks-max = 63\n", 2, 13, "[sandbox] tasks-max: 63 is out of range (64 to 4194304)" },
        { "[sandbox]\ntasks-max = 4194305\n", 2, 13, "is out of range (64 to 4194304)" },
        { "[sandbox]\ntasks-max = \"8192\"\n", 2, 13, "[sandbox] tasks-max: expected an integer" },
        { "[sandbox]\nmemory-max-percent = 0\n", 2, 22,
          "[sandbox] memory-max-percent: 0 is out of range (1 to 100)" },
        { "[sandbox]\nmemory-max-percent = 101\n", 2, 22, "is out of range (1 to 100)" },
        { "[sandbox]\nmemory-max-percent = \"75%\"\n", 2, 22,
          "[sandbox] memory-max-percent: expected an integer" },
        { "[run]\ntimeout = \"60\"\n", 2, 11, "[run] timeout" },
        { "[run]\nmax-file-bytes = 1099511627777\n", 2, 18, "is out of range (1 to 1099511627776)" },
        { "[run]\nmax-files = 100001\n", 2, 13, "is out of range (1 to 100000)" },
        { "[run]\nmax-requests = 0\n", 2, 16, "is out of range (1 to 1000000)" },
        { "[run]\nmax-requests = 1000001\n", 2, 16, "is out of range (1 to 1000000)" },
        { "[run]\nbudget = 5\n", 2, 10,
          "[run] budget: no [run.prices]: a budget is kept by the price of each model's tokens" },
        { "[run]\nbudget = 0\n", 2, 10, "[run] budget: 0 is out of range (0.000001 to 1000000)" },
        { "[run]\nbudget = \"1000000.000001\"\n", 2, 10, "is out of range (0.000001 to 1000000)" },
        { "[run]\nbudget = -1\n", 2, 10, "[run] budget: -1 is negative" },
        { "[run]\nbudget = \"1.5 USD\"\n", 2, 10,
          "[run] budget: \"1.5 USD\" is not an amount (digits, perhaps a '.' and at most six more)" },
        { "[run]\nbudget = true\n", 2, 10, "[run] budget: expected an amount" },
        { "[run.prices]\nm = { input = 1 }\n", 2, 5, "[run.prices] m: needs both input and output" },
        { "[run.prices]\nm = { input = 1, output = 1, cache = 1 }\n", 2, 30,
          "[run.prices] m: unknown key \"cache\" (a price has input and output)" },
        { "[run.prices]\nm = { input = 1, output = 10001 }\n", 2, 27,
          "[run.prices] m: 10001 is out of range (0 to 10000)" },
        { "[run.prices]\nm = { input = \"0.0000001\", output = 1 }\n", 2, 15, "is not an amount" },
        { "[run.prices]\nm = 3\n", 2, 5,
          "[run.prices] m: expected { input = AMOUNT, output = AMOUNT }, found an integer" },
        { "[run.prices]\n\"a*b\" = { input = 1, output = 1 }\n", 2, 1,
          "[run.prices] \"a*b\" is not a model's name" },
        { "[run.prices]\n\"*\" = { input = 1, output = 1 }\n", 2, 1, "is not a model's name" },
        { "[run.prices]\n\"a b\" = { input = 1, output = 1 }\n", 2, 1, "is not a model's name" },
        { "[run]\nprices = 1\n", 2, 10, "[run] prices: expected a table" },
        { "[run]\nclone-max-bytes = 0\n", 2, 19,
          "[run] clone-max-bytes: 0 is out of range (1 to 1099511627776)" },
        { "[run]\nclone-max-object-bytes = 1099511627777\n", 2, 26, "is out of range (1 to 1099511627776)" },
        { "[run]\nclone-max-files = 100000001\n", 2, 19, "is out of range (1 to 100000000)" },
        { "[run]\nclone-max-checkout-bytes = \"1G\"\n", 2, 28,
          "[run] clone-max-checkout-bytes: expected an integer" },
        { "[run]\nclone-max-memory = 67108863\n", 2, 20, "is out of range (67108864 to 1099511627776)" },
        { "[egress]\nlog-max-bytes = 1048575\n", 2, 17, "is out of range (1048576 to 1099511627776)" },
        { "[egress]\nlog-max-bytes = 1099511627777\n", 2, 17, "is out of range (1048576 to 1099511627776)" },
        { "[egress]\nreads = \"all\"\n", 2, 9, "[egress] reads: \"all\" is not one of \"any\", \"listed\"" },
        { "[egress]\nreads = true\n", 2, 9, "[egress] reads" },
        { "[run]\nconfine = \"bwrap\"\n", 2, 11,
          "[run] confine: \"bwrap\" is not one of \"bubblewrap\", \"none\"" },
        { "[run]\nconfine = false\n", 2, 11, "[run] confine" },
        { "[run]\nprofile = \"../claude\"\n", 2, 11, "[run] profile: \"../claude\" is not a profile name" },
        { "[run]\nprofile = 1\n", 2, 11, "[run] profile: expected a string" },
        { "[run]\nconfne = \"none\"\n", 2, 1, "[run] unknown key \"confne\"" },
        { "[rnu]\n", 1, 1, "unknown table [rnu] (did you mean [run]?)" },
        { "[run]\ntrusted-paths = "
          "[\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\","
          "\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\","
          "\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\","
          "\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\","
          "\"a\",\"a\",\"a\",\"a\"]\n",
          2, 17, "[run] trusted-paths: more than 64 paths" },
        /* Tables and keys */
        { "[sandbox]\nusr = \"x\"\n", 2, 1, "[sandbox] unknown key \"usr\" (did you mean \"user\"?)" },
        { "[sandbox]\nshell = \"/bin/sh\"\n", 2, 1, "[sandbox] unknown key \"shell\"" },
        { "[sandbox]\nuser = 'a'\n  a-very-long-key-name-that-is-nothing-like-any-key-we-know-of-at-all = "
          "1\n",
          3, 3,
          "[sandbox] unknown key \"a-very-long-key-name-that-is-nothing-like-any-key-we-know-of-at-all\"" },
        { "[sandbox]\nworld-write-walk = true\n", 2, 1, "[sandbox] unknown key \"world-write-walk\"" },
        { "[sandbox]\n\"a\\nb\" = 1\n", 2, 1, "[sandbox] unknown key \"a\\nb\"" },
        { "[sandbx]\nuser = \"x\"\n", 1, 1, "unknown table [sandbx] (did you mean [sandbox]?)" },
        { "[egres]\n", 1, 1, "unknown table [egres] (did you mean [egress]?)" },
        { "[sandbox.check]\ncontrol_url = \"https://github.com/\"\n", 2, 1,
          "[sandbox.check] unknown key \"control_url\" (did you mean \"control-url\"?)" },
        { "[sandbox.check]\ncontrol-url = \"ftp://x/\"\n", 2, 15,
          "[sandbox.check] control-url: \"ftp://x/\" is not an http:// or https:// URL without spaces or "
          "control characters" },
        { "[sandbox.check]\nfetch-repo = 1\n", 2, 14,
          "[sandbox.check] fetch-repo: expected a string, found an integer" },
        { "[sandbox.check]\ncontainer-image = \"-x\"\n", 2, 19,
          "[sandbox.check] container-image: \"-x\" is not an image name (1 to 255 of letters, digits and "
          "\"._-/:@\", not starting \"-\")" },
        { "[sandbox.check]\ncontainer-image = \"a b\"\n", 2, 19,
          "[sandbox.check] container-image: \"a b\" is not an image name (1 to 255 of letters, digits and "
          "\"._-/:@\", not starting \"-\")" },
        { "[sandbox.check]\ncontainer-image = \"\"\n", 2, 19,
          "[sandbox.check] container-image: \"\" is not an image name (1 to 255 of letters, digits and "
          "\"._-/:@\", not starting \"-\")" },
        { "[sandbox.check]\ncontainers = \"no\"\n", 2, 14,
          "[sandbox.check] containers: expected a boolean, found a string" },
        { "[sandbox.check]\nallow-sockets = [\"run/x\"]\n", 2, 18,
          "[sandbox.check] allow-sockets: \"run/x\" must be a socket's path (starting \"/\") or an abstract "
          "name (starting \"@\"), with no control character" },
        { "[sandbox.check]\nallow-tcp-ports = [0]\n", 2, 20,
          "[sandbox.check] allow-tcp-ports: 0 is not a port (1 to 65535)" },
        { "[sandbox.check]\nallow-tcp-ports = [65536]\n", 2, 20,
          "[sandbox.check] allow-tcp-ports: 65536 is not a port (1 to 65535)" },
        { "[sandbox.check]\nallow-tcp-ports = [\"53\"]\n", 2, 20,
          "[sandbox.check] allow-tcp-ports: expected a port (1 to 65535), found a string" },
        { "[sandbox.check]\nallow-tcp-ports = 53\n", 2, 19,
          "[sandbox.check] allow-tcp-ports: expected an array of ports, found an integer" },
        { "[sandbox.check.deeper]\n", 1, 1, "unknown table [sandbox.check.deeper]" },
        { "[sandbox]\ncheck = 1\n", 2, 9, "[sandbox] check: expected a table, found an integer" },
        { "[sandbox]\nuser-manager = 1\n", 2, 16,
          "[sandbox] user-manager: expected a boolean, found an integer" },
        { "[sandbox]\nuser = \"a\"\n[sandbox.foo]\n", 3, 1, "unknown table [sandbox.foo]" },
        { "[setup]\npackages = []\n", 1, 1, "unknown table [setup]" },
        { "[\"odd name\"]\n", 1, 1, "unknown table [\"odd name\"]" },
        { "user = \"x\"\n", 1, 1, "unknown key \"user\" outside any table" },
        { "\n  timeout = 5\n", 2, 3, "unknown key \"timeout\" outside any table" },
        { "sandbox = 1\n", 1, 11, "sandbox: expected a table, found an integer" },
        { "[[sandbox]]\n", 1, 1, "sandbox: expected a table, found an array" },
        { "[egress]\ndirect = []\n", 2, 1, "[egress] unknown key \"direct\"" },
        { "[egress]\nproxi = false\n", 2, 1, "[egress] unknown key \"proxi\" (did you mean \"proxy\"?)" },
        /* user */
        { "[sandbox]\nuser = 5\n", 2, 8, "[sandbox] user: expected a string, found an integer" },
        { "[sandbox]\nuser = -1\n", 2, 8, "[sandbox] user: expected a string, found an integer" },
        { "[sandbox]\nuser = [\"a\"]\n", 2, 8, "[sandbox] user: expected a string, found an array" },
        { "[sandbox]\nuser = \"root\"\n", 2, 8,
          "[sandbox] user: \"root\" is refused: the sandbox user must not be root" },
        { "[sandbox]\nuser = \"Runner\"\n", 2, 8, "[sandbox] user: \"Runner\" is not a valid user name" },
        { "[sandbox]\nuser = \"abcdefghijklmnopqrstuvwxyz0123456\"\n", 2, 8,
          "is not a valid user name (it must match ^[a-z_][a-z0-9_-]{0,31}$)" },
        { "[sandbox]\nuser = \"\"\n", 2, 8, "[sandbox] user: \"\" is not a valid user name" },
        { "[sandbox]\nuser = \"1abc\"\n", 2, 8, "is not a valid user name" },
        { "[sandbox]\nuser = \"a\\nb\"\n", 2, 8, "[sandbox] user: \"a\\nb\" is not a valid user name" },
        /* runner-user */
        { "[sandbox]\nrunner-user = \"runner-sandbox\"\n", 2, 15,
          "[sandbox] runner-user: \"runner-sandbox\" is the sandbox user: runner-user must differ from "
          "user" },
        { "[sandbox]\nrunner-user = \"ci\"\nuser = \"ci\"\n", 2, 15, "runner-user must differ from user" },
        { "[sandbox]\nrunner-user = \"root\"\n", 2, 15,
          "[sandbox] runner-user: \"root\" is refused: the runner user must not be root" },
        { "[sandbox]\nrunner-user = \"Bob\"\n", 2, 15,
          "[sandbox] runner-user: \"Bob\" is not a valid user name" },
        { "[sandbox]\nrunner-user = false\n", 2, 15,
          "[sandbox] runner-user: expected a string, found a boolean" },
        /* groups */
        { "[sandbox]\ngroups = [\"docker\"]\n", 2, 11,
          "[sandbox] groups: group \"docker\" is refused: membership in it is root by another name" },
        { "[sandbox]\ngroups = [\"kvm\", \"wheel\"]\n", 2, 18, "group \"wheel\" is refused" },
        { "[sandbox]\ngroups = [\"kvm\", \"systemd-journal\"]\n", 2, 18, "root by another name" },
        { "[sandbox]\ngroups = [\"kvm\", \"video\", \"kvm\"]\n", 2, 27,
          "[sandbox] groups: group \"kvm\" is listed twice" },
        { "[sandbox]\ngroups = [\"Video\"]\n", 2, 11,
          "[sandbox] groups: \"Video\" is not a valid group name" },
        { "[sandbox]\ngroups = \"kvm\"\n", 2, 10,
          "[sandbox] groups: expected an array of strings, found a string" },
        { "[sandbox]\ngroups = [1]\n", 2, 11,
          "[sandbox] groups: expected an array of strings, found an integer in the array" },
        { "[sandbox]\ngroups = [[\"kvm\"]]\n", 2, 11, "found an array in the array" },
        /* booleans */
        { "[sandbox]\nallow-existing-user = \"yes\"\n", 2, 23,
          "[sandbox] allow-existing-user: expected a boolean, found a string" },
        { "[sandbox]\nlock-runner = 1\n", 2, 15,
          "[sandbox] lock-runner: expected a boolean, found an integer" },
        { "[egress]\nproxy = \"no\"\n", 2, 9, "[egress] proxy: expected a boolean, found a string" },
        { "[egress]\nproxy = {}\n", 2, 9, "[egress] proxy: expected a boolean, found a table" },
        /* private-dirs */
        { "[sandbox]\nprivate-dirs = [\"relative/dir\"]\n", 2, 17,
          "[sandbox] private-dirs: \"relative/dir\" is not a plain absolute path" },
        { "[sandbox]\nprivate-dirs = [\"/ok\", \"/home/../etc\"]\n", 2, 24,
          "\"/home/../etc\" is not a plain absolute path" },
        { "[sandbox]\nprivate-dirs = [\"/srv/\"]\n", 2, 17, "\"/srv/\" is not a plain absolute path" },
        { "[sandbox]\nprivate-dirs = [\"/a/./b\"]\n", 2, 17, "is not a plain absolute path" },
        { "[sandbox]\nprivate-dirs = [\"\"]\n", 2, 17, "is not a plain absolute path" },
        { "[sandbox]\nprivate-dirs = [\"/\"]\n", 2, 17, "[sandbox] private-dirs: \"/\" is refused" },
        { "[sandbox]\nprivate-dirs = [\"/a\\nb\"]\n", 2, 17,
          "[sandbox] private-dirs: \"/a\\nb\" contains a control character" },
        { "[sandbox]\nprivate-dirs = \"/opt\"\n", 2, 16, "expected an array of strings, found a string" },
        /* stop-services */
        { "[sandbox]\nstop-services = [\"-foo.service\"]\n", 2, 18,
          "[sandbox] stop-services: \"-foo.service\" is not a unit name" },
        { "[sandbox]\nstop-services = [\"foo\"]\n", 2, 18, "\"foo\" is not a unit name" },
        { "[sandbox]\nstop-services = [\"a.service\", \"foo bar.service\"]\n", 2, 31,
          "\"foo bar.service\" is not a unit name" },
        { "[sandbox]\nstop-services = [true]\n", 2, 18, "found a boolean in the array" },
        /* env */
        { "[sandbox]\nenv = { ACTIONS_FOO = \"x\" }\n", 2, 9,
          "[sandbox] env: ACTIONS_FOO: names starting ACTIONS_ are refused: they carry the job's "
          "credentials" },
        { "[sandbox.env]\nOK = \"1\"\nACTIONS_RUNTIME_TOKEN = \"x\"\n", 3, 1,
          "[sandbox] env: ACTIONS_RUNTIME_TOKEN: names starting ACTIONS_ are refused" },
        { "[sandbox]\nenv = { FOO = \"a\\nb\" }\n", 2, 15,
          "[sandbox] env: FOO: the value must not contain a newline or a carriage return" },
        { "[sandbox]\nenv = { FOO = \"a\\rb\" }\n", 2, 15,
          "[sandbox] env: FOO: the value must not contain a newline" },
        { "[sandbox]\nenv = { \"1X\" = \"a\" }\n", 2, 9,
          "[sandbox] env: \"1X\" is not a valid variable name (it must match ^[A-Za-z_][A-Za-z0-9_]*$)" },
        { "[sandbox]\nenv = { \"A-B\" = \"a\" }\n", 2, 9, "\"A-B\" is not a valid variable name" },
        { "[sandbox]\nenv = { \"\" = \"a\" }\n", 2, 9, "\"\" is not a valid variable name" },
        { "[sandbox]\nenv = { FOO = 1 }\n", 2, 15,
          "[sandbox] env: FOO: expected a string, found an integer" },
        { "[sandbox.env.FOO]\n", 1, 1, "[sandbox] env: FOO: expected a string, found a table" },
        { "[sandbox]\nenv = \"FOO=1\"\n", 2, 7, "[sandbox] env: expected a table, found a string" },
        { "[sandbox]\nenv = [\"FOO=1\"]\n", 2, 7, "[sandbox] env: expected a table, found an array" },
        /* enter */
        { "[sandbox]\nenter = \"bogus\"\n", 2, 9,
          "[sandbox] enter: \"bogus\" is not one of \"auto\", \"run0\", \"systemd-run\", \"direct\"" },
        { "[sandbox]\nenter = \"Auto\"\n", 2, 9, "\"Auto\" is not one of" },
        { "[sandbox]\nenter = true\n", 2, 9, "[sandbox] enter: expected a string, found a boolean" },
        /* Syntax errors come through with their place. */
        { "[sandbox]\nuser = \n", 2, 8, "expected a value" },
        { "[sandbox]\nuser = \"a\"\nuser = \"b\"\n", 3, 1, "duplicate key \"user\"" },
        { "[sandbox]\n[sandbox]\n", 2, 1, "table [sandbox] is defined twice" },
        { "[sandbox]\nlock-runner = yes\n", 2, 15, "strings must be quoted" },
};

START_TEST(test_refusals)
{
        const Refusal *t = &refusals[_i];
        Config *c = NULL;
        AjError e = {};
        int r;

        r = config_parse(t->input, strlen(t->input), &c, &e);
        ck_assert_msg(r == -EINVAL, "case %d: accepted or wrong error %d", _i, r);
        ck_assert_ptr_null(c);
        ck_assert_msg(strstr(e.message, t->message), "case %d: message \"%s\" lacks \"%s\"", _i, e.message,
                      t->message);
        ck_assert_msg(e.line == t->line && e.column == t->column, "case %d (%s): at %u:%u, expected %u:%u",
                      _i, e.message, e.line, e.column, t->line, t->column);
        ck_assert_msg(!strchr(e.message, '\n'), "case %d: message spans lines", _i);
        ck_assert_msg(e.message[strlen(e.message) - 1] != '.', "case %d: message ends with a period", _i);
}
END_TEST

static Suite *config_suite(void)
{
        Suite *s = suite_create("config");
        TCase *accepted = tcase_create("accepted");
        TCase *rules = tcase_create("rules");
        TCase *load = tcase_create("load");
        TCase *refused = tcase_create("refused");

        tcase_add_test(accepted, test_defaults);
        tcase_add_test(accepted, test_every_key);
        tcase_add_test(accepted, test_env_table);
        tcase_add_test(accepted, test_empty_lists);
        tcase_add_test(accepted, test_list_bounds);
        tcase_add_test(accepted, test_enter_values);
        tcase_add_test(accepted, test_inline_sections);
        tcase_add_test(accepted, test_check_table);
        tcase_add_test(accepted, test_run_table);
        tcase_add_test(accepted, test_egress_reads);
        tcase_add_test(accepted, test_runner_user_after_user);
        suite_add_tcase(s, accepted);

        tcase_add_test(rules, test_user_name_rule);
        tcase_add_test(rules, test_root_equivalent_groups);
        tcase_add_test(rules, test_env_rules);
        tcase_add_test(rules, test_path_rule);
        tcase_add_test(rules, test_unit_rule);
        tcase_add_test(rules, test_relative_path_rule);
        tcase_add_test(rules, test_too_large);
        suite_add_tcase(s, rules);

        tcase_add_checked_fixture(load, setup_tmpdir, teardown_tmpdir);
        tcase_add_test(load, test_load_ok);
        tcase_add_test(load, test_load_parse_error);
        tcase_add_test(load, test_load_missing);
        tcase_add_test(load, test_load_link);
        tcase_add_test(load, test_load_not_regular);
        tcase_add_test(load, test_load_too_large);
        suite_add_tcase(s, load);

        tcase_add_loop_test(refused, test_refusals, 0, (int)ELEMENTSOF(refusals));
        suite_add_tcase(s, refused);
        return s;
}

int main(void)
{
        return check_run(config_suite());
}
