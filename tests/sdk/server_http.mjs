// Starting and stopping `mcp-sandbox --http 127.0.0.1:PORT` for the HTTP
// SDK test, on a port the kernel picked free just before.
import { spawn } from 'node:child_process';
import { connect, createServer } from 'node:net';
import { once } from 'node:events';

// Longest wait for the server to accept connections or to exit.
const START_DEADLINE_MS = 10000;
// Pause between connection attempts while it starts.
const CONNECT_RETRY_MS = 20;
// Longest wait for its exit after SIGTERM.
const STOP_DEADLINE_MS = 5000;

/** A loopback port nobody listens on right now. */
export async function freePort()
{
	const srv = createServer();

	srv.listen(0, '127.0.0.1');
	await once(srv, 'listening');
	const { port } = srv.address();
	srv.close();
	await once(srv, 'close');
	return port;
}

function canConnect(port)
{
	return new Promise((resolve) => {
		const sock = connect({ host: '127.0.0.1', port });

		sock.once('connect', () => { sock.destroy(); resolve(true); });
		sock.once('error', () => { sock.destroy(); resolve(false); });
	});
}

/**
 * Starts the server.  Resolves { proc, port, stderr(), stop() } once it
 * accepts connections, or { exited: {code, signal}, stderr() } if it exits
 * first.
 */
export async function startHttpServer(bin)
{
	const port = await freePort();
	const proc = spawn(bin, ['--http', `127.0.0.1:${port}`], {
		stdio: ['ignore', 'ignore', 'pipe'],
	});
	let err = '';
	let exited = null;
	const exitP = new Promise((resolve) => proc.once('exit', (code, signal) => {
		exited = { code, signal };
		resolve();
	}));
	const stderr = () => err;
	// 'close' comes after 'exit' once stderr is drained too.
	const closeP = once(proc, 'close');

	proc.stderr.setEncoding('utf8');
	proc.stderr.on('data', (d) => { err += d; process.stderr.write(d); });
	const deadline = Date.now() + START_DEADLINE_MS;
	while (exited === null && Date.now() < deadline) {
		if (await canConnect(port))
			break;
		await new Promise((r) => setTimeout(r, CONNECT_RETRY_MS));
	}
	if (exited !== null) {
		await closeP;
		return { exited, stderr };
	}
	if (Date.now() >= deadline) {
		proc.kill('SIGKILL');
		throw new Error(`mcp-sandbox --http did not accept connections within ${START_DEADLINE_MS} ms`);
	}
	const stop = async () => {
		if (exited === null) {
			proc.kill('SIGTERM');
			const timer = setTimeout(() => proc.kill('SIGKILL'), STOP_DEADLINE_MS);
			await exitP;
			clearTimeout(timer);
		}
		return exited;
	};
	return { proc, port, stderr, stop };
}

/** null if the binary serves --http; else why the HTTP test must skip. */
export async function probeHttp(bin)
{
	const s = await startHttpServer(bin);

	if (s.exited) {
		if (s.exited.code === 2 && /unknown option/i.test(s.stderr()))
			return `${bin} has no --http option yet (it said: ${s.stderr().trim()})`;
		return null;	/* some other failure: let the test report it */
	}
	await s.stop();
	return null;
}
