// Drives the monitor's page in headless Chromium for the Go test
// TestBrowser (web/browser_test.go, build tag "browser"), which starts the
// handler on loopback with test data and runs:
//
//   node check.mjs BASE_URL SCREENSHOT_DIR
//
// with PLAYWRIGHT_CORE naming the playwright-core package folder and
// CHROMIUM the browser (Debian's /usr/bin/chromium: no browser is ever
// downloaded). It checks what a person would see, saves screenshots, and
// prints one JSON object for the Go test: the server names the list
// showed, and timings. Any failed check exits non-zero with a message.
import { check, run, shooter, watch } from './common.mjs';

const [base, shots] = process.argv.slice(2);
const hostileName = process.env.HOSTILE_NAME;
const hostileTitle = process.env.HOSTILE_TITLE;
const listAddress = process.env.LIST_ADDRESS;
const hostileLabel = process.env.HOSTILE_LABEL;
// occurrences counts how often a text stands in another.
const occurrences = (text, part) => text.split(part).length - 1;
const out = { names: [], timings: {} };
const shot = shooter(shots);

await run(shots, out, async (browser) => {
  // ---------- desktop, list ----------
  const ctx = await browser.newContext({ viewport: { width: 1366, height: 900 }, colorScheme: 'dark' });
  const page = await ctx.newPage();
  page.setDefaultTimeout(20000);
  watch(page, 'desktop');
  let t0 = Date.now();
  await page.goto(base + '/');
  await page.waitForSelector('.row:not([hidden])');
  await page.waitForFunction(() => document.getElementById('live').dataset.state === 'open');
  out.timings.list_first_rows_ms = Date.now() - t0;
  const countText = await page.textContent('#count');
  out.count_text = countText;
  await shot(page, 'list-desktop-dark');

  // Every server: scroll the virtual list from top to bottom and collect
  // the servers its rows link to.
  t0 = Date.now();
  const names = await page.evaluate(async () => {
    const seen = new Set();
    const frame = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    window.scrollTo(0, 0);
    await frame();
    for (let guard = 0; guard < 100000; guard++) {
      for (const a of document.querySelectorAll('.row:not([hidden])')) seen.add(decodeURIComponent(a.getAttribute('href').slice(3)));
      const before = window.scrollY;
      window.scrollBy(0, window.innerHeight - 120);
      await frame();
      if (window.scrollY === before) break;
    }
    return [...seen];
  });
  out.timings.scroll_all_ms = Date.now() - t0;
  out.names = names;
  out.rows_in_dom = await page.locator('.row').count();
  await page.evaluate(() => window.scrollTo(0, 0));

  // Sorting by players puts the busiest first.
  await page.click('.thead [data-sort="players"]');
  const firstPlayers = await page.evaluate(async () => {
    await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    const rows = [...document.querySelectorAll('.row:not([hidden])')].sort((a, b) => a.getBoundingClientRect().top - b.getBoundingClientRect().top);
    return rows.slice(0, 5).map((r) => r.querySelector('.pl .n').textContent);
  });
  out.first_by_players = firstPlayers;
  const counts = firstPlayers.map((t) => Number(t.split('/')[0].replace(/[^\d]/g, '')));
  check(counts.every((c, i) => !isNaN(c) && (i === 0 || c <= counts[i - 1])), 'sorting by players: ' + firstPlayers.join(', '));
  await page.click('.thead [data-sort="status"]');

  // The label keys are columns, the commonest first: two at 1366 px,
  // the others chips beside the name; all five at 1920 px.
  const heads = () => page.evaluate(() => [...document.querySelectorAll('.thead .lc-h')].map((b) => b.textContent).join());
  out.label_columns = await heads();
  check(out.label_columns === 'region,game', 'the label columns at 1366 px are ' + out.label_columns);
  const rowLabels = async (name) => {
    await page.fill('#filter', name);
    await page.waitForFunction((n) => [...document.querySelectorAll('.row:not([hidden])')].some((a) => a.getAttribute('href') === '/s/' + encodeURIComponent(n)), name);
    return page.evaluate((n) => {
      const a = [...document.querySelectorAll('.row:not([hidden])')].find((r) => r.getAttribute('href') === '/s/' + encodeURIComponent(n));
      const cells = [...a.querySelectorAll('.lc:not([hidden])')];
      const head = [...document.querySelectorAll('.thead .lc-h')];
      return {
        cells: cells.map((c) => c.textContent),
        chips: [...a.querySelectorAll('.lchip')].map((c) => c.textContent),
        // Each cell under its column's head.
        aligned: cells.every((c, i) => Math.abs(c.getBoundingClientRect().left - head[i].getBoundingClientRect().left) < 1),
        elements: cells.reduce((n, c) => n + c.children.length, 0),
      };
    }, name);
  };
  let lr = await rowLabels('alpha');
  check(lr.cells.join() === 'eu,cs2' && lr.chips.join() === 'ana,r0,gold' && lr.aligned, 'alpha\'s labels at 1366 px: ' + JSON.stringify(lr));
  // The list widens by its label columns, and the header bar with it.
  const edges = await page.evaluate(() => {
    const bar = document.querySelector('.top-in').getBoundingClientRect(), list = document.querySelector('#view-list').getBoundingClientRect();
    return { bar: [bar.left, bar.right], list: [list.left, list.right] };
  });
  check(Math.abs(edges.bar[0] - edges.list[0]) < 1 && Math.abs(edges.bar[1] - edges.list[1]) < 1, 'the header bar and the list do not share their edges: ' + JSON.stringify(edges));
  lr = await rowLabels(hostileName);
  check(lr.chips.includes(hostileLabel), 'the hostile label chip is not the literal text: ' + JSON.stringify(lr));
  await page.setViewportSize({ width: 1920, height: 900 });
  await page.waitForFunction(() => document.querySelectorAll('.thead .lc-h').length === 5);
  check((await heads()) === 'region,game,owner,tier,rack', 'the label columns at 1920 px are ' + (await heads()));
  lr = await rowLabels('alpha');
  check(lr.cells.join() === 'eu,cs2,ana,gold,r0' && lr.chips.length === 0 && lr.aligned, 'alpha\'s labels at 1920 px: ' + JSON.stringify(lr));
  lr = await rowLabels(listAddress);
  check(lr.cells.join('|') === 'au||||' && lr.chips.length === 0 && lr.aligned, 'the -f server\'s labels (empty cells for the keys it lacks): ' + JSON.stringify(lr));
  lr = await rowLabels(hostileName);
  check(lr.cells[2] === hostileLabel && lr.elements === 0, 'the hostile label is not the literal text: ' + JSON.stringify(lr));
  check(await page.evaluate(() => window.__xss === undefined), 'the hostile label ran script');
  await page.fill('#filter', '');
  // A label column sorts: the owners in order, the servers without one last.
  await page.click('.thead [data-sort="label:owner"]');
  check((await page.getAttribute('.thead [data-sort="label:owner"]', 'aria-sort')) === 'ascending', 'the owner column is not marked sorted');
  const owners = await page.evaluate(async () => {
    await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    const rows = [...document.querySelectorAll('.row:not([hidden])')].sort((a, b) => a.getBoundingClientRect().top - b.getBoundingClientRect().top);
    const col = new Intl.Collator(undefined, { numeric: true, sensitivity: 'base' });
    const v = rows.slice(0, 12).map((r) => r.querySelectorAll('.lc')[2].textContent);
    return { v, sorted: v.every((x, i) => x !== '' && (i === 0 || col.compare(v[i - 1], x) <= 0)) };
  });
  check(owners.sorted, 'sorting by owner: ' + owners.v.join(', '));
  await shot(page, 'list-labels-sorted');
  await page.click('.thead [data-sort="status"]');
  await page.setViewportSize({ width: 1366, height: 900 });
  await page.waitForFunction(() => document.querySelectorAll('.thead .lc-h').length === 2);

  // The hostile name renders as text.
  await page.fill('#filter', 'hostile');
  await page.waitForFunction(() => document.querySelectorAll('.row:not([hidden])').length === 1);
  const shown = await page.textContent('.row:not([hidden]) .title');
  check(shown === hostileTitle, `hostile row title is ${JSON.stringify(shown)}, want the literal text`);
  check(await page.evaluate(() => window.__xss === undefined), 'the hostile name ran script');
  check((await page.locator('img').count()) === 0, 'the hostile name made an element');
  await shot(page, 'list-hostile');

  // A server that goes down turns down, through the live stream.
  await page.fill('#filter', 'bravo');
  await page.waitForFunction(() => document.querySelectorAll('.row:not([hidden])').length === 1);
  check((await page.getAttribute('.row:not([hidden]) .st', 'class')).includes('st-up'), 'bravo is not up at first');
  t0 = Date.now();
  const r = await page.evaluate(async () => (await fetch('/__test/down?server=bravo')).status);
  check(r === 200, 'the test hook answered ' + r);
  await page.waitForSelector('.row:not([hidden]) .st.st-down');
  out.timings.down_shown_ms = Date.now() - t0;
  check((await page.textContent('.row:not([hidden]) .st .txt')) === 'Down', 'bravo does not say Down');
  await page.fill('#filter', '');

  // ---------- desktop, server page ----------
  await page.click('.row:not([hidden])'); // navigates within the page
  await page.goto(base + '/s/alpha');
  await page.waitForSelector('#chart .uplot canvas');
  check((await page.getAttribute('#range [data-range="1h"]', 'aria-pressed')) === 'true', 'the first range shown is not the last hour');
  await page.click('#range [data-range="24h"]');
  await page.waitForFunction(() => document.querySelector('#range [data-range="24h"]').getAttribute('aria-pressed') === 'true' &&
    Number(document.getElementById('chart').dataset.points) > 100);
  out.chart_points = Number(await page.getAttribute('#chart', 'data-points'));
  // Hovering the chart shows values in the legend.
  const over = await page.locator('#chart .u-over').boundingBox();
  await page.mouse.move(over.x + over.width * 0.6, over.y + over.height / 2);
  const legend = await page.locator('#chart .u-legend .u-series').first().textContent();
  out.legend = legend;
  check(/\d/.test(legend), 'hovering the chart shows no time: ' + legend);
  const hovered = await page.locator('#chart .u-legend .u-series .u-value').nth(1).textContent();
  check(/^\d/.test(hovered), 'hovering the chart shows no player count: ' + hovered);
  check((await page.locator('#online tbody tr').count()) > 0, 'no one is shown online');
  check((await page.locator('#sessions tbody tr').count()) > 0, 'no recent sessions');
  check((await page.locator('#maps tbody tr').count()) > 0, 'no map history');
  await page.mouse.move(0, 0);
  await shot(page, 'server-desktop-dark');
  await page.click('#range [data-range="7d"]');
  await page.waitForFunction(() => document.querySelector('#range [data-range="7d"]').getAttribute('aria-pressed') === 'true');
  await page.waitForSelector('#chart .uplot canvas');
  await page.click('#range [data-range="24h"]');

  // The hostile server's own page.
  await page.goto(base + '/s/' + encodeURIComponent(hostileName));
  await page.waitForFunction(() => document.getElementById('s-name').textContent !== '');
  check((await page.textContent('#s-name')) === hostileTitle, 'the hostile page title is not the literal text');
  check(await page.evaluate(() => window.__xss === undefined), 'the hostile page ran script');
  check((await page.title()).startsWith(hostileTitle), 'the document title is not the literal name');

  // A server listed with -f, named by its address: the address once, in
  // its row and on its page (issue 19: it was shown twice).
  await page.goto(base + '/');
  await page.fill('#filter', listAddress);
  await page.waitForFunction((a) => [...document.querySelectorAll('.row:not([hidden])')].some((r) => r.textContent.includes(a)), listAddress);
  const rowText = await page.evaluate((a) => [...document.querySelectorAll('.row:not([hidden])')].find((r) => r.textContent.includes(a)).textContent, listAddress);
  check(occurrences(rowText, listAddress) === 1, 'the -f server\'s row shows its address ' + occurrences(rowText, listAddress) + ' times: ' + rowText);
  await page.goto(base + '/s/' + encodeURIComponent(listAddress));
  await page.waitForFunction(() => document.getElementById('s-name').textContent !== '');
  const head = (await page.textContent('#s-name')) + ' ' + (await page.textContent('#s-meta'));
  check(occurrences(head, listAddress) === 1, 'the -f server\'s page shows its address ' + occurrences(head, listAddress) + ' times: ' + head);

  // The server page turns down live too.
  await page.goto(base + '/s/alpha');
  await page.waitForSelector('#s-status.st-up');
  await page.waitForFunction(() => document.getElementById('live').dataset.state === 'open');
  await page.evaluate(async () => fetch('/__test/down?server=alpha'));
  await page.waitForSelector('#s-status.st-down');
  await page.waitForSelector('#s-problem:not([hidden])');
  await shot(page, 'server-desktop-dark-down');
  await ctx.close();

  // ---------- light theme ----------
  const light = await browser.newContext({ viewport: { width: 1366, height: 900 }, colorScheme: 'light' });
  const lp = await light.newPage();
  lp.setDefaultTimeout(20000);
  watch(lp, 'light');
  await lp.goto(base + '/');
  await lp.waitForSelector('.row:not([hidden])');
  await shot(lp, 'list-desktop-light');
  await lp.goto(base + '/s/charlie');
  await lp.waitForSelector('#chart .uplot canvas');
  await shot(lp, 'server-desktop-light');
  await light.close();

  // ---------- phone ----------
  const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true, colorScheme: 'dark' });
  const pp = await phone.newPage();
  pp.setDefaultTimeout(20000);
  watch(pp, 'phone');
  await pp.goto(base + '/');
  await pp.waitForSelector('.row:not([hidden])');
  check(await pp.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), 'the phone list scrolls sideways');
  // No label columns on a phone: the labels are chips.
  const phoneLabels = await pp.evaluate(() => ({
    columns: [...document.querySelectorAll('.row:not([hidden]) .lc')].filter((c) => c.getClientRects().length).length,
    chips: [...document.querySelectorAll('.row:not([hidden]) .lchip')].filter((c) => c.getClientRects().length).length,
  }));
  check(phoneLabels.columns === 0 && phoneLabels.chips > 0, 'phone labels: ' + JSON.stringify(phoneLabels));
  await shot(pp, 'list-phone-dark');
  await pp.goto(base + '/s/charlie');
  await pp.waitForSelector('#chart .uplot canvas');
  check(await pp.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), 'the phone server page scrolls sideways');
  await shot(pp, 'server-phone-dark');
  await pp.screenshot({ path: shots + '/server-phone-dark-full.png', fullPage: true });
  await phone.close();
});
