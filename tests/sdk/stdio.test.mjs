// The MCP TypeScript SDK client over stdio (StdioClientTransport) against
// $MCP_SANDBOX_BIN: initialize, tools/list, every tool's samples, an unknown
// tool.  Run through launch.mjs (CTest: sdk_stdio).
import { test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { runSuite } from './common.mjs';

test('SDK client over stdio', async (t) => {
	await runSuite(t, async () => {
		const transport = new StdioClientTransport({
			command: process.env.MCP_SANDBOX_BIN,
			args: [],
			stderr: 'inherit',
		});
		const client = new Client({ name: 'mcp-sandbox-sdk-test', version: '1.0.0' });

		await client.connect(transport);
		return { client, close: () => client.close() };
	});
});
