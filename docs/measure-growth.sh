#!/bin/sh
# Grow a data directory of N jobs (once) and run the growth benchmark on a
# copy of it: every read endpoint and dashboard page, a synchronous
# generate, a month's export, then writes during one janitor pass
# (docs/performance.md, Growth). The copy is needed because the benchmark
# generates documents and its janitor pass deletes what retention says.
#
#   CGO_ENABLED=0 go build -o folio . && docs/measure-growth.sh 1000000 /work/growdata
#
# Writes growth-N.json (the figures) and growth-N.log (the server's log,
# with the janitor's lines) in the current directory.
set -eu
n=${1:?usage: measure-growth.sh JOBS [DIR]}
dir=${2:-${TMPDIR:-/tmp}}
folio=${FOLIO:-./folio}
src="$dir/grown-$n"
if [ ! -e "$src/grow.json" ]; then
	/usr/bin/time -f "grow: %e s, %U s user, %M KB peak" "$folio" admin grow --data "$src" --jobs "$n"
fi
rm -rf "$dir/run-$n"
mkdir -p "$dir/run-$n"
cp -r "$src/." "$dir/run-$n/" # the files, even when $src is a symbolic link
# Write the copy out before measuring: the kernel throttles every writer
# while gigabytes of the copy are still dirty, and the benchmark would
# measure the copy.
sync
"$folio" bench growth --data "$dir/run-$n" --requests "${REQUESTS:-50}" --maintenance --log "growth-$n.log" --json > "growth-$n.json"
grep 'janitor' "growth-$n.log" || true
rm -rf "$dir/run-$n"
