// gsq monitor's page: the server list and a page per server, fed by the
// JSON API and kept current by its live stream (server-sent events).
//
// Server names, maps, player names and every other string a game server
// sends are attacker-controlled: they are only ever set as textContent or
// as encoded URL parts, never parsed as HTML.
'use strict';

(() => {
  // ---------- helpers ----------
  const $ = (id) => document.getElementById(id);

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = text;
    return e;
  }

  async function api(path) {
    const r = await fetch(path, { headers: { Accept: 'application/json' }, credentials: 'same-origin' });
    if (r.status === 401) {
      location.assign('/login');
      throw new Error('sign-in needed');
    }
    let body = null;
    try { body = await r.json(); } catch (e) { /* not JSON */ }
    if (!r.ok) {
      const err = new Error(body && body.error ? body.error.message : r.status + ' ' + r.statusText);
      err.status = r.status;
      throw err;
    }
    return body;
  }

  const nf = new Intl.NumberFormat();
  const collator = new Intl.Collator(undefined, { numeric: true, sensitivity: 'base' });
  const timeFmt = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' });
  const dateTimeFmt = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });
  const dateFmt = new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'short', day: 'numeric' });

  const fmtInt = (n) => (n === undefined || n === null ? '–' : nf.format(n));
  function fmtPct(f) {
    if (f === undefined || f === null) return '–';
    const p = f * 100;
    return (p >= 99.95 || p === 0 ? p.toFixed(0) : p >= 99 ? p.toFixed(2) : p.toFixed(1)) + '%';
  }
  const fmtPing = (ms) => (ms === undefined || ms === null ? '–' : Math.round(ms) + ' ms');
  function fmtDur(sec) {
    sec = Math.max(0, Math.round(sec));
    if (sec < 60) return sec + ' s';
    const m = Math.floor(sec / 60);
    if (m < 60) return m + ' min';
    const h = Math.floor(m / 60);
    if (h < 48) return h + 'h ' + String(m % 60).padStart(2, '0') + 'm';
    return Math.floor(h / 24) + 'd ' + (h % 24) + 'h';
  }
  function fmtWhen(iso) {
    if (!iso) return '–';
    const d = new Date(iso);
    const today = new Date();
    return d.toDateString() === today.toDateString() ? timeFmt.format(d) : dateTimeFmt.format(d);
  }
  function fmtAgo(iso) {
    if (!iso) return '';
    const s = (Date.now() - new Date(iso).getTime()) / 1000;
    return s < 5 ? 'just now' : fmtDur(s) + ' ago';
  }
  const statusText = { up: 'Up', down: 'Down', pending: 'Pending' };
  const displayName = (s) => (s.summary && s.summary.name) || s.name;

  // ---------- parts ----------
  // The page's other scripts (activity.js, ranges.js, rows.js) load first
  // and register in window.gsqParts; each gets the helpers below at init
  // and is called by name (hook) when the page does what it watches.
  const parts = window.gsqParts || [];
  function hook(name, ...args) {
    for (const p of parts) {
      if (!p[name]) continue;
      try { p[name](...args); } catch (e) { showError(e); }
    }
  }

  // ---------- theme ----------
  const themes = ['auto', 'light', 'dark'];
  const themeLabel = { auto: 'Auto', light: 'Light', dark: 'Dark' };
  let theme = localStorage.getItem('gsq-theme') || 'auto';
  function applyTheme() {
    if (theme === 'auto') delete document.documentElement.dataset.theme;
    else document.documentElement.dataset.theme = theme;
    $('theme').lastChild.textContent = themeLabel[theme] + ' theme';
    $('theme').title = 'Theme: ' + theme + ' (click to change)';
    if (chart.plot) chart.redrawColors();
    hook('themeChanged');
  }
  $('theme').addEventListener('click', () => {
    theme = themes[(themes.indexOf(theme) + 1) % themes.length];
    localStorage.setItem('gsq-theme', theme);
    applyTheme();
  });
  matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => { if (chart.plot) chart.redrawColors(); });

  // cssColor resolves a colour variable (light-dark() included) for the
  // canvas, which cannot read CSS variables.
  const colorProbe = el('span');
  colorProbe.hidden = true;
  document.body.appendChild(colorProbe);
  function cssColor(name, alpha) {
    colorProbe.style.color = 'var(' + name + ')';
    colorProbe.hidden = false;
    const c = getComputedStyle(colorProbe).color;
    colorProbe.hidden = true;
    if (alpha === undefined) return c;
    const m = c.match(/[\d.]+/g);
    return m ? 'rgba(' + m[0] + ',' + m[1] + ',' + m[2] + ',' + alpha + ')' : c;
  }

  // ---------- live stream ----------
  // One EventSource at a time. On every (re)connection the view reloads
  // its state, so that nothing missed while disconnected (or dropped by
  // the server for reading too slowly) stays missed.
  const live = {
    source: null,
    open(url, onEvent, onOpen) {
      this.close();
      const src = new EventSource(url);
      this.source = src;
      const ind = $('live');
      ind.dataset.state = 'connecting';
      ind.textContent = 'Connecting';
      src.onopen = () => {
        ind.dataset.state = 'open';
        ind.textContent = 'Live';
        onOpen();
      };
      src.onerror = () => {
        ind.dataset.state = 'error';
        ind.textContent = 'Reconnecting';
      };
      for (const kind of ['poll', 'down', 'up', 'map', 'join', 'leave', 'config']) {
        src.addEventListener(kind, (e) => {
          let ev;
          try { ev = JSON.parse(e.data); } catch (err) { return; }
          onEvent(ev);
        });
      }
    },
    close() {
      if (this.source) this.source.close();
      this.source = null;
    },
  };

  // ---------- server list ----------
  const list = {
    servers: new Map(), // name → state
    rows: [],           // filtered and sorted
    pool: [],           // row elements, reused while scrolling
    sortKey: localStorage.getItem('gsq-sort') || 'status',
    sortDir: Number(localStorage.getItem('gsq-sort-dir')) || 1,
    filter: '',
    status: 'all',
    dirty: true,
    frame: 0,
    rowH: 52,
    loaded: false,
  };
  const statusRank = { down: 0, pending: 1, up: 2 };
  const num = (v) => (v === undefined || v === null ? null : v);
  function cmpNullLast(a, b, dir) {
    if (a === null && b === null) return 0;
    if (a === null) return 1;
    if (b === null) return -1;
    return (a - b) * dir;
  }
  const sorters = {
    status: (a, b, d) => (statusRank[a.status] - statusRank[b.status]) * d,
    name: (a, b, d) => collator.compare(displayName(a), displayName(b)) * d,
    map: (a, b, d) => collator.compare(a.summary.map || '\uffff', b.summary.map || '\uffff') * d,
    players: (a, b, d) => cmpNullLast(a.status === 'up' ? num(a.summary.players) : null, b.status === 'up' ? num(b.summary.players) : null, d),
    ping: (a, b, d) => cmpNullLast(a.status === 'up' ? num(a.ping_ms) : null, b.status === 'up' ? num(b.ping_ms) : null, d),
    uptime: (a, b, d) => cmpNullLast(num(a.uptime_24h), num(b.uptime_24h), d),
  };
  const defaultDir = { status: 1, name: 1, map: 1, players: -1, ping: 1, uptime: -1 };
  // sorterFor is the sorter of a column: the list's own, or a part's
  // (sorter(key)), or by status when none knows it.
  function sorterFor(key) {
    if (sorters[key]) return sorters[key];
    for (const p of parts) {
      const f = p.sorter && p.sorter(key);
      if (f) return f;
    }
    return sorters.status;
  }

  function matches(s, q) {
    if (list.status !== 'all' && s.status !== list.status) return false;
    for (const x of parts) if (x.matches && !x.matches(s)) return false;
    if (!q) return true;
    const sum = s.summary || {};
    for (const f of [s.name, sum.name, sum.map, sum.game, s.target]) {
      if (f && f.toLowerCase().includes(q)) return true;
    }
    return false;
  }

  function recompute() {
    const q = list.filter.trim().toLowerCase();
    const rows = [];
    for (const s of list.servers.values()) if (matches(s, q)) rows.push(s);
    const by = sorterFor(list.sortKey);
    const d = list.sortDir;
    rows.sort((a, b) => by(a, b, d) || collator.compare(displayName(a), displayName(b)) || (a.name < b.name ? -1 : 1));
    list.rows = rows;
    for (const x of parts) if (x.arrange) list.rows = x.arrange(list.rows, list.servers.values());
    $('spacer').style.height = list.rows.length * list.rowH + 'px';
    const n = list.servers.size;
    $('count').textContent = rows.length === n ? fmtInt(n) + ' servers' : fmtInt(rows.length) + ' of ' + fmtInt(n) + ' servers';
    const empty = $('list-empty');
    empty.hidden = rows.length > 0 || !list.loaded;
    empty.textContent = n === 0 ? 'No servers are monitored yet.' : 'No server matches this filter.';
    renderTotals();
  }

  function renderTotals() {
    let up = 0, down = 0, players = 0;
    for (const s of list.servers.values()) {
      if (s.status === 'up') { up++; players += s.summary.players || 0; } else if (s.status === 'down') down++;
    }
    const t = $('totals');
    t.textContent = '';
    const part = (value, label, cls) => {
      const span = el('span', cls);
      span.append(el('b', null, fmtInt(value)), ' ' + label);
      return span;
    };
    t.append(part(list.servers.size, 'servers'), ' · ', part(up, 'up'), ' · ', part(down, 'down', down ? 't-down' : ''), ' · ', part(players, 'players'));
  }

  function makeRow() {
    const a = el('a', 'row row-grid');
    a.dataset.nav = '';
    a.setAttribute('role', 'row');
    const st = el('span', 'st');
    st.append(el('span', 'dot'), el('span', 'txt'));
    const nm = el('span', 'nm');
    nm.append(el('span', 'title'), el('span', 'sub'));
    const pl = el('span', 'pl');
    const bar = el('span', 'bar');
    bar.append(el('span', 'fill'));
    pl.append(bar, el('span', 'n'));
    a.append(st, nm, el('span', 'mp'), pl, el('span', 'pg'), el('span', 'ut'));
    hook('rowMade', a);
    a.hidden = true;
    $('spacer').appendChild(a);
    return a;
  }

  function fillRow(a, s, i) {
    if (a._name !== s.name) {
      a._name = s.name;
      a.href = '/s/' + encodeURIComponent(s.name);
    }
    a.style.transform = 'translateY(' + i * list.rowH + 'px)';
    a.classList.toggle('is-off', s.status !== 'up');
    const [st, nm, mp, pl, pg, ut] = a.children;
    st.className = 'st st-' + s.status;
    st.children[1].textContent = statusText[s.status] || s.status;
    st.title = statusText[s.status] || s.status;
    const sum = s.summary || {};
    nm.children[0].textContent = displayName(s);
    const small = window.innerWidth <= 720;
    // The address once: a server listed with -f is named by it.
    const target = displayName(s) === s.target ? '' : s.target;
    const alias = sum.name && sum.name !== s.name && s.name !== s.target ? s.name : '';
    nm.children[1].textContent = (small ? [sum.map, target] : [alias, target]).filter(Boolean).join(' · ');
    mp.textContent = sum.map || '';
    const up = s.status === 'up';
    const p = up ? sum.players : null, m = sum.max_players;
    const fill = pl.children[0].firstChild;
    fill.style.width = p !== null && p !== undefined && m ? Math.min(100, (p / m) * 100) + '%' : '0';
    fill.classList.toggle('full', p !== null && p !== undefined && m > 0 && p >= m);
    pl.children[1].textContent = up ? fmtInt(p) + (m ? ' / ' + fmtInt(m) : '') : '–';
    pg.textContent = up ? fmtPing(s.ping_ms) : '–';
    const u = s.uptime_24h;
    ut.textContent = fmtPct(u);
    ut.className = 'ut' + (u === undefined || u === null ? '' : u < 0.9 ? ' bad' : u < 0.99 ? ' meh' : '');
    hook('rowFilled', a, s);
    a.hidden = false;
  }

  function renderList() {
    list.frame = 0;
    if (list.dirty) {
      list.dirty = false;
      recompute();
    }
    const spacer = $('spacer');
    const top = spacer.getBoundingClientRect().top;
    const h = list.rowH;
    const first = Math.max(0, Math.floor(-top / h) - 8);
    const last = Math.min(list.rows.length, Math.ceil((window.innerHeight - top) / h) + 8);
    const need = Math.max(0, last - first);
    while (list.pool.length < need) list.pool.push(makeRow());
    for (let i = 0; i < list.pool.length; i++) {
      const a = list.pool[i];
      if (i < need) fillRow(a, list.rows[first + i], first + i);
      else if (!a.hidden) { a.hidden = true; a._name = null; }
    }
  }

  function scheduleList(dirty) {
    if (dirty) list.dirty = true;
    if (!list.frame && !$('view-list').hidden) list.frame = requestAnimationFrame(renderList);
  }

  function updateSortUI() {
    for (const b of document.querySelectorAll('.thead [data-sort]')) {
      if (b.dataset.sort === list.sortKey) b.setAttribute('aria-sort', list.sortDir > 0 ? 'ascending' : 'descending');
      else b.removeAttribute('aria-sort');
    }
    $('sort-select').value = list.sortKey;
  }

  function setSort(key, toggle) {
    if (toggle && key === list.sortKey) list.sortDir = -list.sortDir;
    else { list.sortKey = key; list.sortDir = defaultDir[key] || 1; }
    localStorage.setItem('gsq-sort', list.sortKey);
    localStorage.setItem('gsq-sort-dir', String(list.sortDir));
    updateSortUI();
    scheduleList(true);
  }

  // Parts add columns of their own: one listener for the whole head.
  document.querySelector('#view-list .thead').addEventListener('click', (e) => {
    const b = e.target.closest('[data-sort]');
    if (b) setSort(b.dataset.sort, true);
  });
  $('sort-select').addEventListener('change', (e) => setSort(e.target.value, false));
  $('filter').addEventListener('input', (e) => { list.filter = e.target.value; scheduleList(true); });
  for (const b of document.querySelectorAll('#status-filter button')) {
    b.addEventListener('click', () => {
      list.status = b.dataset.status;
      for (const o of document.querySelectorAll('#status-filter button')) o.setAttribute('aria-pressed', String(o === b));
      scheduleList(true);
    });
  }
  window.addEventListener('scroll', () => scheduleList(false), { passive: true });
  window.addEventListener('resize', () => {
    list.rowH = parseFloat(getComputedStyle(document.documentElement).getPropertyValue('--row-h')) || 52;
    scheduleList(true);
  });

  async function loadList() {
    const body = await api('/api/v1/servers');
    list.servers = new Map(body.servers.map((s) => [s.name, s]));
    list.loaded = true;
    hook('listLoaded', list.servers);
    scheduleList(true);
  }

  function showList() {
    document.title = 'gsq monitor';
    list.rowH = parseFloat(getComputedStyle(document.documentElement).getPropertyValue('--row-h')) || 52;
    updateSortUI();
    scheduleList(true);
    live.open('/api/v1/events', (ev) => {
      if (ev.kind === 'config') { loadList().catch(showError); return; }
      if (!ev.state) return;
      const old = list.servers.get(ev.state.name);
      list.servers.set(ev.state.name, ev.state);
      // A poll that changes nothing the list sorts or filters on only
      // repaints; anything else re-sorts.
      const same = old && old.status === ev.state.status && old.summary.players === ev.state.summary.players &&
        old.summary.map === ev.state.summary.map && old.summary.name === ev.state.summary.name && old.ping_ms === ev.state.ping_ms;
      scheduleList(!same || list.sortKey === 'uptime');
    }, () => loadList().catch(showError));
  }

  // ---------- server page ----------
  const ranges = window.gsqRanges; // ranges.js: the chart's range, in the URL
  const maintenance = window.gsqMaint; // maintenance.js: maintenance on the chart
  const page = { name: null, state: null, historyAt: 0, timers: {} };

  function debounce(key, ms, fn) {
    clearTimeout(page.timers[key]);
    page.timers[key] = setTimeout(fn, ms);
  }

  function renderHead(s) {
    page.state = s;
    const sum = s.summary || {};
    document.title = displayName(s) + ' · gsq monitor';
    const pill = $('s-status');
    pill.className = 'pill st st-' + s.status;
    pill.textContent = '';
    pill.append(el('span', 'dot'), statusText[s.status] || s.status);
    $('s-name').textContent = displayName(s);
    const meta = $('s-meta');
    meta.textContent = '';
    const parts = [];
    if (sum.name && sum.name !== s.name && s.name !== s.target) parts.push(s.name);
    parts.push(s.protocol.toUpperCase());
    if (sum.game) parts.push(sum.game);
    if (sum.version) parts.push('v' + sum.version);
    if (displayName(s) !== s.target) meta.append(el('code', null, s.target), ' · ');
    meta.append(parts.join(' · '));
    if (s.status !== 'pending' && s.since) meta.append(' · ' + (statusText[s.status] || s.status).toLowerCase() + ' since ' + fmtWhen(s.since));

    const problem = $('s-problem');
    problem.hidden = !s.last_error;
    if (s.last_error) {
      problem.textContent = (s.consecutive_failures > 1 ? s.consecutive_failures + ' polls failed in a row. ' : 'The last poll failed. ') +
        'Last: ' + s.last_error.kind + ': ' + s.last_error.message + (s.last_success ? ' (last answer ' + fmtAgo(s.last_success) + ')' : '');
    }
    const up = s.status === 'up';
    const p = sum.players, m = sum.max_players;
    $('t-players').textContent = up ? fmtInt(p) + (m ? ' / ' + fmtInt(m) : '') : '–';
    const fill = $('t-bar');
    fill.style.width = up && m ? Math.min(100, (p / m) * 100) + '%' : '0';
    fill.classList.toggle('full', up && m > 0 && p >= m);
    $('t-ping').textContent = up ? fmtPing(s.ping_ms) : '–';
    $('t-map').textContent = sum.map ? 'Map: ' + sum.map : '';
    // The list's figure: one source for both (the live state).
    $('t-up24').textContent = fmtPct(s.uptime_24h);
    renderOnline(s);
  }

  function renderOnline(s) {
    const tbody = $('online').tBodies[0];
    tbody.textContent = '';
    const players = s.status === 'up' ? s.players : null;
    $('online-n').textContent = players ? String(players.length) : '';
    const empty = $('online-empty');
    if (!players || players.length === 0) {
      $('online').hidden = true;
      empty.hidden = false;
      empty.textContent = s.status !== 'up' ? 'The server is not up.' : players ? 'Nobody is online.' :
        (s.players_hidden ? fmtInt(s.summary.players) + ' online; the server hides who.' :
          s.summary.players ? fmtInt(s.summary.players) + ' online; this server\'s player list is not collected.' : 'Nobody is online.');
      return;
    }
    $('online').hidden = false;
    empty.hidden = true;
    const sorted = players.slice().sort((a, b) => b.score - a.score || collator.compare(a.name, b.name));
    for (const pl of sorted) {
      const tr = el('tr');
      tr.append(el('td', null, pl.name || '(unnamed)'), el('td', 'num', fmtInt(pl.score)), el('td', 'num', fmtDur(pl.duration_seconds)));
      tbody.appendChild(tr);
    }
  }

  function renderUptime(u) {
    $('t-uplong').textContent = '7 d ' + fmtPct(u['7d'].uptime) + ' · 30 d ' + fmtPct(u['30d'].uptime);
  }

  function renderRecords(r) {
    $('t-peak').textContent = fmtInt(r.peak_24h);
    $('t-peak-at').textContent = r.peak_24h_at ? 'at ' + fmtWhen(r.peak_24h_at) : '';
    $('t-record').textContent = fmtInt(r.all_time);
    $('t-record-at').textContent = r.all_time_at ? 'on ' + dateFmt.format(new Date(r.all_time_at)) : '';
  }

  function fillTable(id, rows, emptyText) {
    const table = $(id);
    const tbody = table.tBodies[0];
    tbody.textContent = '';
    for (const cells of rows) {
      const tr = el('tr');
      for (const [text, cls] of cells) tr.appendChild(el('td', cls, text));
      tbody.appendChild(tr);
    }
    table.hidden = rows.length === 0;
    const empty = $(id + '-empty');
    empty.hidden = rows.length > 0;
    empty.textContent = emptyText;
  }

  function renderSessions(body) {
    fillTable('sessions', body.sessions.map((s) => [
      [s.player || '(unnamed)', s.online ? 'on' : ''],
      [fmtWhen(s.joined)],
      [fmtDur(s.duration_seconds), 'num'],
      [fmtInt(s.last_score), 'num'],
    ]), 'No sessions in the last 24 hours.');
  }

  function renderMaps(body) {
    const maps = body.maps.slice().reverse().slice(0, 50);
    fillTable('maps', maps.map((m) => [[m.map || '(none)'], [fmtWhen(m.time)]]), 'No map changes in the last 7 days.');
  }

  // ---------- chart ----------
  const dayFmt = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric' });
  // tickLabel is an x-axis label: the time of day, or the date at
  // midnight and for ticks a day or more apart.
  function tickLabel(v, incr) {
    const d = new Date(v * 1000);
    if (incr >= 86400 || (d.getHours() === 0 && d.getMinutes() === 0)) return dayFmt.format(d);
    return timeFmt.format(d);
  }

  const chart = {
    plot: null,
    data: null,
    down: [], // bucket start and end (seconds) of each bucket with polls and none up
    maint: [], // the maintenance incidents' stretches (maintenance.js)
    wins: [], // the maintenance windows' stretches (maintenance.js)
    step: 60,
    // build draws body's history, and before's (the week before) a week
    // later when there is one, with the maintenance incidents' stretches
    // maint and the maintenance windows' wins.
    build(body, before, maint, wins) {
      const step = body.step_seconds;
      const from = Date.parse(body.from) / 1000, to = Date.parse(body.to) / 1000;
      const xs = [], avg = [], lo = [], hi = [], cap = [];
      const down = [];
      let prev = null;
      const gap = () => { xs.push(prev + step); avg.push(null); lo.push(null); hi.push(null); cap.push(null); };
      for (const p of body.points) {
        const t = Date.parse(p.time) / 1000;
        if (prev !== null && t - prev > step * 1.5) gap();
        if (p.up) {
          xs.push(t); avg.push(Math.round(p.avg_players * 10) / 10); lo.push(p.min_players); hi.push(p.max_players); cap.push(p.capacity || null);
        } else {
          xs.push(t); avg.push(null); lo.push(null); hi.push(null); cap.push(null);
        }
        // A bucket is shaded by the share of its polls that were down, so
        // that an outage shorter than a bucket still shows.
        if (p.samples > 0 && p.uptime < 1) down.push([t, t + step, 1 - p.uptime]);
        prev = t;
      }
      this.step = step;
      this.down = down;
      this.maint = maint || [];
      this.wins = wins || [];
      // The whole range asked, even when the history is younger.
      this.range = [from, to];
      this.data = [xs, avg, lo, hi, cap];
      this.compare = !!before;
      if (before) {
        const byT = new Map();
        for (const p of before.points) if (p.up && p.avg_players >= 0) byT.set(Date.parse(p.time) / 1000 + ranges.week, Math.round(p.avg_players * 10) / 10);
        this.data.push(xs.map((t) => (byT.has(t) ? byT.get(t) : null)));
      }
      const n = body.points.filter((p) => p.up).length;
      const box = $('chart');
      box.dataset.points = String(n); // for tests and scripts
      box.dataset.from = String(from);
      box.dataset.to = String(to);
      box.dataset.windows = String(this.wins.length);
      const note = $('chart-note');
      note.textContent = '';
      if (down.some(([a, b, share]) => maintenance.outageShare(a, b, share, this.maint) > 0)) {
        note.append(el('span', 'k-down'), ' down (the darker, the more of the bucket\'s polls failed)');
        note.append(' · ');
      }
      const mk = maintenance.key(this.maint, this.wins, from, to);
      if (mk) note.append(mk, ' · ');
      note.append(n ? 'Each point is a ' + fmtDur(step) + ' bucket: the line is its average, the band its min to max.' : 'No data in this range yet.');
      this.draw();
    },
    opts(width) {
      const accent = cssColor('--accent'), muted = cssColor('--muted'), line = cssColor('--line');
      const self = this;
      const axis = { stroke: muted, grid: { stroke: line, width: 1 }, ticks: { stroke: line, width: 1 } };
      const span = self.range[1] - self.range[0];
      // One line per label, at least a label's width apart: times within
      // two days (the date at midnight), dates beyond.
      const xAxis = Object.assign({}, axis, {
        space: span > 2 * 86400 ? 64 : 58,
        values: (u, splits, ai, space, incr) => splits.map((v) => tickLabel(v, incr)),
      });
      return {
        width, height: window.innerWidth <= 720 ? 240 : 300,
        // A drag selects a range: ranges.js puts it in the URL and the
        // chart loads it, in finer buckets.
        cursor: { drag: { x: true, y: false, setScale: false } },
        scales: {
          x: { time: true, range: () => self.range },
          y: { range: (u, mn, mx) => [0, Math.max(4, Math.ceil((mx || 0) * 1.1))] },
        },
        axes: [xAxis, Object.assign({}, axis, { size: 44 })],
        series: [
          { value: (u, v) => (v === null ? '–' : dateTimeFmt.format(new Date(v * 1000))) },
          { label: 'Players (avg)', stroke: accent, width: 2, fill: cssColor('--accent', 0.12), spanGaps: false, points: { show: false },
            value: (u, v) => (v === null ? '–' : String(v)) },
          { label: 'Min', stroke: cssColor('--accent', 0.35), width: 1, spanGaps: false, points: { show: false }, value: (u, v) => (v === null ? '–' : String(v)) },
          { label: 'Max', stroke: cssColor('--accent', 0.35), width: 1, spanGaps: false, points: { show: false }, value: (u, v) => (v === null ? '–' : String(v)) },
          { label: 'Slots', stroke: muted, width: 1, dash: [4, 4], spanGaps: false, points: { show: false }, value: (u, v) => (v === null ? '–' : String(v)) },
        ].concat(self.compare ? [{ label: 'Week before', stroke: cssColor('--warn'), width: 1.5, dash: [6, 3], spanGaps: false, points: { show: false },
          value: (u, v) => (v === null ? '–' : String(v)) }] : []),
        bands: [{ series: [3, 2], fill: cssColor('--accent', 0.14) }],
        hooks: {
          setSelect: [(u) => {
            if (u.select.width < 4) return;
            const a = u.posToVal(u.select.left, 'x'), b = u.posToVal(u.select.left + u.select.width, 'x');
            u.setSelect({ left: 0, width: 0, top: 0, height: 0 }, false);
            ranges.zoom(a, b);
          }],
          setCursor: [(u) => maintenance.hover(u, self.wins)],
          drawClear: [(u) => {
            // Shade the buckets where polls failed, by their share, but
            // for the failures of maintenance, shaded as such.
            maintenance.drawWindows(u, self.wins);
            const ctx = u.ctx;
            ctx.save();
            const top = u.bbox.top, h = u.bbox.height;
            const minW = 3 * devicePixelRatio;
            const rgb = (cssColor('--down').match(/[\d.]+/g) || [200, 0, 0]).slice(0, 3).join(',');
            for (const [a, b, all] of self.down) {
              const share = maintenance.outageShare(a, b, all, self.maint);
              if (share <= 0) continue;
              const x0 = u.valToPos(a, 'x', true), x1 = u.valToPos(b, 'x', true);
              ctx.fillStyle = 'rgba(' + rgb + ',' + (0.12 + 0.4 * share) + ')';
              ctx.fillRect(x0, top, Math.max(minW, x1 - x0), h);
            }
            ctx.restore();
            maintenance.draw(u, self.maint);
          }],
        },
      };
    },
    draw() {
      const box = $('chart');
      const width = Math.max(260, box.clientWidth);
      if (this.plot) this.plot.destroy();
      box.textContent = '';
      this.plot = new uPlot(this.opts(width), this.data, box);
    },
    redrawColors() {
      if (this.data) this.draw();
    },
    resize() {
      if (!this.plot) return;
      const box = $('chart');
      this.plot.setSize({ width: Math.max(260, box.clientWidth), height: window.innerWidth <= 720 ? 240 : 300 });
    },
    destroy() {
      if (this.plot) this.plot.destroy();
      this.plot = null;
      this.data = null;
    },
  };
  new ResizeObserver(() => chart.resize()).observe($('chart'));

  async function loadHistory() {
    const name = page.name;
    const r = ranges.read();
    const span = r.to - r.from;
    const at = r.kind === 'custom' ? 'from=' + Math.floor(r.from) + '&to=' + Math.ceil(r.to) : 'from=-' + span + 's';
    let step = '';
    // An hour of a server polled often: buckets of two polls (10 s at
    // least) rather than minutes, so that a monitor just started draws a
    // line within a minute.
    const iv = page.state && page.state.name === name && page.state.interval_seconds;
    if (iv && span <= 3600 && iv * 2 < 60) step = '&step=' + Math.max(10, Math.ceil(iv * 2)) + 's';
    const base = '/api/v1/servers/' + encodeURIComponent(name) + '/history?';
    const body = await api(base + at + step);
    const from = Date.parse(body.from) / 1000, to = Date.parse(body.to) / 1000;
    // The week before, in the same buckets, drawn a week later.
    const [before, maint, wins] = await Promise.all([
      r.compare ? api(base + 'from=' + Math.floor(from - ranges.week) + '&to=' + Math.ceil(to - ranges.week) + '&step=' + body.step_seconds + 's') : null,
      maintenance.spans(name, from, to),
      maintenance.windows(name, from, to),
    ]);
    if (name !== page.name) return;
    page.historyAt = Date.now();
    chart.build(body, before, maint, wins);
    hook('rangeChanged', Date.parse(body.from) / 1000, Date.parse(body.to) / 1000);
  }

  function updateRangeUI() {
    ranges.updateUI();
  }
  for (const b of document.querySelectorAll('#range button')) {
    b.addEventListener('click', () => ranges.setPreset(b.dataset.range));
  }
  ranges.onChange = () => {
    updateRangeUI();
    if (page.name) loadHistory().catch(showError);
  };

  function loadServerParts(name) {
    const base = '/api/v1/servers/' + encodeURIComponent(name);
    const guard = (fn) => (body) => { if (name === page.name) fn(body); };
    return Promise.all([
      api(base).then(guard(renderHead)).then(loadHistory),
      api(base + '/uptime').then(guard(renderUptime)),
      api(base + '/records').then(guard(renderRecords)),
      api(base + '/sessions?limit=50').then(guard(renderSessions)),
      api(base + '/maps').then(guard(renderMaps)),
    ]);
  }

  function showServer(name) {
    page.name = name;
    chart.destroy();
    for (const id of ['s-name', 's-meta', 't-players', 't-ping', 't-up24', 't-peak', 't-record']) $(id).textContent = '';
    document.title = name + ' · gsq monitor';
    updateRangeUI();
    hook('server', name);
    const base = '/api/v1/servers/' + encodeURIComponent(name);
    live.open('/api/v1/events?server=' + encodeURIComponent(name), (ev) => {
      if (ev.server !== page.name && ev.kind !== 'config') return;
      if (ev.state) renderHead(ev.state);
      hook('serverEvent', ev);
      if (ev.kind === 'join' || ev.kind === 'leave') debounce('sessions', 1500, () => api(base + '/sessions?limit=50').then(renderSessions).catch(showError));
      if (ev.kind === 'map') debounce('maps', 1500, () => api(base + '/maps').then(renderMaps).catch(showError));
      if (ev.kind === 'up' || ev.kind === 'down') debounce('uptime', 1500, () => api(base + '/uptime').then(renderUptime).catch(showError));
      if (ev.kind === 'poll' && Date.now() - page.historyAt > Math.max(30000, chart.step * 1000)) {
        debounce('history', 500, () => loadHistory().catch(showError));
        debounce('records', 500, () => api(base + '/records').then(renderRecords).catch(showError));
      }
    }, () => {
      hook('serverLoad', name);
      loadServerParts(name).catch((err) => {
        if (err.status === 404) showMissing(name);
        else showError(err);
      });
    });
  }

  function showMissing(name) {
    live.close();
    for (const v of ['view-list', 'view-server']) $(v).hidden = true;
    $('view-missing').hidden = false;
    $('missing-text').textContent = 'No server named “' + name + '” is monitored.';
  }

  function showError(err) {
    const ind = $('live');
    ind.dataset.state = 'error';
    ind.textContent = 'Error: ' + err.message;
  }

  // ---------- routing ----------
  function route() {
    let shown = false;
    for (const x of parts) if (x.route && x.route(location.pathname)) shown = true;
    if (shown) {
      for (const v of ['view-list', 'view-server', 'view-missing']) $(v).hidden = true;
      page.name = null;
      chart.destroy();
      window.scrollTo(0, 0);
      return;
    }
    const m = location.pathname.match(/^\/s\/(.+)$/);
    const onServer = !!m;
    $('view-missing').hidden = true;
    $('view-list').hidden = onServer;
    $('view-server').hidden = !onServer;
    if (onServer) {
      let name;
      try { name = decodeURIComponent(m[1]); } catch (e) { name = m[1]; }
      showServer(name);
    } else {
      page.name = null;
      chart.destroy();
      hook('serverHidden');
      showList();
    }
    window.scrollTo(0, 0);
  }

  document.addEventListener('click', (e) => {
    const a = e.target.closest('a[data-nav]');
    if (!a || e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    if (a.getAttribute('href') !== location.pathname) history.pushState(null, '', a.getAttribute('href'));
    route();
  });
  window.addEventListener('popstate', route);

  const shared = { $, el, api, live, cssColor, showError, fmtInt, fmtPct, fmtDur, fmtWhen, fmtAgo, dateTimeFmt, timeFmt, dateFmt, collator, statusText, displayName, hook, relist: () => scheduleList(true), sortUI: updateSortUI };
  for (const p of parts) if (p.init) p.init(shared);
  applyTheme();
  route();
})();
