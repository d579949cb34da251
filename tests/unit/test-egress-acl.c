/* SPDX-License-Identifier: MIT */
/* The proxy's ACL helper, line by line: acl_line_parse() (every refusal), acl_request_build() (CONNECT,
 * bumped, plain, the connection tag) and acl_handle_line() (answers, connection tags, the log line). */
#include <check.h>

#include "check-run.h"
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl-line.h"
#include "macro.h"

static const char policy_text[] = "[[write]]\n"
                                  "name = \"git-fetch\"\n"
                                  "why = \"git fetch over smart HTTP\"\n"
                                  "hosts = [\"www.fake.test\"]\n"
                                  "methods = [\"POST\"]\n"
                                  "paths = [\"/**/git-upload-pack\"]\n";
static const char *const threat_hosts[] = { "evil.example" };
static const EgressThreats threats = { threat_hosts, ELEMENTSOF(threat_hosts) };
static EgressPolicy *policy;

static void setup(void)
{
        AjError e = { 0 };

        ck_assert_int_eq(egress_policy_parse(policy_text, strlen(policy_text), &policy, &e), 0);
}

static void teardown(void)
{
        egress_policy_free(policy);
        policy = NULL;
}

/* A writable copy of s; the parser works in place. */
static char buf[ACL_LINE_MAX + 1];
static char *copy(const char *s)
{
        ck_assert_uint_lt(strlen(s), sizeof(buf));
        strcpy(buf, s);
        return buf;
}

static int parse(const char *s, AclLine *l, AjError *e)
{
        return acl_line_parse(copy(s), strlen(s), l, e);
}

START_TEST(test_parse_fields)
{
        AclLine l;
        AjError e = { 0 };

        ck_assert_int_eq(parse("5 GET www.fake.test 443 /a%20b?q=1 www.fake.test:443 www.fake.test 7 - "
                               "websocket www.fake.test%3A443 -",
                               &l, &e),
                         0);
        ck_assert_str_eq(l.channel, "5");
        ck_assert_str_eq(l.f[ACL_METHOD], "GET");
        ck_assert_str_eq(l.f[ACL_HOST], "www.fake.test");
        ck_assert_str_eq(l.f[ACL_PORT], "443");
        /* The path as sent, its escapes kept; the other fields decoded. */
        ck_assert_str_eq(l.f[ACL_PATH], "/a%20b?q=1");
        ck_assert_str_eq(l.f[ACL_HOST_HEADER], "www.fake.test:443");
        ck_assert_str_eq(l.f[ACL_SNI], "www.fake.test");
        ck_assert_str_eq(l.f[ACL_CONTENT_LENGTH], "7");
        ck_assert_ptr_null(l.f[ACL_TRANSFER_ENCODING]);
        ck_assert_str_eq(l.f[ACL_UPGRADE], "websocket");
        ck_assert_str_eq(l.f[ACL_CONN_TAG], "www.fake.test:443");
        ck_assert_ptr_null(l.f[ACL_DATA]);
}
END_TEST

START_TEST(test_parse_refusals)
{
        static const struct {
                const char *line, *message;
                const char *channel;
        } cases[] = {
                { "", "channel ID", "" },
                { "GET a 80 / a - - - - - -", "channel ID", "" },
                { " 1 GET a 80 / a - - - - - -", "channel ID", "" },
                { "1x GET a 80 / a - - - - - -", "channel ID", "" },
                { "123456789012345678901 GET a 80 / a - - - - - -", "channel ID", "" },
                { "7", "0 fields, not 11", "7" },
                { "7 ", "field 1 is empty", "7" },
                { "7 GET a 80 / a - - - - -", "10 fields, not 11", "7" },
                { "7 GET a 80 / a - - - - - - x", "more than 11 fields", "7" },
                { "7 GET a 80 / a - - - - - - ", "more than 11 fields", "7" },
                { "7 GET  a 80 / a - - - - - -", "field 2 is empty", "7" },
                { "7 GET a%zz 80 / a - - - - - -", "field 2 has a bad %-escape", "7" },
                { "7 GET a% 80 / a - - - - - -", "field 2 has a bad %-escape", "7" },
                { "7 GET a%4 80 / a - - - - - -", "field 2 has a bad %-escape", "7" },
                { "7 GET a%00 80 / a - - - - - -", "field 2 has a bad %-escape", "7" },
                { "7 GET a 80 / a%zz - - - - - -", "field 5 has a bad %-escape", "7" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                AclLine l;
                AjError e = { 0 };

                ck_assert_msg(parse(cases[i].line, &l, &e) == -EINVAL, "accepted: %s", cases[i].line);
                ck_assert_msg(strstr(e.message, cases[i].message), "%s: %s", cases[i].line, e.message);
                ck_assert_str_eq(l.channel, cases[i].channel);
        }
}
END_TEST

START_TEST(test_parse_nul)
{
        static const char line[] = "7 GET a\0b 80 / a - - - - - -";
        AclLine l;
        AjError e = { 0 };

        memcpy(buf, line, sizeof(line));
        ck_assert_int_eq(acl_line_parse(buf, sizeof(line) - 1, &l, &e), -EINVAL);
        ck_assert_ptr_nonnull(strstr(e.message, "NUL"));
}
END_TEST

static int build(const char *s, EgressRequest *q, char host[static EGRESS_HOST_MAX], AjError *e)
{
        AclLine l;

        ck_assert_int_eq(parse(s, &l, e), 0);
        return acl_request_build(&l, q, host, e);
}

START_TEST(test_build_connect)
{
        char host[EGRESS_HOST_MAX];
        EgressRequest q;
        AjError e = { 0 };

        ck_assert_int_eq(build("1 CONNECT www.fake.test 443 - www.fake.test:443 - - - - - -", &q, host, &e),
                         0);
        ck_assert_str_eq(q.method, "CONNECT");
        ck_assert_str_eq(q.host, "www.fake.test");
        ck_assert_str_eq(q.host_header, "www.fake.test:443");
        ck_assert_uint_eq(q.port, 443);
        ck_assert_ptr_null(q.path);
        ck_assert_ptr_null(q.sni);
        ck_assert(!q.has_body && !q.upgrade);

        ck_assert_int_eq(build("1 CONNECT www.fake.test - - - - - - - - -", &q, host, &e), -EINVAL);
        ck_assert_int_eq(build("1 CONNECT www.fake.test 0443 - - - - - - - -", &q, host, &e), -EINVAL);
        ck_assert_int_eq(build("1 CONNECT www.fake.test 65536 - - - - - - - -", &q, host, &e), -EINVAL);
        ck_assert_int_eq(build("1 CONNECT - 443 - - - - - - - -", &q, host, &e), -EINVAL);
}
END_TEST

START_TEST(test_build_bumped)
{
        char host[EGRESS_HOST_MAX];
        EgressRequest q;
        AjError e = { 0 };

        /* The host connected to is the tag's, whatever the Host header and %>rd say. */
        ck_assert_int_eq(build("2 POST other.fake.test 443 /x other.fake.test www.fake.test 0 - - "
                               "www.fake.test:443 -",
                               &q, host, &e),
                         0);
        ck_assert_str_eq(q.host, "www.fake.test");
        ck_assert_str_eq(q.host_header, "other.fake.test");
        ck_assert_str_eq(q.sni, "www.fake.test");
        ck_assert_str_eq(q.path, "/x");
        ck_assert_uint_eq(q.port, 443);
        ck_assert(!q.has_body);
        /* The URL's host and port, for the decision to compare with the target's. */
        ck_assert_str_eq(q.url_host, "other.fake.test");
        ck_assert_uint_eq(q.url_port, 443);

        ck_assert_int_eq(build("2 POST a 443 /x a a 0,%200 - - [2001:db8::1]:8443 -", &q, host, &e), 0);
        ck_assert_str_eq(q.host, "[2001:db8::1]");
        ck_assert_uint_eq(q.port, 8443);
        ck_assert(q.has_body);
        ck_assert_int_eq(build("2 POST a 443 /x a a - chunked - a:443 -", &q, host, &e), 0);
        ck_assert(q.has_body);
        ck_assert_int_eq(build("2 GET a 443 /x a a - - websocket a:443 -", &q, host, &e), 0);
        ck_assert(q.upgrade && !q.has_body);

        /* A tag that is not HOST:PORT: a refused CONNECT's reason, or anything else. */
        ck_assert_int_eq(build("2 GET a 443 /x a a - - - a%20reason -", &q, host, &e), -EINVAL);
        ck_assert_int_eq(build("2 GET a 443 /x a a - - - a -", &q, host, &e), -EINVAL);
        ck_assert_int_eq(build("2 GET a 443 /x a a - - - :443 -", &q, host, &e), -EINVAL);
        ck_assert_int_eq(build("2 GET a 443 /x a a - - - a:0 -", &q, host, &e), -EINVAL);
        ck_assert_int_eq(build("2 GET a 443 /x a a - - - 2001:db8::1:443 -", &q, host, &e), -EINVAL);
        ck_assert_int_eq(build("2 GET a 443 /x a a - - - [2001:db8::1:443 -", &q, host, &e), -EINVAL);
        ck_assert_ptr_nonnull(strstr(e.message, "CONNECT target is unknown"));
        /* TLS without a tag cannot come from squid as configured. */
        ck_assert_int_eq(build("2 GET a 443 /x a a - - - - -", &q, host, &e), -EINVAL);
        ck_assert_ptr_nonnull(strstr(e.message, "TLS request without its CONNECT target"));
}
END_TEST

START_TEST(test_build_plain)
{
        char host[EGRESS_HOST_MAX];
        EgressRequest q;
        AjError e = { 0 };

        ck_assert_int_eq(build("3 GET www.fake.test 80 /p?q www.fake.test - - - - - -", &q, host, &e), 0);
        ck_assert_str_eq(q.host, "www.fake.test");
        ck_assert_ptr_null(q.sni);
        ck_assert_str_eq(q.path, "/p?q");
        ck_assert_uint_eq(q.port, 80);
        ck_assert_int_eq(build("3 - www.fake.test 80 / - - - - - - -", &q, host, &e), -EINVAL);
        ck_assert_int_eq(build("3 GET www.fake.test 80 - - - - - - - -", &q, host, &e), -EINVAL);
        ck_assert_int_eq(build("3 GET - 80 / - - - - - - -", &q, host, &e), -EINVAL);
}
END_TEST

/* acl_handle_line() on s; the log line parsed into *ret_log. */
static void handle(const char *s, bool truncated, AclOutcome *o, json_t **ret_log)
{
        ck_assert_int_eq(acl_handle_line(policy, &threats, copy(s), strlen(s), truncated, o), 0);
        *ret_log = json_loads(o->log, 0, NULL);
        ck_assert_ptr_nonnull(*ret_log);
        ck_assert_str_eq(o->log + strlen(o->log) - 1, "\n");
}

static const char *field(json_t *o, const char *key)
{
        json_t *v = json_object_get(o, key);

        ck_assert_msg(v, "no %s", key);
        return json_is_null(v) ? NULL : json_string_value(v);
}

START_TEST(test_handle_connect)
{
        AclOutcome o;
        json_t *log;

        handle("4 CONNECT WWW.Fake.Test. 443 - www.fake.test:443 - - - - - -", false, &o, &log);
        ck_assert_str_eq(o.answer, "4 OK clt_conn_tag=www.fake.test%3A443\n");
        ck_assert_str_eq(o.unlogged,
                         "4 ERR message=the%20egress%20log%20could%20not%20be%20written verdict_=deny "
                         "clt_conn_tag=the%20egress%20log%20could%20not%20be%20written\n");
        ck_assert_str_eq(field(log, "method"), "CONNECT");
        ck_assert_str_eq(field(log, "host"), "www.fake.test");
        ck_assert_ptr_null(field(log, "path"));
        ck_assert_str_eq(field(log, "decision"), "allow");
        ck_assert_str_eq(field(log, "reason"), "tunnel");
        json_decref(log);
        acl_outcome_done(&o);

        /* Refused: the reason goes to the connection tag too, where squid's reply inside the tunnel
         * finds it. */
        handle("5 CONNECT evil.example 443 - - - - - - - -", false, &o, &log);
        ck_assert_str_eq(
                o.answer,
                "5 ERR message=a%20host%20on%20the%20threat%20list%3A%20evil.example "
                "verdict_=deny clt_conn_tag=a%20host%20on%20the%20threat%20list%3A%20evil.example\n");
        ck_assert_str_eq(field(log, "decision"), "deny");
        json_decref(log);
        acl_outcome_done(&o);

        handle("6 CONNECT 2001:db8::1 443 - - - - - - - -", false, &o, &log);
        ck_assert_str_eq(o.answer, "6 OK clt_conn_tag=%5B2001%3Adb8%3A%3A1%5D%3A443\n");
        json_decref(log);
        acl_outcome_done(&o);
}
END_TEST

START_TEST(test_handle_requests)
{
        AclOutcome o;
        json_t *log;

        handle("7 POST www.fake.test 443 /r.git/git-upload-pack?x=secret www.fake.test www.fake.test 9 - - "
               "www.fake.test:443 -",
               false, &o, &log);
        ck_assert_str_eq(o.answer, "7 OK\n");
        ck_assert_str_eq(o.unlogged,
                         "7 ERR message=the%20egress%20log%20could%20not%20be%20written verdict_=deny\n");
        ck_assert_str_eq(field(log, "method"), "POST");
        ck_assert_str_eq(field(log, "path"), "/r.git/git-upload-pack");
        ck_assert_str_eq(field(log, "reason"), "git-fetch");
        ck_assert_ptr_null(strstr(o.log, "secret"));
        json_decref(log);
        acl_outcome_done(&o);

        handle("8 POST www.fake.test 443 /r.git/git-receive-pack www.fake.test www.fake.test 9 - - "
               "www.fake.test:443 -",
               false, &o, &log);
        ck_assert_msg(strncmp(o.answer, "8 ERR message=a%20write%20", 26) == 0, "%s", o.answer);
        ck_assert_ptr_null(strstr(o.answer, "clt_conn_tag"));
        ck_assert_str_eq(field(log, "decision"), "deny");
        json_decref(log);
        acl_outcome_done(&o);

        /* An absolute-form URL naming another host, without a Host header: refused for its URL, logged
         * with the host connected to (the tunnel's target), the URL's host in the reason. */
        handle("10 POST other.fake.test 443 /r.git/git-upload-pack - www.fake.test 9 - - www.fake.test:443 "
               "-",
               false, &o, &log);
        ck_assert_str_eq(o.answer,
                         "10 ERR message=domain%20fronting%3A%20the%20URL%20names%20other.fake.test"
                         "%3A443%2C%20but%20the%20tunnel%20is%20to%20www.fake.test%3A443 verdict_=deny\n");
        ck_assert_str_eq(field(log, "host"), "www.fake.test");
        ck_assert_str_eq(field(log, "decision"), "deny");
        ck_assert_str_eq(field(log, "reason"), "domain fronting: the URL names other.fake.test:443, but the "
                                               "tunnel is to www.fake.test:443");
        json_decref(log);
        acl_outcome_done(&o);
        /* Another port; and the same host in another spelling is the same. */
        handle("11 POST www.fake.test 8443 /r.git/git-upload-pack - www.fake.test 9 - - www.fake.test:443 -",
               false, &o, &log);
        ck_assert_str_eq(
                field(log, "reason"),
                "domain fronting: the URL names www.fake.test:8443, but the tunnel is to www.fake.test:443");
        json_decref(log);
        acl_outcome_done(&o);
        handle("12 POST WWW.Fake.Test. 443 /r.git/git-upload-pack - www.fake.test 9 - - www.fake.test:443 -",
               false, &o, &log);
        ck_assert_str_eq(o.answer, "12 OK\n");
        json_decref(log);
        acl_outcome_done(&o);

        /* The path is logged as sent, its escapes (squid's and the client's) kept. */
        handle("9 GET www.fake.test 443 /a%0D%0ab%C3%a9%zz www.fake.test www.fake.test - - - "
               "www.fake.test:443 -",
               false, &o, &log);
        ck_assert_str_eq(field(log, "path"), "/a%0D%0ab%C3%a9%zz");
        json_decref(log);
        acl_outcome_done(&o);
}
END_TEST

/* squid asks with an argument about what it refuses itself: the decision's refusal keeps its reason,
 * what it would allow is refused with squid's; either way logged. */
START_TEST(test_handle_squid_refusals)
{
        AclOutcome o;
        json_t *log;

        handle("1 GET loop.fake.test 40000 /secret loop.fake.test - - - - - local", false, &o, &log);
        ck_assert_str_eq(o.answer,
                         "1 ERR message=a%20local%20destination%3A%20loop.fake.test%20resolves%20to%20"
                         "an%20address%20of%20this%20machine%20or%20its%20networks%20%28loopback%2C%20"
                         "link-local%2C%20private%2C%20or%20one%20of%20its%20own%29 verdict_=deny\n");
        ck_assert_str_eq(field(log, "host"), "loop.fake.test");
        ck_assert_str_eq(field(log, "decision"), "deny");
        json_decref(log);
        acl_outcome_done(&o);

        /* A tunnel: the reason goes into the connection tag, where squid's 403 inside it finds it. */
        handle("2 CONNECT loop.fake.test 443 - loop.fake.test:443 - - - - - local", false, &o, &log);
        ck_assert_msg(
                strstr(o.answer, "2 ERR message=a%20local%20destination%3A%20loop.fake.test%20resolves"),
                "%s", o.answer);
        ck_assert_msg(strstr(o.answer, " clt_conn_tag=a%20local%20destination"), "%s", o.answer);
        json_decref(log);
        acl_outcome_done(&o);

        /* The decision refuses first: its own reason stands. */
        handle("3 GET 127.0.0.1 3128 /x 127.0.0.1 - - - - - local", false, &o, &log);
        ck_assert_msg(strstr(field(log, "reason"), "a local destination: 127.0.0.1 (loopback"), "%s",
                      field(log, "reason"));
        json_decref(log);
        acl_outcome_done(&o);
        handle("4 POST evil.example 80 /x evil.example - 1 - - - local", false, &o, &log);
        ck_assert_str_eq(field(log, "reason"), "a host on the threat list: evil.example");
        json_decref(log);
        acl_outcome_done(&o);

        handle("5 GET www.fake.test 80 /squid-internal-mgr/info www.fake.test - - - - - manager", false, &o,
               &log);
        ck_assert_str_eq(field(log, "decision"), "deny");
        ck_assert_str_eq(
                field(log, "reason"),
                "the proxy's cache manager (/squid-internal-mgr/) is not reached through the proxy");
        json_decref(log);
        acl_outcome_done(&o);
        handle("6 GET egress-proxy 3128 /squid-internal-mgr/info egress-proxy - - - - - manager", false, &o,
               &log);
        ck_assert_msg(strstr(field(log, "reason"), "a local destination: egress-proxy"), "%s",
                      field(log, "reason"));
        json_decref(log);
        acl_outcome_done(&o);

        /* Any other argument is not one squid.conf.in gives: refused as malformed. */
        handle("7 GET www.fake.test 80 /x www.fake.test - - - - - other", false, &o, &log);
        ck_assert_str_eq(field(log, "decision"), "deny");
        ck_assert_msg(strstr(field(log, "reason"), "malformed request line: the acl's argument"), "%s",
                      field(log, "reason"));
        json_decref(log);
        acl_outcome_done(&o);
}
END_TEST

START_TEST(test_handle_malformed)
{
        AclOutcome o;
        json_t *log;

        handle("garbage in", false, &o, &log);
        ck_assert_str_eq(o.answer,
                         "ERR message=malformed%20request%20line%3A%20the%20line%20does%20not%20start%20"
                         "with%20a%20channel%20ID verdict_=deny\n");
        ck_assert_ptr_null(field(log, "method"));
        ck_assert_str_eq(field(log, "decision"), "deny");
        json_decref(log);
        acl_outcome_done(&o);

        /* Whole, but the start of a line too long: refused all the same. */
        handle("10 GET www.fake.test 80 / www.fake.test - - - - - -", true, &o, &log);
        ck_assert_msg(strncmp(o.answer, "10 ERR ", 7) == 0, "%s", o.answer);
        ck_assert_ptr_nonnull(strstr(field(log, "reason"), "longer than"));
        ck_assert_str_eq(field(log, "host"), "www.fake.test");
        json_decref(log);
        acl_outcome_done(&o);

        handle("11 CONNECT www.fake.test 443", false, &o, &log);
        ck_assert_msg(strstr(o.answer, " clt_conn_tag=malformed"), "%s", o.answer);
        json_decref(log);
        acl_outcome_done(&o);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("egress-acl");
        TCase *tc = tcase_create("acl_line_parse");

        tcase_add_test(tc, test_parse_fields);
        tcase_add_test(tc, test_parse_refusals);
        tcase_add_test(tc, test_parse_nul);
        suite_add_tcase(s, tc);

        tc = tcase_create("acl_request_build");
        tcase_add_test(tc, test_build_connect);
        tcase_add_test(tc, test_build_bumped);
        tcase_add_test(tc, test_build_plain);
        suite_add_tcase(s, tc);

        tc = tcase_create("acl_handle_line");
        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, test_handle_connect);
        tcase_add_test(tc, test_handle_requests);
        tcase_add_test(tc, test_handle_malformed);
        tcase_add_test(tc, test_handle_squid_refusals);
        suite_add_tcase(s, tc);

        return check_run(s);
}
