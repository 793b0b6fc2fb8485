// The peer of bench/monitor/monitor.sh: the polling loop of a gamedig-based
// monitor (Uptime Kuma's "GameDig" monitor type, in essence), reduced to
// what gsq monitor does per poll: every INTERVAL seconds, ask each server of
// a list for its info and players (protocol-valve), keep the latest state in
// memory, and count successes. It keeps no history and serves no page, so
// the figures are a lower bound of what such a monitor costs.
// Usage: node gamedig-poller.mjs GAMEDIG_MODULE_DIR FILE INTERVAL_S [CONCURRENCY]
// Prints one line per round on stderr: "round R: up U of N in S ms".
import { readFileSync } from 'node:fs';

const [moduleDir, file, intervalArg, concArg] = process.argv.slice(2);
const { GameDig } = await import(moduleDir + '/lib/index.js');
const targets = readFileSync(file, 'utf8').split('\n').map(s => s.trim()).filter(s => s && !s.startsWith('#'));
const interval = Number(intervalArg || 30) * 1000;
const pool = Number(concArg || 200);
const latest = new Map();

async function poll(address) {
  const i = address.lastIndexOf(':');
  const started = Date.now();
  try {
    const state = await GameDig.query({
      type: 'protocol-valve', host: address.slice(0, i), port: Number(address.slice(i + 1)),
      requestRules: false, maxRetries: 1, socketTimeout: 2000, attemptTimeout: 5000, givenPortOnly: true,
    });
    latest.set(address, { up: true, players: state.numplayers, max: state.maxplayers, map: state.map, ping: Date.now() - started });
    return true;
  } catch (e) {
    latest.set(address, { up: false, error: String(e && e.message) });
    return false;
  }
}

async function round(r) {
  const started = Date.now();
  let next = 0, up = 0;
  const worker = async () => {
    while (next < targets.length) {
      if (await poll(targets[next++])) up++;
    }
  };
  await Promise.all(Array.from({ length: pool }, worker));
  process.stderr.write(`round ${r}: up ${up} of ${targets.length} in ${Date.now() - started} ms\n`);
}

for (let r = 1; ; r++) {
  const started = Date.now();
  await round(r);
  const wait = interval - (Date.now() - started);
  if (wait > 0) await new Promise(res => setTimeout(res, wait));
}
