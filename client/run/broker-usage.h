/* SPDX-License-Identifier: MIT */
/* What a model API's answers say they used, read as they stream through the key broker: the token
 * counts of Anthropic's Messages API ("input_tokens", "output_tokens", in message_start and, cumulative,
 * in message_delta) and of OpenAI's APIs ("input_tokens"/"output_tokens" of the Responses API,
 * "prompt_tokens"/"completion_tokens" of Chat Completions). An answer's count of each kind is the largest
 * it states (the streamed counts are cumulative), so reading a piece twice changes nothing; the run's is
 * the sum over its answers. A key is taken only where its quote is not escaped: text of the model's
 * inside a JSON string cannot add to the count. */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* The bytes of one answer kept between two pieces: more than a key, its colon and 19 digits. */
#define BROKER_USAGE_TAIL 64

typedef struct BrokerUsage {
        uint64_t input, output; /* the largest of each stated so far in this answer */
        char tail[BROKER_USAGE_TAIL];
        size_t n_tail;
        char before_tail; /* the byte before tail[0] (an escape matters): 0 when none */
} BrokerUsage;

/* Reads the next piece of one answer. */
void broker_usage_feed(BrokerUsage *u, const char *data, size_t size);
