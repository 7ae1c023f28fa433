// Carbone 3 (the npm library; its HTTP server is Carbone's paid or hosted
// edition): invoice.odt filled by carbone.render and converted to PDF by
// LibreOffice Writer, with the converter factories its documentation
// recommends (`factories`: LibreOffice processes kept running, one per
// core; `startFactory`: started before the first render).
//
//   node carbone.mjs serve  --port 5489 --factories 2     (HTTP: POST /render, the data as JSON; answers the PDF)
//   node carbone.mjs engine --factories 2 --concurrency 8 --duration 8 --data invoice-data.json [--out x.pdf]
//
// serve is the thinnest HTTP service around the library (Node's http, no
// authentication, nothing stored): the service row favours Carbone there.
import { createRequire } from 'node:module';
import { readFileSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const here = path.dirname(fileURLToPath(import.meta.url));
const arg = (name, def) => {
  const i = process.argv.indexOf('--' + name);
  return i > 0 ? process.argv[i + 1] : def;
};
const mode = process.argv[2];
const factories = Number(arg('factories', 2));
// Carbone finds LibreOffice through soffice on these paths and needs a
// python3 with the uno module (Debian: python3-uno): Debian's /usr/bin
// first, ahead of a pyenv or virtualenv python3 without it.
process.env.PATH = `/usr/lib/libreoffice/program:/usr/bin:${process.env.PATH}`;

const carbone = require('carbone');
carbone.set({ factories, startFactory: true });
const template = path.join(here, 'invoice.odt');
const render = (data) => new Promise((resolve, reject) =>
  carbone.render(template, data, { convertTo: 'pdf' }, (err, res) => (err ? reject(err) : resolve(res))));

if (mode === 'serve') {
  const port = Number(arg('port', 5489));
  const server = http.createServer((req, res) => {
    if (req.method !== 'POST' || req.url !== '/render') {
      res.writeHead(404).end();
      return;
    }
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', async () => {
      try {
        const pdf = await render(JSON.parse(Buffer.concat(chunks).toString('utf8')));
        res.writeHead(200, { 'Content-Type': 'application/pdf', 'Content-Length': pdf.length }).end(pdf);
      } catch (e) {
        res.writeHead(500, { 'Content-Type': 'text/plain' }).end(String(e && e.message || e));
      }
    });
  });
  server.keepAliveTimeout = 65000;
  server.listen(port, '127.0.0.1', () => console.log(`carbone ${require('carbone/package.json').version} listening on ${port}, ${factories} LibreOffice factories`));
  const stop = () => { server.close(); process.exit(0); };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
} else if (mode === 'engine') {
  const data = JSON.parse(readFileSync(arg('data'), 'utf8'));
  const conc = Number(arg('concurrency', 8));
  const seconds = Number(arg('duration', 8));
  for (let i = 0; i < factories * 2; i++) await render(data); // warm every factory
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
      last = await render(data);
      lat.push(performance.now() - s);
    }
  }));
  const secs = (performance.now() - t0) / 1000;
  const cpuMs = (cpu() - cpu0) * 1000;
  lat.sort((a, b) => a - b);
  if (arg('out')) writeFileSync(arg('out'), last);
  console.log(JSON.stringify({ target: 'carbone-engine', concurrency: conc, documents: lat.length, errors: 0, seconds: +secs.toFixed(3), docsPerSecond: +(lat.length / secs).toFixed(1), p50ms: +lat[Math.floor(lat.length / 2)].toFixed(1), bytes: last.length, cpuMsPerDoc: +(cpuMs / lat.length).toFixed(1) }));
  process.exit(0);
} else {
  console.error('usage: node carbone.mjs serve|engine [flags]');
  process.exit(2);
}
