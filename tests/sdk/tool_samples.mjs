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
// Helpers below build the common shapes.

/** A successful call with exact structuredContent and text. */
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

// The longest expression calculate.input.json accepts (maxLength).
const CALC_EXPR_MAX = 4096;

export const TOOL_SAMPLES = {
	calculate: {
		meta: { title: 'Calculator (exact)', annotations: PURE },
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
	// Tools of issue 4 go here, one entry each, e.g.
	// run_command: { meta: {...}, calls: [custom('echo', { argv: ['/bin/echo', 'hello'] },
	//	(r) => assert.equal(r.structuredContent.stdout, 'hello\n'))] },
};
