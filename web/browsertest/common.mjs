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

// textContrast runs in the page (page.evaluate(textContrast, ROOTS)): it
// lists the text under the elements ROOTS selects whose contrast with
// what is behind it is below WCAG AA, 4.5:1, or 3:1 for large text (24
// px, or 18.66 px bold). Colours resolve as the browser drew them:
// backgrounds blended up the tree, the text's alpha and its ancestors'
// opacity applied; text hidden for screen readers only is skipped. It
// returns {bad, checked, min}: the texts below AA, how many were checked,
// and the lowest ratio.
export function textContrast(roots) {
  const parse = (c) => {
    const m = c && c.match(/[\d.e-]+/g);
    if (!m || m.length < 3) return null;
    const k = c.startsWith('color(') ? 255 : 1;
    return [+m[0] * k, +m[1] * k, +m[2] * k, m[3] === undefined ? 1 : +m[3]];
  };
  const lin = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
  const lum = (c) => 0.2126 * lin(c[0]) + 0.7152 * lin(c[1]) + 0.0722 * lin(c[2]);
  const blend = (top, under) => [0, 1, 2].map((i) => top[i] * top[3] + under[i] * (1 - top[3])).concat(1);
  const bgOf = (el) => {
    const chain = [];
    for (let e = el; e; e = e.parentElement) chain.unshift(e);
    let bg = [255, 255, 255, 1];
    for (const e of chain) {
      const c = parse(getComputedStyle(e).backgroundColor);
      if (c && c[3] > 0) bg = blend(c, bg);
    }
    return bg;
  };
  const bad = [];
  let checked = 0, min = Infinity;
  for (const root of document.querySelectorAll(roots)) {
    for (const el of [root, ...root.querySelectorAll('*')]) {
      const own = [...el.childNodes].filter((n) => n.nodeType === 3 && n.textContent.trim()).map((n) => n.textContent.trim()).join(' ');
      if (!own || !el.getClientRects().length || el.closest('.sr-only')) continue;
      const cs = getComputedStyle(el);
      if (cs.visibility === 'hidden') continue;
      let opacity = 1;
      for (let e = el; e; e = e.parentElement) opacity *= +getComputedStyle(e).opacity;
      const color = parse(cs.color);
      if (!color || opacity === 0) continue;
      const bg = bgOf(el);
      const fg = blend([color[0], color[1], color[2], color[3] * opacity], bg);
      const [a, b] = [lum(fg), lum(bg)].sort((x, y) => y - x);
      const ratio = (a + 0.05) / (b + 0.05);
      const size = parseFloat(cs.fontSize), bold = +cs.fontWeight >= 700;
      const need = size >= 24 || (size >= 18.66 && bold) ? 3 : 4.5;
      checked++;
      min = Math.min(min, ratio);
      if (ratio < need) bad.push(`${el.tagName.toLowerCase()}.${el.className} "${own.slice(0, 30)}" ${ratio.toFixed(2)} < ${need} (${cs.color} on ${bg.slice(0, 3).map(Math.round).join(',')})`);
    }
  }
  return { bad, checked, min };
}
