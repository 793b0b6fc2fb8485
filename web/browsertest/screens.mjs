// Takes the screenshots of the README (docs/screens/): each view of the
// monitor's page at desktop and phone widths, in both themes, for the Go
// test TestBrowserScreens (web/browser_screens_test.go, build tag
// "browser"):
//
//   node screens.mjs BASE_URL OUT_DIR
//
// It checks only that each view rendered; the checks are the other
// scripts'.
import { check, run, watch } from './common.mjs';

const [base, dir] = process.argv.slice(2);
const out = { shots: [] };
const settle = (page) => page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));

// The views: a path, what shows it is ready, and where to scroll.
const views = [
  { name: 'list', path: '/', ready: '.row:not([hidden]) .pb rect' },
  { name: 'server', path: '/s/alpha?range=24h', ready: '#chart .uplot canvas' },
  { name: 'chart', path: '/s/alpha?range=7d&compare=week', ready: '#chart .uplot canvas', scroll: '#chart', phoneOnly: true },
  { name: 'activity', path: '/s/alpha?range=7d&compare=week', ready: '#heatmap[data-filled="168"]', scroll: '#activity' },
  // Two maintenance windows alpha stayed up in, the pointer on one.
  { name: 'window', path: '/s/alpha?range=24h', ready: '#chart[data-windows="2"] .uplot canvas', scroll: '#chart', hover: Number(process.env.WINDOW_AT) },
];

await run(dir, out, async (browser) => {
  for (const scheme of ['light', 'dark']) {
    for (const [width, height, kind] of [[1366, 900, 'desktop'], [390, 844, 'phone']]) {
      const ctx = await browser.newContext({
        viewport: { width, height }, colorScheme: scheme,
        ...(kind === 'phone' ? { deviceScaleFactor: 2, isMobile: true, hasTouch: true } : {}),
      });
      const page = await ctx.newPage();
      page.setDefaultTimeout(20000);
      watch(page, kind + '-' + scheme);
      for (const v of views) {
        if (v.phoneOnly && kind !== 'phone') continue;
        await page.goto(base + v.path);
        await page.waitForSelector(v.ready, { state: 'attached' });
        await page.waitForFunction(() => document.getElementById('live').dataset.state === 'open');
        if (v.scroll) {
          await page.evaluate((sel) => {
            const e = document.querySelector(sel).closest('.card');
            window.scrollTo(0, e.getBoundingClientRect().top + window.scrollY - 70);
          }, v.scroll);
        }
        if (v.hover) {
          await settle(page);
          const o = await page.locator('#chart .u-over').boundingBox();
          const from = Number(await page.getAttribute('#chart', 'data-from')), to = Number(await page.getAttribute('#chart', 'data-to'));
          await page.mouse.move(o.x + ((v.hover - from) / (to - from)) * o.width, o.y + o.height * 0.7);
          await page.waitForSelector('#chart .win-tip:not([hidden])');
        }
        await page.waitForTimeout(300);
        await settle(page);
        const file = `${v.name}-${kind}-${scheme}.png`;
        await page.screenshot({ path: dir + '/' + file });
        out.shots.push(file);
        if (v.hover) await page.mouse.move(0, 0);
      }
      await ctx.close();
    }
  }
  check(out.shots.length === views.filter((v) => !v.phoneOnly).length * 4 + views.filter((v) => v.phoneOnly).length * 2, 'shots: ' + out.shots.join(' '));
});
