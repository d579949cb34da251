/* SPDX-License-Identifier: MIT */
#include "proxy-answer.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* The value of the header line data[0..len) in out when it is name's ("x-egress-denied:"). */
static void header_value(const char *data, size_t len, const char *name, char *out, size_t size)
{
        size_t skip = strlen(name), keep;

        if (len <= skip || strncasecmp(data, name, skip) != 0)
                return;
        while (skip < len && (data[skip] == ' ' || data[skip] == '\t'))
                skip++;
        keep = len - skip;
        while (keep > 0 && (data[skip + keep - 1] == '\r' || data[skip + keep - 1] == '\n'))
                keep--;
        if (keep >= size)
                keep = size - 1;
        memcpy(out, data + skip, keep);
        out[keep] = '\0';
}

static size_t answer_header(char *data, size_t size, size_t n, void *userdata)
{
        ProxyAnswer *a = userdata;

        header_value(data, size * n, "x-egress-denied:", a->denied, sizeof(a->denied));
        header_value(data, size * n, "x-squid-error:", a->squid_error, sizeof(a->squid_error));
        return size * n;
}

static size_t answer_body(char *data, size_t size, size_t n, void *userdata)
{
        (void)data, (void)userdata;
        return size * n;
}

int proxy_answer_get(const char *url, const char *proxy, const char *ca_file, const char *header,
                     long timeout_s, ProxyAnswer *ret, char *why, size_t why_size)
{
        char errbuf[CURL_ERROR_SIZE] = "";
        struct curl_slist *headers = NULL;
        CURL *c = curl_easy_init();
        CURLcode res = CURLE_FAILED_INIT;

        *ret = (ProxyAnswer){ 0 };
        if (c && (!header || (headers = curl_slist_append(NULL, header))) &&
            curl_easy_setopt(c, CURLOPT_URL, url) == CURLE_OK &&
            curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https") == CURLE_OK &&
            curl_easy_setopt(c, CURLOPT_PROXY, proxy) == CURLE_OK &&
            /* "" and not the environment's NO_PROXY: nothing goes around the proxy. */
            curl_easy_setopt(c, CURLOPT_NOPROXY, "") == CURLE_OK &&
            (!ca_file || curl_easy_setopt(c, CURLOPT_CAINFO, ca_file) == CURLE_OK) &&
            curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers) == CURLE_OK &&
            curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L) == CURLE_OK &&
            curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L) == CURLE_OK &&
            curl_easy_setopt(c, CURLOPT_TIMEOUT, timeout_s) == CURLE_OK &&
            curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, answer_header) == CURLE_OK &&
            curl_easy_setopt(c, CURLOPT_HEADERDATA, ret) == CURLE_OK &&
            curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, answer_body) == CURLE_OK &&
            curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf) == CURLE_OK)
                res = curl_easy_perform(c);
        if (res == CURLE_OK)
                (void)curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &ret->status);
        else
                (void)snprintf(why, why_size, "%s", errbuf[0] ? errbuf : curl_easy_strerror(res));
        curl_slist_free_all(headers);
        curl_easy_cleanup(c);
        return res == CURLE_OK ? 0 : -EIO;
}

bool proxy_answer_squid_reason(const ProxyAnswer *a, char *buf, size_t size)
{
        static const struct {
                const char *code, *words;
        } known[] = {
                { "ERR_DNS_FAIL", "the name does not resolve" },
                { "ERR_CONNECT_FAIL", "the origin did not take the connection" },
                { "ERR_SECURE_CONNECT_FAIL", "TLS with the origin failed" },
                { "ERR_READ_TIMEOUT", "the origin did not answer in time" },
                { "ERR_ZERO_SIZE_OBJECT", "the origin closed the connection without an answer" },
                /* squid 5.7 (Debian 12) answers so where the name does not resolve, too. */
                { "ERR_READ_ERROR", "no connection to the origin (a name that does not resolve, or one that "
                                    "failed)" },
        };
        char code[64];
        size_t n = strcspn(a->squid_error, " ");

        buf[0] = '\0';
        /* An origin may send the header too: only squid's form of a code is taken, never shown raw. */
        if (!a->squid_error[0] || a->denied[0] || n >= sizeof(code) ||
            strncmp(a->squid_error, "ERR_", 4) != 0 ||
            strspn(a->squid_error, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789") != n)
                return false;
        memcpy(code, a->squid_error, n);
        code[n] = '\0';
        if (strcmp(code, "ERR_ACCESS_DENIED") == 0)
                return false;
        for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
                if (strcmp(code, known[i].code) == 0) {
                        (void)snprintf(buf, size, "squid's %s: %s", code, known[i].words);
                        return true;
                }
        (void)snprintf(buf, size, "squid's %s", code);
        return true;
}
