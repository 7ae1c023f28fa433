// peers.mjs renders the same one-page invoice (20 line items, Greek and
// Cyrillic text) with pdfme, Carbone (LibreOffice) and headless Chromium,
// N documents each, and prints documents per second beside Folio's
// render-only and end-to-end figures measured by `folio bench` in the same
// run. See README.md. Not part of CI.
//
//   node peers.mjs [--n 200] [--concurrency <cpus>] [--folio ../../folio] [--json]
import { spawnSync } from 'node:child_process';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { readFileSync, existsSync, writeFileSync, mkdtempSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { invoiceData, invoiceHTML, carboneHTML } from './invoice.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const arg = (name, def) => {
  const i = process.argv.indexOf('--' + name);
  return i > 0 ? process.argv[i + 1] : def;
};
const N = Number(arg('n', 200));
const C = Number(arg('concurrency', cpus().length));
const FOLIO = arg('folio', path.join(here, '..', '..', 'folio'));
const JSON_OUT = process.argv.includes('--json');
const ONLY = (arg('only', 'folio,pdfme,chromium,carbone')).split(',');

function goFont(name) {
  const out = spawnSync('go', ['env', 'GOMODCACHE'], { encoding: 'utf8' });
  const dir = path.join(out.stdout.trim(), 'golang.org', 'x', 'image@v0.47.0', 'font', 'gofont', 'ttfs');
  return readFileSync(path.join(dir, name));
}

// ---- pdfme: one worker thread per core, each generating its share.
function pdfmeTemplate() {
  const t = (name, x, y, w, h, size = 9, extra = {}) => ({ name, type: 'text', position: { x, y }, width: w, height: h, fontSize: size, fontName: 'Go', ...extra });
  const cell = { fontName: 'Go', alignment: 'left', verticalAlignment: 'middle', fontSize: 8, lineHeight: 1, characterSpacing: 0, fontColor: '#222222', backgroundColor: '', borderColor: '#999999', borderWidth: { top: 0.1, right: 0.1, bottom: 0.1, left: 0.1 }, padding: { top: 1.5, right: 1.5, bottom: 1.5, left: 1.5 } };
  return {
    basePdf: { width: 210, height: 297, padding: [15, 18, 15, 18] },
    schemas: [[
      t('company', 100, 15, 92, 6, 12, { alignment: 'right' }),
      t('companyLine', 80, 21, 112, 8, 8, { alignment: 'right' }),
      t('title', 18, 35, 174, 10, 16),
      t('customer', 18, 48, 100, 22, 9),
      t('dates', 18, 72, 174, 6, 9),
      { name: 'items', type: 'table', position: { x: 18, y: 80 }, width: 174, height: 150, showHead: true,
        head: ['#', 'Description', 'Qty', 'Unit price', 'Amount'], headWidthPercentages: [6, 50, 10, 17, 17],
        tableStyles: { borderColor: '#999999', borderWidth: 0.3 },
        headStyles: { ...cell, backgroundColor: '#eeeeee' }, bodyStyles: { ...cell, alternateBackgroundColor: '' },
        columnStyles: { alignment: { 2: 'right', 3: 'right', 4: 'right' } } },
      t('totals', 110, 240, 82, 16, 9, { alignment: 'right' }),
      t('notes', 18, 260, 174, 8, 9),
      t('footer', 18, 280, 174, 5, 8),
    ]],
  };
}
function pdfmeInputs(d) {
  return [{
    company: d.company.name,
    companyLine: `${d.company.street} · ${d.company.city}\n${d.company.email} · VAT ID ${d.company.vatId}`,
    title: `Invoice ${d.invoiceNumber}`,
    customer: `${d.customer.name}\n${d.customer.street}\n${d.customer.postalCode} ${d.customer.city}\n${d.customer.country}`,
    dates: `Issued ${d.issueDate} · due ${d.dueDate} · customer ${d.customer.number}`,
    items: JSON.stringify(d.items.map((it) => [it.pos, it.description, it.quantity, it.unitPrice, it.amount])),
    totals: `Net ${d.net}\nVAT 19% ${d.vat}\nTotal ${d.total}`,
    notes: d.notes,
    footer: `${d.company.name} · Page 1 of 1`,
  }];
}
async function pdfmeWorker({ count }) {
  const { generate } = await import('@pdfme/generator');
  const { text, table } = await import('@pdfme/schemas');
  const font = { Go: { data: goFont('Go-Regular.ttf'), fallback: true } };
  const template = pdfmeTemplate();
  const inputs = pdfmeInputs(invoiceData());
  const plugins = { text, table };
  const first = await generate({ template, inputs, plugins, options: { font } }); // warm-up
  const t0 = performance.now();
  for (let i = 0; i < count; i++) await generate({ template, inputs, plugins, options: { font } });
  return { ms: performance.now() - t0, sample: Buffer.from(first) };
}
async function runPdfme() {
  const share = Math.ceil(N / C);
  const t0 = performance.now();
  const results = await Promise.all(Array.from({ length: C }, () => new Promise((resolve, reject) => {
    const w = new Worker(fileURLToPath(import.meta.url), { workerData: { count: share } });
    w.on('message', resolve); w.on('error', reject);
  })));
  const wall = Math.max(...results.map((r) => r.ms));
  save('pdfme.pdf', results[0].sample);
  return { docs: share * C, seconds: wall / 1000, setupSeconds: (performance.now() - t0 - wall) / 1000 };
}

// ---- Chromium: one browser, C pages printing concurrently (Gotenberg and
// jsreport keep Chromium running the same way).
async function runChromium() {
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'] });
  const html = invoiceHTML(invoiceData());
  const pages = await Promise.all(Array.from({ length: C }, () => browser.newPage()));
  const sample = await printOne(pages[0], html);
  save('chromium.pdf', sample);
  let left = N;
  const t0 = performance.now();
  await Promise.all(pages.map(async (p) => { while (left-- > 0) await printOne(p, html); }));
  const seconds = (performance.now() - t0) / 1000;
  await browser.close();
  return { docs: N, seconds };
}
async function printOne(page, html) {
  await page.setContent(html);
  return page.pdf({ format: 'A4', printBackground: true });
}

// ---- Carbone: an HTML template converted to PDF by LibreOffice, C
// converter factories, C renders in flight.
async function runCarbone() {
  // Carbone looks for soffice.bin on PATH and a python3 with the uno module.
  process.env.PATH = `/usr/lib/libreoffice/program:/usr/bin:${process.env.PATH}`;
  const carbone = (await import('carbone')).default;
  carbone.set({ factories: C, startFactory: true });
  const dir = mkdtempSync(path.join(tmpdir(), 'carbone-'));
  const tpl = path.join(dir, 'invoice.html');
  writeFileSync(tpl, carboneHTML());
  const data = invoiceData();
  const render = () => new Promise((resolve, reject) => carbone.render(tpl, data, { convertTo: 'pdf' }, (err, res) => (err ? reject(err) : resolve(res))));
  save('carbone.pdf', await render());
  let left = N;
  const t0 = performance.now();
  await Promise.all(Array.from({ length: C }, async () => { while (left-- > 0) await render(); }));
  const seconds = (performance.now() - t0) / 1000;
  return { docs: N, seconds };
}

// ---- Folio: folio bench's render-only (e) and sync generate (a) scenarios.
function runFolio() {
  if (!existsSync(FOLIO)) throw new Error(`no folio binary at ${FOLIO}: go build -o folio . in the repository root`);
  const out = spawnSync(FOLIO, ['bench', '--json', '--scenarios', 'render,invoice', '--duration', '10s', '--examples', path.join(here, '..', 'templates')], { encoding: 'utf8', maxBuffer: 1 << 24 });
  if (out.status !== 0) throw new Error(`folio bench failed: ${out.stderr}`);
  const parsed = JSON.parse(out.stdout);
  const rows = Array.isArray(parsed) ? parsed : parsed.results;
  const by = (prefix) => rows.find((r) => r.scenario.startsWith(prefix));
  return { render: by('e'), invoice: by('a') };
}

function save(name, bytes) {
  const dir = path.join(here, 'out');
  spawnSync('mkdir', ['-p', dir]);
  writeFileSync(path.join(dir, name), bytes);
}

if (!isMainThread) {
  pdfmeWorker(workerData).then((r) => parentPort.postMessage(r));
} else {
  const results = [];
  const add = (name, r) => results.push({ name, docs: r.docs, seconds: +r.seconds.toFixed(3), docsPerSecond: +(r.docs / r.seconds).toFixed(1) });
  let folio;
  if (ONLY.includes('folio')) {
    folio = runFolio();
    results.push({ name: 'folio render-only (e)', docs: folio.render.documents, seconds: folio.render.seconds, docsPerSecond: folio.render.docsPerSecond });
    results.push({ name: 'folio end to end (a)', docs: folio.invoice.documents, seconds: folio.invoice.seconds, docsPerSecond: folio.invoice.docsPerSecond });
  }
  for (const [name, fn] of [['pdfme', runPdfme], ['chromium', runChromium], ['carbone', runCarbone]]) {
    if (!ONLY.includes(name)) continue;
    try { add(name, await fn()); } catch (e) { results.push({ name, error: String(e.message || e) }); }
  }
  const e2e = results.find((r) => r.name.startsWith('folio end'));
  for (const r of results) if (e2e && r.docsPerSecond && !r.name.startsWith('folio')) r.folioEndToEndRatio = +(e2e.docsPerSecond / r.docsPerSecond).toFixed(1);
  if (JSON_OUT) console.log(JSON.stringify({ date: new Date().toISOString(), n: N, concurrency: C, cpus: cpus().length, results }, null, 2));
  else {
    console.log(`N=${N} documents per peer, concurrency ${C}, ${cpus().length} CPUs; PDFs of each peer in testdata/peers/out/`);
    console.log('peer'.padEnd(24) + 'docs'.padStart(7) + 'seconds'.padStart(10) + 'docs/s'.padStart(10) + '  Folio e2e ×');
    for (const r of results) console.log(r.error ? `${r.name.padEnd(24)} error: ${r.error}` : r.name.padEnd(24) + String(r.docs).padStart(7) + r.seconds.toFixed(2).padStart(10) + r.docsPerSecond.toFixed(1).padStart(10) + (r.folioEndToEndRatio ? `  ${r.folioEndToEndRatio}×` : ''));
  }
  process.exit(0);
}
