/*
 * Every numeric cap of the Streamable HTTP transport, named once with its
 * reason. The message size cap (MCP_MAX_MSG) is shared with stdio and
 * lives in mcp_limits.h.
 */
#ifndef HTTP_LIMITS_H
#define HTTP_LIMITS_H

/*
 * Bytes of request headers (names + values) we accept. Real MCP clients
 * send well under 2 KiB; 16 KiB leaves room for long tokens and proxies'
 * additions. Beyond: 431.
 */
#define MCP_HTTP_MAX_HEADER_BYTES	(16u * 1024)

/*
 * libmicrohttpd's per-connection memory pool: it must hold the headers
 * above plus the read buffer, or MHD itself refuses the request first.
 * MHD clears the pool for every request on a keep-alive connection, so
 * twice the header cap, not more: at 64 KiB the clearing alone took 7% of
 * the CPU under load.
 */
#define MCP_HTTP_CONN_MEMORY		(2 * MCP_HTTP_MAX_HEADER_BYTES)

/*
 * Open connections we serve. Each holds a thread (thread per connection),
 * so this bounds threads and memory. Beyond: 503 and the connection closes.
 */
#define MCP_HTTP_MAX_CONNECTIONS	256

/*
 * Connections MHD accepts beyond our cap, so that the excess gets a 503
 * with a JSON-RPC body instead of a bare reset.
 */
#define MCP_HTTP_CONN_SLACK		16

/*
 * Seconds a connection may stay silent (keep-alive idle, or a client that
 * stops sending mid-request) before it is closed: slow clients cannot pin
 * threads forever.
 */
#define MCP_HTTP_IDLE_TIMEOUT_S		60

/*
 * Seconds from accept to the end of a connection's first request headers,
 * whatever arrives meanwhile: the idle timeout is reset by every byte, so
 * a client sending one header byte every few seconds would hold its
 * connection (and a thread) for ever. Honest clients send their headers
 * in one packet. A later request on a keep-alive connection gets
 * MCP_HTTP_IDLE_TIMEOUT_S from the end of the previous one instead. The
 * default, and the most --header-deadline accepts (it may only be
 * shortened: a test that should not wait 10 s for the close).
 */
#define MCP_HTTP_HEADER_DEADLINE_S	10

/*
 * The shortest deadline or grace the flags that shorten them accept
 * (--header-deadline, --body-deadline, --shutdown-grace): a second, the
 * resolution of the deadline tick below.
 */
#define MCP_HTTP_FLAG_MIN_S		1

/*
 * How often the header and body deadlines are checked: a connection past
 * its deadline is closed at most this late.
 */
#define MCP_HTTP_DEADLINE_TICK_MS	1000

/*
 * Open connections one client address may hold: half the connection cap,
 * so that one address (one host, or every local client on loopback) can
 * never take them all. Beyond: the connection is closed at accept.
 */
#define MCP_HTTP_MAX_CONN_PER_ADDR	(MCP_HTTP_MAX_CONNECTIONS / 2)

/*
 * Seconds a SIGTERM waits for the requests in flight to finish, after the
 * listening socket is closed and while new requests on open connections
 * get 503: long enough for ordinary calls, short enough for a service
 * manager's stop timeout (systemd's default is 90 s). The default, and
 * the most --shutdown-grace accepts (shorter: a test of the stop, or a
 * service whose calls are not worth waiting for).
 */
#define MCP_HTTP_SHUTDOWN_GRACE_S	10

/*
 * Seconds, after the grace period, that calls still running have to answer
 * once their sandboxes are killed (they answer with a tool error): then
 * whatever is left is cancelled and the server exits.
 */
#define MCP_HTTP_SHUTDOWN_ABORT_S	5

/*
 * Seconds a request body may take to arrive in full. A client trickling
 * bytes to dodge the idle timeout gets a 408. The default, and the most
 * --body-deadline accepts: it may only be shortened (a fast network, or a
 * test that should not wait half a minute for the 408).
 */
#define MCP_HTTP_BODY_DEADLINE_S	30

/*
 * Seconds past the body deadline after which a body still arriving has
 * its connection shut down. The deadline is checked as bytes arrive, and
 * its 408 can only go out once the body has ended: a client trickling a
 * large body just under the idle timeout would otherwise hold its
 * connection (and a thread) for as long as it likes. A body that ends
 * within the grace still gets its 408.
 */
#define MCP_HTTP_BODY_GRACE_S		5

/*
 * Handshake-era sessions alive at once. Each owns a workspace directory
 * on disk. Each principal (bearer token; every client, without tokens)
 * has an equal share of them: a principal at its share loses its own
 * oldest idle session to a new one, never another principal's; with
 * none idle, 503.
 */
#define MCP_HTTP_MAX_SESSIONS		64

/*
 * Seconds a session may go unused before it expires with its workspace.
 * Clients that vanish without DELETE must not hold disk and a slot forever.
 */
#define MCP_HTTP_SESSION_IDLE_S		(30 * 60)

/*
 * Seconds between sweeps for idle sessions when nobody is calling (each
 * new or resumed session sweeps too): at most this late a session outlives
 * its idle time, at one cheap wake-up a minute.
 */
#define MCP_HTTP_SWEEP_S		60

/*
 * Requests one session may have in flight at once. A tools/call can hold a
 * sandbox for its whole time limit; one session must not take every
 * connection and sandbox slot. Beyond: 429.
 */
#define MCP_HTTP_MAX_SESSION_CALLS	16

/* Every this many ms of silence an SSE stream gets a comment line, so
 * that proxies and clients do not time it out during a long call. */
#define MCP_HTTP_SSE_KEEPALIVE_MS	15000

/* --allow-origin values we keep; a handful is all a deployment needs. */
#define MCP_HTTP_MAX_ORIGINS		16

/* Longest --allow-origin value: scheme://host:port of a sane host. */
#define MCP_HTTP_MAX_ORIGIN_LEN		256

/* Bearer tokens in --token-file (one per line, one per client). */
#define MCP_HTTP_MAX_TOKENS		16

/* Size of the token file: 16 tokens of a few hundred bytes. */
#define MCP_HTTP_TOKEN_FILE_MAX		(8u * 1024)

/* Shortest token accepted: 128 bits in hex, so it cannot be guessed. */
#define MCP_HTTP_MIN_TOKEN_LEN		32

/* Random bytes in a session id (hex on the wire): 128 bits, unguessable. */
#define MCP_HTTP_SESSION_ID_BYTES	16

/*
 * Stack of each connection and call thread. Dispatch, the validator and
 * json-c recurse at most MCP_MAX_DEPTH levels of small frames; 512 KiB is
 * ample and keeps 256 threads' address space small.
 */
#define MCP_HTTP_THREAD_STACK		(512u * 1024)

#endif
