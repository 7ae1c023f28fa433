#!/usr/bin/env bash
# The server's own CPU per synchronous generate beyond the render
# (docs/performance.md, issue 24, ninth session). docs/measure-write.sh
# runs the load generator in the server's process, so its CPU figures
# include the bench client's (TLS, JSON, GC: 0.05-0.1 ms a document). Here,
# as with the issue's wrk measurement, the server runs alone (`folio
# serve`, data on tmpfs, rate limits off, the default unlimited plan) and
# `folio bench --server` drives it from another process; the server's CPU
# is read from /proc/PID/stat around the load. Render-only CPU per document
# comes from `folio bench --scenarios render` right after, in its own
# process. Prints one line per run.
#
#   RUNS=3 docs/measure-server-cpu.sh /path/to/folio
set -euo pipefail
bin=$1
runs=${RUNS:-3}
duration=${DURATION:-8s}
addr=${ADDR:-127.0.0.1:18443}
tck=$(getconf CLK_TCK)
for i in $(seq 1 "$runs"); do
	d=$(mktemp -d /dev/shm/folio-server-cpu-XXXX)
	rmdir "$d"
	TMPDIR=/dev/shm "$bin" serve --addr "$addr" --data "$d" --rate-limits off >"$d.log" 2>&1 &
	pid=$!
	for _ in $(seq 1 100); do
		[ -f "$d/tls/cert.pem" ] && curl -sk "https://$addr/api/health" >/dev/null 2>&1 && break
		sleep 0.1
	done
	sleep 1
	c0=$(awk '{print $14+$15}' "/proc/$pid/stat")
	json=$(TMPDIR=/dev/shm "$bin" bench --server "https://$addr" --ca "$d/tls/cert.pem" --scenarios invoice --duration "$duration" --json 2>/dev/null)
	c1=$(awk '{print $14+$15}' "/proc/$pid/stat")
	kill "$pid"
	wait "$pid" 2>/dev/null || true
	rm -rf "$d" "$d.log"
	docs=$(jq '.results[0].documents' <<<"$json")
	dps=$(jq '.results[0].docsPerSecond' <<<"$json")
	r=$(TMPDIR=/dev/shm "$bin" bench --scenarios render --duration 5s --json 2>/dev/null)
	rcpu=$(jq '.results[0].cpuSecondsPerDocument * 1000' <<<"$r")
	rdps=$(jq '.results[0].docsPerSecond' <<<"$r")
	awk -v i="$i" -v t0="$c0" -v t1="$c1" -v tck="$tck" -v docs="$docs" -v dps="$dps" -v rcpu="$rcpu" -v rdps="$rdps" 'BEGIN {
		s = (t1 - t0) * 1000 / tck / docs
		printf "run %d: sync %.1f docs/s, server CPU %.3f ms/doc; render-only %.1f docs/s, %.3f ms/doc; server beyond the render %.3f ms/doc\n", i, dps, s, rdps, rcpu, s - rcpu
	}'
done
