#!/usr/bin/env bash
# Peak RSS of ./folio serve under 6 concurrent dry runs whose calculated
# variable makes 1.5 GB of text: len(map(1..1500, s + s)) with a 500 KB s
# (docs/reliability.md, "Expression memory"). Needs curl and jq.
set -euo pipefail
bin=${1:-./folio}
port=${PORT:-18444}
data=$(mktemp -d)
trap 'kill $pid 2>/dev/null; rm -rf "$data"' EXIT
$bin serve --data "$data" --addr 127.0.0.1:$port --rate-limits off --default-plan scale >/dev/null 2>&1 &
pid=$!
base=https://127.0.0.1:$port
for _ in $(seq 100); do curl -sfk $base/healthz >/dev/null 2>&1 && break; sleep 0.1; done
token=$(curl -sfk $base/api/auth/signup -H 'Content-Type: application/json' \
	-d '{"email":"m@example.com","password":"password123","name":"M"}' | jq -r .accessToken)
tpl=$(curl -sfk $base/api/templates -H "Authorization: Bearer $token" -H 'Content-Type: application/json' -d '{
	"name":"Bomb","outputFormats":["pdf"],
	"schema":{"sections":[{"id":"b","components":[{"type":"text","props":{"content":"{{ n }}"}}]}]},
	"variables":[{"name":"s","type":"string"}],
	"calculatedVariables":[{"name":"n","expression":"len(map(1..1500, s + s))"}]}' | jq -r .id)
key=$(curl -sfk $base/api/api-keys -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
	-d '{"name":"k"}' | jq -r .plainKey)
body=$(mktemp)
printf '{"templateId":"%s","format":"pdf","variables":{"s":"%s"}}' "$tpl" "$(head -c 500000 /dev/zero | tr '\0' x)" >"$body"
echo "idle RSS $(awk '/VmRSS/ {printf "%.0f MB", $2/1024}' /proc/$pid/status)"
clients=()
for _ in 1 2 3 4 5 6; do
	curl -sk "$base/api/v1/documents/generate?dryRun=true" -H "Authorization: Bearer $key" \
		-H 'Content-Type: application/json' --data-binary @"$body" -o /dev/null -w '%{http_code} %{time_total}s\n' &
	clients+=($!)
done
wait "${clients[@]}"
echo "peak RSS (VmHWM) $(awk '/VmHWM/ {printf "%.0f MB", $2/1024}' /proc/$pid/status)"
echo "answer: $(curl -sk "$base/api/v1/documents/generate?dryRun=true" -H "Authorization: Bearer $key" \
	-H 'Content-Type: application/json' --data-binary @"$body" | jq -c '.errors[0] | {code, message}')"
rm -f "$body"
