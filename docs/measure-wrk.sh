#!/usr/bin/env bash
# Synchronous generate measured as the issue measured it (issue 24: "with
# wrk, 8 keep-alive connections, API key, rate limits off"): the server
# runs alone (`folio serve`, the default unlimited plan), wrk drives
# POST /api/v1/documents/generate with the example invoice of 20 lines
# (the body `folio bench` sends), and render-only comes from
# `folio bench --scenarios render` in its own process right after, on the
# same machine. Each binary given runs RUNS interleaved rounds with its data
# on DISK and on tmpfs; prints each round and the medians of docs/s and of
# the ratio sync/render-only. Needs wrk (apt-get install wrk), jq, curl.
#
#   RUNS=5 DURATION=5s DISK=/var/tmp/folio-wrk docs/measure-wrk.sh /tmp/folio-a /tmp/folio-b
#
# With PAIRED=1 each round alternates one-second slices, SLICES of each
# (6 by default): wrk against the server, then render-only in its own
# process, so both see the same machine (the VM's speed drifts from one
# second to the next); WHERES=tmpfs (or disk) measures one place only.
#
#   PAIRED=1 RUNS=7 WHERES=tmpfs docs/measure-wrk.sh /tmp/folio-a /tmp/folio-b
set -euo pipefail
runs=${RUNS:-5}
duration=${DURATION:-5s}
disk=${DISK:-$PWD/measure-wrk-data}
addr=${ADDR:-127.0.0.1:18444}
for tool in wrk jq curl; do
	command -v "$tool" >/dev/null || { echo "measure-wrk: $tool is missing (apt-get install -y $tool)" >&2; exit 1; }
done
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$disk"
out=$(mktemp)
work=$(mktemp -d)
trap 'rm -rf "$out" "$work"' EXIT
# The request body: the bench's (loadInvoice: the example's items repeated to 20).
vars=$(jq -c '.items as $i | .items = [range(0; 20) as $k | if $k < ($i|length) then $i[$k] else $i[$k % 5] end]' "$here/testdata/templates/invoice.vars.json")
cat >"$work/post.lua" <<'EOF'
wrk.method = "POST"
local f = io.open(os.getenv("WRK_BODY"), "rb")
wrk.body = f:read("*a")
f:close()
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer " .. os.getenv("WRK_KEY")
done = function(summary, latency, requests)
	io.write(string.format("WRK %d %d %d %f\n", summary.requests, summary.errors.status, summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout, summary.duration / 1e6))
end
EOF
round() { # bin where i
	local bin=$1 where=$2 i=$3 d
	if [ "$where" = disk ]; then d="$disk/run-$(basename "$bin")-$i"; else d=$(mktemp -u /dev/shm/folio-wrk-XXXX); fi
	rm -rf "$d"
	TMPDIR=/dev/shm "$bin" serve --addr "$addr" --data "$d" --rate-limits off >"$work/serve.log" 2>&1 &
	local pid=$!
	for _ in $(seq 1 100); do
		[ -f "$d/tls/cert.pem" ] && curl -sk "https://$addr/api/health" >/dev/null 2>&1 && break
		sleep 0.1
	done
	local u="https://$addr" tok key tpl
	tok=$(curl -sk "$u/api/auth/signup" -H 'Content-Type: application/json' \
		-d "{\"email\":\"wrk-$i-$RANDOM@example.com\",\"password\":\"bench password\",\"name\":\"Bench\"}" | jq -r .accessToken)
	key=$(curl -sk "$u/api/api-keys" -H "Authorization: Bearer $tok" -H 'Content-Type: application/json' -d '{"name":"wrk"}' | jq -r .plainKey)
	tpl=$(jq '.name = "Invoice bench"' "$here/testdata/templates/invoice.json" |
		curl -sk "$u/api/templates" -H "Authorization: Bearer $tok" -H 'Content-Type: application/json' --data-binary @- | jq -r .id)
	jq -cn --arg t "$tpl" --argjson v "$vars" '{templateId: $t, format: "pdf", variables: $v}' >"$work/body.json"
	local status
	status=$(curl -sk -o /dev/null -w '%{http_code}' "$u/api/v1/documents/generate" -H "Authorization: Bearer $key" \
		-H 'Content-Type: application/json' --data-binary @"$work/body.json")
	[ "$status" = 200 ] || [ "$status" = 201 ] || { echo "measure-wrk: generate answered $status" >&2; kill "$pid"; exit 1; }
	WRK_BODY="$work/body.json" WRK_KEY="$key" wrk -t2 -c8 -d1s -s "$work/post.lua" "$u/api/v1/documents/generate" >/dev/null # warm
	local w r
	if [ "${PAIRED:-}" = 1 ]; then
		# Alternating one-second slices: wrk against the server, then
		# render-only in its own process, SLICES times; each side's docs/s
		# is its documents over its own seconds.
		local n=0 bad=0 s=0 rd=0 rs=0 line j
		for _ in $(seq 1 "${SLICES:-6}"); do
			line=$(WRK_BODY="$work/body.json" WRK_KEY="$key" wrk -t2 -c8 -d1s -s "$work/post.lua" "$u/api/v1/documents/generate" | grep '^WRK')
			read -r _ a b c e <<<"$line"
			n=$((n + a)) bad=$((bad + b + c)) s=$(awk -v x="$s" -v y="$e" 'BEGIN {print x + y}')
			j=$(TMPDIR=/dev/shm "$bin" bench --scenarios render --duration 1s --json 2>/dev/null)
			rd=$(awk -v x="$rd" -v y="$(jq '.results[0].documents' <<<"$j")" 'BEGIN {print x + y}')
			rs=$(awk -v x="$rs" -v y="$(jq '.results[0].seconds' <<<"$j")" 'BEGIN {print x + y}')
		done
		w="WRK $n $bad 0 $s"
		r=$(awk -v d="$rd" -v t="$rs" 'BEGIN {print d / t}')
		kill "$pid"
		wait "$pid" 2>/dev/null || true
		rm -rf "$d"
	else
		w=$(WRK_BODY="$work/body.json" WRK_KEY="$key" wrk -t2 -c8 -d"$duration" -s "$work/post.lua" "$u/api/v1/documents/generate" | grep '^WRK')
		kill "$pid"
		wait "$pid" 2>/dev/null || true
		rm -rf "$d"
		r=$(TMPDIR=/dev/shm "$bin" bench --scenarios render --duration "$duration" --json 2>/dev/null | jq '.results[0].docsPerSecond')
	fi
	awk -v b="$(basename "$bin")" -v w="$where" -v i="$i" -v r="$r" -v line="$w" 'BEGIN {
		split(line, f, " "); n = f[2]; bad = f[3] + f[4]; s = f[5]
		printf "%s\t%s\t%s\t%.1f\t%.1f\t%.1f\t%d\n", b, w, i, r, n / s, n / s / r * 100, bad
	}'
}
echo "load before: $(uptime)"
for i in $(seq 1 "$runs"); do
	for where in ${WHERES:-disk tmpfs}; do
		for bin in "$@"; do
			round "$bin" "$where" "$i" | tee -a "$out"
		done
	done
done
echo "load after: $(uptime)"
echo
printf 'binary\twhere\trender docs/s\tsync docs/s (wrk)\tsync/render %%\tnon-2xx or socket errors\t(medians of %s)\n' "$runs"
for bin in "$@"; do
	for where in ${WHERES:-disk tmpfs}; do
		med() { awk -F'\t' -v b="$(basename "$bin")" -v w="$where" -v c="$1" '$1==b && $2==w {print $c}' "$out" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
		bad=$(awk -F'\t' -v b="$(basename "$bin")" -v w="$where" '$1==b && $2==w {s += $7} END {print s + 0}' "$out")
		printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$(basename "$bin")" "$where" "$(med 4)" "$(med 5)" "$(med 6)" "$bad"
	done
done
