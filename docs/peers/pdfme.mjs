// pdfme 6 (a JavaScript PDF library, no service of its own): the example
// invoice as a pdfme template on a blank A4 base whose staticSchema repeats
// the header and footer ("Page {currentPage} of {totalPages}") on every
// page; the line-item table grows with the data and pushes what follows
// (pdfme's dynamic layout; the payment block sits low enough that it
// moves to page 2 whole, as in the other peers' documents). Noto Sans regular, bold and italic, embedded as
// subsets. One worker thread per worker, each generating in a loop, as
// pdfme is single-threaded JavaScript.
//
//   node pdfme.mjs engine --workers 2 --duration 8 --data invoice-data.json [--out x.pdf]
//
// (--concurrency is accepted for symmetry; each worker thread generates
// one document at a time.)
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { readFileSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const fontDir = process.env.NOTO_DIR || '/usr/share/fonts/truetype/noto';
const dataURI = (f) => 'data:image/png;base64,' + readFileSync(path.join(here, f)).toString('base64');

function template(d) {
  const text = (name, x, y, w, h, extra = {}) => ({
    name, type: 'text', position: { x, y }, width: w, height: h, fontSize: 10, fontName: 'NotoSans',
    fontColor: '#222222', lineHeight: 1.25, readOnly: true, ...extra,
  });
  const cell = {
    fontName: 'NotoSans', alignment: 'left', verticalAlignment: 'middle', fontSize: 8.5, lineHeight: 1,
    characterSpacing: 0, fontColor: '#222222', backgroundColor: '', borderColor: '#999999',
    borderWidth: { top: 0.1, right: 0.1, bottom: 0.1, left: 0.1 }, padding: { top: 1.5, right: 1.2, bottom: 1.5, left: 1.2 },
  };
  const line = (name, y, x = 18, w = 174) => ({ name, type: 'line', position: { x, y }, width: w, height: 0.2, color: '#bbbbbb', readOnly: true });
  return {
    basePdf: {
      width: 210, height: 297, padding: [36, 18, 22, 18],
      staticSchema: [
        { name: 'logo', type: 'image', position: { x: 18, y: 15 }, width: 42, height: 14, content: dataURI('logo.png'), readOnly: true },
        text('company', 100, 15, 92, 6, { fontName: 'NotoSansBold', fontSize: 12, alignment: 'right', content: d.company.name }),
        text('companyLine', 80, 21.5, 112, 8, { fontSize: 8, fontColor: '#555555', alignment: 'right', lineHeight: 1.2, content: `${d.company.street} · ${d.company.city}\n${d.company.email} · VAT ID ${d.company.vatId}` }),
        line('headerRule', 31),
        line('footerRule', 279),
        text('footer', 18, 280.5, 174, 5, { fontSize: 8, fontColor: '#555555', alignment: 'center', content: `${d.company.name} · IBAN ${d.company.iban} · BIC ${d.company.bic} · Page {currentPage} of {totalPages}` }),
      ],
    },
    schemas: [[
      text('title', 18, 36, 174, 9, { fontName: 'NotoSansBold', fontSize: 17, content: `Invoice ${d.invoiceNumber}` }),
      text('billTo', 18, 46, 80, 5, { fontName: 'NotoSansBold', fontSize: 9, fontColor: '#555555', content: 'Bill to' }),
      text('customer', 18, 51, 80, 22, { content: `${d.customer.name}\n${d.customer.street}\n${d.customer.postalCode} ${d.customer.city}\n${d.customer.countryUpper}` }),
      text('kvLabels', 105, 47, 38, 24, { fontName: 'NotoSansBold', lineHeight: 1.5, content: 'Invoice number\nInvoice date\nDue date\nCustomer number' }),
      text('kvValues', 143, 47, 49, 24, { lineHeight: 1.5, content: `${d.invoiceNumber}\n${d.issueDate}\n${d.dueDate}\n${d.customer.number}` }),
      {
        name: 'items', type: 'table', position: { x: 18, y: 76 }, width: 174, height: 12, showHead: true,
        head: ['#', 'Description', 'Qty', 'Unit price', 'Amount'], headWidthPercentages: [5.2, 52.3, 9.2, 16.1, 17.2],
        tableStyles: { borderColor: '#999999', borderWidth: 0.3 },
        headStyles: { ...cell, fontName: 'NotoSansBold', backgroundColor: '#eeeeee' },
        bodyStyles: { ...cell, alternateBackgroundColor: '' },
        columnStyles: { alignment: { 2: 'right', 3: 'right', 4: 'right' } },
      },
      text('totalLabels', 120, 92, 40, 16, { fontName: 'NotoSansBold', fontSize: 8.5, alignment: 'right', lineHeight: 1.6, content: `Subtotal\nVAT ${d.vatRate}%\nTotal due` }),
      text('totalValues', 160, 92, 32, 16, { fontSize: 8.5, alignment: 'right', lineHeight: 1.6, content: `${d.subtotal}\n${d.vat}\n${d.total}` }),
      text('notes', 18, 110, 174, 6, { fontName: 'NotoSansItalic', fontSize: 9, content: d.notes }),
      line('rule', 118),
      text('payment', 18, 152, 120, 6, { fontName: 'NotoSansBold', fontSize: 12, content: 'Payment' }),
      text('paymentText', 18, 158.5, 125, 15, { content: `Please transfer ${d.total} by ${d.dueDateLong} to IBAN ${d.company.iban} (BIC ${d.company.bic}), quoting ${d.invoiceNumber}. Scan the code with your banking app to pay.` }),
      { name: 'barcode', type: 'image', position: { x: 18, y: 175 }, width: 49, height: 10, content: dataURI('barcode.png'), readOnly: true },
      text('barcodeText', 18, 185.5, 49, 4, { fontSize: 8, alignment: 'center', content: d.invoiceNumber }),
      { name: 'qr', type: 'image', position: { x: 160, y: 152 }, width: 32, height: 32, content: dataURI('qr.png'), readOnly: true },
    ]],
  };
}

async function worker({ seconds, data, sample }) {
  const { generate } = await import('@pdfme/generator');
  const { text, table, image, line } = await import('@pdfme/schemas');
  const font = {
    NotoSans: { data: readFileSync(path.join(fontDir, 'NotoSans-Regular.ttf')), fallback: true, subset: true },
    NotoSansBold: { data: readFileSync(path.join(fontDir, 'NotoSans-Bold.ttf')), subset: true },
    NotoSansItalic: { data: readFileSync(path.join(fontDir, 'NotoSans-Italic.ttf')), subset: true },
  };
  const tpl = template(data);
  const inputs = [{ items: JSON.stringify(data.items.map((it) => [String(it.pos), it.description, it.quantity, it.unitPrice, it.amount])) }];
  const plugins = { text, table, image, line };
  const one = () => generate({ template: tpl, inputs, plugins, options: { font } });
  const first = await one(); // warm-up
  // tell the main thread, and start when every worker is warm
  await new Promise((resolve) => { parentPort.once('message', resolve); parentPort.postMessage({ ready: true }); });
  const lat = [];
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  while (performance.now() < end) {
    const s = performance.now();
    await one();
    lat.push(performance.now() - s);
  }
  return { ms: performance.now() - t0, lat, sample: sample ? Buffer.from(first) : null };
}

if (!isMainThread) {
  worker(workerData).then((r) => parentPort.postMessage(r));
} else {
  const arg = (name, def) => {
    const i = process.argv.indexOf('--' + name);
    return i > 0 ? process.argv[i + 1] : def;
  };
  if (process.argv[2] !== 'engine') {
    console.error('usage: node pdfme.mjs engine [flags]');
    process.exit(2);
  }
  const workers = Number(arg('workers', 2));
  const cpu = () => Number(execFileSync('/usr/bin/python3', [path.join(here, 'cputree.py'), String(process.pid)]).toString());
  const data = JSON.parse(readFileSync(arg('data'), 'utf8'));
  const ws = [];
  await Promise.all(Array.from({ length: workers }, (_, i) => new Promise((resolve, reject) => {
    const w = new Worker(fileURLToPath(import.meta.url), { workerData: { seconds: Number(arg('duration', 8)), data, sample: i === 0 } });
    ws.push(w);
    w.once('message', resolve); // warm
    w.on('error', reject);
  })));
  const cpu0 = cpu(); // every worker warm
  const done = ws.map((w) => new Promise((resolve) => w.once('message', resolve)));
  for (const w of ws) w.postMessage('go');
  const results = await Promise.all(done);
  const cpuMs = (cpu() - cpu0) * 1000;
  const docs = results.reduce((n, r) => n + r.lat.length, 0);
  const secs = Math.max(...results.map((r) => r.ms)) / 1000;
  const lat = results.flatMap((r) => r.lat).sort((a, b) => a - b);
  if (arg('out')) writeFileSync(arg('out'), results[0].sample);
  console.log(JSON.stringify({ target: 'pdfme-engine', concurrency: workers, documents: docs, errors: 0, seconds: +secs.toFixed(3), docsPerSecond: +(docs / secs).toFixed(1), p50ms: +(lat[Math.floor(lat.length / 2)] || 0).toFixed(1), bytes: results[0].sample.length, cpuMsPerDoc: +(cpuMs / docs).toFixed(1) }));
  process.exit(0);
}
