/*
 * The requestState of a 2026-07-28 approval (approval.h): what was asked,
 * of whom, for which call, until when, signed so that a client holding it
 * can neither alter nor forge one. "PAYLOAD.MAC", both base64url without
 * padding: PAYLOAD is compact JSON {"v", "n" nonce, "e" expiry (ms of
 * CLOCK_MONOTONIC: the key lives as long as the clock's epoch), "o" owner,
 * "t" tool, "a" the arguments' digest, "d" hosts, "to" deadline, "net"};
 * MAC is HMAC-SHA-256 of PAYLOAD's bytes under the server run's key. Pure:
 * no locks, no clock; that a nonce is used once is approval.c's.
 */
#ifndef APPROVAL_STATE_H
#define APPROVAL_STATE_H

#include <stdint.h>

#include <json-c/json.h>

#include "approve.h"
#include "sha256.h"

#define APPROVAL_NONCE_LEN	16

/* What a state says, once it checked out. */
struct approval_state {
	uint8_t nonce[APPROVAL_NONCE_LEN];
	uint64_t expires_ms;
	struct tool_ask asked;
};

/* A state for owner's call of tool with args asking ask, valid until
 * expires_ms. Owned; NULL on allocation failure (or no randomness). */
char *approval_state_make(const uint8_t key[SHA256_LEN], const char *owner,
    const char *tool, const struct json_object *args,
    const struct tool_ask *ask, uint64_t expires_ms);

/*
 * Checks text against owner's call of tool with args at now_ms: NULL with
 * *st filled, or why it is refused (a sentence for the client).
 */
const char *approval_state_open(const uint8_t key[SHA256_LEN],
    const char *text, const char *owner, const char *tool,
    const struct json_object *args, uint64_t now_ms,
    struct approval_state *st);

/*
 * Any text sealed for a purpose: "PAYLOAD.MAC" as above, the MAC over the
 * purpose, a NUL and the text, so that what one use seals (a fixture's
 * state, partly the client's text) never opens as another's (owned;
 * NULL: no memory); and opened: 0 with *ret the text (owned,
 * NUL-terminated, *ret_len bytes), -2 when the MAC does not match, -1 when
 * it is not a sealed text or no memory. The conformance fixtures'
 * requestStates are these, for the purpose "fixture".
 */
char *approval_seal(const uint8_t key[SHA256_LEN], const char *purpose,
    const void *text, size_t len);
int approval_unseal(const uint8_t key[SHA256_LEN], const char *purpose,
    const char *sealed, char **ret, size_t *ret_len);

/* HMAC-SHA-256 (RFC 2104) of msg under a 32-byte key; -1: no memory. */
int approval_hmac(const uint8_t key[SHA256_LEN], const void *msg,
    size_t len, uint8_t out[SHA256_LEN]) __attribute__((warn_unused_result));

#endif
