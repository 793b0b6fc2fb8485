// Drives the player, incident, label, maintenance and status views of a
// real `gsq monitor` in headless Chromium for the Go test
// TestViewsBrowser (cmd/gsq/views_browser_test.go, build tag "browser"):
//
//   node views.mjs BASE_URL SCREENSHOT_DIR
//
// with TOKEN the monitor's token, STOP_URL a hook that stops the server
// ?server= names, and PLAYER a player the test seeded. It checks what a
// person would see, the keyboard focus and the contrast of the views'
// text in both themes, saves screenshots, and prints one JSON object.
import { check, run, shooter, textContrast, watch } from './common.mjs';

const [base, shots] = process.argv.slice(2);
const token = process.env.TOKEN;
const player = process.env.PLAYER;
const out = { contrast: [], timings: {} };
const shot = shooter(shots);

async function checkContrast(page, label, roots) {
  for (const scheme of ['dark', 'light']) {
    await page.emulateMedia({ colorScheme: scheme });
    const r = await page.evaluate(textContrast, roots);
    check(r.checked > 0, `${label} (${scheme}): no text checked under ${roots}`);
    for (const b of r.bad) out.contrast.push(`${label} (${scheme}): ${b}`);
    check(r.bad.length === 0, `${label} (${scheme}): text below WCAG AA contrast: ${r.bad.join('; ')}`);
  }
  await page.emulateMedia({ colorScheme: 'dark' });
}

// focusRing reports whether the focused element shows a visible outline.
const focusRing = (page) => page.evaluate(() => {
  const e = document.activeElement;
  if (!e || e === document.body) return 'nothing focused';
  const cs = getComputedStyle(e);
  return cs.outlineStyle !== 'none' && parseFloat(cs.outlineWidth) >= 1 ? '' : 'no outline on ' + e.tagName + '#' + e.id;
});

const rowNames = (page) => page.evaluate(() => [...document.querySelectorAll('.row:not([hidden])')].map((a) => decodeURIComponent(a.getAttribute('href').slice(3))).sort());

await run(shots, out, async (browser) => {
  // ---------- the public page, without the token ----------
  for (const [w, h, tag] of [[1280, 900, 'desktop'], [390, 844, 'phone']]) {
    const anon = await browser.newContext({ viewport: { width: w, height: h }, colorScheme: 'light' });
    const ap = await anon.newPage();
    watch(ap, 'status ' + tag);
    const r = await ap.goto(base + '/status');
    check(r.status() === 200, '/status without the token: ' + r.status());
    const text = await ap.textContent('body');
    check(text.includes('Our servers') && text.includes('Nightly restarts'), 'the status page lacks its title and text');
    check((await ap.locator('.srv').count()) === 4, 'the status page does not list the 4 public servers');
    const api = await ap.request.get(base + '/api/v1/servers');
    check(api.status() === 401, '/api/v1/servers without the token: ' + api.status());
    const list = await ap.request.get(base + '/');
    check(list.status() === 401, '/ without the token: ' + list.status());
    if (tag === 'desktop') await checkContrast(ap, 'status page', 'main.sp');
    for (const scheme of ['light', 'dark']) {
      await ap.emulateMedia({ colorScheme: scheme });
      await shot(ap, `status-${tag}-${scheme}`);
    }
    await anon.close();
  }

  // ---------- sign in ----------
  const ctx = await browser.newContext({ viewport: { width: 1366, height: 900 }, colorScheme: 'dark' });
  const page = await ctx.newPage();
  page.setDefaultTimeout(20000);
  watch(page, 'desktop');
  page.on('response', (res) => { if (res.status() >= 400) check(false, res.status() + ': ' + res.url()); });
  await page.goto(base + '/login');
  await page.fill('#token', token);
  await page.click('button[type="submit"]');
  await page.waitForFunction(() => document.querySelectorAll('.row:not([hidden]) .st.st-up').length === 4);

  // ---------- labels: a filter, rows that say their protocol ----------
  check((await page.locator('.row:not([hidden]) .proto').first().textContent()) === 'A2S', 'a row does not say its protocol');
  await page.selectOption('#label-filter', 'region:eu');
  await page.waitForFunction(() => document.querySelectorAll('.row:not([hidden])').length === 2);
  const eu = await rowNames(page);
  check(eu.join() === 'alpha,bravo', 'region:eu shows ' + eu.join());
  check(new URL(page.url()).searchParams.get('label') === 'region:eu', 'the label filter is not in the URL: ' + page.url());
  await page.selectOption('#label-group', 'region');
  await page.waitForFunction(() => document.querySelectorAll('#label-groups .gchip').length === 1);
  await shot(page, 'labels-desktop-dark');
  await page.selectOption('#label-filter', '');
  await page.waitForFunction(() => document.querySelectorAll('.row:not([hidden])').length === 4);
  check((await page.locator('#label-groups .gchip').count()) === 2, 'grouping by region does not show 2 groups');
  await checkContrast(page, 'list rows', '.row:not([hidden]) .tags, .labelbar, .top');
  await page.selectOption('#label-group', '');

  // ---------- a player found by search, from the keyboard ----------
  let t0 = Date.now();
  await page.focus('#filter');
  for (let i = 0; i < 10 && !(await page.evaluate(() => document.activeElement.id === 'player-q')); i++) await page.keyboard.press('Shift+Tab');
  check(await page.evaluate(() => document.activeElement.id === 'player-q'), 'Shift+Tab from the filter does not reach the player search');
  const ring = await focusRing(page);
  check(ring === '', 'player search: ' + ring);
  await page.keyboard.type(player.slice(0, 5).toLowerCase());
  await page.waitForSelector('#player-results a');
  const found = await page.textContent('#player-results');
  check(found.includes(player), 'the search did not find ' + player + ': ' + found);
  await shot(page, 'search-desktop-dark');
  await page.keyboard.press('ArrowDown');
  check((await focusRing(page)) === '', 'search result: ' + (await focusRing(page)));
  await page.keyboard.press('Enter');
  await page.waitForFunction((p) => document.getElementById('p-name').textContent === p, player);
  await page.waitForFunction(() => document.querySelectorAll('#p-server-list tbody tr').length === 2);
  out.timings.player_found_ms = Date.now() - t0;
  check(/\/p\/Zelda_Regular$/.test(page.url()), 'the player page URL is ' + page.url());
  await checkContrast(page, 'player page', '#view-player');
  for (const scheme of ['dark', 'light']) {
    await page.emulateMedia({ colorScheme: scheme });
    await shot(page, 'player-desktop-' + scheme);
  }
  await page.emulateMedia({ colorScheme: 'dark' });

  // The server's page: the player among its regulars.
  await page.click('#p-server-list a');
  await page.waitForFunction((p) => [...document.querySelectorAll('#regulars tbody td')].some((td) => td.textContent === p), player);
  await page.click('#regulars-range [data-span="30d"]');
  check((await page.getAttribute('#regulars-range [data-span="30d"]', 'aria-pressed')) === 'true', 'the 30 d regulars button is not pressed');

  // ---------- an incident appearing when a server is stopped ----------
  await page.goto(base + '/incidents');
  await page.waitForFunction(() => document.getElementById('live').dataset.state === 'open');
  t0 = Date.now();
  let r = await fetch(process.env.STOP_URL + '?server=bravo');
  check(r.status === 200, 'the stop hook answered ' + r.status);
  await page.waitForFunction(() => [...document.querySelectorAll('#incident-list tbody tr')].some((tr) => tr.cells[0].textContent === 'bravo' && tr.cells[1].textContent === 'Outage'), null, { timeout: 15000 });
  out.timings.incident_shown_ms = Date.now() - t0;

  // ---------- a maintenance window silencing an alert ----------
  const added = await page.evaluate(async () => {
    const res = await fetch('/api/v1/maintenance', { method: 'POST', headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ servers: ['charlie'], every: 'every day 00:00-00:00 UTC', reason: 'the test' }) });
    return res.status;
  });
  check(added === 201, 'POST /api/v1/maintenance answered ' + added);
  r = await fetch(process.env.STOP_URL + '?server=charlie');
  check(r.status === 200, 'the stop hook answered ' + r.status);
  await page.waitForFunction(() => [...document.querySelectorAll('#incident-list tbody tr')].some((tr) => tr.cells[0].textContent === 'charlie' && tr.cells[1].textContent === 'Maintenance'), null, { timeout: 15000 })
    .catch(async (e) => { throw new Error(e.message + '; the list: ' + (await page.textContent('#incident-list')) + '; the API: ' + JSON.stringify(await page.evaluate(() => fetch('/api/v1/incidents').then((r) => r.json())))); });
  await checkContrast(page, 'incidents', '#view-incidents');
  await page.focus('#incident-kind button');
  await page.keyboard.press('Tab');
  check((await focusRing(page)) === '', 'incident filter: ' + (await focusRing(page)));
  await page.keyboard.press('Enter');
  check((await page.locator('#incident-list tbody tr').count()) === 1, 'the Outages filter does not leave bravo alone');
  await page.click('#incident-kind [data-kind="all"]');
  for (const scheme of ['dark', 'light']) {
    await page.emulateMedia({ colorScheme: scheme });
    await shot(page, 'incidents-desktop-' + scheme);
  }
  // The list says why bravo is down.
  await page.goto(base + '/');
  await page.waitForSelector('.row[href="/s/bravo"] .why:not([hidden])');
  check((await page.textContent('.row[href="/s/bravo"] .why')) !== '', 'the list does not say why bravo is down');
  // Whole: not cut by its cell, nor pushed out by the labels beside it.
  const why = await page.evaluate(() => {
    const w = document.querySelector('.row[href="/s/bravo"] .why');
    const r = w.getBoundingClientRect(), box = w.closest('.tags').getBoundingClientRect();
    return { cut: w.scrollWidth > w.clientWidth + 1, inside: r.left >= box.left - 1 && r.right <= box.right + 1 && r.top >= box.top - 1 && r.bottom <= box.bottom + 1, title: w.title, why: [r.left, r.right, r.top, r.bottom], tags: [box.left, box.right, box.top, box.bottom], vw: innerWidth };
  });
  check(!why.cut && why.inside, 'bravo\'s down reason is cut in the list: ' + JSON.stringify(why));
  check(/^\w[\w ]*: .*bravo|^\w[\w ]*: .*127\.0\.0\.1/.test(why.title), 'the reason\'s title does not give the error: ' + JSON.stringify(why));
  for (const scheme of ['dark', 'light']) {
    await page.emulateMedia({ colorScheme: scheme });
    await shot(page, 'list-reasons-desktop-' + scheme);
  }
  // The server's page: regulars and incidents, in both themes.
  await page.goto(base + '/s/bravo');
  await page.waitForSelector('#s-incidents tbody tr');
  await page.evaluate(() => document.querySelector('.ext-cols').scrollIntoView());
  await checkContrast(page, 'server page parts', '.ext-cols');
  for (const scheme of ['dark', 'light']) {
    await page.emulateMedia({ colorScheme: scheme });
    await shot(page, 'server-parts-desktop-' + scheme);
  }
  await ctx.close();

  // ---------- phone ----------
  const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, colorScheme: 'light', isMobile: true, hasTouch: true });
  const pp = await phone.newPage();
  watch(pp, 'phone');
  await pp.goto(base + '/login');
  await pp.fill('#token', token);
  await pp.click('button[type="submit"]');
  await pp.waitForSelector('.row:not([hidden])');
  check(await pp.evaluate(() => [...document.querySelectorAll('.row:not([hidden]) .proto')].every((e) => e.getClientRects().length && e.textContent === 'A2S')),
    'on a phone, a row does not show its protocol');
  check(await pp.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), 'the phone list scrolls sideways');
  for (const [path, name] of [['/', 'list'], ['/p/' + player, 'player'], ['/incidents', 'incidents']]) {
    await pp.goto(base + path);
    await pp.waitForTimeout(700);
    check(await pp.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), `the phone ${name} view scrolls sideways`);
    for (const scheme of ['light', 'dark']) {
      await pp.emulateMedia({ colorScheme: scheme });
      await shot(pp, `${name}-phone-${scheme}`);
    }
  }
  await phone.close();
});
