# Shared helpers of the benchmark scripts (sourced, not run).
# Expects $here (tests/bench) and $root (the source tree) to be set.

# Sets $ours to the mcp-sandbox binary: the argument, else $MCP_SANDBOX_BIN,
# else the newest build*/server/mcp-sandbox under the source tree.
bench_find_ours()
{
	ours=${1:-${MCP_SANDBOX_BIN:-}}
	if [ -z "$ours" ]; then
		ours=$(ls -t "$root"/build*/server/mcp-sandbox 2>/dev/null | head -n 1)
	fi
	if [ -z "$ours" ] || [ ! -x "$ours" ]; then
		echo "bench: no mcp-sandbox binary found (build it, or pass its path" \
			"or set MCP_SANDBOX_BIN)" >&2
		return 1
	fi
	ours=$(cd "$(dirname "$ours")" && pwd)/$(basename "$ours")
	return 0
}

# Sets $driver to stdio_bench: the one built next to $ours, else
# $STDIO_BENCH, else compiled now from the source into a temporary folder.
bench_find_driver()
{
	local built
	built=$(dirname "$ours")/../tests/bench/stdio_bench
	driver=${STDIO_BENCH:-}
	if [ -z "$driver" ] && [ -x "$built" ]; then
		driver=$built
	fi
	if [ -z "$driver" ]; then
		bench_tmp_driver=$(mktemp -d /tmp/stdio_bench.XXXXXX)
		driver=$bench_tmp_driver/stdio_bench
		if ! cc -std=gnu17 -O2 -D_GNU_SOURCE -o "$driver" "$here/stdio_bench.c"; then
			echo "bench: cannot build stdio_bench" >&2
			return 1
		fi
	fi
	[ -x "$driver" ]
}

bench_need_node_modules()
{
	if [ ! -d "$here/node_modules" ]; then
		echo "bench: $here/node_modules is missing: run tests/npm-setup.sh bench" >&2
		return 1
	fi
	if ! command -v node >/dev/null 2>&1; then
		echo "bench: node is not installed (the reference servers need it)" >&2
		return 1
	fi
}

# fig FILE 'PREFIX [key=value ...]' KEY: the value of KEY on the first line
# of FILE whose first words are PREFIX; "?" when absent.
fig()
{
	awk -v want="$2" -v key="$3" '
		BEGIN { n = split(want, w, " ") }
		{
			ok = 1
			for (i = 1; i <= n; i++)
				if ($i != w[i]) { ok = 0; break }
			if (!ok) next
			for (i = 1; i <= NF; i++)
				if (index($i, key "=") == 1) {
					print substr($i, length(key) + 2); found = 1; exit
				}
		}
		END { if (!found) print "?" }' "$1"
}

# mib KIB: KiB to MiB with one decimal.
mib()
{
	case $1 in
	''|*[!0-9]*) echo "?" ;;
	*) awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }' ;;
	esac
}

bench_name()
{
	case $1 in
	floor) echo "floor (C responder)" ;;
	ours) echo "mcp-sandbox" ;;
	everything) echo "server-everything" ;;
	codex) echo "codex-exec-mcp-server" ;;
	*) echo "$1" ;;
	esac
}

# ratio_line TEXT OURS REF: prints OURS/REF.
ratio_line()
{
	awk -v t="$1" -v a="$2" -v b="$3" 'BEGIN {
		if (a == "?" || b == "?" || b + 0 == 0)
			printf "  %-58s ?\n", t
		else
			printf "  %-58s %.2fx  (%s vs %s)\n", t, a / b, a, b
	}'
}

# target_lt TEXT OURS REF: met when OURS < REF.
target_lt()
{
	awk -v t="$1" -v a="$2" -v b="$3" 'BEGIN {
		if (a == "?" || b == "?") { printf "  [MISSED] %s: no figure\n", t; exit 1 }
		ok = (a + 0 < b + 0)
		printf "  [%s] %s: %s vs %s\n", ok ? "met" : "MISSED", t, a, b
		exit !ok
	}'
}

# target_ge_x TEXT FACTOR OURS REF: met when OURS >= FACTOR * REF.
target_ge_x()
{
	awk -v t="$1" -v x="$2" -v a="$3" -v b="$4" 'BEGIN {
		if (a == "?" || b == "?") { printf "  [MISSED] %s: no figure\n", t; exit 1 }
		ok = (a + 0 >= x * b)
		printf "  [%s] %s: %s vs %s (%.1fx)\n", ok ? "met" : "MISSED", t, a, b, \
			b + 0 ? a / b : 0
		exit !ok
	}'
}

# free_port: a loopback TCP port nobody listens on now (the kernel picks it).
free_port()
{
	node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}

# Sets $server_path, the PATH the measured servers get: a plain Debian PATH,
# so that a developer's shims (pyenv, nvm, ...) on the caller's PATH do not
# enter the figures (a pyenv python3 shim costs ~200 ms to run).  BENCH_PATH
# overrides it.  Also sets $node_bin, the node that runs the references.
bench_server_env()
{
	server_path=${BENCH_PATH:-/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin}
	node_bin=$(command -v node)
}

# merge NAME: (needs $out) one file $out/NAME whose every figure is the median of the
# rounds' $out/NAME.1, .2, ... (lines matched by their first word and their
# label= and inflight= values).
merge()
{
	awk '
		{
			id = $1
			for (i = 2; i <= NF; i++)
				if ($i ~ /^(label|inflight)=/) id = id " " $i
			if (!(id in seen)) { seen[id] = 1; order[++nid] = id }
			for (i = 2; i <= NF; i++) {
				split($i, kv, "=")
				if ($i ~ /^(label|inflight)=/) continue
				k = id SUBSEP kv[1]
				if (!(k in nv)) keys[id] = keys[id] " " kv[1]
				vals[k, ++nv[k]] = kv[2]
			}
		}
		END {
			for (o = 1; o <= nid; o++) {
				id = order[o]
				line = id
				nk = split(keys[id], ks, " ")
				for (j = 1; j <= nk; j++) {
					k = id SUBSEP ks[j]
					n = nv[k]
					for (a = 1; a <= n; a++) v[a] = vals[k, a] + 0
					for (a = 2; a <= n; a++)
						for (b = a; b > 1 && v[b - 1] > v[b]; b--) {
							t = v[b]; v[b] = v[b - 1]; v[b - 1] = t
						}
					line = line " " ks[j] "=" v[int((n + 1) / 2)]
				}
				print line
			}
		}' "$out/$1".[0-9]* >"$out/$1"
}
