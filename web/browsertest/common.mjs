// What the browser scripts share: Chromium launched as the Go tests ask
// (PLAYWRIGHT_CORE, CHROMIUM), the list of problems found, a watch on
// each page for errors and dialogs, screenshots, and the end: the result
// as JSON on stdout, and a non-zero exit when a check failed.
import { createRequire } from 'node:module';
import { mkdirSync } from 'node:fs';
import path from 'node:path';

const require = createRequire(import.meta.url);
const { chromium } = require(process.env.PLAYWRIGHT_CORE);

export const problems = [];

export function check(ok, what) {
  if (!ok) problems.push(what);
}

export async function launch(shots) {
  mkdirSync(shots, { recursive: true });
  return chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    timeout: 60000,
  });
}

// watch records console errors, uncaught exceptions and dialogs (a script
// that ran): the page must have none.
export function watch(page, label) {
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(label + ': console error: ' + m.text());
  });
  page.on('pageerror', (e) => problems.push(label + ': uncaught: ' + e.message));
  page.on('dialog', (d) => {
    problems.push(label + ': a dialog opened (script ran?): ' + d.message());
    d.dismiss();
  });
}

export function shooter(shots) {
  return (page, name) => page.screenshot({ path: path.join(shots, name + '.png'), fullPage: false });
}

// run calls body(browser), then prints out as JSON and exits non-zero if
// a check failed.
export async function run(shots, out, body) {
  const browser = await launch(shots);
  try {
    await body(browser);
  } catch (e) {
    problems.push('exception: ' + (e && e.stack ? e.stack : e));
  } finally {
    await browser.close();
  }
  console.log(JSON.stringify(out));
  if (problems.length) {
    console.error(problems.join('\n'));
    process.exit(1);
  }
}
