// gsq monitor's player views: the search in the header (on every page),
// a player's page at /p/NAME, and a server's regulars. Player names come
// from game servers: they are only ever set as textContent or encoded
// into URLs.
'use strict';

(window.gsqParts = window.gsqParts || []).push((() => {
  let h = null; // app.js's helpers
  const enc = encodeURIComponent;
  const search = { seq: 0, timer: 0, items: [] };
  const regulars = { server: null, span: localStorage.getItem('gsq-regulars') || '7d', body: null };

  function link(href, text) {
    const a = h.el('a', null, text);
    a.href = href;
    a.dataset.nav = '';
    return a;
  }

  // ---------- search ----------
  function closeResults() {
    const ul = h.$('player-results');
    ul.hidden = true;
    h.$('player-q').setAttribute('aria-expanded', 'false');
  }

  function showResults(q, body) {
    const ul = h.$('player-results');
    ul.textContent = '';
    search.items = body.players;
    if (body.players.length === 0) {
      ul.append(h.el('li', 'none', 'No player named like “' + q + '”.'));
    }
    for (const p of body.players) {
      const li = h.el('li');
      const a = link('/p/' + enc(p.name), '');
      a.append(h.el('span', 'pname', p.name || '(unnamed)'),
        h.el('span', 'pinfo', (p.online ? 'online · ' : 'seen ' + h.fmtAgo(p.last_seen) + ' · ') +
          p.servers + (p.servers === 1 ? ' server' : ' servers')));
      if (p.online) a.classList.add('is-online');
      li.append(a);
      ul.append(li);
    }
    ul.hidden = false;
    h.$('player-q').setAttribute('aria-expanded', 'true');
  }

  async function runSearch() {
    const q = h.$('player-q').value.trim();
    const seq = ++search.seq;
    if (!q) { closeResults(); return; }
    try {
      const body = await h.api('/api/v1/players?limit=10&q=' + enc(q));
      if (seq === search.seq) showResults(q, body);
    } catch (err) {
      h.showError(err);
    }
  }

  function wireSearch() {
    const input = h.$('player-q');
    const ul = h.$('player-results');
    input.addEventListener('input', () => {
      clearTimeout(search.timer);
      search.timer = setTimeout(runSearch, 200);
    });
    input.addEventListener('keydown', (e) => {
      if (e.key === 'Escape') { closeResults(); return; }
      if (e.key === 'ArrowDown') {
        const first = ul.querySelector('a');
        if (first && !ul.hidden) { e.preventDefault(); first.focus(); }
        return;
      }
      if (e.key === 'Enter') {
        e.preventDefault();
        clearTimeout(search.timer);
        runSearch().then(() => {
          const first = ul.querySelector('a');
          if (first && search.items.length === 1) first.click();
          else if (first) first.focus();
        });
      }
    });
    ul.addEventListener('keydown', (e) => {
      const links = [...ul.querySelectorAll('a')];
      const i = links.indexOf(document.activeElement);
      if (e.key === 'ArrowDown' && i >= 0 && i < links.length - 1) { e.preventDefault(); links[i + 1].focus(); }
      if (e.key === 'ArrowUp') { e.preventDefault(); (i > 0 ? links[i - 1] : input).focus(); }
      if (e.key === 'Escape') { closeResults(); input.focus(); }
    });
    ul.addEventListener('click', (e) => { if (e.target.closest('a')) { closeResults(); input.value = ''; } });
    document.addEventListener('click', (e) => { if (!e.target.closest('.psearch')) closeResults(); });
  }

  // ---------- player page ----------
  function fill(id, rows) {
    const tbody = h.$(id).tBodies[0];
    tbody.textContent = '';
    for (const cells of rows) {
      const tr = h.el('tr');
      for (const c of cells) {
        if (c instanceof Node) { const td = h.el('td'); td.append(c); tr.append(td); } else tr.append(h.el('td', c[1], c[0]));
      }
      tbody.append(tr);
    }
  }

  function renderPlayer(p) {
    document.title = p.name + ' · gsq monitor';
    h.$('p-name').textContent = p.name || '(unnamed)';
    const pill = h.$('p-status');
    pill.className = 'pill st ' + (p.online ? 'st-up' : 'st-pending');
    pill.textContent = '';
    pill.append(h.el('span', 'dot'), p.online ? 'Online' : 'Offline');
    h.$('p-meta').textContent = 'First seen ' + h.fmtWhen(p.first_seen) + ' · last seen ' + (p.online ? 'now' : h.fmtWhen(p.last_seen) + ' (' + h.fmtAgo(p.last_seen) + ')');
    h.$('p-total').textContent = h.fmtDur(p.total_seconds);
    h.$('p-total-s').textContent = 'in the kept history';
    h.$('p-recent').textContent = h.fmtDur(p.recent_seconds);
    h.$('p-sessions').textContent = h.fmtInt(p.sessions);
    h.$('p-servers').textContent = h.fmtInt(p.servers.length);
    fill('p-server-list', p.servers.map((s) => [
      link('/s/' + enc(s.server), s.server),
      [h.fmtDur(s.total_seconds), 'num'],
      [h.fmtDur(s.recent_seconds), 'num'],
      [s.online ? 'online now' : h.fmtWhen(s.last_seen), s.online ? 'on' : ''],
    ]));
    fill('p-session-list', p.recent_sessions.map((s) => [
      link('/s/' + enc(s.server), s.server),
      [h.fmtWhen(s.joined), s.online ? 'on' : ''],
      [h.fmtDur(s.duration_seconds), 'num'],
    ]));
  }

  // showPlayer shows a player's page, and reloads it when they join or
  // leave a server (the live stream's join and leave events).
  function showPlayer(name) {
    for (const id of ['p-name', 'p-meta', 'p-total', 'p-recent', 'p-sessions', 'p-servers']) h.$(id).textContent = '';
    search.player = name;
    h.live.open('/api/v1/events?kind=join,leave', (ev) => {
      if (ev.detail !== name || search.player !== name) return;
      clearTimeout(search.reload);
      search.reload = setTimeout(() => loadPlayer(name), 2500); // after the monitor wrote the poll
    }, () => loadPlayer(name));
  }

  async function loadPlayer(name) {
    try {
      const body = await h.api('/api/v1/players/' + enc(name));
      if (search.player === name) renderPlayer(body);
    } catch (err) {
      if (err.status === 404) {
        h.$('p-name').textContent = name;
        h.$('p-meta').textContent = 'No sessions of a player by this name are kept.';
        fill('p-server-list', []);
        fill('p-session-list', []);
      } else h.showError(err);
    }
  }

  // ---------- regulars on a server's page ----------
  function renderRegulars() {
    const body = regulars.body;
    for (const b of document.querySelectorAll('#regulars-range button')) b.setAttribute('aria-pressed', String(b.dataset.span === regulars.span));
    if (!body) return;
    const list = body[regulars.span] || [];
    fill('regulars', list.map((g) => [
      link('/p/' + enc(g.player), g.player || '(unnamed)'),
      [h.fmtDur(g.seconds), 'num'],
      [h.fmtInt(g.sessions), 'num'],
      [g.online ? 'online now' : h.fmtWhen(g.last_seen), g.online ? 'on' : ''],
    ]));
    h.$('regulars').hidden = list.length === 0;
    const empty = h.$('regulars-empty');
    empty.hidden = list.length > 0;
    empty.textContent = body.player_data ? 'Nobody played here in the last ' + (regulars.span === '7d' ? '7' : '30') + ' days.' :
      'This server keeps no player data.';
  }

  async function loadRegulars(name) {
    const body = await h.api('/api/v1/servers/' + enc(name) + '/regulars');
    if (name !== regulars.server) return;
    regulars.body = body;
    renderRegulars();
  }

  return {
    init(helpers) {
      h = helpers;
      wireSearch();
      for (const b of document.querySelectorAll('#regulars-range button')) {
        b.addEventListener('click', () => {
          regulars.span = b.dataset.span;
          localStorage.setItem('gsq-regulars', regulars.span);
          renderRegulars();
        });
      }
    },
    route(path) {
      const m = path.match(/^\/p\/(.+)$/);
      h.$('view-player').hidden = !m;
      if (!m) { search.player = null; return false; }
      let name;
      try { name = decodeURIComponent(m[1]); } catch (e) { name = m[1]; }
      showPlayer(name);
      return true;
    },
    server(name) {
      clearTimeout(regulars.timer);
      regulars.timer = 0;
      regulars.server = name;
      regulars.body = null;
      fill('regulars', []);
      loadRegulars(name).catch(h.showError);
    },
    // The regulars change slowly (the monitor adds them up once a
    // minute): a leave reloads them a minute after the last load.
    serverEvent(ev) {
      if (ev.kind === 'leave' && regulars.server === ev.server && !regulars.timer) {
        regulars.timer = setTimeout(() => { regulars.timer = 0; loadRegulars(ev.server).catch(h.showError); }, 60000);
      }
    },
  };
})());
