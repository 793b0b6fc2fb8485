// gamedig 5.3.3 contestant of bench/scan/scan.sh: queries info, players and
// rules (protocol-valve) of every HOST:PORT of a list with a pool of
// concurrent queries, prints one JSON line per server on stdout and
// "answered N of M" on stderr.
// Usage: node gamedig.mjs GAMEDIG_MODULE_DIR FILE [CONCURRENCY]
import { readFileSync } from 'node:fs';

const [moduleDir, file, conc] = process.argv.slice(2);
const { GameDig } = await import(moduleDir + '/lib/index.js');
const targets = readFileSync(file, 'utf8').split('\n').map(s => s.trim()).filter(s => s && !s.startsWith('#'));
const pool = Number(conc || 200);
let next = 0, answered = 0;
const out = [];
const flush = () => { if (out.length) { process.stdout.write(out.join('')); out.length = 0; } };

async function worker() {
  while (next < targets.length) {
    const address = targets[next++];
    const i = address.lastIndexOf(':');
    try {
      const state = await GameDig.query({
        type: 'protocol-valve', host: address.slice(0, i), port: Number(address.slice(i + 1)),
        requestRules: true, maxRetries: 1, socketTimeout: 1000, attemptTimeout: 5000, givenPortOnly: true,
      });
      answered++;
      out.push(JSON.stringify({ address, state }) + '\n');
    } catch (e) {
      out.push(JSON.stringify({ address, error: String(e && e.message) }) + '\n');
    }
    if (out.length >= 256) flush();
  }
}

await Promise.all(Array.from({ length: pool }, worker));
flush();
process.stderr.write(`answered ${answered} of ${targets.length}\n`);
