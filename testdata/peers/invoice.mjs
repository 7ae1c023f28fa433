// The invoice content every peer renders: testdata/templates/invoice.vars.json
// with its line items repeated to 20, as folio bench does
// (web/client/scenarios.go, loadInvoice).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const here = path.dirname(fileURLToPath(import.meta.url));

export function invoiceData() {
  const vars = JSON.parse(readFileSync(path.join(here, '..', 'templates', 'invoice.vars.json'), 'utf8'));
  const items = [];
  for (let i = 0; i < 20; i++) items.push(vars.items[i % vars.items.length]);
  vars.items = items.map((it, i) => ({
    pos: String(i + 1),
    description: it.description,
    quantity: fmt(it.quantity),
    unitPrice: fmt(it.unitPrice),
    amount: fmt(it.quantity * it.unitPrice),
  }));
  const net = items.reduce((s, it) => s + it.quantity * it.unitPrice, 0);
  vars.net = fmt(net);
  vars.vat = fmt(net * 0.19);
  vars.total = fmt(net * 1.19);
  vars.company = vars.company || { name: 'Folio Example GmbH', street: 'Hauptstraße 1', city: 'Berlin', email: 'billing@example.com', vatId: 'DE123456789' };
  return vars;
}

function fmt(n) {
  return n.toLocaleString('de-DE', { minimumFractionDigits: 2, maximumFractionDigits: 2 }) + ' €';
}

const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' }[c]));

// invoiceHTML is the page Chromium prints: the same blocks as the Folio
// template (header, addresses, 20-row table, totals, footer).
export function invoiceHTML(d) {
  const rows = d.items.map((it) => `<tr><td>${it.pos}</td><td>${esc(it.description)}</td><td class=r>${it.quantity}</td><td class=r>${esc(it.unitPrice)}</td><td class=r>${esc(it.amount)}</td></tr>`).join('');
  return `<!doctype html><html><head><meta charset=utf-8><style>
@page { size: A4; margin: 15mm 18mm; }
body { font-family: 'Go', 'DejaVu Sans', sans-serif; font-size: 9pt; color: #222; }
h1 { font-size: 16pt; margin: 8mm 0 4mm; }
.head { text-align: right; } .head b { font-size: 12pt; }
table { width: 100%; border-collapse: collapse; } th, td { border: 0.3pt solid #999; padding: 1.5mm; }
th { background: #eee; text-align: left; } .r { text-align: right; }
.tot { width: 45%; margin-left: 55%; margin-top: 4mm; } footer { margin-top: 10mm; color: #555; font-size: 8pt; }
</style></head><body>
<div class=head><b>${esc(d.company.name)}</b><br>${esc(d.company.street)} · ${esc(d.company.city)}<br>${esc(d.company.email)} · VAT ID ${esc(d.company.vatId)}</div>
<h1>Invoice ${esc(d.invoiceNumber)}</h1>
<p>${esc(d.customer.name)}<br>${esc(d.customer.street)}<br>${esc(d.customer.postalCode)} ${esc(d.customer.city)}<br>${esc(d.customer.country)}</p>
<p>Issued ${esc(d.issueDate)} · due ${esc(d.dueDate)} · customer ${esc(d.customer.number)}</p>
<table><tr><th>#</th><th>Description</th><th class=r>Qty</th><th class=r>Unit price</th><th class=r>Amount</th></tr>${rows}</table>
<table class=tot><tr><td>Net</td><td class=r>${esc(d.net)}</td></tr><tr><td>VAT 19%</td><td class=r>${esc(d.vat)}</td></tr><tr><th>Total</th><th class=r>${esc(d.total)}</th></tr></table>
<p>${esc(d.notes)}</p><footer>${esc(d.company.name)} · Page 1 of 1</footer></body></html>`;
}

// carboneHTML is the same page as a Carbone template: {d.…} markers, the
// table rows repeated with [i] / [i+1].
export function carboneHTML() {
  const d = new Proxy({}, { get: (_, k) => `{d.${String(k)}}` });
  const sub = (o) => new Proxy({}, { get: (_, k) => `{d.${o}.${String(k)}}` });
  const html = invoiceHTML({
    company: sub('company'), customer: sub('customer'), invoiceNumber: d.invoiceNumber, issueDate: d.issueDate, dueDate: d.dueDate,
    notes: d.notes, net: d.net, vat: d.vat, total: d.total,
    items: [0, 1].map((n) => new Proxy({}, { get: (_, k) => `{d.items[i${n ? '+1' : ''}].${String(k)}}` })),
  });
  return html.replace(/&#x27;|&quot;/g, '"');
}
