#!/usr/bin/env bash
# Peak RSS of ./folio serve under six concurrent validate-schema requests,
# each holding the image bomb of issue 18 (docs/reliability.md, "Image
# bombs"): a 5,000 × 5,000 PNG at 16 bits a channel, one colour, ~200 KB.
set -euo pipefail
bin=${1:-./folio}
port=${PORT:-18444}
data=$(mktemp -d)
trap 'kill $pid 2>/dev/null; rm -rf "$data"' EXIT
python3 - "$data/body.json" <<'EOF'
import base64, json, struct, sys, zlib
w = h = 5000
def chunk(kind, body):
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
z = zlib.compressobj(9)
idat = z.compress(b"\0" + b"\x12\x34\x56\x78\x9a\xbc\xff\xff" * w)
up = b"\2" + b"\0" * (8 * w)  # filter Up: the same as the row above
for _ in range(h - 1):
    idat += z.compress(up)
idat += z.flush()
png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 16, 6, 0, 0, 0)) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")
src = "data:image/png;base64," + base64.b64encode(png).decode()
schema = {"sections": [{"id": "b", "components": [{"type": "image", "props": {"src": src}}]}]}
json.dump({"templateType": "attachment", "schema": schema}, open(sys.argv[1], "w"))
print(f"bomb: {len(png)} bytes of PNG", file=sys.stderr)
EOF
$bin serve --data "$data" --addr 127.0.0.1:$port --rate-limits off >/dev/null 2>&1 &
pid=$!
until curl -sfk https://127.0.0.1:$port/readyz >/dev/null 2>&1; do sleep 0.05; done
rss() { awk '/VmHWM|VmRSS/ {printf "%s %.0f MB  ", $1, $2/1024}' /proc/$pid/status; echo; }
echo "idle:  $(rss)"
token=$(curl -sk https://127.0.0.1:$port/api/auth/signup -H 'Content-Type: application/json' \
	-d '{"email":"bomb@example.com","password":"correct horse","name":"Bomb"}' | python3 -c 'import json,sys; print(json.load(sys.stdin)["accessToken"])')
t0=$(date +%s%N)
clients=()
for i in 1 2 3 4 5 6; do
	curl -sk https://127.0.0.1:$port/api/templates/validate-schema -H "Authorization: Bearer $token" \
		-H 'Content-Type: application/json' --data-binary @"$data/body.json" -o "$data/out$i.json" -w "%{http_code} " &
	clients+=($!)
done
wait "${clients[@]}"
echo
echo "6 requests in $(( ($(date +%s%N) - t0) / 1000000 )) ms"
echo "after: $(rss)"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("valid:", r["valid"], "|", (r["errors"] or [{"message": "-"}])[0]["message"])' "$data/out1.json"
