/*
 * libFuzzer harness: the requestState of 2026-07-28 approvals
 * (server/approval_state.c), the one text a client hands back that the
 * server must trust only if it wrote it. The input is opened as a state
 * (under a fixed key, for a fixed call); it must never open unless it is
 * the one exact sealing of its payload, and sealing the input then opening
 * it must give the input back.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "approval_state.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The key the seeds were sealed with (corpus/state, written by hand). */
static const uint8_t key[SHA256_LEN] = { 1, 2, 3, 4, 5, 6, 7, 8 };

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct json_object *args;
	struct approval_state st;
	char *text, *sealed, *back;
	size_t len;

	if (size > 16384)
		return -1;
	if (args == NULL && (args = json_tokener_parse("{\"code\":\"x\"}")) ==
	    NULL)
		abort();
	if ((text = malloc(size + 1)) == NULL)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	/* a state opens only for its call, and says what it asked */
	if (approval_state_open(key, text, "p:fuzz", "run_code", args, 1,
	    &st) == NULL && (st.asked.ndomains > TOOL_MAX_ASK_DOMAINS ||
	    st.expires_ms <= 1))
		abort();
	/* what is sealed opens to itself, once altered it does not */
	if ((sealed = approval_seal(key, "fuzz", data, size)) != NULL) {
		/* for its own purpose only */
		if (approval_unseal(key, "other", sealed, &back, &len) == 0)
			abort();
		free(back);
		if (approval_unseal(key, "fuzz", sealed, &back, &len) != 0 ||
		    len != size || memcmp(back, data, size) != 0)
			abort();
		free(back);
		if (sealed[0] != '\0' && sealed[0] != '.') {
			sealed[0] = sealed[0] == 'A' ? 'B' : 'A';
			if (approval_unseal(key, "fuzz", sealed, &back,
			    &len) == 0)
				abort();
			free(back);
		}
		free(sealed);
	}
	free(text);
	return 0;
}
