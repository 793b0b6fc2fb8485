// gamedig 5.3.3 contestant of bench/minecraft/side_by_side.sh: asks every
// HOST:PORT of a list with gamedig's TYPE (protocol-minecraftvanilla:
// Server List Ping alone, what gsq scan --protocol minecraft does; or
// minecraft, which also tries Query and the Bedrock ping on the port)
// from a pool of concurrent queries, and prints "answered N of M" on
// stderr.
// Usage: node gamedig.mjs GAMEDIG_MODULE_DIR FILE TYPE [CONCURRENCY]
import { readFileSync } from 'node:fs';

const [moduleDir, file, type, conc] = process.argv.slice(2);
const { GameDig } = await import(moduleDir + '/lib/index.js');
const targets = readFileSync(file, 'utf8').split('\n').map(s => s.trim()).filter(s => s);
const pool = Number(conc || 256);
let next = 0, answered = 0;

async function worker() {
  while (next < targets.length) {
    const address = targets[next++];
    const i = address.lastIndexOf(':');
    try {
      await GameDig.query({
        type, host: address.slice(0, i), port: Number(address.slice(i + 1)),
        maxRetries: 1, socketTimeout: 1000, attemptTimeout: 5000, givenPortOnly: true,
      });
      answered++;
    } catch (e) { /* counted as not answered */ }
  }
}

await Promise.all(Array.from({ length: pool }, worker));
process.stderr.write(`answered ${answered} of ${targets.length}\n`);
