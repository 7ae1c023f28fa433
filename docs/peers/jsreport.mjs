// jsreport 4 (core + handlebars + chrome-pdf), configured as its
// documentation recommends for throughput: the chrome-pool strategy (a
// Chromium kept running per worker, a fresh page per document) with as many
// Chromium workers and jsreport worker threads as the machine has cores.
// Debian's Chromium via launchOptions.executablePath.
//
//   node jsreport.mjs serve  --port 5488 --workers 2     (HTTP: POST /api/report)
//   node jsreport.mjs engine --workers 2 --concurrency 8 --duration 8 --data invoice-data.json [--out x.pdf]
//
// engine renders in process (reporter.render, no HTTP), as an engine-only
// row; it prints one JSON line like the load client's.
import { createRequire } from 'node:module';
import { readFileSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const here = path.dirname(fileURLToPath(import.meta.url));
const arg = (name, def) => {
  const i = process.argv.indexOf('--' + name);
  return i > 0 ? process.argv[i + 1] : def;
};
const mode = process.argv[2];
const workers = Number(arg('workers', 2));
const chromium = arg('chromium', process.env.CHROMIUM || '/usr/bin/chromium');

const dataURI = (f) => 'data:image/png;base64,' + readFileSync(path.join(here, f)).toString('base64');
const logo = dataURI('logo.png');
const content = readFileSync(path.join(here, 'invoice.hbs.html'), 'utf8')
  .replace('@@QR@@', dataURI('qr.png'))
  .replace('@@BARCODE@@', dataURI('barcode.png'));

// Chromium's header and footer templates (repeated on every page; the
// pageNumber and totalPages spans are filled in by Chromium).
const headerTemplate = `<div style="width:100%;margin:9mm 18mm 0 18mm;font-family:'Noto Sans',sans-serif;color:#222;-webkit-print-color-adjust:exact">
  <div style="display:flex;justify-content:space-between;align-items:flex-start">
    <img src="${logo}" style="height:14mm">
    <div style="text-align:right"><div style="font-weight:bold;font-size:12pt">{{company.name}}</div>
    <div style="font-size:8pt;color:#555">{{company.street}} · {{company.city}}<br>{{company.email}} · VAT ID {{company.vatId}}</div></div>
  </div>
  <div style="border-top:0.5pt solid #bbb;margin-top:2mm"></div></div>`;
const footerTemplate = `<div style="width:100%;margin:0 18mm;font-family:'Noto Sans',sans-serif;font-size:8pt;color:#555;text-align:center">
  <div style="border-top:0.5pt solid #bbb;margin-bottom:1.5mm"></div>
  {{company.name}} · IBAN {{company.iban}} · BIC {{company.bic}} · Page <span class="pageNumber"></span> of <span class="totalPages"></span></div>`;

const template = {
  name: 'invoice',
  engine: 'handlebars',
  recipe: 'chrome-pdf',
  content,
  chrome: {
    format: 'A4',
    marginTop: '40mm',
    marginBottom: '20mm',
    marginLeft: '18mm',
    marginRight: '18mm',
    printBackground: true,
    displayHeaderFooter: true,
    headerTemplate,
    footerTemplate,
  },
};

async function start(http) {
  const JsReport = require('@jsreport/jsreport-core');
  const jsreport = JsReport({
    ...(http ? { httpPort: Number(arg('port', 5488)) } : {}),
    logger: { console: { transport: 'console', level: 'warn' } },
    store: { provider: 'memory' },
    reportTimeout: 60000,
    workers: { numberOfWorkers: workers },
    chrome: {
      strategy: 'chrome-pool',
      numberOfWorkers: workers,
      launchOptions: {
        executablePath: chromium,
        args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
      },
    },
  });
  if (http) jsreport.use(require('@jsreport/jsreport-express')());
  jsreport.use(require('@jsreport/jsreport-handlebars')());
  jsreport.use(require('@jsreport/jsreport-chrome-pdf')());
  await jsreport.init();
  await jsreport.documentStore.collection('templates').insert(template);
  return jsreport;
}

if (mode === 'serve') {
  const jsreport = await start(true);
  console.log(`jsreport ${require('@jsreport/jsreport-core/package.json').version} listening on ${arg('port', 5488)}, ${workers} workers, chrome-pool ${workers}`);
  const stop = async () => { await jsreport.close(); process.exit(0); };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
} else if (mode === 'engine') {
  const data = JSON.parse(readFileSync(arg('data'), 'utf8'));
  const conc = Number(arg('concurrency', 8));
  const seconds = Number(arg('duration', 8));
  const jsreport = await start(false);
  const render = async () => (await jsreport.render({ template: { name: 'invoice' }, data })).output.getBuffer();
  for (let i = 0; i < workers * 2; i++) await render(); // warm every worker
  // CPU of this process and its children (Chromium, LibreOffice) over the timed loop
  const cpu = () => Number(execFileSync('/usr/bin/python3', [path.join(here, 'cputree.py'), String(process.pid)]).toString());
  const cpu0 = cpu();
  const lat = [];
  let last;
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  await Promise.all(Array.from({ length: conc }, async () => {
    while (performance.now() < end) {
      const s = performance.now();
      last = await render();
      lat.push(performance.now() - s);
    }
  }));
  const secs = (performance.now() - t0) / 1000;
  const cpuMs = (cpu() - cpu0) * 1000;
  lat.sort((a, b) => a - b);
  if (arg('out')) writeFileSync(arg('out'), last);
  console.log(JSON.stringify({ target: 'jsreport-engine', concurrency: conc, documents: lat.length, errors: 0, seconds: +secs.toFixed(3), docsPerSecond: +(lat.length / secs).toFixed(1), p50ms: +lat[Math.floor(lat.length / 2)].toFixed(1), bytes: last.length, cpuMsPerDoc: +(cpuMs / lat.length).toFixed(1) }));
  await jsreport.close();
  process.exit(0);
} else {
  console.error('usage: node jsreport.mjs serve|engine [flags]');
  process.exit(2);
}
