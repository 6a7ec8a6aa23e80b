/*
 * libFuzzer harness: the HTTP request path. The server's own callbacks
 * (transport_http.c: guards, era routing, sessions, streams, dispatch) run
 * in a libmicrohttpd daemon without a listening socket or threads of its
 * own; each input is the raw bytes a client sends on one connection (one
 * or more pipelined requests), written into a socketpair the daemon was
 * handed, after which the client half-closes and reads until the server
 * closes. No sandbox: sandboxed tools refuse. Sessions live for one input.
 */
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>

#include "http_internal.h"
#include "policy.h"
#include "registry.h"
#include "slots.h"
#include "tool.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The token the seeds carry in "Authorization: Bearer ..." (32 hex digits,
 * the shortest the server accepts). */
#define FUZZ_TOKEN	"0123456789abcdef0123456789abcdef"

/* Turns of the daemon's loop one input may take. The daemon has no thread
 * of its own: a turn either moves bytes or finds nothing to do, so an
 * input that needs more turns is a request that never ends (it aborts). */
#define FUZZ_MAX_TURNS	100000

/* The harness's read cap for the file tools (see LLVMFuzzerInitialize). */
#define FUZZ_READ_BYTES	4096
/* Where the scratch workspace goes: tmpfs when there is one. */
#define FUZZ_TMP	(access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp")

static struct tool_env env;
static struct server srv;
static struct toolset *tools;
static struct http_config cfg;
static struct http_ctx ctx;
static struct MHD_Daemon *daemon_;
static char tokpath[64];
static char wsdir[64];

static void fail(const char *what) __attribute__((noreturn));

static void
fail(const char *what)
{
	fprintf(stderr, "fuzz_http: %s\n", what);
	abort();
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct sockaddr_in *sin;
	struct policy *pol;
	char err[512];
	FILE *f;
	int fd;

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
	(void)snprintf(tokpath, sizeof(tokpath), "/tmp/fuzz-http-token.XXXXXX");
	if ((fd = mkstemp(tokpath)) < 0 || (f = fdopen(fd, "w")) == NULL)
		fail("token file");
	fprintf(f, "%s\n", FUZZ_TOKEN);
	(void)fclose(f);
	(void)snprintf(wsdir, sizeof(wsdir), "%s/fuzz-http-ws.XXXXXX",
	    FUZZ_TMP);
	if (mkdtemp(wsdir) == NULL)
		fail("mkdtemp");
	http_config_init(&cfg);
	cfg.enabled = true;
	sin = (struct sockaddr_in *)&cfg.addr;
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	cfg.addrlen = sizeof(*sin);
	cfg.loopback = true;
	(void)snprintf(cfg.listen_text, sizeof(cfg.listen_text),
	    "127.0.0.1:0");
	cfg.token_file = tokpath;
	if (http_ctx_open(&ctx, &srv, &cfg, wsdir, (uid_t)-1) != 0)
		fail("http_ctx_open");
	(void)unlink(tokpath);
	if ((daemon_ = http_daemon_start(&ctx, MHD_USE_NO_LISTEN_SOCKET |
	    MHD_USE_ERROR_LOG, -1)) == NULL)
		fail("http_daemon_start");
	return 0;
}

/* Waits until every call thread of the input has finished. */
static void
wait_calls(void)
{
	(void)pthread_mutex_lock(&ctx.calls_lock);
	while (ctx.calls > 0)
		(void)pthread_cond_wait(&ctx.calls_done, &ctx.calls_lock);
	(void)pthread_mutex_unlock(&ctx.calls_lock);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sockaddr_in peer;
	struct pollfd pfd;
	char buf[65536];
	size_t off = 0;
	ssize_t n;
	int sv[2], turn;
	bool shut = false;

	if (size > 256 * 1024)
		return -1;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0,
	    sv) != 0)
		fail("socketpair");
	memset(&peer, 0, sizeof(peer));
	peer.sin_family = AF_INET;
	peer.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	peer.sin_port = htons(40000);
	if (MHD_add_connection(daemon_, sv[1], (struct sockaddr *)&peer,
	    sizeof(peer)) != MHD_YES)
		fail("MHD_add_connection");
	for (turn = 0; turn < FUZZ_MAX_TURNS; turn++) {
		if (off < size) {
			n = write(sv[0], data + off, size - off);
			if (n > 0)
				off += (size_t)n;
			else if (n < 0 && errno != EAGAIN)
				off = size;	/* the server closed on us */
		}
		if (off == size && !shut) {
			(void)shutdown(sv[0], SHUT_WR);
			shut = true;
		}
		(void)MHD_run(daemon_);
		pfd.fd = sv[0];
		pfd.events = POLLIN;
		if (poll(&pfd, 1, 0) > 0) {
			n = read(sv[0], buf, sizeof(buf));
			if (n == 0 || (n < 0 && errno != EAGAIN))
				break;
		}
	}
	if (turn == FUZZ_MAX_TURNS)
		fail("no end to the connection: a request got no answer");
	(void)close(sv[0]);
	/* the daemon notices the close and frees the connection */
	while (ctx.metrics.connections > 0)
		(void)MHD_run(daemon_);
	wait_calls();
	/* sessions (and their workspaces) live for one input */
	http_sessions_fini(&ctx.sessions);
	http_sessions_init(&ctx.sessions, wsdir, (uid_t)-1, &ctx.metrics);
	return 0;
}
