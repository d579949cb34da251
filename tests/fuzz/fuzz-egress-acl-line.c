/* SPDX-License-Identifier: MIT */
/* acl_handle_line() on arbitrary lines from squid: what the proxy's ACL helper does with each.
 *
 * The input is one line (up to its first newline, which the helper never passes on); longer than
 * ACL_LINE_MAX, it is cut there and handled as the helper handles a line too long. Beyond not crashing,
 * the answer and the log line must keep their promises (acl-line.h): the checks below abort otherwise. */
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl-line.h"
#include "macro.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char policy_text[] = "[[write]]\n"
                                  "name = \"git-fetch\"\n"
                                  "why = \"git fetch over smart HTTP\"\n"
                                  "hosts = [\"www.fake.test\"]\n"
                                  "methods = [\"POST\"]\n"
                                  "paths = [\"/**/git-upload-pack\"]\n"
                                  "\n"
                                  "[[write]]\n"
                                  "name = \"websocket\"\n"
                                  "why = \"upgrades\"\n"
                                  "hosts = [\"upload.fake.test\"]\n"
                                  "methods = [\"WEBSOCKET\", \"PUT\"]\n"
                                  "paths = [\"/ws/*\"]\n";
static const char *const threat_hosts[] = { "evil.example" };
static const EgressThreats threats = { threat_hosts, ELEMENTSOF(threat_hosts) };

static void require(bool ok, const char *what)
{
        if (!ok) {
                fprintf(stderr, "fuzz-egress-acl-line: %s\n", what);
                abort();
        }
}

/* One line ending in its only newline, of printable ASCII otherwise. */
static bool one_line(const char *s)
{
        size_t n = strlen(s);

        if (n == 0 || s[n - 1] != '\n')
                return false;
        for (size_t i = 0; i + 1 < n; i++)
                if (s[i] < 0x20 || s[i] > 0x7e)
                        return false;
        return true;
}

/* "CHANNEL OK..." or "CHANNEL ERR...", or without the channel when the line had none; ERR carries
 * verdict_=deny. */
static bool answer_is(const char *answer, const char *channel, const char *verdict)
{
        size_t cl = strlen(channel), vl = strlen(verdict);

        if (cl > 0 && (strncmp(answer, channel, cl) != 0 || answer[cl] != ' '))
                return false;
        answer += cl > 0 ? cl + 1 : 0;
        if (strncmp(answer, verdict, vl) != 0 || (answer[vl] != ' ' && answer[vl] != '\n'))
                return false;
        return strcmp(verdict, "ERR") != 0 || strstr(answer, " verdict_=deny") != NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static EgressPolicy *policy;
        const char *nl = memchr(data, '\n', size);
        size_t n = nl ? (size_t)(nl - (const char *)data) : size;
        bool truncated = n > ACL_LINE_MAX;
        char channel[21] = "", *line;
        json_t *log, *v;
        AclOutcome o;
        AjError e;

        if (!policy) {
                require(egress_policy_parse(policy_text, strlen(policy_text), &policy, &e) == 0,
                        "the harness's policy does not parse");
        }
        if (truncated)
                n = ACL_LINE_MAX;
        line = malloc(n + 1);
        if (!line)
                return 0;
        memcpy(line, data, n);
        line[n] = '\0';
        /* The channel the answer must carry: the digits the line starts with, before a space or the end. */
        {
                size_t d = strspn(line, "0123456789");

                if (d > 0 && d < sizeof(channel) && (line[d] == ' ' || d == n) && !memchr(line, '\0', n)) {
                        memcpy(channel, line, d);
                        channel[d] = '\0';
                }
        }

        require(acl_handle_line(policy, &threats, line, n, truncated, &o) == 0, "acl_handle_line failed");
        require(one_line(o.answer) && one_line(o.unlogged) && one_line(o.log),
                "an answer or the log line is not one printable line");
        require(answer_is(o.unlogged, channel, "ERR"), "the answer without a log is not a refusal");
        require(answer_is(o.answer, channel, "OK") || answer_is(o.answer, channel, "ERR"),
                "the answer is neither OK nor ERR on the line's channel");

        log = json_loads(o.log, 0, NULL);
        require(json_is_object(log) && json_object_size(log) == 5, "the log line is not the object");
        v = json_object_get(log, "decision");
        require(json_is_string(v), "no decision");
        require(strcmp(json_string_value(v), answer_is(o.answer, channel, "OK") ? "allow" : "deny") == 0,
                "the log's decision is not the answer's");
        require(truncated ? strcmp(json_string_value(v), "deny") == 0 : true, "a line too long was allowed");
        v = json_object_get(log, "path");
        require(json_is_null(v) || (json_is_string(v) && !strchr(json_string_value(v), '?')),
                "the log's path holds a query string");
        require(json_is_string(json_object_get(log, "reason")), "no reason");
        json_decref(log);

        acl_outcome_done(&o);
        free(line);
        return 0;
}
