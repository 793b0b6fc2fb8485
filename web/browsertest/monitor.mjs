// Drives the page of a real `gsq monitor` in headless Chromium for the Go
// test TestMonitorBrowser (cmd/gsq/monitor_browser_test.go, build tag
// "browser"), which runs the gsq binary on a simulated fleet and runs:
//
//   node monitor.mjs BASE_URL SCREENSHOT_DIR
//
// with PLAYWRIGHT_CORE naming the playwright-core package folder, CHROMIUM
// the browser, NAMES the configured server names (JSON), HOSTILE_TITLE the
// name a hostile server announces, STOP_URL a URL of the test that stops
// the server STOP_NAME, and DOWN_WITHIN_MS how soon the page must show it
// down. It prints one JSON object for the Go test; a failed check exits
// non-zero with a message.
import { check, run, shooter, watch } from './common.mjs';

const [base, shots] = process.argv.slice(2);
const names = JSON.parse(process.env.NAMES);
const hostileTitle = process.env.HOSTILE_TITLE;
const stopName = process.env.STOP_NAME;
const downWithin = Number(process.env.DOWN_WITHIN_MS);
const out = { names: [], timings: {} };
const shot = shooter(shots);
const rowNames = (page) => page.evaluate(() => [...document.querySelectorAll('.row:not([hidden])')].map((a) => decodeURIComponent(a.getAttribute('href').slice(3))));

await run(shots, out, async (browser) => {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 760 }, colorScheme: 'dark' });
  const page = await ctx.newPage();
  page.setDefaultTimeout(20000);
  watch(page, 'desktop');

  // Every server of the fleet is listed, and up.
  let t0 = Date.now();
  await page.goto(base + '/');
  await page.waitForFunction((n) => document.querySelectorAll('.row:not([hidden]) .st.st-up').length === n, names.length);
  await page.waitForFunction(() => document.getElementById('live').dataset.state === 'open');
  out.timings.all_up_ms = Date.now() - t0;
  out.names = await rowNames(page);

  // The hostile server's announced name is text.
  const titles = await page.evaluate(() => [...document.querySelectorAll('.row:not([hidden]) .title')].map((e) => e.textContent));
  check(titles.includes(hostileTitle), 'no row shows the hostile name as text: ' + JSON.stringify(titles));
  check(await page.evaluate(() => window.__xss === undefined), 'the hostile name ran script');
  check((await page.locator('.row img, .row script').count()) === 0, 'the hostile name made an element');

  // A server's chart has points: the history the monitor wrote (delta
  // has no other).
  await page.goto(base + '/s/delta');
  await page.waitForSelector('#chart .uplot canvas');
  check((await page.getAttribute('#range [data-range="1h"]', 'aria-pressed')) === 'true', 'the first range shown is not the last hour');
  await page.waitForFunction(() => Number(document.getElementById('chart').dataset.points) > 0);
  out.chart_points = Number(await page.getAttribute('#chart', 'data-points'));
  await page.waitForFunction(() => document.querySelectorAll('#online tbody tr').length > 0);
  // alpha has an hour of history the test wrote before the monitor
  // started: the picture for the README.
  await page.goto(base + '/s/alpha');
  await page.waitForSelector('#chart .uplot canvas');
  await page.waitForFunction(() => Number(document.getElementById('chart').dataset.points) > 100);
  await page.waitForFunction(() => document.querySelectorAll('#sessions tbody tr').length > 0);
  await shot(page, 'monitor-server');

  // The server stopped turns down on the list, live.
  await page.goto(base + '/');
  await page.waitForFunction(() => document.getElementById('live').dataset.state === 'open');
  await shot(page, 'monitor-list');
  t0 = Date.now();
  const r = await fetch(process.env.STOP_URL);
  check(r.status === 200, 'the stop hook answered ' + r.status);
  const row = `.row[href="/s/${encodeURIComponent(stopName)}"] .st.st-down`;
  await page.waitForSelector(row, { timeout: downWithin });
  out.timings.down_shown_ms = Date.now() - t0;
  await shot(page, 'monitor-list-down');
  await ctx.close();
});
