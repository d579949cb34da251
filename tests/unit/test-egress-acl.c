/* SPDX-License-Identifier: MIT */
/* The proxy's ACL helper, line by line: acl_line_parse() (every refusal), acl_request_build() (CONNECT,
 * bumped, plain, the connection tag) and acl_handle_line() (answers, connection tags, the log line). */
#include <check.h>

#include "check-run.h"
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "acl-line.h"
#include "acl-log.h"
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
                               "websocket www.fake.test%3A443 https -",
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
        ck_assert_str_eq(l.f[ACL_SCHEME], "https");
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
                { "GET a 80 / a - - - - - http -", "channel ID", "" },
                { " 1 GET a 80 / a - - - - - http -", "channel ID", "" },
                { "1x GET a 80 / a - - - - - http -", "channel ID", "" },
                { "123456789012345678901 GET a 80 / a - - - - - http -", "channel ID", "" },
                { "7", "0 fields, not 12", "7" },
                { "7 ", "field 1 is empty", "7" },
                { "7 GET a 80 / a - - - - - http", "11 fields, not 12", "7" },
                { "7 GET a 80 / a - - - - - http - x", "more than 12 fields", "7" },
                { "7 GET a 80 / a - - - - - http - ", "more than 12 fields", "7" },
                { "7 GET  a 80 / a - - - - - http -", "field 2 is empty", "7" },
                { "7 GET a%zz 80 / a - - - - - http -", "field 2 has a bad %-escape", "7" },
                { "7 GET a% 80 / a - - - - - http -", "field 2 has a bad %-escape", "7" },
                { "7 GET a%4 80 / a - - - - - http -", "field 2 has a bad %-escape", "7" },
                { "7 GET a%00 80 / a - - - - - http -", "field 2 has a bad %-escape", "7" },
                { "7 GET a 80 / a%zz - - - - - http -", "field 5 has a bad %-escape", "7" },
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
        static const char line[] = "7 GET a\0b 80 / a - - - - - http -";
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

        ck_assert_int_eq(build("1 CONNECT www.fake.test 443 - www.fake.test:443 - - - - - authority_form -",
                               &q, host, &e),
                         0);
        ck_assert_str_eq(q.method, "CONNECT");
        ck_assert_str_eq(q.host, "www.fake.test");
        ck_assert_str_eq(q.host_header, "www.fake.test:443");
        ck_assert_uint_eq(q.port, 443);
        ck_assert_ptr_null(q.path);
        ck_assert_ptr_null(q.sni);
        ck_assert(!q.has_body && !q.upgrade);

        ck_assert_int_eq(build("1 CONNECT www.fake.test - - - - - - - - authority_form -", &q, host, &e),
                         -EINVAL);
        ck_assert_int_eq(build("1 CONNECT www.fake.test 0443 - - - - - - - authority_form -", &q, host, &e),
                         -EINVAL);
        ck_assert_int_eq(build("1 CONNECT www.fake.test 65536 - - - - - - - authority_form -", &q, host, &e),
                         -EINVAL);
        ck_assert_int_eq(build("1 CONNECT - 443 - - - - - - - authority_form -", &q, host, &e), -EINVAL);
}
END_TEST

START_TEST(test_build_bumped)
{
        char host[EGRESS_HOST_MAX];
        EgressRequest q;
        AjError e = { 0 };

        /* The host connected to is the tag's, whatever the Host header and %>rd say. */
        ck_assert_int_eq(build("2 POST other.fake.test 443 /x other.fake.test www.fake.test 0 - - "
                               "www.fake.test:443 https -",
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

        ck_assert_int_eq(build("2 POST a 443 /x a a 0,%200 - - [2001:db8::1]:8443 https -", &q, host, &e),
                         0);
        ck_assert_str_eq(q.host, "[2001:db8::1]");
        ck_assert_uint_eq(q.port, 8443);
        ck_assert(q.has_body);
        ck_assert_int_eq(build("2 POST a 443 /x a a - chunked - a:443 https -", &q, host, &e), 0);
        ck_assert(q.has_body);
        ck_assert_int_eq(build("2 GET a 443 /x a a - - websocket a:443 https -", &q, host, &e), 0);
        ck_assert(q.upgrade && !q.has_body);

        /* A tag that is not HOST:PORT: a refused CONNECT's reason, or anything else. */
        ck_assert_int_eq(build("2 GET a 443 /x a a - - - a%20reason https -", &q, host, &e), -EINVAL);
        ck_assert_int_eq(build("2 GET a 443 /x a a - - - a https -", &q, host, &e), -EINVAL);
        ck_assert_int_eq(build("2 GET a 443 /x a a - - - :443 https -", &q, host, &e), -EINVAL);
        ck_assert_int_eq(build("2 GET a 443 /x a a - - - a:0 https -", &q, host, &e), -EINVAL);
        ck_assert_int_eq(build("2 GET a 443 /x a a - - - 2001:db8::1:443 https -", &q, host, &e), -EINVAL);
        ck_assert_int_eq(build("2 GET a 443 /x a a - - - [2001:db8::1:443 https -", &q, host, &e), -EINVAL);
        ck_assert_ptr_nonnull(strstr(e.message, "CONNECT target is unknown"));
        /* TLS without a tag cannot come from squid as configured. */
        ck_assert_int_eq(build("2 GET a 443 /x a a - - - - https -", &q, host, &e), -EINVAL);
        ck_assert_ptr_nonnull(strstr(e.message, "TLS request without its CONNECT target"));
}
END_TEST

START_TEST(test_build_plain)
{
        char host[EGRESS_HOST_MAX];
        EgressRequest q;
        AjError e = { 0 };

        ck_assert_int_eq(build("3 GET www.fake.test 80 /p?q www.fake.test - - - - - http -", &q, host, &e),
                         0);
        ck_assert_str_eq(q.host, "www.fake.test");
        ck_assert_ptr_null(q.sni);
        ck_assert_str_eq(q.path, "/p?q");
        ck_assert_uint_eq(q.port, 80);
        ck_assert_int_eq(build("3 - www.fake.test 80 / - - - - - - http -", &q, host, &e), -EINVAL);
        ck_assert_int_eq(build("3 GET www.fake.test 80 - - - - - - - http -", &q, host, &e), -EINVAL);
        ck_assert_int_eq(build("3 GET - 80 / - - - - - - http -", &q, host, &e), -EINVAL);
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

        handle("4 CONNECT WWW.Fake.Test. 443 - www.fake.test:443 - - - - - authority_form -", false, &o,
               &log);
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
        handle("5 CONNECT evil.example 443 - - - - - - - authority_form -", false, &o, &log);
        ck_assert_str_eq(
                o.answer,
                "5 ERR message=a%20host%20on%20the%20threat%20list%3A%20evil.example "
                "verdict_=deny clt_conn_tag=a%20host%20on%20the%20threat%20list%3A%20evil.example\n");
        ck_assert_str_eq(field(log, "decision"), "deny");
        json_decref(log);
        acl_outcome_done(&o);

        handle("6 CONNECT 2001:db8::1 443 - - - - - - - authority_form -", false, &o, &log);
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
               "www.fake.test:443 https -",
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
               "www.fake.test:443 https -",
               false, &o, &log);
        ck_assert_msg(strncmp(o.answer, "8 ERR message=a%20write%20", 26) == 0, "%s", o.answer);
        ck_assert_ptr_null(strstr(o.answer, "clt_conn_tag"));
        ck_assert_str_eq(field(log, "decision"), "deny");
        json_decref(log);
        acl_outcome_done(&o);

        /* An absolute-form URL naming another host, without a Host header: refused for its URL, logged
         * with the host connected to (the tunnel's target), the URL's host in the reason. */
        handle("10 POST other.fake.test 443 /r.git/git-upload-pack - www.fake.test 9 - - www.fake.test:443 "
               "https -",
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
        handle("11 POST www.fake.test 8443 /r.git/git-upload-pack - www.fake.test 9 - - www.fake.test:443 "
               "https -",
               false, &o, &log);
        ck_assert_str_eq(
                field(log, "reason"),
                "domain fronting: the URL names www.fake.test:8443, but the tunnel is to www.fake.test:443");
        json_decref(log);
        acl_outcome_done(&o);
        handle("12 POST WWW.Fake.Test. 443 /r.git/git-upload-pack - www.fake.test 9 - - www.fake.test:443 "
               "https -",
               false, &o, &log);
        ck_assert_str_eq(o.answer, "12 OK\n");
        json_decref(log);
        acl_outcome_done(&o);

        /* The path is logged as sent, its escapes (squid's and the client's) kept. */
        handle("9 GET www.fake.test 443 /a%0D%0ab%C3%a9%zz www.fake.test www.fake.test - - - "
               "www.fake.test:443 https -",
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

        handle("1 GET loop.fake.test 40000 /secret loop.fake.test - - - - - http local", false, &o, &log);
        ck_assert_str_eq(o.answer,
                         "1 ERR message=a%20local%20destination%3A%20loop.fake.test%20resolves%20to%20"
                         "an%20address%20of%20this%20machine%20or%20its%20networks%20%28loopback%2C%20"
                         "link-local%2C%20private%2C%20or%20one%20of%20its%20own%29 verdict_=deny\n");
        ck_assert_str_eq(field(log, "host"), "loop.fake.test");
        ck_assert_str_eq(field(log, "decision"), "deny");
        json_decref(log);
        acl_outcome_done(&o);

        /* A tunnel: the reason goes into the connection tag, where squid's 403 inside it finds it. */
        handle("2 CONNECT loop.fake.test 443 - loop.fake.test:443 - - - - - authority_form local", false, &o,
               &log);
        ck_assert_msg(
                strstr(o.answer, "2 ERR message=a%20local%20destination%3A%20loop.fake.test%20resolves"),
                "%s", o.answer);
        ck_assert_msg(strstr(o.answer, " clt_conn_tag=a%20local%20destination"), "%s", o.answer);
        json_decref(log);
        acl_outcome_done(&o);

        /* The decision refuses first: its own reason stands. */
        handle("3 GET 127.0.0.1 3128 /x 127.0.0.1 - - - - - http local", false, &o, &log);
        ck_assert_msg(strstr(field(log, "reason"), "a local destination: 127.0.0.1 (loopback"), "%s",
                      field(log, "reason"));
        json_decref(log);
        acl_outcome_done(&o);
        handle("4 POST evil.example 80 /x evil.example - 1 - - - http local", false, &o, &log);
        ck_assert_str_eq(field(log, "reason"), "a host on the threat list: evil.example");
        json_decref(log);
        acl_outcome_done(&o);

        handle("5 GET www.fake.test 80 /squid-internal-mgr/info www.fake.test - - - - - http manager", false,
               &o, &log);
        ck_assert_str_eq(field(log, "decision"), "deny");
        ck_assert_str_eq(
                field(log, "reason"),
                "the proxy's cache manager (/squid-internal-mgr/) is not reached through the proxy");
        json_decref(log);
        acl_outcome_done(&o);
        handle("6 GET egress-proxy 3128 /squid-internal-mgr/info egress-proxy - - - - - http manager", false,
               &o, &log);
        ck_assert_msg(strstr(field(log, "reason"), "a local destination: egress-proxy"), "%s",
                      field(log, "reason"));
        json_decref(log);
        acl_outcome_done(&o);

        /* Any other argument is not one squid.conf.in gives: refused as malformed. */
        handle("7 GET www.fake.test 80 /x www.fake.test - - - - - http other", false, &o, &log);
        ck_assert_str_eq(field(log, "decision"), "deny");
        ck_assert_msg(strstr(field(log, "reason"), "malformed request line: the acl's argument"), "%s",
                      field(log, "reason"));
        json_decref(log);
        acl_outcome_done(&o);
}
END_TEST

/* A CONNECT on a bumped connection: it carries the connection's tag, or the TLS server name it came in
 * with. Decided as a fresh tunnel, squid would relay everything after it to the origin unread. */
START_TEST(test_handle_inner_connect)
{
        static const char *const lines[] = {
                "1 CONNECT www.fake.test 443 - www.fake.test:443 www.fake.test - - - www.fake.test:443 "
                "authority_form -",
                "2 CONNECT www.fake.test 443 - www.fake.test:443 - - - - www.fake.test:443 authority_form -",
                "3 CONNECT www.fake.test 443 - www.fake.test:443 www.fake.test - - - - authority_form -",
                "4 CONNECT other.fake.test 443 - - www.fake.test - - - www.fake.test:443 authority_form -",
                "5 CONNECT www.fake.test 443 - www.fake.test:443 www.fake.test - - - www.fake.test:443 "
                "authority_form inner",
        };
        AclOutcome o;
        json_t *log;

        for (size_t i = 0; i < ELEMENTSOF(lines); i++) {
                handle(lines[i], false, &o, &log);
                ck_assert_msg(strstr(o.answer, " ERR message=a%20CONNECT%20inside%20a%20tunnel"), "%s: %s",
                              lines[i], o.answer);
                ck_assert_str_eq(field(log, "method"), "CONNECT");
                ck_assert_str_eq(field(log, "decision"), "deny");
                ck_assert_msg(strncmp(field(log, "reason"), "a CONNECT inside a tunnel (to ", 30) == 0, "%s",
                              field(log, "reason"));
                json_decref(log);
                acl_outcome_done(&o);
        }
        /* Control: the same CONNECT on a connection of its own is a tunnel. */
        handle("6 CONNECT www.fake.test 443 - www.fake.test:443 - - - - - authority_form -", false, &o,
               &log);
        ck_assert_str_eq(o.answer, "6 OK clt_conn_tag=www.fake.test%3A443\n");
        json_decref(log);
        acl_outcome_done(&o);
        /* squid's own rule refuses what the decision would allow, with the same reason. */
        handle("7 CONNECT www.fake.test 443 - www.fake.test:443 - - - - - authority_form inner", false, &o,
               &log);
        ck_assert_str_eq(field(log, "reason"),
                         "a CONNECT inside a tunnel (to www.fake.test): the proxy would relay its bytes to "
                         "the origin unread");
        json_decref(log);
        acl_outcome_done(&o);
}
END_TEST

/* squid's rule for the key broker's placeholder: a read the policy allows is refused with its reason; a
 * request the policy refuses keeps the policy's. */
START_TEST(test_handle_placeholder)
{
        AclOutcome o;
        json_t *log;

        handle("1 GET www.fake.test 443 /x www.fake.test www.fake.test - - - www.fake.test:443 https "
               "placeholder",
               false, &o, &log);
        ck_assert_str_eq(field(log, "decision"), "deny");
        ck_assert_str_eq(field(log, "reason"), "the key broker's placeholder, to www.fake.test: it is worth "
                                               "nothing but to the broker, which never sends it on");
        ck_assert_msg(strncmp(o.answer, "1 ERR message=the%20key%20broker", 32) == 0, "%s", o.answer);
        json_decref(log);
        acl_outcome_done(&o);
        handle("2 GET 127.0.0.1 80 /x 127.0.0.1 - - - - - http placeholder", false, &o, &log);
        ck_assert_str_eq(field(log, "decision"), "deny");
        ck_assert_msg(!strstr(field(log, "reason"), "placeholder"), "%s", field(log, "reason"));
        json_decref(log);
        acl_outcome_done(&o);
}
END_TEST

/* Every scheme squid 5.7 and 6.13 know (anyp/ProtocolType.h), as %>rs names it: http and https alone are
 * proxied; the others turn the URL into commands of another protocol (ftp's DELE, whois's line). */
START_TEST(test_handle_schemes)
{
        static const char *const refused[] = {
                "ftp",   "gopher",         "wais",    "cache_object", "icp",   "htcp",
                "urn",   "whois",          "icy",     "tls",          "ssl",   "coap",
                "coaps", "authority_form", "unknown", "HTTP",         "httpx", "file"
        };
        AclOutcome o;
        json_t *log;
        char line[256], reason[128];

        for (size_t i = 0; i < ELEMENTSOF(refused); i++) {
                (void)snprintf(line, sizeof(line), "1 GET www.fake.test 21 /x www.fake.test - - - - - %s -",
                               refused[i]);
                handle(line, false, &o, &log);
                (void)snprintf(reason, sizeof(reason), "the scheme %s: only http and https are proxied",
                               refused[i]);
                ck_assert_msg(strncmp(field(log, "reason"), reason, strlen(reason)) == 0, "%s: %s", line,
                              field(log, "reason"));
                ck_assert_str_eq(field(log, "decision"), "deny");
                ck_assert_msg(strncmp(o.answer, "1 ERR message=the%20scheme%20", 29) == 0, "%s", o.answer);
                json_decref(log);
                acl_outcome_done(&o);
        }
        handle("2 GET www.fake.test 80 /x www.fake.test - - - - - http -", false, &o, &log);
        ck_assert_str_eq(o.answer, "2 OK\n");
        json_decref(log);
        acl_outcome_done(&o);
        handle("3 GET www.fake.test 443 /x www.fake.test www.fake.test - - - www.fake.test:443 https -",
               false, &o, &log);
        ck_assert_str_eq(o.answer, "3 OK\n");
        json_decref(log);
        acl_outcome_done(&o);
        /* No scheme: refused. */
        handle("4 GET www.fake.test 80 /x www.fake.test - - - - - - -", false, &o, &log);
        ck_assert_msg(strstr(field(log, "reason"), "malformed request line: a request without a scheme"),
                      "%s", field(log, "reason"));
        json_decref(log);
        acl_outcome_done(&o);
        /* squid's own rule: the same reason; an FTP path's CR LF never reaches a decision to allow. */
        handle("5 GET ftp.fake.test 21 /%0d%0aDELE%20x ftp.fake.test - - - - - ftp scheme", false, &o, &log);
        ck_assert_msg(strncmp(field(log, "reason"), "the scheme ftp: only http and https are proxied", 47) ==
                              0,
                      "%s", field(log, "reason"));
        json_decref(log);
        acl_outcome_done(&o);
        /* urn: names no host: the scheme is refused for itself all the same. */
        handle("7 GET - - x-ajt:e2e - - - - - - urn -", false, &o, &log);
        ck_assert_msg(strncmp(field(log, "reason"), "the scheme urn: ", 16) == 0, "%s",
                      field(log, "reason"));
        ck_assert_ptr_null(field(log, "host"));
        json_decref(log);
        acl_outcome_done(&o);
        handle("6 GET www.fake.test 80 /x www.fake.test - - - - - whois scheme", false, &o, &log);
        ck_assert_msg(strncmp(field(log, "reason"), "the scheme whois: ", 18) == 0, "%s",
                      field(log, "reason"));
        json_decref(log);
        acl_outcome_done(&o);
}
END_TEST

/* A control byte encoded in the path (not in the query string): refused, reads too. */
START_TEST(test_handle_encoded_controls)
{
        static const struct {
                const char *path;
                bool allow;
        } cases[] = {
                { "/a%0d%0aDELE%20x", false },
                { "/a%0A", false },
                { "/%00", false },
                { "/a%1f", false },
                { "/a%7F", false },
                { "/a%7e", true },
                { "/a%20b", true },
                { "/a%2", true },
                { "/a?q=%0d%0a", true },
                { "/a%C3%A9", true },
                { "/a%", true },
        };
        AclOutcome o;
        json_t *log;
        char line[256];

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                (void)snprintf(line, sizeof(line),
                               "1 GET www.fake.test 80 %s www.fake.test - - - - - http -", cases[i].path);
                handle(line, false, &o, &log);
                ck_assert_msg(strcmp(field(log, "decision"), cases[i].allow ? "allow" : "deny") == 0,
                              "%s: %s", cases[i].path, field(log, "reason"));
                if (!cases[i].allow)
                        ck_assert_msg(strncmp(field(log, "reason"),
                                              "a control character encoded in the path", 39) == 0,
                                      "%s", field(log, "reason"));
                json_decref(log);
                acl_outcome_done(&o);
        }
}
END_TEST

/* The policy's answer before squid resolves the name: a refusal logged, an allowed request not (the plain
 * line, asked last, logs it), so each request has one line. */
START_TEST(test_handle_policy_first)
{
        AclOutcome o;
        json_t *log;

        ck_assert_int_eq(
                acl_handle_line(policy, &threats,
                                copy("1 GET www.fake.test 80 /x www.fake.test - - - - - http policy"), 61,
                                false, &o),
                0);
        ck_assert_str_eq(o.answer, "1 OK\n");
        ck_assert_str_eq(o.log, "");
        acl_outcome_done(&o);
        ck_assert_int_eq(acl_handle_line(policy, &threats,
                                         copy("2 CONNECT www.fake.test 443 - - - - - - - authority_form "
                                              "policy"),
                                         63, false, &o),
                         0);
        /* No tag: the plain line, asked after it, would see the CONNECT on a tagged connection. */
        ck_assert_str_eq(o.answer, "2 OK\n");
        ck_assert_str_eq(o.log, "");
        acl_outcome_done(&o);

        handle("3 POST www.fake.test 80 /x www.fake.test - 1 - - - http policy", false, &o, &log);
        ck_assert_msg(strncmp(o.answer, "3 ERR message=a%20write", 23) == 0, "%s", o.answer);
        ck_assert_str_eq(field(log, "decision"), "deny");
        json_decref(log);
        acl_outcome_done(&o);
        handle("4 CONNECT evil.example 443 - - - - - - - authority_form policy", false, &o, &log);
        ck_assert_msg(strstr(o.answer, " clt_conn_tag=a%20host%20on%20the%20threat%20list"), "%s", o.answer);
        json_decref(log);
        acl_outcome_done(&o);
        /* Malformed: refused and logged. */
        handle("5 GET www.fake.test 80 /x www.fake.test - - - - - - policy", false, &o, &log);
        ck_assert_str_eq(field(log, "decision"), "deny");
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
        handle("10 GET www.fake.test 80 / www.fake.test - - - - - http -", true, &o, &log);
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

/* The cap: lines up to exactly max bytes are written, the one that would pass it is not (nor anything
 * after it, even a shorter one: the log is full), an empty line is nothing to write, and a log already past
 * the cap (another helper's last line) takes nothing more. */
START_TEST(test_log_cap)
{
        char path[] = "/tmp/test-egress-acl-log.XXXXXX";
        int fd = mkstemp(path);
        struct stat st;

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(unlink(path), 0);
        ck_assert_int_ge(fcntl(fd, F_SETFL, O_APPEND), 0);
        ck_assert_int_eq(acl_log_append(fd, "12345\n", 6, 10), 0);
        ck_assert_int_eq(acl_log_append(fd, "1234\n", 5, 10), -EFBIG);
        ck_assert_int_eq(acl_log_append(fd, "123\n", 4, 10), 0);
        ck_assert_int_eq(acl_log_append(fd, "", 0, 10), 0);
        ck_assert_int_eq(acl_log_append(fd, "\n", 1, 10), -EFBIG);
        ck_assert_int_eq(fstat(fd, &st), 0);
        ck_assert_int_eq(st.st_size, 10);
        ck_assert_int_eq(acl_log_append(fd, "1\n", 2, 8), -EFBIG);
        ck_assert_int_eq(fstat(fd, &st), 0);
        ck_assert_int_eq(st.st_size, 10);
        close(fd);
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
        tcase_add_test(tc, test_handle_inner_connect);
        tcase_add_test(tc, test_handle_schemes);
        tcase_add_test(tc, test_handle_placeholder);
        tcase_add_test(tc, test_handle_encoded_controls);
        tcase_add_test(tc, test_handle_policy_first);
        suite_add_tcase(s, tc);

        tc = tcase_create("acl_log_append");
        tcase_add_test(tc, test_log_cap);
        suite_add_tcase(s, tc);

        return check_run(s);
}
