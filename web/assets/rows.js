// gsq monitor's page: two columns of the server list. A sparkline of
// each server's players over the last 24 hours: the whole hours' average
// (GET /api/v1/sparklines, asked for the rows on screen only, 200 at most
// a request, kept 5 minutes) and the players now (the list's own data);
// and an Uptime Kuma-style bar of its last polls (recent_polls, the
// list's too). Loaded before app.js,
// which calls the hooks below (window.gsqParts) as it makes and fills
// its rows.
'use strict';

(window.gsqParts = window.gsqParts || []).push((() => {
  const SVG = 'http://www.w3.org/2000/svg';
  const keep = 5 * 60 * 1000;     // how long a sparkline is kept
  const cache = new Map();          // name → {at, line}
  const queue = new Set();          // names to ask for
  const pending = new Set();        // names asked for, not answered yet
  let timer = 0;
  let g = null;

  function svg(tag, attrs) {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    return e;
  }

  // ---------- sparkline ----------
  const W = 72, H = 24;
  function drawSpark(cell, line, cap) {
    const s = cell.firstChild;
    s.textContent = '';
    if (!line) return;
    let max = Math.max(1, cap || 0);
    for (const v of line) if (v !== null && v > max) max = v;
    const n = line.length;
    const x = (i) => ((i + 0.5) / n) * W;
    const y = (v) => H - 1 - (v / max) * (H - 3);
    let seg = [];
    const segs = [];
    line.forEach((v, i) => {
      if (v === null) { if (seg.length) segs.push(seg); seg = []; return; }
      seg.push([x(i), y(v)]);
    });
    if (seg.length) segs.push(seg);
    for (const pts of segs) {
      const p = pts.map(([a, b]) => a.toFixed(1) + ',' + b.toFixed(1)).join(' ');
      if (pts.length > 1) s.append(svg('polygon', { class: 'sa', points: pts[0][0].toFixed(1) + ',' + H + ' ' + p + ' ' + pts[pts.length - 1][0].toFixed(1) + ',' + H }));
      s.append(pts.length > 1 ? svg('polyline', { class: 'sl', points: p }) : svg('circle', { class: 'sd', cx: pts[0][0], cy: pts[0][1], r: 1.5 }));
    }
    const known = line.filter((v) => v !== null);
    cell.setAttribute('aria-label', known.length ? 'Players over 24 hours: ' + Math.min(...known) + ' to ' + Math.max(...known) + ', now ' + (line[n - 1] === null ? 'no data' : line[n - 1]) : 'No players data in 24 hours');
    cell.title = cell.getAttribute('aria-label');
  }

  // want asks for a server's sparkline if it has none, or an old one.
  function want(name) {
    const c = cache.get(name);
    if ((c && Date.now() - c.at < keep) || pending.has(name)) return;
    pending.add(name);
    queue.add(name);
    if (!timer) timer = setTimeout(flush, 60);
  }

  async function flush() {
    timer = 0;
    const names = [...queue].slice(0, 200);
    for (const n of names) queue.delete(n);
    if (queue.size) timer = setTimeout(flush, 60);
    if (!names.length) return;
    const q = names.map((n) => 'server=' + encodeURIComponent(n)).join('&');
    let body;
    try {
      body = await g.api('/api/v1/sparklines?' + q);
    } catch (e) {
      for (const n of names) { pending.delete(n); cache.set(n, { at: Date.now(), line: null }); }
      g.showError(e);
      return;
    }
    for (const n of names) pending.delete(n);
    const now = Date.now();
    for (const n of names) cache.set(n, { at: now, line: body.servers[n] || null });
    // Draw the rows on screen that wait for them.
    for (const a of document.querySelectorAll('#spacer .row:not([hidden])')) {
      const c = cache.get(a._name);
      if (c && a._spark !== c) {
        a._spark = c;
        a._spNow = a._now;
        drawSpark(a._sp, c.line && c.line.concat([a._now]), a._cap);
      }
    }
  }

  // ---------- last polls ----------
  const N = 30, BW = 4, GAP = 1;
  function drawPolls(cell, recent) {
    const s = cell.firstChild;
    s.textContent = '';
    const r = recent || '';
    const off = N - r.length;
    let failed = 0;
    for (let i = 0; i < N; i++) {
      const c = i < off ? '' : r[i - off];
      if (c === '0') failed++;
      s.append(svg('rect', { x: i * (BW + GAP), y: 0, width: BW, height: 16, rx: 1.5, class: c === '1' ? 'pu' : c === '0' ? 'pd' : 'pn' }));
    }
    const label = r.length ? 'Last ' + r.length + ' polls: ' + (r.length - failed) + ' answered, ' + failed + ' failed' : 'No polls yet';
    cell.setAttribute('aria-label', label);
    cell.title = label;
  }

  return {
    init(shared) {
      g = shared;
      const table = document.querySelector('#view-list .table');
      table.classList.add('with-trends');
      const head = table.querySelector('.thead');
      const sp = g.el('span', 'sp-h', '24 h');
      sp.setAttribute('role', 'columnheader');
      const pb = g.el('span', 'pb-h', 'Last polls');
      pb.setAttribute('role', 'columnheader');
      head.append(sp, pb);
    },
    rowMade(a) {
      const sp = g.el('span', 'sp');
      sp.setAttribute('role', 'img');
      sp.append(svg('svg', { viewBox: '0 0 ' + W + ' ' + H, width: W, height: H, 'aria-hidden': 'true', preserveAspectRatio: 'none' }));
      const pb = g.el('span', 'pb');
      pb.setAttribute('role', 'img');
      pb.append(svg('svg', { viewBox: '0 0 ' + (N * (BW + GAP) - GAP) + ' 16', width: N * (BW + GAP) - GAP, height: 16, 'aria-hidden': 'true' }));
      a.append(sp, pb);
      a._sp = sp;
      a._pb = pb;
    },
    rowFilled(a, s) {
      if (a._recent !== s.recent_polls || a._pbName !== s.name) {
        a._recent = s.recent_polls;
        a._pbName = s.name;
        drawPolls(a._pb, s.recent_polls);
      }
      a._cap = s.summary && s.summary.max_players;
      a._now = s.status === 'up' && s.summary && s.summary.players !== undefined ? s.summary.players : null;
      want(s.name);
      const c = cache.get(s.name) || null;
      if (a._spark !== c || a._spName !== s.name || a._spNow !== a._now) {
        a._spark = c;
        a._spName = s.name;
        a._spNow = a._now;
        drawSpark(a._sp, c && c.line && c.line.concat([a._now]), a._cap);
      }
    },
  };
})());
