// A fleet's vantage points on a server's page, for the Go test
// TestBrowserVantages (monitor/cluster/browser_test.go, build tag
// "browser"), which runs two regions' workers on NATS and PostgreSQL,
// one of which lost its route to the server:
//
//   node vantages.mjs BASE_URL SCREENSHOT_DIR
//
// with SERVER the server's name, UP the region that sees it up and DOWN
// the one that sees it down. At desktop and phone widths, in both themes,
// the page must show each region's view beside the verdict (up), the
// partial outage in words, and the partial outage the fleet recorded,
// with nothing of theirs wider than the screen. It prints one JSON object.
import { check, run, watch } from './common.mjs';

const [base, shots] = process.argv.slice(2);
const { SERVER: server, UP: upRegion, DOWN: downRegion } = process.env;
const out = { views: {}, partial: '', events: 0, shots: [] };

await run(shots, out, async (browser) => {
  for (const scheme of ['light', 'dark']) {
    for (const [width, height, kind] of [[1280, 900, 'desktop'], [390, 844, 'phone']]) {
      const ctx = await browser.newContext({
        viewport: { width, height }, colorScheme: scheme,
        ...(kind === 'phone' ? { deviceScaleFactor: 2, isMobile: true, hasTouch: true } : {}),
      });
      const page = await ctx.newPage();
      page.setDefaultTimeout(20000);
      const label = kind + '-' + scheme;
      watch(page, label);
      await page.goto(base + '/s/' + encodeURIComponent(server));
      await page.waitForSelector('#vantages:not([hidden]) #v-list tbody tr');
      await page.waitForSelector('#v-events:not([hidden]) tbody tr');
      const got = await page.evaluate(() => ({
        verdict: document.getElementById('s-status').textContent.trim(),
        views: Object.fromEntries([...document.querySelectorAll('#v-list tbody tr')].map((tr) => [tr.dataset.region, { status: tr.dataset.status, text: tr.children[1].textContent, ping: tr.children[2].textContent }])),
        partial: document.getElementById('v-partial').hidden ? '' : document.getElementById('v-partial').textContent,
        events: [...document.querySelectorAll('#v-events tbody tr')].map((tr) => [tr.children[1].textContent, tr.children[2].textContent]),
        overflow: Math.max(...[...document.querySelectorAll('#vantages, #vantages *')].map((e) => e.getBoundingClientRect().right)) - document.documentElement.clientWidth,
        wide: [...document.querySelectorAll('#view-server *')].filter((e) => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1).slice(0, 3).map((e) => e.tagName + '#' + e.id + '.' + e.className),
      }));
      check(/up/i.test(got.verdict), label + ': the verdict shown is ' + JSON.stringify(got.verdict) + ', want up');
      check(got.views[upRegion] && got.views[upRegion].status === 'up' && got.views[upRegion].text === 'Up' && / ms$/.test(got.views[upRegion].ping), label + ': ' + upRegion + "'s view: " + JSON.stringify(got.views[upRegion]));
      check(got.views[downRegion] && got.views[downRegion].status === 'down' && got.views[downRegion].text === 'Down', label + ': ' + downRegion + "'s view: " + JSON.stringify(got.views[downRegion]));
      check(got.partial.includes('Partial outage') && got.partial.includes('down from ' + downRegion), label + ': the partial outage said: ' + JSON.stringify(got.partial));
      check(got.events.some(([down, up]) => down === downRegion && up === upRegion), label + ': the recorded partial outages: ' + JSON.stringify(got.events));
      check(got.overflow <= 0, label + ': the vantage points are ' + got.overflow + ' px wider than the screen');
      if (got.wide.length) out.wide = got.wide;
      out.views = got.views;
      out.partial = got.partial;
      out.events = got.events.length;
      await page.evaluate(() => {
        const e = document.getElementById('vantages');
        window.scrollTo(0, e.getBoundingClientRect().top + window.scrollY - 70);
      });
      const file = `vantages-${label}.png`;
      await page.screenshot({ path: shots + '/' + file });
      out.shots.push(file);
      await ctx.close();
    }
  }
});
