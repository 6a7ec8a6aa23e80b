/*
 * Every numeric cap of the server layer, named once with its reason.
 * Caps of the validator, the sandbox and the tools live beside their code.
 */
#ifndef MCP_LIMITS_H
#define MCP_LIMITS_H

/*
 * Largest JSON-RPC message, in bytes, on stdio and HTTP. The biggest
 * legitimate input is write_file content (1 MiB, base64 grows it by 4/3)
 * plus the envelope; 4 MiB leaves room and bounds a hostile client.
 */
#define MCP_MAX_MSG		(4u * 1024 * 1024)

/*
 * Deepest JSON nesting accepted in a message. Our own schemas nest at most
 * about 6 levels; 64 is far deeper than any sane request and keeps json-c's
 * and the validator's recursion shallow.
 */
#define MCP_MAX_DEPTH		64

/*
 * Requests in flight on one stdio connection or HTTP session. Each holds a
 * thread; beyond this a tools/call gets a "busy" tool error, and other
 * requests a -32603, so a flood cannot exhaust threads.
 */
#define MCP_MAX_INFLIGHT	128

/* Bytes of a JSON-RPC id we keep for matching notifications/cancelled. */
#define MCP_MAX_ID_LEN		256

/* Longest method name quoted back in an error; every real one is under
 * 40 bytes. */
#define MCP_MAX_METHOD_LEN	64

/*
 * Read size of the stdio transport. A line larger than this is assembled
 * across reads up to MCP_MAX_MSG.
 */
#define MCP_STDIO_READ_CHUNK	(64u * 1024)

/*
 * Threads the stdio transport keeps waiting to take the reading role (each
 * runs the tools/call it reads). Threads beyond it exit when idle, so a
 * burst does not pin memory for the life of the server.
 */
#define MCP_IDLE_WORKERS	8

/*
 * Stack of a thread the stdio transport starts (it reads, then runs a
 * call). Handlers are shallow; the deepest recursion is the validator's
 * (schema and instance depth 64), well under 128 KiB even with
 * AddressSanitizer's larger frames. 256 KiB keeps 128 threads cheap.
 */
#define MCP_WORKER_STACK	(256u * 1024)

/* ttlMs we give clients for tools/list and server/discover: our tool list
 * is fixed for the life of the process, so an hour is safe. */
#define MCP_LIST_TTL_MS		3600000

/*
 * Tasks (tasks.h). Each holds a thread while it runs and its result until
 * its time to live has passed, so they are bounded per owner (a principal,
 * or the stdio client: a loop of task calls cannot take the server's) and
 * per server, and so are the result bytes held in memory. 256 MiB is far
 * more than a few dozen results capped by output_bytes take.
 */
#define MCP_TASKS_PER_OWNER	32
#define MCP_TASKS_MAX		256
#define MCP_TASKS_RESULT_BYTES	(256u * 1024 * 1024)
/* pollInterval we suggest: a second is what a person waiting can see. */
#define MCP_TASK_POLL_MS	1000
/* How often a blocking tasks/result checks whether its own request was
 * cancelled or the server is stopping. */
#define MCP_TASK_WAIT_POLL_MS	200
/* The longest a tasks/cancel waits for the task's run to end (its init
 * killed, its pid namespace and cgroup gone with it) before it answers; a
 * kill takes milliseconds, so this is the bound a client may rely on. */
#define MCP_TASK_CANCEL_MS	1000
/* Tasks per tasks/list page. */
#define MCP_TASKS_PAGE		50

#endif
