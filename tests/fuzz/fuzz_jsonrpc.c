/*
 * libFuzzer harness: the JSON-RPC path from one stdio line to its reply,
 * without a sandbox. The input is split at newlines as the stdio transport
 * frames it; each line is decoded with one kept tokener and, if it is a
 * message, dispatched into one session that lives for the whole input (so
 * initialize, logging/setLevel and calls can follow one another). The
 * sandboxed tools see no sandbox context and must refuse cleanly; the file
 * tools work in a private scratch workspace, emptied now and then.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dispatch.h"
#include "jsonrpc.h"
#include "policy.h"
#include "registry.h"
#include "session.h"
#include "slots.h"
#include "tool.h"
#include "workspace.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Inputs between two emptyings of the scratch workspace: bounds the files
 * write_file can leave there, so list_directory stays fast. */
#define FUZZ_WS_RESET_EVERY	1000

/* The harness's read cap for the file tools (see LLVMFuzzerInitialize). */
#define FUZZ_READ_BYTES	4096
/* Where the scratch workspace goes: tmpfs when there is one. */
#define FUZZ_TMP	(access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp")

static struct tool_env env;
static struct server srv;
static struct toolset *tools;
static struct json_tokener *tok;
static char wspath[64];
static unsigned long inputs;

static void fail(const char *what) __attribute__((noreturn));

static void
fail(const char *what)
{
	fprintf(stderr, "fuzz_jsonrpc: %s\n", what);
	abort();
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct policy *pol;
	char err[512];

	if ((pol = policy_new_default(err, sizeof(err))) == NULL ||
	    policy_finalize(pol, err, sizeof(err)) != 0)
		fail(err);
	/* each read_file and search_files allocates its whole read cap:
	 * under ASan a 1 MiB allocation is an mmap and a munmap per call,
	 * most of the time of an input. 4 KiB reads reach the same code. */
	pol->limits.read_bytes = FUZZ_READ_BYTES;
	env.policy = pol;
	env.fixtures = false;	/* test_wait_cancel would wait forever */
	if ((env.slots = tool_slots_new(2, 2, 10)) == NULL)
		fail("slots");
	if (toolset_new(&env, &tools, err, sizeof(err)) != MCP_OK)
		fail(err);
	srv.tools = tools;
	srv.env = &env;
	(void)snprintf(wspath, sizeof(wspath), "%s/fuzz-jsonrpc.XXXXXX",
	    FUZZ_TMP);
	if (mkdtemp(wspath) == NULL)
		fail("mkdtemp");
	if ((tok = jsonrpc_tokener_new()) == NULL)
		fail("tokener");
	return 0;
}

static int
drop_send(void *arg, const char *msg, size_t len)
{
	size_t *n = arg;

	/* every reply and notification must be one line of JSON */
	if (memchr(msg, '\n', len) != NULL)
		abort();
	*n += len;
	return 0;
}

static void
one_line(struct session *sess, const char *line, size_t len)
{
	struct msg_sink sink;
	struct rpc_msg *msg = NULL;
	size_t sent = 0;
	char *reply = NULL;

	sink.send = drop_send;
	sink.arg = &sent;
	if (jsonrpc_decode_tok(tok, line, len, &msg, &reply) != MCP_OK) {
		if (reply != NULL)
			(void)drop_send(&sent, reply, strlen(reply));
		free(reply);
		return;
	}
	(void)dispatch_is_quick(&srv, msg);
	(void)dispatch_message(&srv, sess, msg, &sink);
	rpc_msg_free(msg);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct session sess;
	const char *p = (const char *)data, *end = p + size, *nl;

	if (size > MCP_MAX_MSG)
		return -1;
	if (++inputs % FUZZ_WS_RESET_EVERY == 0) {
		(void)workspace_remove_tree(wspath);
		if (mkdir(wspath, 0700) != 0)
			fail("mkdir");
	}
	session_init(&sess, wspath);
	while (p < end) {
		if ((nl = memchr(p, '\n', (size_t)(end - p))) == NULL)
			nl = end;
		one_line(&sess, p, (size_t)(nl - p));
		p = nl + 1;
	}
	session_fini(&sess);
	return 0;
}
