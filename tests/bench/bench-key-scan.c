/* SPDX-License-Identifier: MIT */
/* The key probes' search against the token probes': the same text (printable ASCII with spaces and
 * newlines, as source files and logs are) searched for a key by its print (key_print_find(): a rolling
 * hash over every window, SHA-256 where it matches) and for the token itself (memmem(), which is what
 * token-files does and what grep -F would), side by side in one run, each in 64 KiB pieces with the
 * carry token-scan.c keeps: throughput of each (median of the rounds) and their ratio. Asserts nothing.
 *
 * usage: bench-key-scan [--rounds N] [--mib N] [--key-bytes N] */
#define BENCH_NAME "bench-key-scan"
#define BENCH_SEED 0x6b657973ULL

#include "bench.h"

#include "key-print.h"
#include "token-scan.h"

static int cmp_double(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;

        return (x > y) - (x < y);
}

/* Searches text in TOKEN_SCAN_CHUNK pieces, each with the key's length less one carried over, as
 * token-scan.c reads a file; returns the nanoseconds taken. */
static double scan(const char *text, size_t size, const char *key, size_t key_size, const KeyPrint *print,
                   char *buf)
{
        size_t keep = 0;
        double t0 = now_ns();

        for (size_t off = 0; off < size; off += TOKEN_SCAN_CHUNK) {
                size_t n = size - off < TOKEN_SCAN_CHUNK ? size - off : TOKEN_SCAN_CHUNK, have = keep + n;
                bool found;

                memcpy(buf + keep, text + off, n);
                found = print ? key_print_find(print, buf, have) : memmem(buf, have, key, key_size) != NULL;
                if (found)
                        die("found a key that is not in the text");
                keep = have < key_size - 1 ? have : key_size - 1;
                memmove(buf, buf + have - keep, keep);
        }
        return now_ns() - t0;
}

int main(int argc, char **argv)
{
        unsigned rounds = 7, mib = 256, key_bytes = 108;
        double *t_print, *t_plain;
        char *text, *buf, key[KEY_PRINT_SIZE_MAX + 1];
        size_t size;
        KeyPrint print;

        for (int i = 1; i + 1 < argc; i += 2) {
                unsigned *v = strcmp(argv[i], "--rounds") == 0      ? &rounds
                              : strcmp(argv[i], "--mib") == 0       ? &mib
                              : strcmp(argv[i], "--key-bytes") == 0 ? &key_bytes
                                                                    : NULL;

                if (!v || sscanf(argv[i + 1], "%u", v) != 1 || *v == 0)
                        die("usage: bench-key-scan [--rounds N] [--mib N] [--key-bytes N]");
        }
        if (key_bytes < 16 || key_bytes > KEY_PRINT_SIZE_MAX)
                die("--key-bytes: 16 to %d", KEY_PRINT_SIZE_MAX);
        size = (size_t)mib << 20;
        text = malloc(size);
        buf = malloc(TOKEN_SCAN_CHUNK + KEY_PRINT_SIZE_MAX);
        t_print = calloc(rounds, sizeof(double));
        t_plain = calloc(rounds, sizeof(double));
        if (!text || !buf || !t_print || !t_plain)
                die("out of memory");
        for (size_t i = 0; i < size; i++) {
                unsigned c = pick(40);

                text[i] = c == 0 ? '\n' : c < 8 ? ' ' : (char)('a' + pick(26));
        }
        /* A key of the providers' shape: a prefix and random letters and digits. */
        memcpy(key, "sk-ant-api03-", 13);
        for (size_t i = 13; i < key_bytes; i++)
                key[i] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"[pick(62)];
        key[key_bytes] = '\0';
        if (key_print_make(key, key_bytes, &print) < 0)
                die("key_print_make failed");
        /* Interleaved, so that both see the same machine. */
        for (unsigned r = 0; r < rounds; r++) {
                t_print[r] = scan(text, size, key, key_bytes, &print, buf);
                t_plain[r] = scan(text, size, key, key_bytes, NULL, buf);
        }
        qsort(t_print, rounds, sizeof(double), cmp_double);
        qsort(t_plain, rounds, sizeof(double), cmp_double);
        {
                double mb_print = (double)size / 1e6 / (t_print[rounds / 2] / 1e9);
                double mb_plain = (double)size / 1e6 / (t_plain[rounds / 2] / 1e9);

                printf("key-scan: %u MiB of text, a key of %u bytes, %u rounds (medians)\n", mib, key_bytes,
                       rounds);
                printf("  by its print (api-key-files): %8.0f MB/s\n", mb_print);
                printf("  the key itself, memmem (token-files, grep -F): %8.0f MB/s\n", mb_plain);
                printf("  ratio print/memmem: %.2f\n", mb_print / mb_plain);
        }
        free(text);
        free(buf);
        free(t_print);
        free(t_plain);
        return 0;
}
