// A stand-in model API on loopback for real MCP clients (tests/clients).
//
// It speaks the three wire formats the clients use, streamed or not:
//   Anthropic Messages      POST /v1/messages                 (Claude Code)
//   Gemini generateContent  POST /v1beta/models/M:(stream)GenerateContent (Gemini CLI)
//   OpenAI Responses        POST /v1/responses                (Codex CLI)
//   OpenAI Chat Completions POST /v1/chat/completions         (fallback)
// and answers with scripted tool calls: the n-th call of SCRIPT when the
// conversation holds n tool results so far, then a final text. Tool names
// are looked up in the tools the client declared in the request (a client
// names an MCP tool its own way, e.g. mcp__sandbox__run_command), so the
// script names our tools only.
//
// Every tool result a client sends back is recorded, as the client sent
// it, one JSON line per result in the file given by --record: {"api",
// "tool", "call_id", "result"} where "result" is the raw block of the
// client's request (a tool_result block, a functionResponse part, a
// function_call_output item). Issue 16 reads this file to see what each
// client's model receives for image results.
//
// Any other request (token counting, titles, quota probes) gets a short
// text answer. Requests are also logged to --log, one line each.
//
// usage: node fake_model.mjs --record FILE [--log FILE] [--script JSON]
// prints "listening PORT" on stdout once ready.
import fs from "node:fs";
import http from "node:http";

const arg = (name, dflt) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const RECORD = arg("--record");
const LOG = arg("--log");
// The default script: one pure tool, one sandboxed command, one sandboxed
// snippet. Each entry: [our tool name, arguments].
const SCRIPT = JSON.parse(arg("--script", JSON.stringify([
  ["calculate", { expression: "2^64" }],
  ["run_command", { command: "echo", args: ["hello", "from", "the", "sandbox"] }],
  ["run_code", { language: "python3", code: "print(6*7)" }],
])));
const FINAL = "All three tools answered.";
const MAX_BODY = 16 << 20; // a client's request, with every tool result

const log = (o) => LOG && fs.appendFileSync(LOG, JSON.stringify(o) + "\n");
const record = (o) => fs.appendFileSync(RECORD, JSON.stringify(o) + "\n");

// The declared tool whose name is ours or ends with "_"/"__" + ours.
function pick(declared, ours) {
  return declared.find((n) => n === ours) ??
    declared.find((n) => n.endsWith("__" + ours) || n.endsWith("_" + ours) ||
      n.endsWith("." + ours) || n.endsWith("/" + ours));
}

// What the next answer is: a tool call (name as the client knows it) or
// the final text.
function next(declared, nresults) {
  if (nresults >= SCRIPT.length) return { text: FINAL };
  const [ours, args] = SCRIPT[nresults];
  const name = pick(declared, ours);
  if (!name) return { text: `no tool called ${ours} was declared` };
  return { tool: name, args, id: `call_${nresults + 1}` };
}

// Every tool name a request declares, in any of the three formats (a
// namespace's tools as NAMESPACE__TOOL), for the request log.
function declaredNames(body) {
  return (body.tools ?? []).flatMap((t) =>
    t.functionDeclarations ? t.functionDeclarations.map((f) => f.name)
      : t.type === "namespace" ? (t.tools ?? []).map((f) => `${t.name}__${f.name}`)
        : [t.name ?? t.function?.name ?? t.type]);
}

// ---- Anthropic Messages ----
function anthropic(body, res) {
  const declared = (body.tools ?? []).map((t) => t.name);
  let n = 0;
  for (const m of body.messages ?? [])
    if (Array.isArray(m.content))
      for (const b of m.content)
        if (b.type === "tool_result") {
          n++;
          recordOnce("anthropic", b.tool_use_id, b);
        }
  // a call the client moved to the background ended: what the model is
  // told of it, in a user message (issue 22)
  for (const m of body.messages ?? []) {
    if (m.role !== "user") continue;
    const texts = typeof m.content === "string" ? [m.content]
      : (Array.isArray(m.content) ? m.content : [])
        .filter((b) => b.type === "text").map((b) => b.text);
    for (const t of texts)
      if (t.includes("<task-notification>"))
        recordOnce("anthropic", `notification#${t.length}:${t.slice(0, 120)}`,
          { type: "task_notification", text: t });
  }
  const a = declared.length ? next(declared, n) : { text: "ok" };
  const content = a.tool ? [{ type: "tool_use", id: a.id, name: a.tool, input: a.args }]
    : [{ type: "text", text: a.text }];
  const msg = { id: `msg_${Date.now()}`, type: "message", role: "assistant",
    model: body.model, content, stop_reason: a.tool ? "tool_use" : "end_turn",
    stop_sequence: null, usage: { input_tokens: 10, output_tokens: 10 } };
  if (!body.stream) return json(res, msg);
  sse(res, (ev) => {
    ev("message_start", { type: "message_start", message: { ...msg, content: [], stop_reason: null } });
    content.forEach((b, i) => {
      if (b.type === "tool_use") {
        ev("content_block_start", { type: "content_block_start", index: i,
          content_block: { type: "tool_use", id: b.id, name: b.name, input: {} } });
        ev("content_block_delta", { type: "content_block_delta", index: i,
          delta: { type: "input_json_delta", partial_json: JSON.stringify(b.input) } });
      } else {
        ev("content_block_start", { type: "content_block_start", index: i,
          content_block: { type: "text", text: "" } });
        ev("content_block_delta", { type: "content_block_delta", index: i,
          delta: { type: "text_delta", text: b.text } });
      }
      ev("content_block_stop", { type: "content_block_stop", index: i });
    });
    ev("message_delta", { type: "message_delta", delta: { stop_reason: msg.stop_reason,
      stop_sequence: null }, usage: { output_tokens: 10 } });
    ev("message_stop", { type: "message_stop" });
  });
}

// ---- Gemini ----
function gemini(body, res, stream) {
  const declared = (body.tools ?? []).flatMap((t) => (t.functionDeclarations ?? []).map((f) => f.name));
  let n = 0;
  for (const c of body.contents ?? [])
    for (const p of c.parts ?? [])
      if (p.functionResponse) {
        n++;
        recordOnce("gemini", p.functionResponse.id ?? `${p.functionResponse.name}#${n}`, p);
      }
  const a = declared.length ? next(declared, n) : { text: "ok" };
  const part = a.tool ? { functionCall: { name: a.tool, args: a.args, id: a.id } } : { text: a.text };
  const out = { candidates: [{ content: { role: "model", parts: [part] }, finishReason: "STOP", index: 0 }],
    usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 10, totalTokenCount: 20 },
    modelVersion: "stand-in" };
  if (!stream) return json(res, out);
  sse(res, (ev) => ev(null, out));
}

// ---- OpenAI Responses ----
function responses(body, res) {
  // Codex declares an MCP server's tools in a "namespace" tool: a call
  // names the function and its namespace apart
  const ns = new Map();
  const declared = (body.tools ?? []).flatMap((t) => {
    if (t.type !== "namespace") return [t.name ?? t.function?.name].filter(Boolean);
    return (t.tools ?? []).map((f) => {
      ns.set(`${t.name}__${f.name}`, [t.name, f.name]);
      return `${t.name}__${f.name}`;
    });
  });
  let n = 0;
  for (const item of Array.isArray(body.input) ? body.input : [])
    if (item.type === "function_call_output") {
      n++;
      recordOnce("openai-responses", item.call_id, item);
    }
  const a = declared.length ? next(declared, n) : { text: "ok" };
  const id = `resp_${Date.now()}`;
  const item = a.tool
    ? { type: "function_call", id: `fc_${a.id}`, call_id: a.id,
        ...(ns.has(a.tool) ? { namespace: ns.get(a.tool)[0], name: ns.get(a.tool)[1] } : { name: a.tool }),
        arguments: JSON.stringify(a.args), status: "completed" }
    : { type: "message", id: `msg_${id}`, role: "assistant", status: "completed",
        content: [{ type: "output_text", text: a.text, annotations: [] }] };
  const resp = { id, object: "response", created_at: Math.floor(Date.now() / 1000),
    status: "completed", model: body.model, output: [item],
    usage: { input_tokens: 10, output_tokens: 10, total_tokens: 20,
      input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } } };
  if (!body.stream) return json(res, resp);
  sse(res, (ev) => {
    ev("response.created", { type: "response.created", response: { ...resp, status: "in_progress", output: [] } });
    ev("response.output_item.added", { type: "response.output_item.added", output_index: 0, item });
    if (!a.tool)
      ev("response.output_text.delta", { type: "response.output_text.delta", item_id: item.id,
        output_index: 0, content_index: 0, delta: a.text });
    ev("response.output_item.done", { type: "response.output_item.done", output_index: 0, item });
    ev("response.completed", { type: "response.completed", response: resp });
  });
}

// ---- OpenAI Chat Completions ----
function chat(body, res) {
  const declared = (body.tools ?? []).map((t) => t.function?.name).filter(Boolean);
  let n = 0;
  for (const m of body.messages ?? [])
    if (m.role === "tool") {
      n++;
      recordOnce("openai-chat", m.tool_call_id, m);
    }
  const a = declared.length ? next(declared, n) : { text: "ok" };
  const message = a.tool
    ? { role: "assistant", content: null, tool_calls: [{ id: a.id, type: "function",
        function: { name: a.tool, arguments: JSON.stringify(a.args) } }] }
    : { role: "assistant", content: a.text };
  const out = { id: `chatcmpl_${Date.now()}`, object: "chat.completion", created: 0,
    model: body.model, choices: [{ index: 0, message, finish_reason: a.tool ? "tool_calls" : "stop" }],
    usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 } };
  if (!body.stream) return json(res, out);
  sse(res, (ev) => {
    ev(null, { ...out, object: "chat.completion.chunk",
      choices: [{ index: 0, delta: message, finish_reason: out.choices[0].finish_reason }] });
    res.write("data: [DONE]\n\n");
  });
}

// A result is recorded the first time it is seen (each later turn of the
// conversation repeats it).
const seen = new Set();
function recordOnce(api, callId, block) {
  const key = `${api}/${callId}`;
  if (seen.has(key)) return;
  seen.add(key);
  record({ api, call_id: callId, tool: toolOf.get(callId) ?? null, result: block });
}
// call id -> the tool name we asked for, filled as calls are made
const toolOf = new Map();

function json(res, o) {
  res.writeHead(200, { "Content-Type": "application/json" });
  res.end(JSON.stringify(o));
}

function sse(res, fn) {
  res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache" });
  fn((event, data) => res.write((event ? `event: ${event}\n` : "") + `data: ${JSON.stringify(data)}\n\n`));
  res.end();
}

const server = http.createServer((req, res) => {
  const chunks = [];
  let size = 0;
  req.on("data", (c) => {
    size += c.length;
    if (size > MAX_BODY) req.destroy();
    else chunks.push(c);
  });
  req.on("end", () => {
    let body = {};
    try {
      body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString()) : {};
    } catch {
      res.writeHead(400).end();
      return;
    }
    const url = new URL(req.url, "http://x");
    if (process.env.FAKE_MODEL_DUMP)
      fs.appendFileSync(process.env.FAKE_MODEL_DUMP, JSON.stringify(body) + "\n");
    log({ method: req.method, path: url.pathname, tools: declaredNames(body) });
    // remember which of our tools each call id is, for the record
    const wrap = res.end.bind(res);
    const p = url.pathname;
    if (req.method === "POST" && /\/v1\/messages$/.test(p)) anthropic(body, res);
    else if (req.method === "POST" && /\/v1\/messages\/count_tokens$/.test(p))
      json(res, { input_tokens: 10 });
    else if (req.method === "POST" && /:streamGenerateContent$/.test(p)) gemini(body, res, true);
    else if (req.method === "POST" && /:generateContent$/.test(p)) gemini(body, res, false);
    else if (req.method === "POST" && /:countTokens$/.test(p)) json(res, { totalTokens: 10 });
    else if (req.method === "POST" && /\/responses$/.test(p)) responses(body, res);
    else if (req.method === "POST" && /\/chat\/completions$/.test(p)) chat(body, res);
    else if (req.method === "GET" && /\/models/.test(p)) json(res, { data: [], models: [] });
    else {
      res.writeHead(404, { "Content-Type": "application/json" });
      wrap(JSON.stringify({ error: { message: `stand-in: no ${req.method} ${p}` } }));
    }
  });
});
// the call ids of the script are fixed: call_1 is SCRIPT[0], ...
SCRIPT.forEach(([ours], i) => toolOf.set(`call_${i + 1}`, ours));
server.listen(0, "127.0.0.1", () => console.log(`listening ${server.address().port}`));
process.on("SIGTERM", () => server.close(() => process.exit(0)));
