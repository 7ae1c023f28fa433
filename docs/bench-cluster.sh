#!/bin/bash
# Usage (as root, from the repository): FOLIO=./folio VERSITYGW=versitygw docs/bench-cluster.sh N
# starts a PostgreSQL 15 (default settings: fsync and synchronous_commit on),
# a versitygw and N replicas (2 workers each) in /tmp/pgc-bench-N, runs
# folio bench --server round-robin over them, and prints the CPU the servers
# (replicas, every postgres process, versitygw) used. docs/performance.md.
set -e; trap "kill \$PIDS \$S3PID 2>/dev/null; su postgres -c \"\$PGBIN/pg_ctl -D \$W/pg stop -m fast\" >/dev/null 2>&1" EXIT
N=${1:-1}; DUR=${DUR:-10s}; SCEN=${SCEN:-invoice,batch}
BIN=${FOLIO:-./folio}; W=/tmp/pgc-bench-$N; PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}; PORT=$((55430+N))
rm -rf $W; mkdir -p $W/s3/buckets/folio $W/s3/meta; chmod 777 $W
su postgres -c "$PGBIN/initdb -D $W/pg -U postgres --auth=trust -E UTF8 --locale=C" >/dev/null
su postgres -c "$PGBIN/postgres -D $W/pg -k $W -p $PORT -c listen_addresses=127.0.0.1 -c max_connections=200" >$W/pg.log 2>&1 &
sleep 3
su postgres -c "$PGBIN/createdb -h 127.0.0.1 -p $PORT -U postgres folio"
${VERSITYGW:-versitygw} --access bench --secret bench-secret-key-0123456789 --region us-east-1 --port 127.0.0.1:$((PORT+100)) --quiet posix --sidecar $W/s3/meta $W/s3/buckets >$W/s3.log 2>&1 &
S3PID=$!
export AWS_ACCESS_KEY_ID=bench AWS_SECRET_ACCESS_KEY=bench-secret-key-0123456789
DB="postgres://postgres@127.0.0.1:$PORT/folio?sslmode=disable"
FILES="s3://folio/docs?endpoint=127.0.0.1:$((PORT+100))&region=us-east-1&tls=false"
PIDS=""; URLS=""
for i in $(seq 1 $N); do
  A=127.0.0.1:$((PORT+200+i))
  if [ $i = 1 ]; then TLS=""; else TLS="--tls-cert $W/r1/tls/cert.pem --tls-key $W/r1/tls/key.pem"; fi
  $BIN serve --addr $A --data $W/r$i --database-url "$DB" --files-url "$FILES" --default-plan unlimited --rate-limits off --workers 2 $TLS >$W/r$i.log 2>&1 &
  PIDS="$PIDS $!"; URLS="$URLS,https://$A"
  for k in $(seq 1 100); do curl -sk https://$A/readyz >/dev/null && break; sleep 0.2; done
done
URLS=${URLS#,}
cpu() { # clock ticks of the replicas, every postgres process and versitygw
  local t=0
  for p in $PIDS $S3PID $(pgrep -u postgres -f "postgres.*$W" ; pgrep -u postgres -P $(pgrep -u postgres -f "$PGBIN/postgres -D $W/pg" | head -1)); do
    [ -r /proc/$p/stat ] && t=$((t + $(awk "{print \$14+\$15+\$16+\$17}" /proc/$p/stat)))
  done; echo $t; }
C0=$(cpu); uptime
$BIN bench --server "$URLS" --ca $W/r1/tls/cert.pem --scenarios $SCEN --duration $DUR --concurrency 8 --examples ${EXAMPLES:-testdata/templates} --json > $W/bench.json
C1=$(cpu); uptime
echo "server CPU seconds: $(( (C1-C0) / $(getconf CLK_TCK) ))  (ticks $((C1-C0)))"
cat $W/bench.json
true
