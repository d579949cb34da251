/* SPDX-License-Identifier: MIT */
/* proxy_answer_squid_reason(): squid's own errors named in words (the codes run's clone meets), another
 * code by its name; nothing for an origin's answer, for the policy's refusal (the egress log has it), or
 * for a header an origin may have forged that is not squid's form of a code. */
#include <check.h>

#include "check-run.h"
#include <stdio.h>
#include <string.h>

#include "proxy-answer.h"

static const char *reason(const char *squid_error, const char *denied)
{
        static char buf[160];
        ProxyAnswer a = { .status = 503 };

        (void)snprintf(a.squid_error, sizeof(a.squid_error), "%s", squid_error);
        (void)snprintf(a.denied, sizeof(a.denied), "%s", denied);
        return proxy_answer_squid_reason(&a, buf, sizeof(buf)) ? buf : NULL;
}

START_TEST(test_reasons)
{
        ck_assert_str_eq(reason("ERR_DNS_FAIL 0", ""), "squid's ERR_DNS_FAIL: the name does not resolve");
        ck_assert_str_eq(reason("ERR_CONNECT_FAIL 111", ""),
                         "squid's ERR_CONNECT_FAIL: the origin did not take the connection");
        ck_assert_str_eq(reason("ERR_SECURE_CONNECT_FAIL 0", ""),
                         "squid's ERR_SECURE_CONNECT_FAIL: TLS with the origin failed");
        ck_assert_str_eq(reason("ERR_READ_TIMEOUT 110", ""),
                         "squid's ERR_READ_TIMEOUT: the origin did not answer in time");
        ck_assert_str_eq(
                reason("ERR_READ_ERROR 0", ""),
                "squid's ERR_READ_ERROR: no connection to the origin (a name that does not resolve, or "
                "one that failed)");
        ck_assert_str_eq(reason("ERR_GATEWAY_FAILURE 0", ""), "squid's ERR_GATEWAY_FAILURE");
        ck_assert_str_eq(reason("ERR_DNS_FAIL", ""), "squid's ERR_DNS_FAIL: the name does not resolve");
}
END_TEST

START_TEST(test_not_squids)
{
        /* An origin's answer; the policy's refusal, said by X-Egress-Denied and the egress log. */
        ck_assert_ptr_null(reason("", ""));
        ck_assert_ptr_null(reason("ERR_ACCESS_DENIED 0", ""));
        ck_assert_ptr_null(
                reason("ERR_ACCESS_DENIED 0", "a write to an endpoint not in the write allowlist"));
        ck_assert_ptr_null(reason("ERR_DNS_FAIL 0", "a local destination"));
        /* Forged by an origin: only squid's form of a code, never shown raw. */
        ck_assert_ptr_null(reason("ERR_<b>x</b> 0", ""));
        ck_assert_ptr_null(reason("err_dns_fail 0", ""));
        ck_assert_ptr_null(reason("ERR_DNS\r::error::x 0", ""));
        ck_assert_ptr_null(reason("NOT_AN_ERR 0", ""));
        ck_assert_ptr_null(
                reason("ERR_THIS_CODE_IS_FAR_TOO_LONG_TO_BE_ANY_OF_SQUIDS_OWN_ERROR_CODES_AT_ALL 0", ""));
}
END_TEST

int main(void)
{
        Suite *s = suite_create("proxy-answer");
        TCase *t = tcase_create("proxy-answer");

        tcase_add_test(t, test_reasons);
        tcase_add_test(t, test_not_squids);
        suite_add_tcase(s, t);
        return check_run(s);
}
