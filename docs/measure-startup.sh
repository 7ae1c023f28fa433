#!/usr/bin/env bash
# Start-up to ready and idle RSS of ./folio serve (docs/performance.md).
set -euo pipefail
bin=${1:-./folio}
data=$(mktemp -d)
trap 'kill $pid 2>/dev/null; rm -rf "$data"' EXIT
for run in first again; do
	t0=$(date +%s%N)
	$bin serve --data "$data" --addr 127.0.0.1:18443 >/dev/null 2>&1 &
	pid=$!
	until curl -sfk https://127.0.0.1:18443/readyz >/dev/null 2>&1; do sleep 0.005; done
	t1=$(date +%s%N)
	echo "$run start: ready after $(( (t1 - t0) / 1000000 )) ms"
	sleep 5
	echo "$run start: idle RSS $(awk '/VmRSS/ {printf "%.1f MB", $2/1024}' /proc/$pid/status)"
	kill $pid; wait $pid 2>/dev/null || true
done
