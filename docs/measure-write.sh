#!/usr/bin/env bash
# Synchronous generate end to end against render-only, in the same run
# (docs/performance.md, "One durable write per document"): for each binary
# given, RUNS interleaved runs of `folio bench --scenarios render,invoice`,
# with the data directory on DISK (a fresh directory per run) and on tmpfs
# (/dev/shm); prints each run and the medians of docs/s, of the ratio
# sync/render-only, of CPU ms per document and of the CPU a synchronous
# generate costs beyond its render (sync minus render-only, per run).
#
# With PAIRED=1 each run is `--scenarios paired`: render-only and the
# synchronous generate alternate in slices of a second, DURATION each, so
# both see the same machine (the VM's speed drifts from one second to the
# next); WHERES=tmpfs (or disk) measures one place only.
#
#   docs/measure-write.sh /tmp/folio-before /tmp/folio-after
#   RUNS=5 DURATION=5s DISK=/work/bench docs/measure-write.sh a b
#   PAIRED=1 RUNS=9 DURATION=6s WHERES=tmpfs docs/measure-write.sh a b
set -euo pipefail
runs=${RUNS:-5}
duration=${DURATION:-5s}
disk=${DISK:-$PWD/measure-write-data}
scenarios=render,invoice
[ "${PAIRED:-}" = 1 ] && scenarios=paired
mkdir -p "$disk"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
echo "load before: $(uptime)"
for i in $(seq 1 "$runs"); do
	for where in ${WHERES:-disk tmpfs}; do
		for bin in "$@"; do
			if [ "$where" = disk ]; then
				dir="$disk/run-$(basename "$bin")-$i"
				rm -rf "$dir"
				json=$("$bin" bench --duration "$duration" --scenarios "$scenarios" --json --data "$dir" 2>/dev/null)
				rm -rf "$dir"
			else
				json=$(TMPDIR=/dev/shm "$bin" bench --duration "$duration" --scenarios "$scenarios" --json 2>/dev/null)
			fi
			line=$(jq -r --arg b "$(basename "$bin")" --arg w "$where" --arg i "$i" '
				(.results[] | select(.scenario | startswith("e ")) ) as $r |
				(.results[] | select(.scenario | startswith("a ")) ) as $a |
				[$b, $w, $i, $r.docsPerSecond, $a.docsPerSecond, ($a.docsPerSecond / $r.docsPerSecond * 100 | . * 10 | round / 10),
				 ($r.cpuSecondsPerDocument * 1000 | . * 1000 | round / 1000), ($a.cpuSecondsPerDocument * 1000 | . * 1000 | round / 1000),
				 (($a.cpuSecondsPerDocument - $r.cpuSecondsPerDocument) * 1000 | . * 1000 | round / 1000)] | @tsv' <<<"$json")
			echo "$line" | tee -a "$out"
		done
	done
done
echo "load after: $(uptime)"
echo
printf 'binary\twhere\trender docs/s\tsync docs/s\tsync/render %%\trender CPU ms/doc\tsync CPU ms/doc\tbeyond render\t(medians of %s)\n' "$runs"
for bin in "$@"; do
	for where in ${WHERES:-disk tmpfs}; do
		med() { awk -F'\t' -v b="$(basename "$bin")" -v w="$where" -v c="$1" '$1==b && $2==w {print $c}' "$out" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$(basename "$bin")" "$where" "$(med 4)" "$(med 5)" "$(med 6)" "$(med 7)" "$(med 8)" "$(med 9)"
	done
done
