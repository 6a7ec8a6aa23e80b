// Entry point CTest runs: `node launch.mjs stdio|http`, with MCP_SANDBOX_BIN
// naming the server binary.  Exits 77 (CTest SKIP_RETURN_CODE) with a clear
// message when the SDK is not installed (run tests/npm-setup.sh sdk) or, for
// http, when the binary has no --http option yet.  Otherwise runs the
// node:test suite of that transport; a failure makes the exit code 1.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SKIP = 77;
const here = dirname(fileURLToPath(import.meta.url));
const mode = process.argv[2];

if (mode !== 'stdio' && mode !== 'http') {
	console.error('usage: node launch.mjs stdio|http');
	process.exit(2);
}
if (!existsSync(join(here, 'node_modules', '@modelcontextprotocol', 'sdk', 'package.json'))) {
	console.error(`SKIP: ${join(here, 'node_modules')} is missing: run tests/npm-setup.sh sdk`);
	process.exit(SKIP);
}
const bin = process.env.MCP_SANDBOX_BIN;
if (!bin || !existsSync(bin)) {
	console.error(`sdk: MCP_SANDBOX_BIN is not set to the mcp-sandbox binary (got ${JSON.stringify(bin)})`);
	process.exit(1);
}
if (mode === 'http') {
	const { probeHttp } = await import('./server_http.mjs');
	const why = await probeHttp(bin);
	if (why !== null) {
		console.error(`SKIP: ${why}`);
		process.exit(SKIP);
	}
}
await import(`./${mode}.test.mjs`);
