-- wrk script for tests/bench/http_bench.sh: POSTs one JSON-RPC body over
-- keep-alive connections and checks every answer.
-- Environment (read once per thread):
--   BENCH_BODY     the request body (one JSON-RPC request)
--   BENCH_HEADERS  extra headers, one "Name: value" per line
--   BENCH_EXPECT   text every answer body must contain
--   BENCH_SESSIONS Mcp-Session-Id values, space-separated (none: no header);
--                  thread t sends with the ones at positions t, t+T, ...
--                  in turn, so no session carries every connection's calls
--   BENCH_THREADS  T, the -t given to wrk
-- done() prints one line: "wrk requests=N good=N bad=N rps=R p50_us=U
-- p99_us=U first_bad_status=S" for the script to parse.

local threads = {}
local nsetup = 0

function setup(thread)
	thread:set("tid", nsetup)
	nsetup = nsetup + 1
	table.insert(threads, thread)
end

function init(args)
	good = 0
	bad = 0
	first_bad_status = 0
	expect = os.getenv("BENCH_EXPECT") or ""
	wrk.method = "POST"
	wrk.body = os.getenv("BENCH_BODY")
	wrk.headers["Content-Type"] = "application/json"
	wrk.headers["Accept"] = "application/json, text/event-stream"
	for line in string.gmatch(os.getenv("BENCH_HEADERS") or "", "[^\n]+") do
		local name, value = string.match(line, "^([^:]+):%s*(.*)$")
		if name then
			wrk.headers[name] = value
		end
	end
	-- One ready-made request per session of this thread (or one, none).
	local all, mine = {}, {}
	local nthreads = tonumber(os.getenv("BENCH_THREADS") or "1")
	for sid in string.gmatch(os.getenv("BENCH_SESSIONS") or "", "%S+") do
		table.insert(all, sid)
	end
	for i, sid in ipairs(all) do
		if (i - 1) % nthreads == tid then
			table.insert(mine, sid)
		end
	end
	if #mine == 0 then
		mine = all
	end
	reqs = {}
	for _, sid in ipairs(mine) do
		wrk.headers["Mcp-Session-Id"] = sid
		table.insert(reqs, wrk.format())
	end
	if #reqs == 0 then
		table.insert(reqs, wrk.format())
	end
	next_req = 0
end

function request()
	next_req = next_req % #reqs + 1
	return reqs[next_req]
end

function response(status, headers, body)
	if status == 200 and string.find(body, expect, 1, true) then
		good = good + 1
	else
		bad = bad + 1
		if first_bad_status == 0 then
			first_bad_status = status
		end
	end
end

function done(summary, latency, requests)
	local g, b, s = 0, 0, 0
	for _, t in ipairs(threads) do
		g = g + t:get("good")
		b = b + t:get("bad")
		if s == 0 then
			s = t:get("first_bad_status")
		end
	end
	io.write(string.format(
		"wrk requests=%d good=%d bad=%d rps=%.0f p50_us=%d p99_us=%d first_bad_status=%d errors=%d\n",
		summary.requests, g, b, summary.requests / (summary.duration / 1e6),
		latency:percentile(50), latency:percentile(99), s,
		summary.errors.connect + summary.errors.read + summary.errors.write +
		summary.errors.status + summary.errors.timeout))
end
