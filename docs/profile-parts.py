#!/usr/bin/env python3
# Where the CPU of a synchronous generate goes, per document, from one CPU
# profile of `folio bench` (docs/performance.md, issue 24): each sample is
# filed under the first part its stack contains, in this order: render,
# Values, the SQLite writer goroutine, the bench's own client, the HTTP
# server (conn.serve), GC, other folio code (the checkpoint loop, the
# record goroutine), other. Since every part of one profile ran under the
# same load, "beyond render per ms of render" compares runs on a busy
# machine.
#
#   TMPDIR=/dev/shm folio bench --duration 15s --scenarios invoice --cpuprofile inv.prof   # prints the documents
#   docs/profile-parts.py folio inv.prof DOCUMENTS
import re, subprocess, sys
binary, prof, docs = sys.argv[1], sys.argv[2], int(sys.argv[3])
out = subprocess.run(['go', 'tool', 'pprof', '-traces', binary, prof], capture_output=True, text=True).stdout
parts = [
    ('render', r'render\.\(\*Template\)\.Render$'),
    ('Values', r'render\.\(\*Template\)\.Values$'),
    ('writer', r'store\.\(\*DB\)\.writer$'),
    ('client', r'folio/web/client\.|net/http\.\(\*persistConn\)|net/http\.\(\*Transport\)'),
    ('server', r'net/http\.\(\*conn\)\.serve$'),
    ('GC', r'runtime\.gcBgMarkWorker|runtime\.bgsweep|runtime\.bgscavenge|runtime\.gcAssist|runtime\.markroot|runtime\.gcDrain'),
    ('app', r'^folio/'),
]
tot = {p[0]: 0.0 for p in parts}; tot['other'] = 0.0
sub = {}
def val(s):
    m = re.match(r'([\d.]+)(ms|s|us)', s)
    v = float(m.group(1)); return v * {'ms': 1, 's': 1000, 'us': 0.001}[m.group(2)]
for blk in out.split('-----------+-------------------------------------------------------')[1:]:
    lines = [l.strip() for l in blk.strip().split('\n') if l.strip()]
    if not lines: continue
    first = lines[0].split()
    try: v = val(first[0])
    except Exception: continue
    stack = [first[1]] + [l.split()[0] for l in lines[1:]]
    part = 'other'
    for name, rx in parts:
        if any(re.search(rx, f) for f in stack):
            part = name; break
    tot[part] += v
    if part == 'server':
        for name, rx in [('auth/generation', r'MetadataGeneration'), ('decode', r'web\.decodeGenerate'), ('answer JSON', r'web\.writeJSON'),
                         ('log line', r'slog\.'), ('finishRequest', r'finishRequest'), ('read req', r'readRequest')]:
            if any(re.search(rx, f) for f in stack):
                sub[name] = sub.get(name, 0) + v; break
all_ = sum(tot.values())
print(f'{prof}: {docs} docs, {all_/1000:.2f} s samples, {all_/docs:.3f} ms/doc')
for k, v in tot.items(): print(f'  {k:8s} {v/docs:.3f} ms/doc  {100*v/all_:5.1f} %')
for k, v in sub.items(): print(f'    server/{k:16s} {v/docs:.3f}')
r = tot['render']
beyond = all_ - r - tot['Values']
print(f'  beyond render (Values apart): {beyond/docs:.3f} ms/doc; per ms of render: {beyond/r:.3f}')
