/* SPDX-License-Identifier: MIT */
#include "broker-usage.h"

#include <stdbool.h>
#include <string.h>

#include "macro.h"

static const struct {
        const char *key; /* with its quotes */
        bool output;
} usage_keys[] = {
        { "\"input_tokens\"", false },
        { "\"prompt_tokens\"", false },
        { "\"output_tokens\"", true },
        { "\"completion_tokens\"", true },
};

/* At most this much white space each side of the colon (the APIs write none or one): a key, its colon and
 * its number then fit in BROKER_USAGE_TAIL, and are read the same wherever the answer is cut. */
#define SPACE_MAX 8

static size_t skip_space(const char *data, size_t j, size_t size)
{
        for (size_t n = 0; j < size && n < SPACE_MAX && (data[j] == ' ' || data[j] == '\t'); n++)
                j++;
        return j;
}

/* The counts stated in data[0..size), which before (0: nothing) precedes: each key at an unescaped
 * quote, white space, a colon, white space, then 1 to 19 digits. */
static void scan(BrokerUsage *u, const char *data, size_t size, char before)
{
        for (size_t i = 0; i < size; i++) {
                if (data[i] != '"' || (i > 0 ? data[i - 1] : before) == '\\')
                        continue;
                for (size_t k = 0; k < ELEMENTSOF(usage_keys); k++) {
                        size_t n = strlen(usage_keys[k].key), j = i + n, digits = 0;
                        uint64_t v = 0;

                        if (size - i < n || memcmp(data + i, usage_keys[k].key, n) != 0)
                                continue;
                        j = skip_space(data, j, size);
                        if (j >= size || data[j] != ':')
                                break;
                        j = skip_space(data, j + 1, size);
                        for (; j < size && digits < 19 && data[j] >= '0' && data[j] <= '9'; j++, digits++)
                                v = v * 10 + (uint64_t)(data[j] - '0');
                        if (digits == 0)
                                break;
                        if (usage_keys[k].output && v > u->output)
                                u->output = v;
                        if (!usage_keys[k].output && v > u->input)
                                u->input = v;
                        break;
                }
        }
}

void broker_usage_feed(BrokerUsage *u, const char *data, size_t size)
{
        char joint[2 * BROKER_USAGE_TAIL], before;
        size_t head = size < BROKER_USAGE_TAIL ? size : BROKER_USAGE_TAIL, total = u->n_tail + size;

        /* What straddles the two pieces: the kept tail and the new piece's head. A number cut at the end
         * of a piece is read short there and whole here; the larger stands. */
        memcpy(joint, u->tail, u->n_tail);
        memcpy(joint + u->n_tail, data, head);
        scan(u, joint, u->n_tail + head, u->before_tail);
        before = u->before_tail;
        if (u->n_tail)
                before = u->tail[u->n_tail - 1];
        scan(u, data, size, before);
        if (total <= BROKER_USAGE_TAIL) {
                memcpy(u->tail + u->n_tail, data, size);
                u->n_tail = total;
                return;
        }
        /* The last BROKER_USAGE_TAIL bytes of tail and data together, and the byte before them. */
        if (total - BROKER_USAGE_TAIL - 1 < u->n_tail)
                before = u->tail[total - BROKER_USAGE_TAIL - 1];
        else
                before = data[total - BROKER_USAGE_TAIL - 1 - u->n_tail];
        if (size >= BROKER_USAGE_TAIL)
                memcpy(u->tail, data + size - BROKER_USAGE_TAIL, BROKER_USAGE_TAIL);
        else {
                size_t keep = BROKER_USAGE_TAIL - size;

                memmove(u->tail, u->tail + u->n_tail - keep, keep);
                memcpy(u->tail + keep, data, size);
        }
        u->n_tail = BROKER_USAGE_TAIL;
        u->before_tail = before;
}
