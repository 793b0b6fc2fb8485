// Drives the server page's "when people play" views and chart ranges in
// headless Chromium for the Go test TestBrowserActivity
// (web/browser_activity_test.go, build tag "browser"):
//
//   node activity.mjs BASE_URL SCREENSHOT_DIR
//
// with OUTAGE the Unix time of bravo's one failed poll and MAINT the start
// of its 3 minutes down in maintenance. It checks the heatmap filling
// from seeded history, a drag on the chart changing the URL, the short
// outage shaded on the 1 h chart and the maintenance shaded as
// maintenance (amber, keyed), not as an outage (red), the week before on the
// chart, keyboard navigation with visible focus, and WCAG AA contrast of
// these views in both themes; it saves screenshots and prints one JSON
// object. Any failed check exits non-zero with a message.
import { check, run, shooter, textContrast, watch } from './common.mjs';

const [base, shots] = process.argv.slice(2);
const outage = Number(process.env.OUTAGE);
const maint = Number(process.env.MAINT);
// The maintenance windows on bravo in which it stayed up: the config's
// and the API's, from and to of each (Unix seconds).
const [cfgFrom, cfgTo, apiFrom, apiTo] = process.env.WINDOWS.split(',').map(Number);
const out = { min_contrast: {}, maint_rgb: {}, window_rgb: {} };
const shot = shooter(shots);
const full = (page, name) => page.screenshot({ path: shots + '/' + name + '.png', fullPage: true });

// The views this script checks for contrast.
const views = ['.card-head', '#range-form', '#chart-note', '#activity', '#rank-card', '#mapstats-card', '.tiles'];

// contrast checks the text of the views (or only) for WCAG AA.
const contrast = (page, only) => page.evaluate(textContrast, (only || views).join(', '));

// pixel returns the colour the chart's canvas drew at time t (Unix
// seconds), near the top of the plot, where no line runs.
async function pixel(page, t) {
  return page.evaluate((t) => {
    const box = document.getElementById('chart');
    const from = Number(box.dataset.from), to = Number(box.dataset.to);
    const o = box.querySelector('.u-over').getBoundingClientRect();
    const canvas = box.querySelector('canvas');
    const c = canvas.getBoundingClientRect();
    const x = o.left + ((t - from) / (to - from)) * o.width;
    const y = o.top + 4;
    const k = canvas.width / c.width;
    const d = canvas.getContext('2d').getImageData(Math.round((x - c.left) * k), Math.round((y - c.top) * k), 1, 1).data;
    return [d[0], d[1], d[2]];
  }, t);
}

// hue is an RGB colour's hue in degrees, and its chroma (0-255).
function hue([r, g, b]) {
  const mx = Math.max(r, g, b), mn = Math.min(r, g, b), c = mx - mn;
  if (c === 0) return [0, 0];
  let h = mx === r ? ((g - b) / c) % 6 : mx === g ? (b - r) / c + 2 : (r - g) / c + 4;
  return [(h * 60 + 360) % 360, c];
}

// checkMaint checks, on bravo's 1 h chart, that its minutes down in
// maintenance are shaded amber (the maintenance colour, hue 20-70°), not
// red like its outage, and that the note under the chart keys them in
// readable text.
async function checkMaint(page, scheme) {
  await page.goto(base + '/s/bravo?range=1h');
  await page.waitForFunction(() => Number(document.getElementById('chart').dataset.points) > 50);
  await page.waitForSelector('#chart-note .k-maint');
  await settle(page);
  const px = await pixel(page, maint + 90);
  out.maint_rgb[scheme] = px;
  const [h, c] = hue(px);
  check(c >= 12 && h >= 20 && h <= 70, `${scheme} theme: the maintenance is not shaded as maintenance (amber): ${px}, hue ${Math.round(h)}°`);
  const [oh, oc] = hue(await pixel(page, outage + 1));
  check(oc >= 12 && (oh < 15 || oh > 345), `${scheme} theme: the outage is not shaded red: hue ${Math.round(oh)}°`);
  check(/maintenance/.test(await page.textContent('#chart-note')), 'the chart does not name the maintenance');
  const c2 = await contrast(page, ['#chart-note']);
  check(c2.bad.length === 0, scheme + ' theme, the chart note under WCAG AA contrast:\n  ' + c2.bad.join('\n  '));
  await shot(page, 'chart-maintenance-' + scheme);
  await checkWindows(page, scheme);
}

// checkWindows checks, on the same chart, that the two maintenance
// windows bravo stayed up in are drawn (amber along the top, no incident
// in them), that a clear stretch is not, that the note keys them and that
// the pointer on one names it, its reason as text.
async function checkWindows(page, scheme) {
  check((await page.getAttribute('#chart', 'data-windows')) === '2', 'the chart has ' + (await page.getAttribute('#chart', 'data-windows')) + ' maintenance windows, want 2');
  const px = [];
  for (const t of [(cfgFrom + cfgTo) / 2, (apiFrom + apiTo) / 2]) {
    const p = await pixel(page, t);
    px.push(p);
    const [h, c] = hue(p);
    check(c >= 40 && h >= 20 && h <= 70, `${scheme} theme: the maintenance window at ${t} is not drawn (amber strip): ${p}, hue ${Math.round(h)}°`);
  }
  out.window_rgb[scheme] = px[0];
  const [, c0] = hue(await pixel(page, cfgTo + 240));
  check(c0 < 40, `${scheme} theme: four minutes after the window the chart is still shaded`);
  check(/maintenance window/.test(await page.textContent('#chart-note')), 'the chart note does not key the maintenance windows');
  check((await page.locator('#chart-note .k-win').count()) === 1, 'no key for the maintenance windows');
  const o = await page.locator('#chart .u-over').boundingBox();
  const from = Number(await page.getAttribute('#chart', 'data-from')), to = Number(await page.getAttribute('#chart', 'data-to'));
  await page.mouse.move(o.x + ((apiFrom + apiTo) / 2 - from) / (to - from) * o.width, o.y + o.height / 2);
  await page.waitForSelector('#chart .win-tip:not([hidden])');
  const tip = await page.textContent('#chart .win-tip');
  check(tip.includes('nightly <b>restart</b>') && tip.includes('every day'), 'the window\'s tip: ' + tip);
  check((await page.locator('#chart .win-tip b').count()) === 0, 'the window\'s reason made an element');
  await shot(page, 'chart-window-' + scheme);
  await page.mouse.move(o.x + ((cfgTo + 600) - from) / (to - from) * o.width, o.y + o.height / 2);
  await page.waitForSelector('#chart .win-tip', { state: 'hidden' });
  await page.mouse.move(0, 0);
}

const settle = (page) => page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));

await run(shots, out, async (browser) => {
  for (const scheme of ['dark', 'light']) {
    const ctx = await browser.newContext({ viewport: { width: 1366, height: 900 }, colorScheme: scheme });
    const page = await ctx.newPage();
    page.setDefaultTimeout(20000);
    watch(page, scheme);

    // ---------- the list: a sparkline and the last polls in each row ----------
    await page.goto(base + '/');
    await page.waitForSelector('.row:not([hidden]) .pb rect');
    const rowsNow = () => page.evaluate(() => [...document.querySelectorAll('.row:not([hidden])')].map((a) => ({
      name: a._name, spark: a.querySelectorAll('.sp polyline').length, polls: a.querySelectorAll('.pb rect.pu').length,
      failed: a.querySelectorAll('.pb rect.pd').length, label: a.querySelector('.pb').getAttribute('aria-label'),
    })));
    const rows = await rowsNow();
    await page.fill('#filter', 'EU #1 |');
    await page.waitForFunction(() => [...document.querySelectorAll('.row:not([hidden])')].some((a) => a.querySelector('.sp polyline')));
    const alpha = (await rowsNow()).find((r) => r.name === 'alpha');
    check(alpha && alpha.spark > 0, 'alpha\'s row has no sparkline: ' + JSON.stringify(alpha));
    check(alpha && alpha.polls === 10 && alpha.failed === 0 && alpha.label === 'Last 10 polls: 10 answered, 0 failed', 'alpha\'s last polls: ' + JSON.stringify(alpha));
    const failing = rows.find((r) => r.failed > 0);
    check(failing && /1 failed/.test(failing.label), 'no row shows a failed poll: ' + JSON.stringify(rows.slice(0, 5)));
    const asked = await page.evaluate(() => performance.getEntriesByType('resource').filter((e) => e.name.includes('/api/v1/sparklines')).length);
    check(asked >= 1 && asked <= 3, `the rows on screen asked for sparklines in ${asked} requests`);
    out.list_rows = rows.length;
    // One uptime figure: the list's is the server page's.
    const listUptime = await page.evaluate(() => [...document.querySelectorAll('.row:not([hidden])')].find((a) => a._name === 'alpha').querySelector('.ut').textContent);
    await page.click('.row:not([hidden]) .title');
    await page.waitForFunction(() => document.getElementById('t-up24').textContent !== '');
    const pageUptime = await page.textContent('#t-up24');
    check(listUptime === pageUptime && /%$/.test(pageUptime), `uptime 24 h: the list says ${listUptime}, the server page ${pageUptime}`);
    await page.goBack();
    await page.waitForSelector('.row:not([hidden]) .pb rect');
    await page.fill('#filter', '');
    await shot(page, 'list-desktop-' + scheme);
    const lc = await contrast(page, ['.thead', '.row']);
    check(lc.bad.length === 0, scheme + ' theme, list text under WCAG AA contrast:\n  ' + lc.bad.join('\n  '));

    // ---------- the heatmap fills from the seeded month ----------
    await page.goto(base + '/s/alpha?range=24h');
    await page.waitForFunction(() => Number(document.getElementById('heatmap')?.dataset.filled) > 0);
    const cells = Number(await page.getAttribute('#heatmap', 'data-filled'));
    out.heat_cells = cells;
    check(cells === 168, `the heatmap filled ${cells} of 168 cells from a month of history`);
    const shades = await page.evaluate(() => new Set([...document.querySelectorAll('#heatmap td')].map((td) => getComputedStyle(td).backgroundColor)).size);
    check(shades > 10, `the heatmap has ${shades} shades: it does not show when people play`);
    await page.waitForFunction(() => Number(document.getElementById('rank-chart').dataset.points) > 0);
    out.rank_points = Number(await page.getAttribute('#rank-chart', 'data-points'));
    check(/#1/.test(await page.textContent('#rank-now')), 'alpha is not ranked #1 of its game: ' + (await page.textContent('#rank-now')));
    await page.waitForFunction(() => document.querySelectorAll('#mapstats tbody tr').length > 0);
    out.map_stat_rows = await page.locator('#mapstats tbody tr').count();
    await settle(page);
    await full(page, 'activity-desktop-' + scheme);

    // ---------- contrast ----------
    const c = await contrast(page);
    out.min_contrast[scheme] = Math.round(c.min * 100) / 100;
    check(c.bad.length === 0, scheme + ' theme, text under WCAG AA contrast:\n  ' + c.bad.join('\n  '));

    if (scheme === 'light') {
      await checkMaint(page, scheme);
      await ctx.close();
      continue;
    }

    // ---------- drag to zoom puts the range in the URL ----------
    const o = await page.locator('#chart .u-over').boundingBox();
    const before = { from: Number(await page.getAttribute('#chart', 'data-from')), to: Number(await page.getAttribute('#chart', 'data-to')) };
    await page.mouse.move(o.x + o.width * 0.3, o.y + o.height / 2);
    await page.mouse.down();
    await page.mouse.move(o.x + o.width * 0.45, o.y + o.height / 2, { steps: 5 });
    await page.mouse.move(o.x + o.width * 0.6, o.y + o.height / 2, { steps: 5 });
    await page.mouse.up();
    await page.waitForFunction(() => new URL(location.href).searchParams.has('from'));
    const u = new URL(page.url());
    out.zoom_url = u.pathname + u.search;
    const zf = Number(u.searchParams.get('from')), zt = Number(u.searchParams.get('to'));
    const span = before.to - before.from;
    check(Math.abs(zf - (before.from + 0.3 * span)) < span * 0.02 && Math.abs(zt - (before.from + 0.6 * span)) < span * 0.02,
      `the drag from 30% to 60% of the chart gave from=${zf} to=${zt}, the chart spanning ${before.from}..${before.to}`);
    check(!u.searchParams.has('range'), 'the zoomed URL still names a preset range');
    await page.waitForFunction((zf) => Math.abs(Number(document.getElementById('chart').dataset.from) - zf) < 1, zf);
    check((await page.getAttribute('#range-custom', 'aria-pressed')) === 'true', 'the zoomed range is not shown as custom');
    // The link shows the same range in a new page.
    const p2 = await ctx.newPage();
    watch(p2, 'link');
    await p2.goto(page.url());
    await p2.waitForSelector('#chart .uplot canvas');
    check(Math.abs(Number(await p2.getAttribute('#chart', 'data-from')) - zf) < 1, 'the zoomed link opens another range');
    await p2.close();
    // Back returns to the 24 hours.
    await page.goBack();
    await page.waitForFunction(() => document.querySelector('#range [data-range="24h"]').getAttribute('aria-pressed') === 'true');

    // ---------- the 18-second outage is shaded on the 1 h chart ----------
    await page.goto(base + '/s/bravo?range=1h');
    await page.waitForFunction(() => Number(document.getElementById('chart').dataset.points) > 50);
    await settle(page);
    out.outage_rgb = await pixel(page, outage + 1);
    out.clear_rgb = await pixel(page, outage - 600);
    const [r, gr, b] = out.outage_rgb, [r0, g0, b0] = out.clear_rgb;
    check(r - r0 > 20 && r > gr + 15 && r > b + 15, `the outage is not shaded: ${out.outage_rgb} where the chart is ${out.clear_rgb}`);
    check(Math.abs(r0 - g0) < 30 && Math.abs(r0 - b0) < 40, `ten minutes before the outage is shaded too: ${out.clear_rgb}`);
    await shot(page, 'chart-outage-dark');
    await checkMaint(page, scheme);

    // ---------- keyboard: every control reached, focus visible ----------
    await page.goto(base + '/s/alpha?range=7d');
    await page.waitForFunction(() => Number(document.getElementById('heatmap')?.dataset.filled) > 0);
    await page.evaluate(() => document.activeElement && document.activeElement.blur());
    const focused = [];
    const unseen = [];
    for (let i = 0; i < 40; i++) {
      await page.keyboard.press('Tab');
      const f = await page.evaluate(() => {
        const e = document.activeElement;
        if (!e || e === document.body) return null;
        const cs = getComputedStyle(e);
        const visible = (cs.outlineStyle !== 'none' && parseFloat(cs.outlineWidth) >= 1) || cs.boxShadow !== 'none';
        const id = e.id || (e.dataset.range ? 'range-' + e.dataset.range : e.tagName.toLowerCase() + (e.className ? '.' + e.className : ''));
        return { id, visible };
      });
      if (!f) continue;
      focused.push(f.id);
      if (!f.visible) unseen.push(f.id);
      if (f.id === 'heatmap') break;
    }
    out.focused = focused;
    for (const want of ['range-24h', 'range-custom', 'compare', 'heat-zone', 'heat-weeks', 'heatmap']) check(focused.includes(want), `Tab never reaches ${want}: ${focused.join(' ')}`);
    check(unseen.length === 0, 'focus not visible on: ' + unseen.join(' '));
    // The heatmap's cells by arrow keys.
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowRight');
    const cur = await page.evaluate(() => document.querySelector('#heatmap td.cur')?.title || '');
    check(/^Tuesday 01:00: [\d.]+ players/.test(cur), 'the arrow keys do not move through the heatmap: ' + cur);
    // The week before, by keyboard.
    await page.focus('#compare');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => new URL(location.href).searchParams.get('compare') === 'week');
    await page.waitForFunction(() => [...document.querySelectorAll('#chart .u-legend .u-series')].some((s) => s.textContent.includes('Week before')));
    // A custom range by keyboard.
    await page.focus('#range-custom');
    await page.keyboard.press('Enter');
    await page.waitForSelector('#range-form:not([hidden])');
    check(await page.evaluate(() => document.activeElement.id === 'range-from'), 'the custom range form does not take the focus');
    await page.fill('#range-from', '2026-01-02T10:00');
    await page.fill('#range-to', '2026-01-01T10:00');
    await page.click('#range-form button[type="submit"]');
    check(/before/.test(await page.textContent('.range-err')), 'a range that ends before it starts is taken');
    await settle(page);
    await shot(page, 'ranges-desktop-dark');
    await ctx.close();
  }

  // ---------- phone ----------
  for (const scheme of ['dark', 'light']) {
    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true, colorScheme: scheme });
    const pp = await phone.newPage();
    pp.setDefaultTimeout(20000);
    watch(pp, 'phone-' + scheme);
    await pp.goto(base + '/s/alpha?range=7d&compare=week');
    await pp.waitForFunction(() => Number(document.getElementById('heatmap')?.dataset.filled) > 0);
    await pp.waitForFunction(() => document.querySelectorAll('#mapstats tbody tr').length > 0);
    check(await pp.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), 'the phone server page scrolls sideways');
    await settle(pp);
    await full(pp, 'activity-phone-' + scheme);
    await pp.goto(base + '/');
    await pp.waitForSelector('.row:not([hidden]) .pb rect', { state: 'attached' });
    check(await pp.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), 'the phone list scrolls sideways');
    await shot(pp, 'list-phone-' + scheme);
    const c = await contrast(pp);
    check(c.bad.length === 0, 'phone, ' + scheme + ' theme, text under WCAG AA contrast:\n  ' + c.bad.join('\n  '));
    await phone.close();
  }
});
