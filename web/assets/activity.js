// gsq monitor's page: when people play, on a server's page. A heatmap of
// the average players by hour and day of the week (GET
// /api/v1/servers/NAME/heatmap), the time and players per map over the
// chart's range (map-stats), and the server's rank among the monitored
// servers of its game with its history (rank). Loaded before app.js,
// which calls the hooks below (window.gsqParts).
//
// Map names and games come from game servers: they are only set as
// textContent, never parsed as HTML.
'use strict';

(window.gsqParts = window.gsqParts || []).push((() => {
  let g = null;      // app.js's helpers
  let name = null;   // the server shown
  let range = null;  // the chart's range: {from, to} in Unix seconds
  let rankPlot = null;
  let rankBody = null;
  const days = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];
  const longDays = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];
  const browserZone = (() => { try { return Intl.DateTimeFormat().resolvedOptions().timeZone; } catch (e) { return ''; } })();
  const base = () => '/api/v1/servers/' + encodeURIComponent(name);

  // ---------- markup ----------
  // The cards go after the chart's, built once.
  let built = false;
  // withId is el(...) with an id.
  const withId = (id, ...args) => {
    const e = g.el(...args);
    e.id = id;
    return e;
  };
  // title is a card's heading with a sub-title to fill in.
  const title = (text, subId) => {
    const h = g.el('h2', null, text + ' ');
    h.append(withId(subId, 'span', 'sub'));
    return h;
  };
  function build() {
    if (built) return;
    built = true;
    const { el, $ } = g;
    const chartCard = $('chart').closest('.card');

    const heat = el('section', 'card');
    heat.id = 'activity';
    const head = el('div', 'card-head');
    const h2 = title('When people play', 'heat-sub');
    const tools = el('div', 'heat-tools');
    const zone = el('select');
    zone.id = 'heat-zone';
    zone.setAttribute('aria-label', 'Time zone of the heatmap');
    const weeks = el('select');
    weeks.id = 'heat-weeks';
    weeks.setAttribute('aria-label', 'Weeks the heatmap averages');
    for (const [v, t] of [['28', 'Last 4 weeks'], ['84', 'Last 12 weeks'], ['7', 'Last week']]) {
      const o = el('option', null, t);
      o.value = v;
      weeks.append(o);
    }
    tools.append(zone, weeks);
    head.append(h2, tools);
    const grid = el('div', 'heat-wrap');
    const table = el('table', 'heat');
    table.id = 'heatmap';
    table.tabIndex = 0;
    const cap = el('caption', 'sr-only', 'Average players by day of the week and hour');
    table.append(cap, el('thead'), el('tbody'));
    grid.append(table);
    const legend = el('p', 'chart-note heat-legend');
    legend.id = 'heat-legend';
    heat.append(head, grid, legend);

    const cols = el('div', 'cols cols-2');
    const rank = withId('rank-card', 'section', 'card');
    rank.append(title('Rank', 'rank-sub'), withId('rank-now', 'p', 'rank-now'), withId('rank-chart', 'div', 'rank-chart'), withId('rank-note', 'p', 'chart-note'));

    const maps = withId('mapstats-card', 'section', 'card');
    const mh = title('Time per map', 'mapstats-sub');
    const mt = withId('mapstats', 'table', 'list');
    const thead = el('thead');
    const tr = el('tr');
    tr.append(el('th', null, 'Map'), el('th', 'share-h', 'Share of time up'), el('th', 'num', 'Time'), el('th', 'num', 'Avg players'));
    thead.append(tr);
    mt.append(thead, el('tbody'));
    const me = withId('mapstats-empty', 'p', 'empty');
    me.hidden = true;
    maps.append(mh, mt, me);
    cols.append(rank, maps);

    chartCard.after(heat, cols);
    zone.addEventListener('change', () => { setParam('tz', zone.value); loadHeatmap(); });
    weeks.addEventListener('change', () => { setParam('weeks', weeks.value === '28' ? '' : String(weeks.value / 7)); loadHeatmap(); });
    keyboard(table);
  }

  // setParam puts a setting in the URL, so that a link shows the same.
  function setParam(k, v) {
    const u = new URL(location.href);
    if (v) u.searchParams.set(k, v); else u.searchParams.delete(k);
    history.replaceState(history.state, '', u.pathname + u.search + u.hash);
  }

  function fillZones(serverZone) {
    const zone = g.$('heat-zone');
    const want = new URL(location.href).searchParams.get('tz') || '';
    zone.textContent = '';
    const opts = [['', 'Monitor: ' + serverZone]];
    if (browserZone && browserZone !== serverZone) opts.push([browserZone, 'Yours: ' + browserZone]);
    if (serverZone !== 'UTC' && browserZone !== 'UTC') opts.push(['UTC', 'UTC']);
    if (want && !opts.some(([v]) => v === want)) opts.push([want, want]);
    for (const [v, t] of opts) {
      const o = g.el('option', null, t);
      o.value = v;
      zone.append(o);
    }
    zone.value = want;
  }

  // ---------- heatmap ----------
  let serverZone = null;
  async function loadHeatmap() {
    const at = name;
    const u = new URL(location.href).searchParams;
    const weeks = Math.min(13, Math.max(1, Number(u.get('weeks')) || 4));
    const wsel = g.$('heat-weeks');
    if (![...wsel.options].some((o) => o.value === String(weeks * 7))) {
      const o = g.el('option', null, 'Last ' + weeks + ' weeks');
      o.value = String(weeks * 7);
      wsel.append(o);
    }
    wsel.value = String(weeks * 7);
    let q = '?days=' + weeks * 7;
    const tz = u.get('tz');
    if (tz) q += '&tz=' + encodeURIComponent(tz);
    const body = await g.api(base() + '/heatmap' + q);
    if (at !== name) return;
    if (serverZone === null) {
      // The monitor's own zone: asked once, without tz.
      serverZone = tz ? (await g.api(base() + '/heatmap?days=1')).time_zone : body.time_zone;
      if (at !== name) return;
    }
    fillZones(serverZone);
    renderHeatmap(body);
  }

  function renderHeatmap(body) {
    const { el, $ } = g;
    const table = $('heatmap');
    const thead = table.tHead, tbody = table.tBodies[0];
    thead.textContent = '';
    tbody.textContent = '';
    const hr = el('tr');
    hr.append(el('th', 'sr-only', 'Day'));
    for (let h = 0; h < 24; h++) {
      const th = el('th', 'hh', h % 3 === 0 ? String(h).padStart(2, '0') : '');
      th.setAttribute('aria-label', String(h).padStart(2, '0') + ':00');
      th.scope = 'col';
      hr.append(th);
    }
    thead.append(hr);
    const max = body.max || 0;
    let filled = 0;
    for (let d = 0; d < 7; d++) {
      const tr = el('tr');
      const th = el('th', 'dd', days[d]);
      th.scope = 'row';
      tr.append(th);
      for (let h = 0; h < 24; h++) {
        const v = body.avg_players[d][h];
        const td = el('td');
        const when = longDays[d] + ' ' + String(h).padStart(2, '0') + ':00';
        let text;
        if (v === null) {
          td.className = 'none';
          text = when + ': no data';
        } else {
          filled++;
          // The square root keeps quiet hours visible beside a busy peak.
          td.style.setProperty('--v', String(max > 0 ? Math.sqrt(v / max) : 0));
          text = when + ': ' + v.toFixed(1) + ' players on average (' + body.hours[d][h] + ' h)';
        }
        td.title = text;
        td.append(el('span', 'sr-only', text));
        tr.append(td);
      }
      tbody.append(tr);
    }
    table.dataset.filled = String(filled); // for tests and scripts
    $('heat-sub').textContent = body.days + ' days · ' + body.time_zone;
    const legend = $('heat-legend');
    legend.textContent = '';
    if (filled === 0) {
      legend.textContent = 'No history in these weeks yet.';
      return;
    }
    const scale = el('span', 'heat-scale');
    for (const f of [0, 0.25, 0.5, 0.75, 1]) {
      const s = el('span');
      s.style.setProperty('--v', String(Math.sqrt(f)));
      scale.append(s);
    }
    legend.append('Average players: 0 ', scale, ' ' + max.toFixed(1) + '. A poll that found the server down counts as none.');
  }

  // keyboard moves a focus mark through the heatmap's cells with the
  // arrow keys, and says each cell's figure (aria-live).
  function keyboard(table) {
    let r = 0, c = 0;
    const live = g.el('p', 'sr-only');
    live.setAttribute('aria-live', 'polite');
    table.after(live);
    const cell = () => table.tBodies[0].rows[r] && table.tBodies[0].rows[r].cells[c + 1];
    const show = () => {
      for (const td of table.querySelectorAll('td.cur')) td.classList.remove('cur');
      const td = cell();
      if (!td) return;
      td.classList.add('cur');
      live.textContent = td.title;
    };
    table.addEventListener('focus', show);
    table.addEventListener('blur', () => { for (const td of table.querySelectorAll('td.cur')) td.classList.remove('cur'); });
    table.addEventListener('keydown', (e) => {
      const moves = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1], Home: [0, -24], End: [0, 24] };
      const m = moves[e.key];
      if (!m) return;
      e.preventDefault();
      r = Math.min(6, Math.max(0, r + m[0]));
      c = Math.min(23, Math.max(0, c + m[1]));
      show();
    });
  }

  // ---------- time per map ----------
  async function loadMapStats() {
    const at = name;
    let q = '';
    if (range) q = '?from=' + Math.floor(range.from) + '&to=' + Math.ceil(Math.min(range.to, Date.now() / 1000));
    const body = await g.api(base() + '/map-stats' + q);
    if (at !== name) return;
    const { el, $ } = g;
    const tbody = $('mapstats').tBodies[0];
    tbody.textContent = '';
    const list = body.maps.slice(0, 15);
    for (const m of list) {
      const tr = el('tr');
      const bar = el('span', 'bar');
      const fill = el('span', 'fill');
      fill.style.width = (m.share * 100).toFixed(1) + '%';
      bar.append(fill);
      const share = el('td', 'share');
      share.append(bar, el('span', 'pct', Math.round(m.share * 100) + '%'));
      tr.append(el('td', null, m.map || '(unknown)'), share, el('td', 'num', g.fmtDur(m.seconds)), el('td', 'num', m.avg_players.toFixed(1)));
      tbody.append(tr);
    }
    $('mapstats').hidden = list.length === 0;
    const empty = $('mapstats-empty');
    empty.hidden = list.length > 0;
    empty.textContent = 'No time up in this range.';
    const span = Date.parse(body.to) - Date.parse(body.from);
    $('mapstats-sub').textContent = range ? g.dateTimeFmt.format(new Date(body.from)) + ' – ' + g.dateTimeFmt.format(new Date(body.to)) : g.fmtDur(span / 1000);
  }

  // ---------- rank ----------
  async function loadRank() {
    const at = name;
    let body;
    try {
      body = await g.api(base() + '/rank');
    } catch (e) {
      if (e.status === 404) { // history only: no longer monitored
        g.$('rank-card').hidden = true;
        return;
      }
      throw e;
    }
    if (at !== name) return;
    g.$('rank-card').hidden = false;
    rankBody = body;
    renderRank();
  }

  function renderRank() {
    const body = rankBody;
    if (!body) return;
    const { el, $ } = g;
    const now = $('rank-now');
    now.textContent = '';
    const group = body.by === 'game' ? body.game : body.game.toUpperCase() + ' (no game announced)';
    $('rank-sub').textContent = 'among monitored ' + group + ' servers';
    if (body.rank === null) {
      now.append(el('span', 'muted', 'Not ranked yet: no complete day in the last week.'));
    } else {
      now.append(el('b', null, '#' + body.rank), ' of ' + g.fmtInt(body.of), el('span', 'muted', ' · ' + body.avg_players.toFixed(1) + ' players on average over the 7 days to ' + g.dateFmt.format(new Date(body.day))));
    }
    const box = $('rank-chart');
    if (rankPlot) rankPlot.destroy();
    rankPlot = null;
    box.textContent = '';
    const xs = [], ys = [];
    for (const d of body.history) {
      xs.push(Date.parse(d.day) / 1000);
      ys.push(d.rank);
    }
    const ranked = ys.filter((v) => v !== null);
    box.dataset.points = String(ranked.length);
    $('rank-note').textContent = ranked.length ? 'Rank by day over ' + body.history.length + ' days (1 is the busiest); ranks change once a day.' : '';
    if (!ranked.length) return;
    // Scaled to the ranks held, not to the size of the field.
    const held = Math.max(...ranked);
    const worst = held + Math.max(1, Math.ceil(held * 0.25));
    const muted = g.cssColor('--muted'), line = g.cssColor('--line'), accent = g.cssColor('--accent');
    const axis = { stroke: muted, grid: { stroke: line, width: 1 }, ticks: { stroke: line, width: 1 } };
    rankPlot = new uPlot({
      width: Math.max(240, box.clientWidth), height: 160,
      legend: { show: false },
      cursor: { drag: { x: false, y: false } },
      // #1 on top.
      scales: { x: { time: true }, y: { dir: -1, range: [0.5, Math.max(1, worst) + 0.5] } },
      axes: [Object.assign({}, axis, { space: 60, values: (u, sp) => sp.map((v) => g.dateFmt.format(new Date(v * 1000)).replace(/,? \d{4}$/, '')) }),
        Object.assign({}, axis, { size: 52, incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000], values: (u, sp) => sp.map((v) => (Number.isInteger(v) ? '#' + v : '')) })],
      series: [{}, { label: 'Rank', stroke: accent, width: 2, spanGaps: false, points: { show: true, size: 4 } }],
    }, [xs, ys], box);
  }

  function resize() {
    if (rankPlot) rankPlot.setSize({ width: Math.max(240, g.$('rank-chart').clientWidth), height: 160 });
  }

  return {
    init(shared) {
      g = shared;
      addEventListener('resize', resize);
    },
    serverLoad(n) {
      build();
      if (n !== name) {
        name = n;
        range = null;
        rankBody = null;
      }
      loadHeatmap().catch(g.showError);
      loadRank().catch(g.showError);
      loadMapStats().catch(g.showError);
    },
    serverHidden() {
      name = null;
      if (rankPlot) rankPlot.destroy();
      rankPlot = null;
    },
    // The chart's range changed (ranges.js): the maps follow it.
    rangeChanged(from, to) {
      if (!name) return;
      range = { from, to };
      loadMapStats().catch(g.showError);
    },
    themeChanged() { renderRank(); },
  };
})());
