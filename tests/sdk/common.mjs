// The checks both SDK client tests (stdio and Streamable HTTP) run, over a
// Client the caller has connected.  Data-driven by tool_samples.mjs.
import assert from 'node:assert/strict';
import { McpError, ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { TOOL_SAMPLES } from './tool_samples.mjs';

// A client cannot be expected to page forever: the server lists a handful.
const LIST_PAGES_MAX = 100;
// The tool every build of the server lists.
const REQUIRED_TOOLS = ['calculate'];
// A name no tool will ever have (names are snake_case ASCII).
const UNKNOWN_TOOL = 'no-such-tool.sdk-test';

/** Every tool of tools/list, following nextCursor. */
export async function listAllTools(client)
{
	const tools = [];
	let cursor;

	for (let page = 0; page < LIST_PAGES_MAX; page++) {
		const res = await client.listTools(cursor === undefined ? undefined : { cursor });
		tools.push(...res.tools);
		cursor = res.nextCursor;
		if (cursor === undefined)
			return tools;
	}
	assert.fail(`tools/list still had a nextCursor after ${LIST_PAGES_MAX} pages`);
}

function checkToolMeta(tool)
{
	const where = `tools/list entry of ${tool.name}`;
	const meta = TOOL_SAMPLES[tool.name].meta ?? {};

	assert.equal(typeof tool.description, 'string', `${where}: description`);
	assert.ok(tool.description.length > 0, `${where}: description is empty`);
	assert.equal(tool.inputSchema?.type, 'object', `${where}: inputSchema.type`);
	assert.equal(tool.outputSchema?.type, 'object', `${where}: outputSchema.type`);
	assert.equal(typeof tool.title, 'string', `${where}: title`);
	assert.ok(tool.annotations, `${where}: annotations missing`);
	for (const hint of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'])
		assert.equal(typeof tool.annotations[hint], 'boolean', `${where}: annotations.${hint}`);
	if (meta.title !== undefined)
		assert.equal(tool.title, meta.title, `${where}: title`);
	if (meta.annotations !== undefined)
		for (const [k, v] of Object.entries(meta.annotations))
			assert.equal(tool.annotations[k], v, `${where}: annotations.${k}`);
}

function textOf(result)
{
	assert.ok(Array.isArray(result.content), 'content is not an array');
	return result.content.filter((b) => b.type === 'text').map((b) => b.text).join('\n');
}

async function checkCall(client, name, call)
{
	const label = `${name} (${call.why})`;
	const result = await client.callTool({ name, arguments: call.args });
	const then = call.then;

	if (then.isError) {
		assert.equal(result.isError, true, `${label}: expected isError, got ${JSON.stringify(result)}`);
		const text = textOf(result);
		for (const s of then.textIncludes)
			assert.ok(text.includes(s), `${label}: error text ${JSON.stringify(text)} does not name ${JSON.stringify(s)}`);
		return;
	}
	assert.notEqual(result.isError, true, `${label}: unexpected tool error: ${textOf(result)}`);
	if (then.check) {
		await then.check(result);
		return;
	}
	assert.deepEqual(result.structuredContent, then.structuredContent, `${label}: structuredContent`);
	if (then.text !== undefined)
		assert.deepEqual(result.content, [{ type: 'text', text: then.text }], `${label}: content`);
	else
		assert.ok(textOf(result).length > 0, `${label}: no text rendering`);
}

/**
 * Registers the suite under node:test `t`.  connect() returns
 * { client, close } with the client already connected (initialize done).
 */
export async function runSuite(t, connect)
{
	const { client, close } = await connect();

	try {
		await t.test('initialize: server info and tools capability', () => {
			const info = client.getServerVersion();
			assert.equal(info?.name, 'mcp-sandbox');
			assert.equal(typeof info?.version, 'string');
			assert.ok(client.getServerCapabilities()?.tools, 'no tools capability');
		});

		const tools = await listAllTools(client);
		const names = tools.map((tool) => tool.name);

		await t.test('tools/list: required tools are listed, each once', () => {
			for (const name of REQUIRED_TOOLS)
				assert.ok(names.includes(name), `${name} is not listed (listed: ${names.join(', ')})`);
			assert.equal(new Set(names).size, names.length, `duplicate names: ${names.join(', ')}`);
		});

		await t.test('tools/list: every listed tool has a sample in tool_samples.mjs', () => {
			const missing = names.filter((name) => !Object.hasOwn(TOOL_SAMPLES, name));
			assert.deepEqual(missing, [],
				`listed tools without a sample (add them to tests/sdk/tool_samples.mjs): ${missing.join(', ')}`);
		});

		// In the table's order: a sample may use what an earlier one made.
		for (const name of Object.keys(TOOL_SAMPLES)) {
			const tool = tools.find((x) => x.name === name);

			if (tool === undefined)
				continue;	/* not offered by this build or policy */
			await t.test(`tools/list: ${name} has title, description, schemas, annotations`,
				() => checkToolMeta(tool));
			for (const call of TOOL_SAMPLES[name].calls)
				await t.test(`tools/call ${name}: ${call.why}`,
					() => checkCall(client, name, call));
		}

		await t.test('tools/call of an unknown tool is McpError -32602', async () => {
			await assert.rejects(
				client.callTool({ name: UNKNOWN_TOOL, arguments: {} }),
				(err) => {
					assert.ok(err instanceof McpError, `not an McpError: ${err}`);
					assert.equal(err.code, ErrorCode.InvalidParams);
					return true;
				});
		});
	} finally {
		await close();
	}
}
