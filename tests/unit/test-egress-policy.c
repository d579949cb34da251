/* SPDX-License-Identifier: MIT */
/* The egress policy: the parser (every refusal, with its line, column and message), the shipped policy,
 * host normalization, path globs, URLs, the threat list, a table of decisions, and the shared corpus of
 * cases (tests/policy/cases.txt) that `policy test` and the running proxy must decide alike. */
#include <check.h>

#include "check-run.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "egress-policy.h"
#include "macro.h"
#include "read-file.h"

#ifndef SOURCE_ROOT
#error "SOURCE_ROOT must name the source tree"
#endif

static EgressPolicy *parse_ok(const char *s)
{
        EgressPolicy *p = NULL;
        AjError e = {};
        int r = egress_policy_parse(s, strlen(s), &p, &e);

        ck_assert_msg(r == 0, "unexpected refusal at %u:%u: %s", e.line, e.column, e.message);
        ck_assert_ptr_nonnull(p);
        return p;
}

static EgressPolicy *load_ok(const char *path)
{
        EgressPolicy *p = NULL;
        AjError e = {};

        ck_assert_msg(egress_policy_load(path, &p, &e) == 0, "%s", e.message);
        return p;
}

static void assert_strv(char *const *v, const char *const *expected, size_t n)
{
        ck_assert_ptr_nonnull(v);
        ck_assert_uint_eq(strv_length(v), n);
        for (size_t i = 0; i < n; i++)
                ck_assert_str_eq(v[i], expected[i]);
}

static void assert_threats(const EgressThreats *t, const char *const *expected, size_t n)
{
        ck_assert_ptr_nonnull(t);
        ck_assert_ptr_nonnull(t->hosts);
        ck_assert_uint_eq(t->n, n);
        for (size_t i = 0; i < n; i++)
                ck_assert_str_eq(t->hosts[i], expected[i]);
}

/* What every reason promises: one printable line, never a query string. */
static void assert_reason_sound(const EgressDecision *d, const char *context)
{
        size_t n = strlen(d->reason);

        ck_assert_msg(n > 0 && n < sizeof(d->reason), "%s: reason of length %zu", context, n);
        for (size_t i = 0; i < n; i++)
                ck_assert_msg(d->reason[i] >= ' ' && d->reason[i] < 0x7f,
                              "%s: byte 0x%02x in the reason \"%s\"", context, (unsigned char)d->reason[i],
                              d->reason);
        ck_assert_msg(!strchr(d->reason, '?'), "%s: '?' in the reason \"%s\"", context, d->reason);
        if (d->verdict == EGRESS_ALLOW && d->rule)
                ck_assert_str_eq(d->reason, d->rule->name);
        if (d->verdict == EGRESS_DENY)
                ck_assert_ptr_null(d->rule);
}

/* ---- Accepted ---- */

START_TEST(test_every_key)
{
        _cleanup_(egress_policy_freep) EgressPolicy *p =
                parse_ok("# two rules\r\n"
                         "\r\n"
                         "[[write]]\r\n"
                         "name = \"git-fetch\"\r\n"
                         "why = 'git fetch posts to upload-pack'\r\n"
                         "hosts = [\"GitHub.COM.\", \"[2001:DB8::1]\", '0x7f.1', \" gitlab.com \"]\r\n"
                         "methods = [\"POST\"]\r\n"
                         "paths = [\r\n"
                         "        \"/**/git-upload-pack\",  # the fetch\r\n"
                         "        \"/a/*.json\",\r\n"
                         "]\r\n"
                         "\r\n"
                         "[[write]]\r\n"
                         "paths = [\"/\"]\r\n"
                         "methods = [\"PUT\", \"WEBSOCKET\", \"M-SEARCH\", \"X_1\"]\r\n"
                         "hosts = [\"x.test\"]\r\n"
                         "why = \"keys in any order\"\r\n"
                         "name = \"Second.rule_2\"\r\n");

        ck_assert_uint_eq(p->n_rules, 2);
        ck_assert_str_eq(p->rules[0].name, "git-fetch");
        ck_assert_str_eq(p->rules[0].why, "git fetch posts to upload-pack");
        /* Hosts are kept normalized, so that they compare with a request's normalized host. */
        assert_strv(p->rules[0].hosts,
                    (const char *const[]){ "github.com", "2001:db8::1", "127.0.0.1", "gitlab.com" }, 4);
        assert_strv(p->rules[0].methods, (const char *const[]){ "POST" }, 1);
        assert_strv(p->rules[0].paths, (const char *const[]){ "/**/git-upload-pack", "/a/*.json" }, 2);
        ck_assert_uint_eq(p->rules[0].line, 3);
        ck_assert_str_eq(p->rules[1].name, "Second.rule_2");
        assert_strv(p->rules[1].methods, (const char *const[]){ "PUT", "WEBSOCKET", "M-SEARCH", "X_1" }, 4);
        ck_assert_uint_eq(p->rules[1].line, 13);
}
END_TEST

START_TEST(test_empty_policies)
{
        static const char *const inputs[] = { "", "\n", "# only reads\n", "write = []\n" };

        for (size_t i = 0; i < ELEMENTSOF(inputs); i++) {
                _cleanup_(egress_policy_freep) EgressPolicy *p = parse_ok(inputs[i]);
                ck_assert_uint_eq(p->n_rules, 0);
        }
}
END_TEST

START_TEST(test_inline_tables)
{
        /* An array of inline tables is the same TOML as [[write]] tables. */
        _cleanup_(egress_policy_freep) EgressPolicy *p =
                parse_ok("write = [\n"
                         "  { name = \"a\", why = \"w\", hosts = [\"a.test\"], methods = [\"POST\"], paths "
                         "= [\"/\"] },\n"
                         "  { name = \"b\", why = \"w\", hosts = [\"b.test\"], methods = [\"PUT\"], paths = "
                         "[\"/b\"] },\n"
                         "]\n");

        ck_assert_uint_eq(p->n_rules, 2);
        ck_assert_str_eq(p->rules[1].name, "b");
        ck_assert_uint_eq(p->rules[1].line, 3);
}
END_TEST

static void assert_decides(const EgressPolicy *p, const char *method, const char *host, const char *path,
                           EgressVerdict verdict, const char *reason)
{
        EgressDecision d;

        egress_decide(p, NULL,
                      &(EgressRequest){ .method = method,
                                        .host = host,
                                        .host_header = host,
                                        .sni = host,
                                        .path = path,
                                        .has_body = true },
                      &d);
        ck_assert_msg(d.verdict == verdict && (verdict == EGRESS_ALLOW ? strcmp(d.reason, reason) == 0
                                                                       : strstr(d.reason, reason) != NULL),
                      "%s %s%s: %s %s", method, host, path, egress_verdict_to_string(d.verdict), d.reason);
}

START_TEST(test_shipped_policy)
{
        static const char *const forges[] = {
                "github.com",     "gitlab.com",       "codeberg.org",   "bitbucket.org",
                "git.kernel.org", "salsa.debian.org", "invent.kde.org", "gitlab.freedesktop.org",
        };
        _cleanup_(egress_policy_freep) EgressPolicy *p = load_ok(SOURCE_ROOT "/policy/policy.toml");

        for (size_t i = 0; i < p->n_rules; i++) {
                ck_assert(p->rules[i].why[0] != '\0');
                for (char **h = p->rules[i].hosts; *h; h++)
                        ck_assert_msg(!strstr(*h, "fake.test"), "the shipped policy names %s", *h);
        }
        for (size_t i = 0; i < ELEMENTSOF(forges); i++) {
                assert_decides(p, "POST", forges[i], "/owner/repo.git/git-upload-pack", EGRESS_ALLOW,
                               "git-fetch");
                assert_decides(p, "POST", forges[i], "/owner/repo.git/git-receive-pack", EGRESS_DENY,
                               "a write to an endpoint not in the write allowlist: POST ");
        }
        assert_decides(p, "POST", "git.kernel.org",
                       "/pub/scm/linux/kernel/git/torvalds/linux.git/git-upload-pack", EGRESS_ALLOW,
                       "git-fetch");
        assert_decides(p, "POST", "github.com", "/owner/repo/git-upload-pack", EGRESS_ALLOW, "git-fetch");
        assert_decides(p, "POST", "registry.npmjs.org", "/-/npm/v1/security/advisories/bulk", EGRESS_ALLOW,
                       "npm-audit");
        assert_decides(p, "POST", "registry.npmjs.org", "/-/npm/v1/security/audits/quick", EGRESS_ALLOW,
                       "npm-audit");
        assert_decides(
                p, "PUT", "registry.npmjs.org", "/some-package", EGRESS_DENY,
                "a write to an endpoint not in the write allowlist: PUT registry.npmjs.org/some-package");
        assert_decides(p, "PUT", "crates.io", "/api/v1/crates/new", EGRESS_DENY,
                       "a write to an endpoint not in the write allowlist: PUT crates.io/api/v1/crates/new");
        assert_decides(p, "POST", "api.github.com", "/graphql", EGRESS_DENY,
                       "a write to an endpoint not in the write allowlist: POST api.github.com/graphql");
}
END_TEST

/* ---- Refused ---- */

typedef struct Refusal {
        const char *input;
        unsigned line, column;
        const char *message; /* a substring of the message */
} Refusal;

/* A rule named "r" with these hosts, methods and paths, on lines 4, 5 and 6 (each value at column 9, 11
 * and 9). */
#define RULE(hosts, methods, paths)                                                                         \
        "[[write]]\nname = \"r\"\nwhy = \"w\"\nhosts = " hosts "\nmethods = " methods "\npaths = " paths "\n"
#define HOSTS(h)   RULE(h, "[\"POST\"]", "[\"/\"]")
#define METHODS(m) RULE("[\"x.test\"]", m, "[\"/\"]")
#define PATHS(p)   RULE("[\"x.test\"]", "[\"POST\"]", p)

static const Refusal refusals[] = {
        /* Read rules: name, why and hosts, nothing else */
        { "[[read]]\nname = \"r\"\nwhy = \"w\"\nhosts = [\"x.test\"]\nmethods = [\"GET\"]\n", 5, 1,
          "read rule \"r\": unknown key \"methods\" (a read rule has name, why and hosts" },
        { "[[read]]\nname = \"r\"\nwhy = \"w\"\n", 1, 1, "read rule \"r\": missing key \"hosts\"" },
        { "[[read]]\nname = \"r\"\nwhy = \"w\"\nhosts = [\"*.x.test\"]\n", 4, 10,
          "read rule \"r\": hosts: \"*.x.test\" is refused: hosts are exact names" },
        { "[[read]]\nname = \"r\"\nwhy = \"w\"\nhosts = []\n", 4, 9,
          "read rule \"r\": hosts: the list is empty" },
        { RULE("[\"x.test\"]", "[\"POST\"]", "[\"/\"]") "[[read]]\nname = \"r\"\n", 8, 8,
          "read rule \"r\": name: \"r\" is also the name of the rule at line 1" },
        { "read = 1\n", 1, 8, "read: expected [[read]] tables, found an integer" },
        /* Outside the rules */
        { "x = 1\n", 1, 1,
          "unknown key \"x\" outside any table: a policy holds only [[write]] and [[read]] tables" },
        { "[rules]\n", 1, 2, "unknown table [rules]: a policy holds only [[write]] and [[read]] tables" },
        { "[[writes]]\n", 1, 3,
          "unknown table [[writes]]: a policy holds only [[write]] and [[read]] tables" },
        { "[write]\nname = \"a\"\n", 1, 1, "write: expected [[write]] tables, found a table" },
        { "write = \"x\"\n", 1, 9, "write: expected [[write]] tables, found a string" },
        { "write = [\"x\"]\n", 1, 9, "write: expected [[write]] tables, found an array of strings" },
        { "write = [1, 2]\n", 1, 9, "write: expected [[write]] tables, found an array of integers" },
        /* Keys */
        { RULE("[\"x.test\"]", "[\"POST\"]", "[\"/\"]") "host = \"y\"\n", 7, 1,
          "rule \"r\": unknown key \"host\" (a rule has name, why, hosts, methods and paths)" },
        { "[[write]]\nfoo = 1\n", 2, 1, "rule 1: unknown key \"foo\"" },
        { "[[write]]\nname = \"r\"\n[write.extra]\n", 3, 8, "rule \"r\": unknown key \"extra\"" },
        { "[[write]]\nname = \"r\"\nhosts = [\"a.test\"]\nmethods = [\"POST\"]\npaths = [\"/\"]\n", 1, 1,
          "rule \"r\": missing key \"why\"" },
        { "[[write]]\nname = \"r\"\nwhy = \"w\"\nmethods = [\"POST\"]\npaths = [\"/\"]\n", 1, 1,
          "rule \"r\": missing key \"hosts\"" },
        { "[[write]]\nname = \"r\"\nwhy = \"w\"\nhosts = [\"a.test\"]\npaths = [\"/\"]\n", 1, 1,
          "rule \"r\": missing key \"methods\"" },
        { "[[write]]\nname = \"r\"\nwhy = \"w\"\nhosts = [\"a.test\"]\nmethods = [\"POST\"]\n", 1, 1,
          "rule \"r\": missing key \"paths\"" },
        { RULE("[\"x.test\"]", "[\"POST\"]", "[\"/\"]") "\n[[write]]\nwhy = \"w\"\n", 8, 1,
          "rule 2: missing key \"name\"" },
        { "[[write]]\n", 1, 1, "rule 1: missing key \"name\"" },
        /* name */
        { "[[write]]\nname = \"has space\"\n", 2, 8,
          "rule 1: name: \"has space\" is not a valid rule name (it must match "
          "^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$)" },
        { "[[write]]\nname = \"\"\n", 2, 8, "rule 1: name: \"\" is not a valid rule name" },
        { "[[write]]\nname = \"-dash\"\n", 2, 8, "rule 1: name: \"-dash\" is not a valid rule name" },
        { "[[write]]\nname = \"a\\nb\"\n", 2, 8, "rule 1: name: \"a\\nb\" is not a valid rule name" },
        { "[[write]]\nname = "
          "\"a2345678901234567890123456789012345678901234567890123456789012345\"\n",
          2, 8, "rule 1: name: \"a2345" },
        { "[[write]]\nname = 1\n", 2, 8, "rule 1: name: expected a string, found an integer" },
        { RULE("[\"x.test\"]", "[\"POST\"]", "[\"/\"]") "[[write]]\nname = \"r\"\n", 8, 8,
          "rule \"r\": name: \"r\" is also the name of the rule at line 1" },
        /* why */
        { "[[write]]\nname = \"r\"\nwhy = \"\"\n", 3, 7,
          "rule \"r\": why: is empty: say why the rule is needed" },
        { "[[write]]\nname = \"r\"\nwhy = \"   \"\n", 3, 7, "rule \"r\": why: is empty" },
        { "[[write]]\nname = \"r\"\nwhy = \"a\\nb\"\n", 3, 7, "rule \"r\": why: holds a control character" },
        { "[[write]]\nname = \"r\"\nwhy = [\"w\"]\n", 3, 7,
          "rule \"r\": why: expected a string, found an array" },
        { "[[write]]\nwhy = \"\"\nname = \"r\"\n", 2, 7, "rule \"r\": why: is empty" },
        { "[[write]]\nwhy = \"\"\n", 2, 7, "rule 1: why: is empty" },
        /* hosts */
        { HOSTS("\"x.test\""), 4, 9,
          "rule \"r\": hosts: expected an array of strings, found a string (write [\"x.test\"])" },
        { HOSTS("[]"), 4, 9,
          "rule \"r\": hosts: the list is empty: a rule that matches nothing is a mistake" },
        { HOSTS("true"), 4, 9, "rule \"r\": hosts: expected an array of strings, found a boolean" },
        { HOSTS("[1]"), 4, 10,
          "rule \"r\": hosts: expected an array of strings, found an integer in the array" },
        { HOSTS("[\"a.test\", \"*.github.com\"]"), 4, 20,
          "rule \"r\": hosts: \"*.github.com\" is refused: hosts are exact names, without wildcards (one "
          "write host "
          "on a shared CDN would open all of it)" },
        { HOSTS("[\"git*hub.com\"]"), 4, 10,
          "rule \"r\": hosts: \"git*hub.com\" is refused: hosts are exact names" },
        { HOSTS("[\"*\"]"), 4, 10, "rule \"r\": hosts: \"*\" is refused" },
        { HOSTS("[\"exa mple.com\"]"), 4, 10,
          "rule \"r\": hosts: \"exa mple.com\" is not a valid host name" },
        { HOSTS("[\"a..b\"]"), 4, 10, "rule \"r\": hosts: \"a..b\" is not a valid host name" },
        { HOSTS("[\"https://github.com\"]"), 4, 10, "\"https://github.com\" is not a valid host name" },
        { HOSTS("[\"\"]"), 4, 10, "rule \"r\": hosts: \"\" is not a valid host name" },
        { HOSTS("[\"user@github.com\"]"), 4, 10, "\"user@github.com\" is not a valid host name" },
        { HOSTS("[\"b\\u00fccher.de\"]"), 4, 10, "is not a valid host name" },
        { HOSTS("[\"a234567890123456789012345678901234567890123456789012345678901234.com\"]"), 4, 10,
          "is not a valid host name" },
        { HOSTS("[\"github.com:443\"]"), 4, 10,
          "rule \"r\": hosts: \"github.com:443\" has a port: ports are not matched, name the host alone" },
        { HOSTS("[\"[2001:db8::1]:443\"]"), 4, 10, "has a port" },
        { HOSTS("[\"GitHub.com\", \"github.com.\"]"), 4, 24,
          "rule \"r\": hosts: \"github.com.\" is listed twice" },
        /* methods */
        { METHODS("\"POST\""), 5, 11,
          "rule \"r\": methods: expected an array of strings, found a string (write [\"POST\"])" },
        { METHODS("[]"), 5, 11, "rule \"r\": methods: the list is empty" },
        { METHODS("[\"POST\", \"GET\"]"), 5, 20,
          "rule \"r\": methods: \"GET\" is refused: reads need no rule (a GET with a body is always "
          "refused)" },
        { METHODS("[\"HEAD\"]"), 5, 12, "rule \"r\": methods: \"HEAD\" is refused: reads need no rule" },
        { METHODS("[\"OPTIONS\"]"), 5, 12,
          "rule \"r\": methods: \"OPTIONS\" is refused: reads need no rule" },
        { METHODS("[\"CONNECT\"]"), 5, 12,
          "rule \"r\": methods: \"CONNECT\" is refused: tunnels are decided by host and port" },
        { METHODS("[\"post\"]"), 5, 12,
          "rule \"r\": methods: \"post\" is not a method name (upper-case letters, digits, '-' and '_', at "
          "most "
          "32)" },
        { METHODS("[\"Post\"]"), 5, 12, "\"Post\" is not a method name" },
        { METHODS("[\"PO ST\"]"), 5, 12, "\"PO ST\" is not a method name" },
        { METHODS("[\"\"]"), 5, 12, "\"\" is not a method name" },
        { METHODS("[\"1POST\"]"), 5, 12, "\"1POST\" is not a method name" },
        { METHODS("[\"ABCDEFGHIJKLMNOPQRSTUVWXYZABCDEFG\"]"), 5, 12, "is not a method name" },
        { METHODS("[\"POST\", \"POST\"]"), 5, 20, "rule \"r\": methods: \"POST\" is listed twice" },
        { METHODS("[[\"POST\"]]"), 5, 12,
          "rule \"r\": methods: expected an array of strings, found an array in" },
        /* paths */
        { PATHS("\"/x\""), 6, 9,
          "rule \"r\": paths: expected an array of strings, found a string (write [\"/x\"])" },
        { PATHS("[]"), 6, 9, "rule \"r\": paths: the list is empty" },
        { PATHS("[\"upload/x\"]"), 6, 10, "rule \"r\": paths: \"upload/x\" does not start with \"/\"" },
        { PATHS("[\"\"]"), 6, 10, "rule \"r\": paths: \"\" does not start with \"/\"" },
        { PATHS("[\"**\"]"), 6, 10, "rule \"r\": paths: \"**\" does not start with \"/\"" },
        { PATHS("[\"/a?b=1\"]"), 6, 10,
          "rule \"r\": paths: \"/a?b=1\" holds '?': the query string is never matched" },
        { PATHS("[\"/a#b\"]"), 6, 10, "rule \"r\": paths: \"/a#b\" holds '#': a fragment is never sent" },
        { PATHS("[\"/a b\"]"), 6, 10,
          "rule \"r\": paths: \"/a b\" holds a space, a control character or a byte outside ASCII (write it "
          "percent-encoded)" },
        { PATHS("[\"/a\\tb\"]"), 6, 10, "holds a space, a control character" },
        { PATHS("[\"/caf\\u00e9\"]"), 6, 10, "holds a space, a control character or a byte outside ASCII" },
        { PATHS("[\"/a**\"]"), 6, 10, "rule \"r\": paths: \"/a**\": '**' must be a whole segment" },
        { PATHS("[\"/***\"]"), 6, 10, "rule \"r\": paths: \"/***\": '**' must be a whole segment" },
        { PATHS("[\"/x/**b/c\"]"), 6, 10, "'**' must be a whole segment" },
        { PATHS("[\"/a/../b\"]"), 6, 10,
          "rule \"r\": paths: \"/a/../b\" holds a '.' or '..' segment, a '\\' or an encoded '/' or '\\': a "
          "request with one is refused, so the rule could never match" },
        { PATHS("[\"/a/./b\"]"), 6, 10, "holds a '.' or '..' segment" },
        { PATHS("[\"/a/%2E%2e/b\"]"), 6, 10, "holds a '.' or '..' segment" },
        { PATHS("[\"/a/..;x/b\"]"), 6, 10, "holds a '.' or '..' segment" },
        { PATHS("[\"/a%2fb\"]"), 6, 10, "holds a '.' or '..' segment, a '\\' or an encoded '/'" },
        { PATHS("[\"/a%5Cb\"]"), 6, 10, "holds a '.' or '..' segment, a '\\' or an encoded '/'" },
        { PATHS("['/a\\b']"), 6, 10, "holds a '.' or '..' segment, a '\\' or an encoded '/'" },
        { PATHS("[\"/a\", \"/b\", \"/a\"]"), 6, 22, "rule \"r\": paths: \"/a\" is listed twice" },
        /* The rule's number counts [[write]] tables from 1. */
        { RULE("[\"x.test\"]", "[\"POST\"]", "[\"/\"]") "[[write]]\nhosts = []\n", 8, 9,
          "rule 2: hosts: the list is empty" },
        /* Syntax errors come through with their place. */
        { "[[write]]\nname = \n", 2, 8, "expected a value" },
        { "[[write]]\nname = \"a\"\nname = \"b\"\n", 3, 1, "duplicate key \"name\"" },
        { "[[write]]\npaths = [\"/\",\n", 2, 9, "unterminated array" },
};

START_TEST(test_refusals)
{
        const Refusal *t = &refusals[_i];
        EgressPolicy *p = NULL;
        AjError e = {};
        int r;

        r = egress_policy_parse(t->input, strlen(t->input), &p, &e);
        ck_assert_msg(r == -EINVAL, "case %d: accepted or wrong error %d", _i, r);
        ck_assert_ptr_null(p);
        ck_assert_msg(strstr(e.message, t->message), "case %d: message \"%s\" lacks \"%s\"", _i, e.message,
                      t->message);
        ck_assert_msg(e.line == t->line && e.column == t->column, "case %d (%s): at %u:%u, expected %u:%u",
                      _i, e.message, e.line, e.column, t->line, t->column);
        ck_assert_msg(e.message[0] != '\0' && !strchr(e.message, '\n'),
                      "case %d: message empty or spans lines", _i);
}
END_TEST

START_TEST(test_too_large)
{
        size_t size = EGRESS_POLICY_MAX_SIZE + 1;
        _cleanup_free_ char *s = malloc(size);
        EgressPolicy *p = NULL;
        AjError e = {};

        ck_assert_ptr_nonnull(s);
        memset(s, '\n', size);
        ck_assert_int_eq(egress_policy_parse(s, size, &p, &e), -EFBIG);
        ck_assert_ptr_null(p);
        ck_assert_str_eq(e.message, "larger than 1048576 bytes");
}
END_TEST

/* ---- Loading files ---- */

static char tmpdir[] = "/tmp/test-egress-policy-XXXXXX";

static void setup_tmpdir(void)
{
        ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void teardown_tmpdir(void)
{
        static const char *const names[] = { "ok.toml", "bad.toml", "link.toml",
                                             "dir",     "threats",  "bad-threats" };
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

static void write_string(const char *name, const char *s)
{
        FILE *f = fopen(tmp_path(name), "we");

        ck_assert_ptr_nonnull(f);
        ck_assert_uint_eq(fwrite(s, 1, strlen(s), f), strlen(s));
        ck_assert_int_eq(fclose(f), 0);
}

static void assert_load_fails(const char *name, int err, unsigned line, unsigned column, const char *suffix)
{
        char expected[512];
        EgressPolicy *p = NULL;
        AjError e = {};

        (void)snprintf(expected, sizeof(expected), "%s%s", tmp_path(name), suffix);
        ck_assert_int_eq(egress_policy_load(tmp_path(name), &p, &e), -err);
        ck_assert_ptr_null(p);
        ck_assert_str_eq(e.message, expected);
        ck_assert_uint_eq(e.line, line);
        ck_assert_uint_eq(e.column, column);
}

START_TEST(test_load)
{
        _cleanup_(egress_policy_freep) EgressPolicy *p = NULL;

        write_string("ok.toml", RULE("[\"x.test\"]", "[\"POST\"]", "[\"/\"]"));
        p = load_ok(tmp_path("ok.toml"));
        ck_assert_uint_eq(p->n_rules, 1);

        write_string("bad.toml", HOSTS("[\"*.x\"]"));
        assert_load_fails(
                "bad.toml", EINVAL, 4, 10,
                ":4:10: rule \"r\": hosts: \"*.x\" is refused: hosts are exact names, without wildcards "
                "(one write host on a shared CDN would open all of it)");
        assert_load_fails("missing.toml", ENOENT, 0, 0, ": No such file or directory");
        ck_assert_int_eq(symlink("ok.toml", tmp_path("link.toml")), 0);
        assert_load_fails("link.toml", ELOOP, 0, 0, ": is a link");
        ck_assert_int_eq(mkdir(tmp_path("dir"), 0700), 0);
        assert_load_fails("dir", EBADFD, 0, 0, ": is not a regular file");
}
END_TEST

/* ---- The threat list ---- */

START_TEST(test_threats_parse)
{
        static const char text[] = "# a feed\n"
                                   "\n"
                                   "Evil.COM\n"
                                   "bad.example.   # trailing comment\r\n"
                                   "  evil.com\t\n"
                                   "z.test\n"
                                   "198.51.100.066\n"
                                   "[2001:DB8::66]\n"
                                   "   # indented comment\n"
                                   "last.test";
        _cleanup_(egress_threats_freep) EgressThreats *t = NULL;
        AjError e = {};

        ck_assert_int_eq(egress_threats_parse(text, strlen(text), &t, &e), 0);
        /* Sorted, without duplicates, normalized (the address's leading zero makes it octal, as resolvers
         * read it). */
        assert_threats(t,
                       (const char *const[]){ "198.51.100.54", "2001:db8::66", "bad.example", "evil.com",
                                              "last.test", "z.test" },
                       6);
}
END_TEST

START_TEST(test_threats_empty)
{
        _cleanup_(egress_threats_freep) EgressThreats *t = NULL;
        AjError e = {};

        ck_assert_int_eq(egress_threats_parse("", 0, &t, &e), 0);
        assert_threats(t, NULL, 0);
}
END_TEST

/* A list of thousands, in no order, with duplicates and names longer normalized than written (10.1 is
 * 10.0.0.1): every name is found, with its subdomains, and nothing else. */
START_TEST(test_threats_many)
{
        _cleanup_(egress_threats_freep) EgressThreats *t = NULL;
        _cleanup_free_ char *text = NULL;
        size_t size = 0, n = 5000;
        FILE *f = open_memstream(&text, &size);
        AjError e = {};

        ck_assert_ptr_nonnull(f);
        for (size_t i = 0; i < n; i++) {
                size_t k = i * 7919 % n; /* a permutation: 7919 is prime, n is not a multiple of it */

                fprintf(f, "H%zu.Test.\n", k);
                if (k % 10 == 0)
                        fprintf(f, "  h%zu.test # again\n203.%zu\n", k, k);
        }
        ck_assert_int_eq(fclose(f), 0);

        ck_assert_int_eq(egress_threats_parse(text, size, &t, &e), 0);
        ck_assert_uint_eq(t->n, n + n / 10);
        for (size_t i = 1; i < t->n; i++)
                ck_assert_int_lt(strcmp(t->hosts[i - 1], t->hosts[i]), 0);
        for (size_t k = 0; k < n; k += 97) {
                char host[64], sub[64], other[64], address[64];
                EgressDecision d;

                (void)snprintf(host, sizeof(host), "h%zu.test", k);
                (void)snprintf(sub, sizeof(sub), "www.h%zu.test", k);
                (void)snprintf(other, sizeof(other), "h%zu.test.example", k);
                (void)snprintf(address, sizeof(address), "203.0.%zu.%zu", k / 256, k % 256);
                egress_decide(NULL, t, &(EgressRequest){ .method = "GET", .host = host, .path = "/" }, &d);
                ck_assert_int_eq(d.verdict, EGRESS_DENY);
                egress_decide(NULL, t, &(EgressRequest){ .method = "GET", .host = sub, .path = "/" }, &d);
                ck_assert_msg(d.verdict == EGRESS_DENY && strstr(d.reason, host), "%s: %s", sub, d.reason);
                egress_decide(NULL, t, &(EgressRequest){ .method = "GET", .host = other, .path = "/" }, &d);
                ck_assert_msg(d.verdict == EGRESS_ALLOW, "%s: %s", other, d.reason);
                egress_decide(NULL, t, &(EgressRequest){ .method = "GET", .host = address, .path = "/" },
                              &d);
                ck_assert_msg(d.verdict == (k % 10 == 0 ? EGRESS_DENY : EGRESS_ALLOW), "%s: %s", address,
                              d.reason);
        }
}
END_TEST

/* A list built by hand, empty: nothing is on it, also with no array at all. */
START_TEST(test_threats_by_hand)
{
        static const char *const hosts[] = { "evil.com" };
        const EgressThreats empty = {}, one = { hosts, ELEMENTSOF(hosts) };
        EgressDecision d;

        egress_decide(NULL, &empty, &(EgressRequest){ .method = "GET", .host = "evil.com", .path = "/" },
                      &d);
        ck_assert_int_eq(d.verdict, EGRESS_ALLOW);
        egress_decide(NULL, &one, &(EgressRequest){ .method = "GET", .host = "a.evil.com", .path = "/" },
                      &d);
        ck_assert_str_eq(d.reason, "a host on the threat list: a.evil.com, under evil.com");
        egress_decide(NULL, &one, &(EgressRequest){ .method = "GET", .host = "notevil.com", .path = "/" },
                      &d);
        ck_assert_int_eq(d.verdict, EGRESS_ALLOW);
}
END_TEST

START_TEST(test_threats_refused)
{
        static const struct {
                const char *input;
                size_t size;
                unsigned line;
                const char *message;
        } cases[] = {
                { "ok.test\n*.bad.test\n", 19, 2, "\"*.bad.test\" is not a host name" },
                { "a b\n", 4, 1, "\"a b\" is not a host name" },
                { "ok.test\nx.test:80\n", 18, 2, "\"x.test:80\" is not a host name" },
                { "ok.test\n\nhttp://x.test/\n", 24, 3, "\"http://x.test/\" is not a host name" },
                { "a\0b\n", 4, 1, "a NUL byte" },
                { "a..b\n", 5, 1, "\"a..b\" is not a host name" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                EgressThreats *t = NULL;
                AjError e = {};

                ck_assert_int_eq(egress_threats_parse(cases[i].input, cases[i].size, &t, &e), -EINVAL);
                ck_assert_ptr_null(t);
                ck_assert_uint_eq(e.line, cases[i].line);
                ck_assert_msg(strstr(e.message, cases[i].message), "case %zu: %s", i, e.message);
        }
}
END_TEST

START_TEST(test_threats_load)
{
        _cleanup_(egress_threats_freep) EgressThreats *t = NULL;
        EgressThreats *none = NULL;
        char expected[256];
        AjError e = {};

        write_string("threats", "a.test\nb.test\n");
        ck_assert_int_eq(egress_threats_load(tmp_path("threats"), &t, &e), 0);
        assert_threats(t, (const char *const[]){ "a.test", "b.test" }, 2);

        write_string("bad-threats", "a.test\nb test\n");
        ck_assert_int_eq(egress_threats_load(tmp_path("bad-threats"), &none, &e), -EINVAL);
        (void)snprintf(expected, sizeof(expected), "%s:2: \"b test\" is not a host name",
                       tmp_path("bad-threats"));
        ck_assert_str_eq(e.message, expected);
        ck_assert_uint_eq(e.line, 2);

        ck_assert_int_eq(egress_threats_load(tmp_path("missing"), &none, &e), -ENOENT);
        (void)snprintf(expected, sizeof(expected), "%s: No such file or directory", tmp_path("missing"));
        ck_assert_str_eq(e.message, expected);
        ck_assert_ptr_null(none);
}
END_TEST

/* ---- Host names ---- */

START_TEST(test_host_normalize)
{
        static const struct {
                const char *input, *expected;
        } valid[] = {
                { "example.com", "example.com" },
                { "Example.COM", "example.com" },
                { "example.com.", "example.com" },
                { "example.com:443", "example.com" },
                { "EXAMPLE.com.:8443", "example.com" },
                { " \texample.com \t", "example.com" },
                { "a_b-c.example", "a_b-c.example" },
                { "localhost", "localhost" },
                { "[2001:DB8::1]", "2001:db8::1" },
                { "[2001:db8:0:0:0:0:0:1]:443", "2001:db8::1" },
                { "2001:0DB8::0001", "2001:db8::1" },
                { "[::ffff:192.0.2.1]", "::ffff:192.0.2.1" },
                { "192.0.2.1", "192.0.2.1" },
                { "192.0.2.1:80", "192.0.2.1" },
                { "127.1", "127.0.0.1" },
                { "0x7f.1", "127.0.0.1" },
                { "0x7F000001", "127.0.0.1" },
                { "017700000001", "127.0.0.1" },
                { "2852039166", "169.254.169.254" },
                { "1.2.3.4.example", "1.2.3.4.example" },
                { "x", "x" },
        };
        static const char *const invalid[] = {
                "",
                " ",
                ".",
                "..",
                ".example.com",
                "example..com",
                "example.com..",
                "exa mple.com",
                "example.com/x",
                "user@example.com",
                "*.example.com",
                "example%2ecom",
                "example.com:",
                "example.com:0",
                "example.com:65536",
                "example.com:080",
                "example.com:+1",
                "example.com:443:443",
                "[::1",
                "[::1]x",
                "[::1]:",
                "[example.com]",
                "[1.2.3.4]",
                "fe80::1%eth0",
                "::1::2",
                "a\nb",
                "a\rb",
                "b\xc3\xbc\x63her.de",
                "a234567890123456789012345678901234567890123456789012345678901234.com",
        };
        char out[EGRESS_HOST_MAX];
        char longest[EGRESS_HOST_MAX + 1];

        for (size_t i = 0; i < ELEMENTSOF(valid); i++) {
                ck_assert_msg(egress_host_normalize(valid[i].input, out) == 0, "\"%s\" refused",
                              valid[i].input);
                ck_assert_str_eq(out, valid[i].expected);
        }
        for (size_t i = 0; i < ELEMENTSOF(invalid); i++)
                ck_assert_msg(egress_host_normalize(invalid[i], out) == -EINVAL, "\"%s\" accepted",
                              invalid[i]);
        ck_assert_int_eq(egress_host_normalize(NULL, out), -EINVAL);

        /* 253 bytes is the longest name; with a trailing dot it may be written in 254. */
        memset(longest, 'a', sizeof(longest));
        for (size_t i = 63; i < 253; i += 64)
                longest[i] = '.';
        longest[253] = '\0';
        ck_assert_int_eq(egress_host_normalize(longest, out), 0);
        ck_assert_str_eq(out, longest);
        longest[253] = '.';
        longest[254] = '\0';
        ck_assert_int_eq(egress_host_normalize(longest, out), 0);
        ck_assert_uint_eq(strlen(out), 253);
        longest[253] = 'a';
        ck_assert_int_eq(egress_host_normalize(longest, out), -EINVAL);
}
END_TEST

/* ---- Path globs ---- */

START_TEST(test_path_match)
{
        static const struct {
                const char *glob, *path;
                bool match;
        } cases[] = {
                { "/", "/", true },
                { "/", "/a", false },
                { "/", "//", false },
                { "/a", "/a", true },
                { "/a", "/A", false },
                { "/a", "/a/", false },
                { "/a/", "/a", false },
                { "/a/", "/a/", true },
                { "/*", "/", true },
                { "/*", "/abc", true },
                { "/*", "/a/b", false },
                { "/*/", "/a/", true },
                { "/a*", "/a", true },
                { "/a*", "/abc", true },
                { "/a*", "/ba", false },
                { "/*.json", "/x.json", true },
                { "/*.json", "/.json", true },
                { "/*.json", "/x.jsonx", false },
                { "/*.json", "/a/x.json", false },
                { "/a*b*c", "/aXbYc", true },
                { "/a*b*c", "/abc", true },
                { "/a*b*c", "/aXbY", false },
                { "/a*b*c", "/acb", false },
                { "/a/*/c", "/a/b/c", true },
                { "/a/*/c", "/a//c", true },
                { "/a/*/c", "/a/b/b/c", false },
                { "/**", "/", true },
                { "/**", "/a/b/c", true },
                { "/**", "/a/b/c/", true },
                { "/a/**", "/a", true },
                { "/a/**", "/a/", true },
                { "/a/**", "/a/b/c", true },
                { "/a/**", "/ab", false },
                { "/a/**", "/b/a", false },
                { "/**/x", "/x", true },
                { "/**/x", "/a/b/x", true },
                { "/**/x", "/a/b/x/", false },
                { "/**/x", "/a/bx", false },
                { "/**/git-upload-pack", "/o/r.git/git-upload-pack", true },
                { "/**/git-upload-pack", "/o/r.git/git-receive-pack", false },
                { "/a/**/b", "/a/b", true },
                { "/a/**/b", "/a/x/y/b", true },
                { "/a/**/b", "/a/x/y/c", false },
                { "/**/x/**", "/q/x/r/s", true },
                { "/**/x/**", "/q/y/r/s", false },
                { "/**/**/z", "/a/b/z", true },
                { "/**/a/**/b/*", "/a/b/c", true },
                { "/**/a/**/b/*", "/a/b", false },
                /* The query string is never matched; a '?' in a glob is a plain byte. */
                { "/x", "/x?y=1", true },
                { "/x", "/x?", true },
                { "/x/*", "/x/?y", true },
                { "/x", "/x/?y", false },
                { "/**", "/?a/b", true },
                { "/a", "/?a", false },
                /* Percent-encoding is compared as written. */
                { "/a%20b", "/a%20b", true },
                { "/a b", "/a%20b", false },
                { "/*", "/a%2Fb", true },
                /* Not absolute: never a match. */
                { "a", "a", false },
                { "/a", "a", false },
                { "", "/", false },
                { "/", "", false },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                ck_assert_msg(egress_path_match(cases[i].glob, cases[i].path) == cases[i].match,
                              "glob \"%s\", path \"%s\": expected %s", cases[i].glob, cases[i].path,
                              cases[i].match ? "a match" : "none");
        ck_assert(!egress_path_match(NULL, "/"));
        ck_assert(!egress_path_match("/", NULL));
}
END_TEST

START_TEST(test_path_match_is_fast)
{
        /* Globs that backtrack exponentially in a naive matcher; here each takes a few million steps. */
        size_t n = 4000;
        _cleanup_free_ char *path = malloc(2 * n + 3);
        _cleanup_free_ char *segment = malloc(n + 2);

        ck_assert_ptr_nonnull(path);
        ck_assert_ptr_nonnull(segment);
        for (size_t i = 0; i < n; i++)
                memcpy(path + 2 * i, "/a", 2);
        memcpy(path + 2 * n, "/b", 3);
        ck_assert(egress_path_match("/**/**/**/**/**/**/b", path));
        ck_assert(!egress_path_match("/**/**/**/**/**/**/c", path));
        segment[0] = '/';
        memset(segment + 1, 'a', n);
        segment[n + 1] = '\0';
        ck_assert(!egress_path_match("/*a*a*a*a*a*a*a*a*b", segment));
        ck_assert(egress_path_match("/*a*a*a*a*a*a*a*a*", segment));
}
END_TEST

/* ---- URLs ---- */

START_TEST(test_url_parse)
{
        static const struct {
                const char *url;
                bool https;
                unsigned port;
                const char *host, *path;
        } valid[] = {
                { "https://example.com", true, 443, "example.com", "/" },
                { "http://example.com", false, 80, "example.com", "/" },
                { "HTTPS://Example.COM./a/b", true, 443, "example.com", "/a/b" },
                { "http://example.com:8080/a/b?c=d#e", false, 8080, "example.com", "/a/b" },
                { "https://example.com?x=/y", true, 443, "example.com", "/" },
                { "https://example.com#frag", true, 443, "example.com", "/" },
                { "https://example.com/a%20b/", true, 443, "example.com", "/a%20b/" },
                { "https://[2001:DB8::1]:8443/x", true, 8443, "2001:db8::1", "/x" },
                { "http://127.1/", false, 80, "127.0.0.1", "/" },
                { "https://example.com/a/../b", true, 443, "example.com", "/a/../b" },
        };
        static const char *const invalid[] = {
                "",
                "example.com",
                "ftp://example.com/",
                "//example.com/",
                "http://",
                "http:///x",
                "http://user@example.com/",
                "http://user:pw@example.com/",
                "http://::1/",
                "http://[::1/",
                "http://example.com:0/",
                "http://example.com:99999/",
                "http://example.com:/",
                "http://exa mple.com/",
                "http://example.com/a b",
                "http://example.com/a\tb",
                "http://*.example.com/",
        };

        for (size_t i = 0; i < ELEMENTSOF(valid); i++) {
                _cleanup_(egress_url_done) EgressUrl u = {};
                AjError e = {};

                ck_assert_msg(egress_url_parse(valid[i].url, &u, &e) == 0, "%s: %s", valid[i].url,
                              e.message);
                ck_assert(u.https == valid[i].https);
                ck_assert_uint_eq(u.port, valid[i].port);
                ck_assert_str_eq(u.host, valid[i].host);
                ck_assert_str_eq(u.path, valid[i].path);
        }
        for (size_t i = 0; i < ELEMENTSOF(invalid); i++) {
                EgressUrl u = {};
                AjError e = {};

                ck_assert_msg(egress_url_parse(invalid[i], &u, &e) == -EINVAL, "\"%s\" accepted",
                              invalid[i]);
                ck_assert_ptr_null(u.path);
                ck_assert_msg(e.message[0] && !strchr(e.message, '\n'), "\"%s\": message \"%s\"", invalid[i],
                              e.message);
        }
}
END_TEST

/* ---- The decision ---- */

static const char decision_policy[] = "[[write]]\n"
                                      "name = \"git-fetch\"\n"
                                      "why = \"w\"\n"
                                      "hosts = [\"github.com\", \"gitlab.com\"]\n"
                                      "methods = [\"POST\"]\n"
                                      "paths = [\"/**/git-upload-pack\"]\n"
                                      "\n"
                                      "[[write]]\n"
                                      "name = \"upload\"\n"
                                      "why = \"w\"\n"
                                      "hosts = [\"upload.example.com\"]\n"
                                      "methods = [\"POST\", \"PUT\"]\n"
                                      "paths = [\"/upload/**\", \"/files/*.txt\"]\n"
                                      "\n"
                                      "[[write]]\n"
                                      "name = \"ws\"\n"
                                      "why = \"w\"\n"
                                      "hosts = [\"chat.example.com\"]\n"
                                      "methods = [\"WEBSOCKET\"]\n"
                                      "paths = [\"/socket/*\"]\n"
                                      "\n"
                                      "[[write]]\n"
                                      "name = \"api\"\n"
                                      "why = \"w\"\n"
                                      "hosts = [\"api.example.com\", \"[2001:db8::1]\", \"192.0.2.7\"]\n"
                                      "methods = [\"POST\", \"DELETE\"]\n"
                                      "paths = [\"/v1/\", \"/a/**/b/*\"]\n";

/* Sorted, as egress_threats_load() returns them. */
static const char *const decision_threat_hosts[] = { "198.51.100.66", "bad.example", "evil.com" };
static const EgressThreats decision_threats_list = { decision_threat_hosts,
                                                     ELEMENTSOF(decision_threat_hosts) };
static const EgressThreats *const decision_threats = &decision_threats_list;

typedef struct DecisionCase {
        EgressRequest request;
        EgressVerdict verdict;
        const char *reason; /* allow: the reason; deny: a substring of it */
} DecisionCase;

/* clang-format 14 and 19 lay out these macros differently: kept as written. */
/* clang-format off */
#define GET(h, p)          .method = "GET", .host = (h), .path = (p)
#define WRITE(m, h, p)     .method = (m), .host = (h), .path = (p), .has_body = true
#define ALLOW(reason, ...) { { __VA_ARGS__ }, EGRESS_ALLOW, reason }
#define DENY(reason, ...)  { { __VA_ARGS__ }, EGRESS_DENY, reason }
/* clang-format on */
#define NOT_ALLOWED "a write to an endpoint not in the write allowlist: "
#define ELSEWHERE                                                                                           \
        "a write to a path an origin may resolve elsewhere ('.' or '..' segment, '\\' or an encoded '/' "   \
        "or '\\'): "

static const DecisionCase decisions[] = {
        /* Reads go anywhere. */
        ALLOW("read", GET("example.com", "/")),
        ALLOW("read", .method = "HEAD", .host = "example.com", .path = "/x"),
        ALLOW("read", .method = "OPTIONS", .host = "example.com", .path = "*"),
        ALLOW("read", GET("example.com", NULL)),
        ALLOW("read", GET("example.com", "/x?token=1")),
        ALLOW("read", GET("anything.test", "/../../etc/passwd")),
        ALLOW("read", GET("203.0.113.5", "/")),
        ALLOW("read", GET("[2001:db8::5]", "/")),
        ALLOW("read", GET("1.0.0.1", "/")),
        ALLOW("read", GET("notlocalhost", "/")),
        /* Writes with a rule: the host exact, the method listed, the path matching. */
        ALLOW("git-fetch", WRITE("POST", "github.com", "/o/r.git/git-upload-pack")),
        ALLOW("git-fetch", WRITE("POST", "gitlab.com", "/g/s/r.git/git-upload-pack")),
        ALLOW("git-fetch", WRITE("POST", "github.com", "/git-upload-pack")),
        ALLOW("upload", WRITE("POST", "upload.example.com", "/upload/a")),
        ALLOW("upload", WRITE("PUT", "upload.example.com", "/upload/a/b/c")),
        ALLOW("upload", WRITE("POST", "upload.example.com", "/upload")),
        ALLOW("upload", WRITE("POST", "upload.example.com", "/upload/")),
        ALLOW("upload", WRITE("PUT", "upload.example.com", "/files/a.txt")),
        ALLOW("upload", WRITE("PUT", "upload.example.com", "/files/.txt")),
        ALLOW("api", WRITE("POST", "api.example.com", "/v1/")),
        ALLOW("api", WRITE("DELETE", "api.example.com", "/a/b/x")),
        ALLOW("api", WRITE("DELETE", "api.example.com", "/a/1/2/b/x")),
        ALLOW("api", WRITE("POST", "[2001:db8::1]", "/v1/")),
        ALLOW("api", WRITE("POST", "2001:0db8:0:0:0:0:0:1", "/v1/")),
        ALLOW("api", WRITE("POST", "192.0.2.7", "/v1/")),
        ALLOW("upload", .method = "POST", .host = "upload.example.com", .path = "/upload/a"),
        /* Writes without one. */
        DENY(NOT_ALLOWED "POST example.com/", WRITE("POST", "example.com", "/")),
        DENY(NOT_ALLOWED "POST github.com/o/r.git/git-receive-pack",
             WRITE("POST", "github.com", "/o/r.git/git-receive-pack")),
        DENY(NOT_ALLOWED "PUT github.com/o/r.git/git-upload-pack",
             WRITE("PUT", "github.com", "/o/r.git/git-upload-pack")),
        DENY(NOT_ALLOWED "POST www.github.com/",
             WRITE("POST", "www.github.com", "/o/r.git/git-upload-pack")),
        DENY(NOT_ALLOWED "POST upload.example.com/uploads", WRITE("POST", "upload.example.com", "/uploads")),
        DENY(NOT_ALLOWED "DELETE upload.example.com/upload/a",
             WRITE("DELETE", "upload.example.com", "/upload/a")),
        DENY(NOT_ALLOWED "PATCH", WRITE("PATCH", "upload.example.com", "/upload/a")),
        DENY(NOT_ALLOWED "post upload.example.com/upload/a",
             WRITE("post", "upload.example.com", "/upload/a")),
        DENY(NOT_ALLOWED "WEBSOCKET", WRITE("WEBSOCKET", "upload.example.com", "/upload/a")),
        /* Globs: '*' stays in its segment, a trailing slash counts. */
        DENY(NOT_ALLOWED "PUT upload.example.com/files/a/b.txt",
             WRITE("PUT", "upload.example.com", "/files/a/b.txt")),
        DENY(NOT_ALLOWED, WRITE("PUT", "upload.example.com", "/files/a.txt/")),
        DENY(NOT_ALLOWED, WRITE("PUT", "upload.example.com", "/files/a.txtx")),
        DENY(NOT_ALLOWED "POST api.example.com/v1", WRITE("POST", "api.example.com", "/v1")),
        DENY(NOT_ALLOWED, WRITE("POST", "api.example.com", "/v1/x")),
        DENY(NOT_ALLOWED, WRITE("DELETE", "api.example.com", "/a/b")),
        DENY(NOT_ALLOWED, WRITE("DELETE", "api.example.com", "/a/b/x/y")),
        DENY(NOT_ALLOWED, WRITE("POST", "github.com", "/o/r.git/git-upload-pack/")),
        DENY(NOT_ALLOWED, WRITE("POST", "github.com", "/o/r.git/git-upload-packs")),
        /* The query string: never matched, never shown. */
        ALLOW("upload", WRITE("POST", "upload.example.com", "/upload/a?x=/y")),
        DENY(NOT_ALLOWED "POST example.com/x", WRITE("POST", "example.com", "/x?/upload/a&token=secret")),
        DENY(NOT_ALLOWED "POST github.com/x", WRITE("POST", "github.com", "/x?/git-upload-pack")),
        /* Percent-encoding is compared as written; what an origin may resolve elsewhere is refused. */
        ALLOW("upload", WRITE("POST", "upload.example.com", "/upload/a%20b")),
        DENY(NOT_ALLOWED "POST github.com/o/r/git%2dupload-pack",
             WRITE("POST", "github.com", "/o/r/git%2dupload-pack")),
        DENY(ELSEWHERE "POST upload.example.com/upload/../admin",
             WRITE("POST", "upload.example.com", "/upload/../admin")),
        DENY(ELSEWHERE, WRITE("POST", "upload.example.com", "/upload/%2E%2E/admin")),
        DENY(ELSEWHERE, WRITE("POST", "upload.example.com", "/upload/.%2e/admin")),
        DENY(ELSEWHERE, WRITE("POST", "upload.example.com", "/upload/..;jsessionid=1/admin")),
        DENY(ELSEWHERE, WRITE("POST", "upload.example.com", "/upload/a%2Fb")),
        DENY(ELSEWHERE, WRITE("POST", "upload.example.com", "/upload/a%5cb")),
        DENY(ELSEWHERE, WRITE("POST", "upload.example.com", "/upload/a\\b")),
        DENY(ELSEWHERE, WRITE("POST", "upload.example.com", "/upload/./x")),
        DENY(ELSEWHERE, WRITE("POST", "upload.example.com", "/upload/..")),
        DENY(ELSEWHERE, WRITE("POST", "api.example.com", "/a/../b/x")),
        ALLOW("upload", WRITE("POST", "upload.example.com", "/upload/...")),
        ALLOW("upload", WRITE("POST", "upload.example.com", "/upload/.hidden")),
        ALLOW("upload", WRITE("POST", "upload.example.com", "/upload/a..b")),
        ALLOW("upload", WRITE("POST", "upload.example.com", "/upload/a?x=/../..")),
        DENY("malformed request: the path holds a space",
             WRITE("POST", "upload.example.com", "/upload/a b")),
        DENY("malformed request: the path holds", WRITE("POST", "upload.example.com", "/upload/\xc3\xa9")),
        DENY("malformed request: the path holds", WRITE("POST", "upload.example.com", "/upload/a#b")),
        DENY("malformed request: a POST to upload.example.com without a path",
             WRITE("POST", "upload.example.com", NULL)),
        DENY("malformed request: a POST to upload.example.com without a path",
             WRITE("POST", "upload.example.com", "upload/a")),
        DENY("without a path", WRITE("POST", "upload.example.com", "http://upload.example.com/upload/a")),
        /* A body or an upgrade makes a read a write. */
        DENY(NOT_ALLOWED "GET example.com/ (with a body)", WRITE("GET", "example.com", "/")),
        DENY(NOT_ALLOWED "HEAD example.com/ (with a body)", WRITE("HEAD", "example.com", "/")),
        DENY(NOT_ALLOWED "OPTIONS example.com/ (with a body)", WRITE("OPTIONS", "example.com", "/")),
        DENY(NOT_ALLOWED "GET upload.example.com/upload/a", WRITE("GET", "upload.example.com", "/upload/a")),
        ALLOW("ws", .method = "GET", .host = "chat.example.com", .path = "/socket/1", .upgrade = true),
        DENY(NOT_ALLOWED "WEBSOCKET chat.example.com/socket/1/2", .method = "GET",
             .host = "chat.example.com", .path = "/socket/1/2", .upgrade = true),
        DENY(NOT_ALLOWED "WEBSOCKET example.com/socket/1", .method = "GET", .host = "example.com",
             .path = "/socket/1", .upgrade = true),
        ALLOW("ws", .method = "POST", .host = "chat.example.com", .path = "/socket/1", .upgrade = true,
              .has_body = true),
        DENY(NOT_ALLOWED "WEBSOCKET upload.example.com/upload/a", .method = "POST",
             .host = "upload.example.com", .path = "/upload/a", .upgrade = true),
        /* Domain fronting: the Host header and the TLS server name must name the host connected to. */
        DENY("domain fronting: the Host header names other.com, but the connection is to example.com",
             .method = "GET", .host = "example.com", .host_header = "other.com", .path = "/"),
        DENY("domain fronting: the TLS server name names other.com, but the connection is to example.com",
             .method = "GET", .host = "example.com", .sni = "other.com", .path = "/"),
        DENY("domain fronting: the TLS server name names other.com", .method = "GET", .host = "example.com",
             .host_header = "example.com", .sni = "other.com", .path = "/"),
        DENY("domain fronting: the Host header names evil-front.com, but the connection is to github.com",
             .method = "POST", .host = "github.com", .host_header = "evil-front.com",
             .path = "/o/r/git-upload-pack", .has_body = true),
        DENY("malformed request: the Host header  is not a valid host name", .method = "GET",
             .host = "example.com", .host_header = "", .path = "/"),
        DENY("malformed request: the Host header a%20b is not a valid host name", .method = "GET",
             .host = "example.com", .host_header = "a b", .path = "/"),
        DENY("malformed request: the TLS server name example.com%0A is not a valid host name",
             .method = "GET", .host = "example.com", .sni = "example.com\n", .path = "/"),
        DENY("domain fronting: the Host header names [2001:db8::2], but the connection is to [2001:db8::1]",
             .method = "GET", .host = "[2001:db8::1]", .host_header = "[2001:db8::2]", .path = "/"),
        /* Normalization: case, a trailing dot, a port, IPv6 brackets and spellings. */
        ALLOW("read", .method = "GET", .host = "example.com", .host_header = "EXAMPLE.com.:8443",
              .sni = "Example.COM", .path = "/"),
        ALLOW("read", .method = "GET", .host = "example.com", .host_header = " example.com\t",
              .sni = "example.com.", .path = "/"),
        ALLOW("read", .method = "GET", .host = "[2001:db8::1]:443", .host_header = "[2001:DB8:0::1]",
              .path = "/"),
        ALLOW("git-fetch", WRITE("POST", "GitHub.com.:443", "/o/r/git-upload-pack")),
        ALLOW("api", WRITE("POST", "[2001:DB8::1]:8443", "/v1/")),
        ALLOW("upload", .method = "PUT", .host = "UPLOAD.example.com", .host_header = "upload.EXAMPLE.com.",
              .sni = "upload.example.com", .path = "/upload/x", .has_body = true),
        /* Inside a tunnel the URL names the tunnel's host and port, in any spelling of them. */
        ALLOW("upload", .method = "POST", .host = "upload.example.com", .port = 443,
              .sni = "upload.example.com", .url_host = "Upload.Example.COM.", .url_port = 443,
              .path = "/upload/x", .has_body = true),
        ALLOW("read", .method = "GET", .host = "[2001:db8::1]", .port = 443,
              .url_host = "[2001:DB8:0::1]:443", .path = "/"),
        DENY("domain fronting: the URL names other.example.com:443, but the tunnel is to "
             "upload.example.com:443",
             .method = "POST", .host = "upload.example.com", .port = 443, .sni = "upload.example.com",
             .url_host = "other.example.com", .url_port = 443, .path = "/upload/x", .has_body = true),
        DENY("domain fronting: the URL names upload.example.com:8443, but the tunnel is to "
             "upload.example.com:443",
             .method = "POST", .host = "upload.example.com", .port = 443, .url_host = "upload.example.com",
             .url_port = 8443, .path = "/upload/x", .has_body = true),
        DENY("domain fronting: the URL names [2001:db8::2]:443", .method = "GET",
             .host = "[2001:db8::1]:443", .url_host = "[2001:db8::2]", .url_port = 443, .path = "/"),
        DENY("domain fronting: the URL names example.com:80", .method = "GET", .host = "example.com:443",
             .url_host = "example.com:80", .path = "/"),
        DENY("malformed request: the URL's host a%20b is not a valid host name", .method = "GET",
             .host = "example.com", .port = 443, .url_host = "a b", .url_port = 443, .path = "/"),
        DENY("malformed request: the URL's port or the tunnel's is unknown", .method = "GET",
             .host = "example.com", .port = 443, .url_host = "example.com", .path = "/"),
        DENY("malformed request: the URL's port or the tunnel's is unknown", .method = "GET",
             .host = "example.com", .url_host = "example.com", .url_port = 443, .path = "/"),
        DENY("malformed request: the URL's port or the tunnel's is unknown", .method = "GET",
             .host = "example.com", .port = 443, .url_host = "example.com:443", .url_port = 80, .path = "/"),
        /* The Host header is checked first, then the server name, then the URL. */
        DENY("domain fronting: the Host header names other.com", .method = "GET", .host = "example.com",
             .port = 443, .host_header = "other.com", .url_host = "other.com", .url_port = 443, .path = "/"),
        DENY("malformed request: the host exa%20mple.com is not a valid host name",
             GET("exa mple.com", "/")),
        DENY("malformed request: the host (none) is not a valid host name", GET(NULL, "/")),
        DENY("malformed request: the host a..b is not a valid host name", GET("a..b", "/")),
        DENY("malformed request: the host", GET("example.com:0", "/")),
        DENY("malformed request: the host", GET("example.com:65536", "/")),
        DENY("malformed request: the host", GET("[::1", "/")),
        DENY("malformed request: the method (none) is not an HTTP token", .method = NULL,
             .host = "example.com", .path = "/"),
        DENY("malformed request: the method GE%20T is not an HTTP token", .method = "GE T",
             .host = "example.com", .path = "/"),
        DENY("malformed request: the method  is not an HTTP token", .method = "", .host = "example.com",
             .path = "/"),
        DENY("malformed request: the method GET%0D%0AX:%20y is not an HTTP token", .method = "GET\r\nX: y",
             .host = "example.com", .path = "/"),
        /* A '?' never reaches a reason, not even from a malformed method or host. */
        DENY("malformed request: the method GET%3Fx=1 is not an HTTP token", .method = "GET?x=1",
             .host = "example.com", .path = "/"),
        DENY("malformed request: the host example.com%3Fx=1 is not a valid host name",
             GET("example.com?x=1", "/")),
        /* The threat list: the host and every name under it, reads and tunnels too; not a string suffix. */
        DENY("a host on the threat list: evil.com", GET("evil.com", "/")),
        DENY("a host on the threat list: www.evil.com, under evil.com", GET("www.evil.com", "/")),
        DENY("a host on the threat list: a.b.c.evil.com, under evil.com", GET("a.b.c.evil.com", "/")),
        DENY("a host on the threat list: evil.com", GET("EVIL.COM.", "/")),
        DENY("a host on the threat list: evil.com", GET("evil.com:8080", "/")),
        ALLOW("read", GET("notevil.com", "/")),
        ALLOW("read", GET("evil.com.au", "/")),
        ALLOW("read", GET("evilcom", "/")),
        DENY("a host on the threat list: bad.example", WRITE("POST", "bad.example", "/")),
        DENY("a host on the threat list: evil.com", .method = "CONNECT", .host = "evil.com", .port = 443),
        DENY("a host on the threat list: 198.51.100.66", GET("198.51.100.66", "/")),
        DENY("a host on the threat list: 198.51.100.66", GET("0xc6336442", "/")),
        ALLOW("read", GET("1.198.51.100.66.example", "/")),
        /* Local destinations, in any spelling. */
        DENY("a local destination: localhost (loopback, private, link-local and metadata addresses and the "
             "proxy's own name are never reached through the proxy)",
             GET("localhost", "/")),
        /* The proxy's own name: squid answers it itself, its cache manager among it. */
        DENY("a local destination: egress-proxy", GET("egress-proxy:3128", "/squid-internal-mgr/info")),
        DENY("a local destination: egress-proxy", GET("Egress-Proxy.", "/")),
        DENY("a local destination: egress-proxy", .method = "CONNECT", .host = "egress-proxy", .port = 443),
        ALLOW("read", GET("egress-proxy.example", "/")),
        DENY("a local destination: localhost", GET("LocalHost.", "/")),
        DENY("a local destination: a.localhost", GET("a.localhost", "/")),
        DENY("a local destination: 127.0.0.1", GET("127.0.0.1", "/")),
        DENY("a local destination: 127.0.0.1", GET("127.1", "/")),
        DENY("a local destination: 127.0.0.1", GET("0x7f000001", "/")),
        DENY("a local destination: 127.255.255.254", GET("127.255.255.254:8080", "/")),
        DENY("a local destination: 169.254.169.254", GET("169.254.169.254", "/latest/meta-data/")),
        DENY("a local destination: 169.254.169.254", GET("2852039166", "/")),
        DENY("a local destination: 0.0.0.0", GET("0.0.0.0", "/")),
        DENY("a local destination: [::1]", GET("[::1]", "/")),
        DENY("a local destination: [::]", GET("[::]", "/")),
        DENY("a local destination: [fe80::1]", GET("[fe80::1]", "/")),
        /* The metadata service's IPv6 address, however written, and the rest of the unique local
         * addresses (fc00::/7). */
        DENY("a local destination: [fd00:ec2::254]", GET("[fd00:ec2::254]", "/latest/meta-data/")),
        DENY("a local destination: [fd00:ec2::254]", GET("[FD00:0EC2:0:0:0:0:0:0254]:80", "/")),
        DENY("a local destination: [fd00:ec2::254]", .method = "CONNECT", .host = "[fd00:ec2::254]:443"),
        DENY("a local destination: [fd00:ec2::253]", GET("[fd00:ec2::253]", "/")),
        DENY("a local destination: [fd00:ec3::254]", GET("[fd00:ec3::254]", "/")),
        DENY("a local destination: [fc00::1]", GET("[fc00::1]", "/")),
        DENY("a local destination: [fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]",
             GET("[fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]", "/")),
        ALLOW("read", GET("[fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]", "/")),
        ALLOW("read", GET("[fe00::1]", "/")),
        /* The private and other local IPv4 ranges (local-ranges.c's list), and their edges. */
        DENY("a local destination: 10.0.0.1", GET("10.0.0.1", "/")),
        DENY("a local destination: 10.255.255.255", GET("10.255.255.255", "/")),
        ALLOW("read", GET("11.0.0.0", "/")),
        ALLOW("read", GET("9.255.255.255", "/")),
        DENY("a local destination: 172.16.0.1", GET("172.16.0.1", "/")),
        DENY("a local destination: 172.31.255.255", GET("172.31.255.255", "/")),
        ALLOW("read", GET("172.32.0.0", "/")),
        DENY("a local destination: 192.168.1.1", GET("192.168.1.1", "/")),
        DENY("a local destination: 100.64.0.1", GET("100.64.0.1", "/")),
        DENY("a local destination: 100.127.255.255", GET("100.127.255.255", "/")),
        ALLOW("read", GET("100.128.0.0", "/")),
        DENY("a local destination: 168.63.129.16", GET("168.63.129.16", "/")),
        DENY("a local destination: 224.0.0.1", GET("224.0.0.1", "/")),
        DENY("a local destination: [ff02::1]", GET("[ff02::1]", "/")),
        DENY("a local destination: [fec0::1]", GET("[fec0::1]", "/")),
        DENY("a local destination: 10.1.2.3", .method = "CONNECT", .host = "10.1.2.3:443"),
        /* RFC 8215's local-use translation prefix, whole: a local NAT64 maps it to any IPv4 address. */
        DENY("a local destination: [64:ff9b:1::1]", GET("[64:ff9b:1::1]", "/")),
        DENY("a local destination: [64:ff9b:1::a9fe:a9fe]", GET("[64:ff9b:1::169.254.169.254]", "/")),
        DENY("a local destination: [64:ff9b:1:ffff:ffff:ffff:ffff:ffff]",
             GET("[64:ff9b:1:ffff:ffff:ffff:ffff:ffff]", "/")),
        ALLOW("read", GET("[64:ff9b:2::1]", "/")),
        ALLOW("read", GET("[64:ff9b:0:1::1]", "/")),
        DENY("a local destination: [::ffff:127.0.0.1]", GET("[::ffff:127.0.0.1]", "/")),
        DENY("a local destination: [::ffff:169.254.169.254]", GET("[::ffff:169.254.169.254]:80", "/")),
        /* IPv4-compatible and NAT64 forms of a local IPv4 address. */
        DENY("a local destination: [::127.0.0.1]", GET("[::127.0.0.1]", "/")),
        DENY("a local destination: [::169.254.169.254]", GET("[0:0::a9fe:a9fe]", "/")),
        DENY("a local destination: [64:ff9b::7f00:1]", GET("[64:ff9b::127.0.0.1]", "/")),
        DENY("a local destination: [64:ff9b::a9fe:a9fe]", GET("[64:FF9B::169.254.169.254]", "/")),
        DENY("a local destination: [64:ff9b::]", GET("[64:ff9b::]", "/")),
        DENY("a local destination: [64:ff9b::a00:1]", GET("[64:ff9b::10.0.0.1]", "/")),
        DENY("a local destination: [64:ff9b::c0a8:101]", GET("[64:ff9b::192.168.1.1]", "/")),
        DENY("a local destination: [64:ff9b::ac10:1]", GET("[64:ff9b::172.16.0.1]", "/")),
        DENY("a local destination: [::ffff:10.0.0.1]", GET("[::ffff:10.0.0.1]", "/")),
        ALLOW("read", GET("[64:ff9b::cb00:710a]", "/")),
        ALLOW("read", GET("[64:ff9c::7f00:1]", "/")),
        ALLOW("read", GET("[1::127.0.0.1]", "/")),
        /* A CONNECT inside a tunnel (it came with a TLS server name, or its target is a URL inside one):
         * refused before anything else, whatever its target. */
        DENY("a CONNECT inside a tunnel (to example.com): the proxy would relay its bytes to the origin "
             "unread",
             .method = "CONNECT", .host = "example.com", .port = 443, .sni = "example.com"),
        DENY("a CONNECT inside a tunnel (to example.com)", .method = "CONNECT", .host = "example.com:443",
             .url_host = "example.com", .url_port = 443),
        DENY("a CONNECT inside a tunnel (to 127.0.0.1)", .method = "CONNECT", .host = "127.0.0.1:443",
             .sni = "example.com"),
        /* The scheme: http and https alone; a CONNECT has none. */
        ALLOW("read", .method = "GET", .host = "example.com", .path = "/", .scheme = "http"),
        ALLOW("read", .method = "GET", .host = "example.com", .path = "/", .scheme = "https"),
        DENY("the scheme ftp: only http and https are proxied", .method = "GET", .host = "example.com",
             .path = "/", .scheme = "ftp"),
        DENY("the scheme whois: only http and https are proxied", .method = "GET", .host = "example.com",
             .path = "/", .scheme = "whois"),
        DENY("the scheme urn: ", .method = "GET", .host = "example.com", .path = "/", .scheme = "urn"),
        DENY("the scheme gopher: ", .method = "HEAD", .host = "example.com", .path = "/",
             .scheme = "gopher"),
        ALLOW("tunnel", .method = "CONNECT", .host = "example.com", .port = 443, .scheme = "authority_form"),
        /* A control byte encoded in the path, reads too; not in the query string. */
        DENY("a control character encoded in the path (%00-%1F or %7F): GET example.com/a%0d%0aDELE",
             GET("example.com", "/a%0d%0aDELE")),
        DENY("a control character encoded in the path", GET("example.com", "/%7f")),
        ALLOW("read", GET("example.com", "/a?q=%0a")),
        ALLOW("read", GET("example.com", "/%e9%7e%20")),
        /* Tunnels: to any host not refused above, port 443 only; each request inside is decided alone. */
        ALLOW("tunnel", .method = "CONNECT", .host = "example.com", .port = 443),
        ALLOW("tunnel", .method = "CONNECT", .host = "example.com:443"),
        ALLOW("tunnel", .method = "CONNECT", .host = "example.com:443", .port = 443,
              .host_header = "example.com:443"),
        ALLOW("tunnel", .method = "CONNECT", .host = "[2001:db8::1]:443"),
        ALLOW("tunnel", .method = "CONNECT", .host = "example.com", .port = 443, .has_body = true,
              .upgrade = true, .path = "/x"),
        DENY("a tunnel (CONNECT) to port 8443: tunnels go to port 443 only", .method = "CONNECT",
             .host = "example.com", .port = 8443),
        DENY("a tunnel (CONNECT) to port 22: tunnels go to port 443 only", .method = "CONNECT",
             .host = "example.com:22"),
        DENY("malformed request: a CONNECT without a port", .method = "CONNECT", .host = "example.com"),
        DENY("malformed request: a CONNECT to port 8443 and to port 443", .method = "CONNECT",
             .host = "example.com:443", .port = 8443),
        DENY("domain fronting: the Host header names evil-front.com, but the connection is to github.com",
             .method = "CONNECT", .host = "github.com", .port = 443, .host_header = "evil-front.com:443"),
        DENY("a local destination: 169.254.169.254", .method = "CONNECT", .host = "169.254.169.254",
             .port = 443),
        DENY("malformed request: a connect to example.com without a path", .method = "connect",
             .host = "example.com", .port = 443),
};

static EgressPolicy *decision_policy_parsed;

static void setup_decisions(void)
{
        decision_policy_parsed = parse_ok(decision_policy);
}

static void teardown_decisions(void)
{
        egress_policy_free(decision_policy_parsed);
        decision_policy_parsed = NULL;
}

START_TEST(test_decisions)
{
        const DecisionCase *t = &decisions[_i];
        EgressDecision d;
        char context[64];

        egress_decide(decision_policy_parsed, decision_threats, &t->request, &d);
        (void)snprintf(context, sizeof(context), "case %d", _i);
        ck_assert_msg(d.verdict == t->verdict, "case %d: %s %s, expected %s", _i,
                      egress_verdict_to_string(d.verdict), d.reason, egress_verdict_to_string(t->verdict));
        if (t->verdict == EGRESS_ALLOW)
                ck_assert_msg(strcmp(d.reason, t->reason) == 0, "case %d: reason \"%s\", expected \"%s\"",
                              _i, d.reason, t->reason);
        else
                ck_assert_msg(strstr(d.reason, t->reason), "case %d: reason \"%s\" lacks \"%s\"", _i,
                              d.reason, t->reason);
        if (t->verdict == EGRESS_ALLOW && strcmp(t->reason, "read") != 0 && strcmp(t->reason, "tunnel") != 0)
                ck_assert_ptr_nonnull(d.rule);
        else
                ck_assert_ptr_null(d.rule);
        assert_reason_sound(&d, context);
}
END_TEST

START_TEST(test_no_policy)
{
        EgressDecision d;

        egress_decide(NULL, NULL, &(EgressRequest){ .method = "GET", .host = "example.com", .path = "/" },
                      &d);
        ck_assert_int_eq(d.verdict, EGRESS_ALLOW);
        egress_decide(
                NULL, NULL,
                &(EgressRequest){ .method = "POST", .host = "upload.example.com", .path = "/upload/a" }, &d);
        ck_assert_int_eq(d.verdict, EGRESS_DENY);
        ck_assert_str_eq(d.reason, NOT_ALLOWED "POST upload.example.com/upload/a");
}
END_TEST

/* [egress] reads = "listed": a read, and a tunnel, only where a rule names the host; without it, the same
 * policy's read rules change nothing. */
START_TEST(test_reads_listed)
{
        static const char text[] = "[[write]]\n"
                                   "name = \"push\"\n"
                                   "why = \"w\"\n"
                                   "hosts = [\"upload.test\"]\n"
                                   "methods = [\"POST\"]\n"
                                   "paths = [\"/up\"]\n"
                                   "[[read]]\n"
                                   "name = \"registry\"\n"
                                   "why = \"packages\"\n"
                                   "hosts = [\"registry.test\", \"Mirror.Test.\"]\n";
        _cleanup_(egress_policy_freep) EgressPolicy *p = NULL;
        AjError e = {};
        EgressDecision d;

        ck_assert_msg(egress_policy_parse(text, strlen(text), &p, &e) == 0, "%s", e.message);
        ck_assert_uint_eq(p->n_rules, 2);
        ck_assert(!p->rules[0].read && p->rules[1].read);
        ck_assert_ptr_null(p->rules[1].methods);
        ck_assert_str_eq(p->rules[1].hosts[1], "mirror.test");
        ck_assert(!p->reads_listed);

        /* "any": reads go anywhere; the read rules are not consulted. */
        egress_decide(p, NULL, &(EgressRequest){ .method = "GET", .host = "elsewhere.test", .path = "/" },
                      &d);
        ck_assert_int_eq(d.verdict, EGRESS_ALLOW);
        ck_assert_str_eq(d.reason, "read");
        ck_assert_ptr_null(d.rule);

        p->reads_listed = true;
        egress_decide(p, NULL, &(EgressRequest){ .method = "GET", .host = "elsewhere.test", .path = "/" },
                      &d);
        ck_assert_int_eq(d.verdict, EGRESS_DENY);
        ck_assert_str_eq(
                d.reason,
                "a read of a host no [[read]] rule names: elsewhere.test ([egress] reads = listed)");
        egress_decide(p, NULL, &(EgressRequest){ .method = "HEAD", .host = "MIRROR.test", .path = "/x" },
                      &d);
        ck_assert_int_eq(d.verdict, EGRESS_ALLOW);
        ck_assert_str_eq(d.reason, "registry");
        ck_assert_ptr_eq(d.rule, &p->rules[1]);
        /* A write host is no read host; its tunnel is allowed, for the write. */
        egress_decide(p, NULL, &(EgressRequest){ .method = "GET", .host = "upload.test", .path = "/up" },
                      &d);
        ck_assert_int_eq(d.verdict, EGRESS_DENY);
        egress_decide(
                p, NULL,
                &(EgressRequest){ .method = "POST", .host = "upload.test", .path = "/up", .has_body = true },
                &d);
        ck_assert_int_eq(d.verdict, EGRESS_ALLOW);
        ck_assert_str_eq(d.reason, "push");
        egress_decide(p, NULL, &(EgressRequest){ .method = "CONNECT", .host = "upload.test:443" }, &d);
        ck_assert_int_eq(d.verdict, EGRESS_ALLOW);
        egress_decide(p, NULL, &(EgressRequest){ .method = "CONNECT", .host = "registry.test:443" }, &d);
        ck_assert_int_eq(d.verdict, EGRESS_ALLOW);
        ck_assert_str_eq(d.reason, "tunnel");
        egress_decide(p, NULL, &(EgressRequest){ .method = "CONNECT", .host = "elsewhere.test:443" }, &d);
        ck_assert_int_eq(d.verdict, EGRESS_DENY);
        ck_assert_str_eq(d.reason,
                         "a tunnel to a host no rule names: elsewhere.test ([egress] reads = listed)");
        /* The earlier refusals stand: a listed host on a port other than 443, a local one. */
        egress_decide(p, NULL, &(EgressRequest){ .method = "CONNECT", .host = "registry.test:22" }, &d);
        ck_assert_int_eq(d.verdict, EGRESS_DENY);
        ck_assert_ptr_nonnull(strstr(d.reason, "port 22"));
        /* A read with a body is a write, as before. */
        egress_decide(
                p, NULL,
                &(EgressRequest){ .method = "GET", .host = "registry.test", .path = "/", .has_body = true },
                &d);
        ck_assert_int_eq(d.verdict, EGRESS_DENY);
        ck_assert_ptr_nonnull(strstr(d.reason, "not in the write allowlist"));
        /* Through a client's eyes: the https tunnel, then the read inside it. */
        {
                EgressUrl url = {};

                ck_assert_int_eq(egress_url_parse("https://registry.test/pkg", &url, &e), 0);
                egress_decide_client(p, NULL, &(EgressClientRequest){ .method = "GET", .url = &url }, &d);
                ck_assert_int_eq(d.verdict, EGRESS_ALLOW);
                ck_assert_str_eq(d.reason, "registry");
                egress_url_done(&url);
                ck_assert_int_eq(egress_url_parse("https://elsewhere.test/exfil/TOKEN", &url, &e), 0);
                egress_decide_client(p, NULL, &(EgressClientRequest){ .method = "GET", .url = &url }, &d);
                ck_assert_int_eq(d.verdict, EGRESS_DENY);
                ck_assert_ptr_nonnull(strstr(d.reason, "a tunnel to a host no rule names"));
                egress_url_done(&url);
                ck_assert_int_eq(egress_url_parse("http://elsewhere.test/exfil/TOKEN", &url, &e), 0);
                egress_decide_client(p, NULL, &(EgressClientRequest){ .method = "GET", .url = &url }, &d);
                ck_assert_int_eq(d.verdict, EGRESS_DENY);
                ck_assert_ptr_nonnull(strstr(d.reason, "a read of a host no [[read]] rule names"));
                egress_url_done(&url);
        }
}
END_TEST

START_TEST(test_long_reasons)
{
        /* A reason never grows past its buffer, and shows where it was cut. */
        char path[2048], host[EGRESS_HOST_MAX];
        EgressDecision d;

        path[0] = '/';
        memset(path + 1, 'p', sizeof(path) - 2);
        path[sizeof(path) - 1] = '\0';
        memset(host, 'h', sizeof(host) - 1);
        for (size_t i = 63; i < sizeof(host) - 1; i += 64)
                host[i] = '.';
        host[sizeof(host) - 1] = '\0';
        egress_decide(decision_policy_parsed, NULL,
                      &(EgressRequest){ .method = "POST", .host = host, .path = path, .has_body = true },
                      &d);
        ck_assert_int_eq(d.verdict, EGRESS_DENY);
        ck_assert_uint_eq(strlen(d.reason), sizeof(d.reason) - 1);
        ck_assert_str_eq(d.reason + sizeof(d.reason) - 4, "...");
        assert_reason_sound(&d, "long");
}
END_TEST

START_TEST(test_client_requests)
{
        static const struct {
                const char *method, *url, *host_header, *sni;
                bool body, upgrade;
                EgressVerdict verdict;
                const char *reason;
        } cases[] = {
                /* An https URL is a tunnel first: its port decides before anything inside it. */
                { "GET", "https://example.com:8443/", NULL, NULL, false, false, EGRESS_DENY, "port 8443" },
                { "POST", "https://upload.example.com:8443/upload/a", NULL, NULL, true, false, EGRESS_DENY,
                  "port 8443" },
                { "GET", "http://example.com:8080/", NULL, NULL, false, false, EGRESS_ALLOW, "read" },
                { "CONNECT", "https://example.com", NULL, NULL, false, false, EGRESS_ALLOW, "tunnel" },
                { "CONNECT", "https://example.com:22", NULL, NULL, false, false, EGRESS_DENY, "port 22" },
                { "CONNECT", "https://example.com", "other.com", NULL, false, false, EGRESS_DENY,
                  "domain fronting: the Host header names other.com" },
                /* The server name defaults to the URL's host; an address has none. */
                { "GET", "https://example.com/", NULL, NULL, false, false, EGRESS_ALLOW, "read" },
                { "GET", "https://example.com/", NULL, "other.com", false, false, EGRESS_DENY,
                  "domain fronting: the TLS server name names other.com" },
                { "GET", "https://203.0.113.1/", NULL, NULL, false, false, EGRESS_ALLOW, "read" },
                { "GET", "http://example.com/", NULL, "other.com", false, false, EGRESS_ALLOW, "read" },
                { "GET", "https://example.com/", "other.com", NULL, false, false, EGRESS_DENY,
                  "domain fronting: the Host header names other.com" },
                { "POST", "https://github.com/o/r.git/git-upload-pack?x", NULL, NULL, true, false,
                  EGRESS_ALLOW, "git-fetch" },
                { "GET", "https://chat.example.com/socket/x", NULL, NULL, false, true, EGRESS_ALLOW, "ws" },
                { "GET", "https://evil.com/", NULL, NULL, false, false, EGRESS_DENY, "threat list" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_(egress_url_done) EgressUrl u = {};
                EgressDecision d;
                AjError e = {};

                ck_assert_int_eq(egress_url_parse(cases[i].url, &u, &e), 0);
                egress_decide_client(decision_policy_parsed, decision_threats,
                                     &(EgressClientRequest){ .method = cases[i].method,
                                                             .url = &u,
                                                             .host_header = cases[i].host_header,
                                                             .sni = cases[i].sni,
                                                             .has_body = cases[i].body,
                                                             .upgrade = cases[i].upgrade },
                                     &d);
                ck_assert_msg(d.verdict == cases[i].verdict && strstr(d.reason, cases[i].reason),
                              "%s %s: %s %s, expected %s ...%s...", cases[i].method, cases[i].url,
                              egress_verdict_to_string(d.verdict), d.reason,
                              egress_verdict_to_string(cases[i].verdict), cases[i].reason);
        }
}
END_TEST

/* ---- The shared corpus (tests/policy/cases.txt) ---- */

#define CORPUS_DIR SOURCE_ROOT "/tests/policy"

typedef struct CorpusCase {
        EgressVerdict verdict;
        const char *method, *url, *host_header, *sni, *authority, *rule;
        bool body, upgrade;
} CorpusCase;

static bool has_prefix(const char *s, const char *prefix, const char **ret_rest)
{
        size_t n = strlen(prefix);

        if (strncmp(s, prefix, n) != 0)
                return false;
        *ret_rest = s + n;
        return true;
}

/* Splits line (modified) into a case; false for a line the format does not allow. */
static bool corpus_line(char *line, CorpusCase *c)
{
        char *words[16], *save = NULL;
        size_t n = 0;

        for (char *w = strtok_r(line, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
                if (n >= ELEMENTSOF(words))
                        return false;
                words[n++] = w;
        }
        if (n < 3)
                return false;
        *c = (CorpusCase){ .method = words[1], .url = words[2] };
        if (strcmp(words[0], "allow") == 0)
                c->verdict = EGRESS_ALLOW;
        else if (strcmp(words[0], "deny") == 0)
                c->verdict = EGRESS_DENY;
        else
                return false;
        for (size_t i = 3; i < n; i++) {
                if (strcmp(words[i], "body") == 0 && !c->body)
                        c->body = true;
                else if (strcmp(words[i], "upgrade") == 0 && !c->upgrade)
                        c->upgrade = true;
                else if (!(has_prefix(words[i], "host=", &c->host_header) ||
                           has_prefix(words[i], "sni=", &c->sni) ||
                           has_prefix(words[i], "authority=", &c->authority) ||
                           has_prefix(words[i], "rule=", &c->rule)))
                        return false;
        }
        return !(c->rule && c->verdict != EGRESS_ALLOW);
}

START_TEST(test_corpus)
{
        _cleanup_(egress_policy_freep) EgressPolicy *policy = load_ok(CORPUS_DIR "/policy.toml");
        _cleanup_(egress_threats_freep) EgressThreats *threats = NULL;
        _cleanup_free_ char *data = NULL;
        unsigned line = 0, cases = 0, allowed = 0;
        AjError e = {};
        size_t size;

        ck_assert_msg(egress_threats_load(CORPUS_DIR "/threats.txt", &threats, &e) == 0, "%s", e.message);
        ck_assert_int_eq(read_regular_nofollow(AT_FDCWD, CORPUS_DIR "/cases.txt", 1024 * 1024, &data, &size),
                         0);

        /* Line by line, blank lines kept for the count: strtok_r would skip them. */
        for (char *p = data, *next; p && *p; p = next) {
                CorpusCase c;
                EgressDecision d;
                char context[64];

                next = strchr(p, '\n');
                if (next)
                        *next++ = '\0';
                line++;
                if (p[0] == '\0' || p[0] == '#')
                        continue;
                ck_assert_msg(corpus_line(p, &c), "cases.txt:%u: not VERDICT METHOD URL [FLAG...]", line);
                {
                        _cleanup_(egress_url_done) EgressUrl u = {};

                        ck_assert_msg(egress_url_parse(c.url, &u, &e) == 0, "cases.txt:%u: %s", line,
                                      e.message);
                        ck_assert_msg(!c.sni || u.https, "cases.txt:%u: sni= needs an https URL", line);
                        ck_assert_msg(!c.authority || u.https, "cases.txt:%u: authority= needs an https URL",
                                      line);
                        ck_assert_msg(!c.host_header || u.https,
                                      "cases.txt:%u: host= with http, which squid rewrites", line);
                        if (c.verdict == EGRESS_ALLOW) {
                                size_t n = strlen(u.host), m = strlen(".fake.test");
                                ck_assert_msg(
                                        n > m && strcmp(u.host + n - m, ".fake.test") == 0,
                                        "cases.txt:%u: an allow line must name a host of the fake internet",
                                        line);
                        }
                        egress_decide_client(policy, threats,
                                             &(EgressClientRequest){ .method = c.method,
                                                                     .url = &u,
                                                                     .authority = c.authority,
                                                                     .host_header = c.host_header,
                                                                     .sni = c.sni,
                                                                     .has_body = c.body,
                                                                     .upgrade = c.upgrade },
                                             &d);
                }
                (void)snprintf(context, sizeof(context), "cases.txt:%u", line);
                ck_assert_msg(d.verdict == c.verdict, "cases.txt:%u: %s %s", line,
                              egress_verdict_to_string(d.verdict), d.reason);
                if (c.rule)
                        ck_assert_msg(d.rule && strcmp(d.rule->name, c.rule) == 0,
                                      "cases.txt:%u: allowed by %s", line, d.reason);
                assert_reason_sound(&d, context);
                cases++;
                allowed += d.verdict == EGRESS_ALLOW;
        }
        ck_assert_uint_ge(cases, 60);
        ck_assert_uint_ge(allowed, 20);
        ck_assert_uint_ge(cases - allowed, 20);
}
END_TEST

static Suite *egress_policy_suite(void)
{
        Suite *s = suite_create("egress-policy");
        TCase *accepted = tcase_create("accepted");
        TCase *refused = tcase_create("refused");
        TCase *load = tcase_create("load");
        TCase *rules = tcase_create("rules");
        TCase *decided = tcase_create("decided");
        TCase *corpus = tcase_create("corpus");

        tcase_add_test(accepted, test_every_key);
        tcase_add_test(accepted, test_empty_policies);
        tcase_add_test(accepted, test_inline_tables);
        tcase_add_test(accepted, test_shipped_policy);
        suite_add_tcase(s, accepted);

        tcase_add_loop_test(refused, test_refusals, 0, (int)ELEMENTSOF(refusals));
        tcase_add_test(refused, test_too_large);
        suite_add_tcase(s, refused);

        tcase_add_checked_fixture(load, setup_tmpdir, teardown_tmpdir);
        tcase_add_test(load, test_load);
        tcase_add_test(load, test_threats_load);
        suite_add_tcase(s, load);

        tcase_add_test(rules, test_threats_parse);
        tcase_add_test(rules, test_threats_empty);
        tcase_add_test(rules, test_threats_many);
        tcase_add_test(rules, test_threats_by_hand);
        tcase_add_test(rules, test_threats_refused);
        tcase_add_test(rules, test_host_normalize);
        tcase_add_test(rules, test_path_match);
        tcase_add_test(rules, test_path_match_is_fast);
        tcase_add_test(rules, test_url_parse);
        suite_add_tcase(s, rules);

        tcase_add_checked_fixture(decided, setup_decisions, teardown_decisions);
        tcase_add_loop_test(decided, test_decisions, 0, (int)ELEMENTSOF(decisions));
        tcase_add_test(decided, test_no_policy);
        tcase_add_test(decided, test_reads_listed);
        tcase_add_test(decided, test_long_reasons);
        tcase_add_test(decided, test_client_requests);
        suite_add_tcase(s, decided);

        tcase_add_test(corpus, test_corpus);
        suite_add_tcase(s, corpus);
        return s;
}

int main(void)
{
        return check_run(egress_policy_suite());
}
