// One entry per tool: what tools/list must say about it and the calls the
// SDK client makes, with their exact expected results.  The test calls every
// tool the server lists and FAILS if a listed tool has no entry here, so a
// new tool cannot ship without a client-side check: add one entry.
//
// Entry fields:
//   meta   exact values tools/list must carry (title, annotations); the test
//          also requires a description, an object inputSchema and an object
//          outputSchema for every tool.
//   calls  list of { why, args, then }; `then` is one of
//            { structuredContent, text }   exact success (the SDK client also
//                                          validates structuredContent
//                                          against the tool's outputSchema)
//            { check(result) }             a custom assertion for results
//                                          that vary (paths, timings)
//            { isError: true, textIncludes: [...] }
//                                          a tool error whose text names
//                                          these (argument, rule, limit).
// Calls run in the order of this table (write_file comes before the tools
// that read what it wrote), on the server's fresh private workspace.
// Helpers below build the common shapes.

import assert from 'node:assert/strict';

/**
 * A successful call with exact structuredContent and text (text undefined:
 * any non-empty text rendering).
 */
export function ok(why, args, structuredContent, text)
{
	return { why, args, then: { structuredContent, text } };
}

/** A tool error (isError: true) whose text contains every string given. */
export function toolError(why, args, ...textIncludes)
{
	return { why, args, then: { isError: true, textIncludes } };
}

/** A successful call checked by a function of the CallToolResult. */
export function custom(why, args, check)
{
	return { why, args, then: { check } };
}

/** The 4 hints of a read-only, idempotent, closed-world tool. */
const PURE = {
	readOnlyHint: true,
	destructiveHint: false,
	idempotentHint: true,
	openWorldHint: false,
};

/** The 4 hints of a tool that changes the workspace. */
const WRITES = {
	readOnlyHint: false,
	destructiveHint: true,
	idempotentHint: false,
	openWorldHint: false,
};

// The file every file tool sample works on, and its content.
const SAMPLE_DIR = 'sdk-sample';
const SAMPLE_FILE = `${SAMPLE_DIR}/hello.txt`;
const SAMPLE_TEXT = 'hello from the SDK test\n';

// The longest expression calculate.input.json accepts (maxLength).
const CALC_EXPR_MAX = 4096;

export const TOOL_SAMPLES = {
	calculate: {
		meta: { title: 'Exact calculator', annotations: PURE },
		calls: [
			ok('exact decimals', { expression: '0.1+0.2' },
				{ value: '3/10', kind: 'fraction', decimal: '0.3', decimalExact: true },
				'0.1+0.2 = 3/10 = 0.3'),
			ok('big integers', { expression: '2^100' },
				{
					value: '1267650600228229401496703205376',
					kind: 'integer',
					decimal: '1267650600228229401496703205376',
					decimalExact: true,
				},
				'2^100 = 1267650600228229401496703205376'),
			toolError('expression over maxLength',
				{ expression: '1'.repeat(CALC_EXPR_MAX + 1) },
				'expression', String(CALC_EXPR_MAX)),
			toolError('expression missing', {}, 'expression', 'required'),
		],
	},
	write_file: {
		meta: { title: 'Write a workspace file', annotations: WRITES },
		calls: [
			ok('a new file in a new directory',
				{ path: SAMPLE_FILE, content: SAMPLE_TEXT, create_dirs: true },
				{
					path: SAMPLE_FILE,
					bytes_written: SAMPLE_TEXT.length,
					size: SAMPLE_TEXT.length,
					created: true,
				},
				undefined),
			toolError('a path above the workspace', { path: '../sdk-escape.txt', content: 'x' }),
		],
	},
	read_file: {
		meta: { title: 'Read a workspace file', annotations: PURE },
		calls: [
			custom('the file write_file wrote', { path: SAMPLE_FILE }, (r) => {
				assert.deepEqual(r.structuredContent, {
					path: SAMPLE_FILE,
					size: SAMPLE_TEXT.length,
					offset: 0,
					bytes: SAMPLE_TEXT.length,
					truncated: false,
					encoding: 'utf8',
					content: SAMPLE_TEXT,
				});
			}),
			toolError('an absolute path', { path: '/etc/passwd' }),
		],
	},
	list_directory: {
		meta: { title: 'List a workspace directory', annotations: PURE },
		calls: [
			custom('the directory write_file made', { path: SAMPLE_DIR }, (r) => {
				const sc = r.structuredContent;
				assert.equal(sc.truncated, false);
				assert.equal(sc.entries.length, 1, JSON.stringify(sc.entries));
				assert.ok(sc.entries[0].path.endsWith('hello.txt'), sc.entries[0].path);
				assert.equal(sc.entries[0].type, 'file');
				assert.equal(sc.entries[0].size, SAMPLE_TEXT.length);
			}),
		],
	},
	search_files: {
		meta: { title: 'Search workspace files', annotations: PURE },
		calls: [
			custom('content written by write_file', { content: 'from the SDK' }, (r) => {
				const sc = r.structuredContent;
				assert.equal(sc.truncated, false);
				assert.equal(sc.matches.length, 1, JSON.stringify(sc.matches));
				assert.ok(sc.matches[0].path.endsWith('hello.txt'), sc.matches[0].path);
				assert.equal(sc.matches[0].line, 1);
				assert.equal(sc.matches[0].text, SAMPLE_TEXT.trimEnd());
			}),
		],
	},
	query_sqlite: {
		meta: { title: 'Query a SQLite database (read-only)', annotations: PURE },
		calls: [
			// Databases come from the policy; none is named "sdk_no_such_db".
			toolError('a database the policy does not offer',
				{ database: 'sdk_no_such_db', sql: 'SELECT 1' }, 'sdk_no_such_db'),
		],
	},
	run_command: {
		meta: { title: 'Run a command in the sandbox', annotations: WRITES },
		calls: [
			custom('echo hello', { command: 'echo', args: ['hello'] },
				(r) => ranWith(r, 'hello\n')),
			custom('cat of the file write_file wrote (one workspace)',
				{ command: 'cat', args: [SAMPLE_FILE] },
				(r) => ranWith(r, SAMPLE_TEXT)),
			toolError('a program not on the allow-list',
				{ command: 'sdk_no_such_program' }, 'sdk_no_such_program'),
		],
	},
	run_code: {
		meta: { title: 'Run code in the sandbox', annotations: WRITES },
		calls: [
			// sh: the one language every Debian machine has.
			custom('sh arithmetic', { language: 'sh', code: 'echo $((6 * 7))' },
				(r) => ranWith(r, '42\n')),
			custom('a session starts', { language: 'sh', code: 'x=6', session: 'sdk' },
				(r) => {
					ranWith(r, '');
					assert.equal(r.structuredContent.session.started, true);
				}),
			custom('and keeps its state', { language: 'sh', code: 'echo $((x * 7))', session: 'sdk' },
				(r) => {
					ranWith(r, '42\n');
					assert.equal(r.structuredContent.session.calls, 2);
				}),
		],
	},
	list_sessions: {
		meta: { title: 'List run_code sessions', annotations: PURE },
		calls: [
			custom('the open session', {}, (r) => {
				assert.deepEqual(r.structuredContent.sessions.map((s) => [s.name, s.language, s.calls]),
					[['sdk', 'sh', 2]]);
				assert.deepEqual(r.structuredContent.ended, []);
			}),
		],
	},
	end_session: {
		meta: {
			title: 'End a run_code session',
			annotations: {
				readOnlyHint: false,
				destructiveHint: true,
				idempotentHint: true,
				openWorldHint: false,
			},
		},
		calls: [
			custom('ends it', { session: 'sdk' }, (r) => {
				assert.equal(r.structuredContent.name, 'sdk');
				assert.equal(r.structuredContent.calls, 2);
			}),
			toolError('then it is gone', { session: 'sdk' }, "The session 'sdk' has ended already"),
		],
	},
	run_skill_script: {
		meta: {
			title: 'Run an Agent Skill script',
			annotations: {
				readOnlyHint: false,
				destructiveHint: false,
				idempotentHint: false,
				openWorldHint: false,
			},
		},
		calls: [
			toolError('a skill that does not exist',
				{ skill: 'sdk_no_such_skill', script: 'scripts/run.py' }, 'sdk_no_such_skill'),
		],
	},
};

/** A sandboxed run that exited 0 with exactly this stdout and no stderr. */
function ranWith(r, stdout)
{
	const sc = r.structuredContent;

	assert.equal(sc.exit_code, 0, `exit_code (stderr: ${JSON.stringify(sc.stderr)})`);
	assert.equal(sc.signal, 0, 'signal');
	assert.equal(sc.timed_out, false, 'timed_out');
	assert.equal(sc.stdout, stdout, 'stdout');
	assert.equal(sc.stderr, '', 'stderr');
	assert.equal(sc.stdout_truncated, false, 'stdout_truncated');
	assert.equal(sc.stderr_truncated, false, 'stderr_truncated');
}
