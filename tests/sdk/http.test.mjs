// The MCP TypeScript SDK client over Streamable HTTP
// (StreamableHTTPClientTransport) against `$MCP_SANDBOX_BIN --http
// 127.0.0.1:PORT`: the same checks as over stdio, then a clean stop on
// SIGTERM.  Run through launch.mjs (CTest: sdk_http), which skips when the
// binary has no --http yet.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { runSuite } from './common.mjs';
import { startHttpServer } from './server_http.mjs';

test('SDK client over Streamable HTTP', async (t) => {
	const srv = await startHttpServer(process.env.MCP_SANDBOX_BIN);

	assert.equal(srv.exited, undefined,
		`mcp-sandbox --http exited at start: ${JSON.stringify(srv.exited)}: ${srv.stderr?.()}`);
	try {
		await runSuite(t, async () => {
			const transport = new StreamableHTTPClientTransport(
				new URL(`http://127.0.0.1:${srv.port}/mcp`));
			const client = new Client({ name: 'mcp-sandbox-sdk-test', version: '1.0.0' });

			await client.connect(transport);
			return {
				client,
				close: async () => {
					// Ends the session (DELETE) if the server made one.
					if (transport.sessionId !== undefined)
						await transport.terminateSession();
					await client.close();
				},
			};
		});
	} finally {
		const how = await srv.stop();
		assert.ok(how.code === 0 || how.signal === 'SIGTERM',
			`mcp-sandbox --http did not exit cleanly on SIGTERM: ${JSON.stringify(how)}`);
	}
});
