// gsq monitor's incidents: the fleet's list at /incidents, a server's on
// its page, and in the server list why a server is down and which
// protocol a row polls. Server-supplied text is only set as textContent.
'use strict';

(window.gsqParts = window.gsqParts || []).push((() => {
  let h = null;
  const enc = encodeURIComponent;
  const view = { kind: 'all', body: null, server: null, timers: [] };
  const causeText = {
    timeout: 'Timeout: no answer',
    unreachable: 'Unreachable',
    protocol: 'Not answering the protocol',
    refused: 'Refused',
    auth: 'Authentication failed',
  };
  const cause = (c) => causeText[c] || c || 'Unknown';
  // The list's chip says it in a word; its title says it all.
  const causeWord = {
    timeout: 'Timeout',
    unreachable: 'Unreachable',
    protocol: 'Bad answer',
    refused: 'Refused',
    auth: 'Auth failed',
  };

  function lasted(i) {
    return i.ongoing ? 'ongoing, ' + h.fmtDur(i.duration_seconds) : h.fmtDur(i.duration_seconds);
  }

  function kindCell(i) {
    const s = h.el('span', 'ikind ikind-' + i.kind, i.kind === 'maintenance' ? 'Maintenance' : 'Outage');
    return s;
  }

  function fill(id, rows, emptyText) {
    const table = h.$(id);
    const tbody = table.tBodies[0];
    tbody.textContent = '';
    for (const cells of rows) {
      const tr = h.el('tr');
      for (const c of cells) {
        if (c instanceof Node) { const td = h.el('td'); td.append(c); tr.append(td); } else tr.append(h.el('td', c[1], c[0]));
      }
      tbody.append(tr);
    }
    table.hidden = rows.length === 0;
    const empty = h.$(id + '-empty');
    empty.hidden = rows.length > 0;
    empty.textContent = emptyText;
  }

  // ---------- the fleet's incidents ----------
  function renderList() {
    for (const b of document.querySelectorAll('#incident-kind button')) b.setAttribute('aria-pressed', String(b.dataset.kind === view.kind));
    if (!view.body) return;
    const list = view.body.incidents.filter((i) => view.kind === 'all' || i.kind === view.kind);
    fill('incident-list', list.map((i) => {
      const a = h.el('a', null, i.server);
      a.href = '/s/' + enc(i.server);
      a.dataset.nav = '';
      return [a, kindCell(i), [cause(i.cause), 'cause'], [h.fmtWhen(i.start)], [lasted(i), 'num' + (i.ongoing ? ' ongoing' : '')]];
    }), view.kind === 'all' ? 'No incidents in the last 30 days.' : 'None of this kind in the last 30 days.');
  }

  async function loadList() {
    view.body = await h.api('/api/v1/incidents?from=-30d&limit=500');
    renderList();
  }

  // soon loads again after a server went down or up: once at once, and
  // once after the monitor wrote the poll (it writes once a second).
  function soon(load) {
    for (const t of view.timers || []) clearTimeout(t);
    view.timers = [300, 2500].map((ms) => setTimeout(() => load().catch(h.showError), ms));
  }

  function showList() {
    document.title = 'Incidents · gsq monitor';
    view.body = null;
    h.live.open('/api/v1/events', (ev) => {
      if (ev.kind === 'down' || ev.kind === 'up' || ev.kind === 'config') soon(loadList);
    }, () => loadList().catch(h.showError));
  }

  // ---------- a server's incidents ----------
  async function loadServer(name) {
    const body = await h.api('/api/v1/servers/' + enc(name) + '/incidents?from=-30d&limit=50');
    if (name !== view.server) return;
    fill('s-incidents', body.incidents.map((i) => {
      const when = h.el('span', null, h.fmtWhen(i.start));
      if (i.kind === 'maintenance') when.append(' ', kindCell(i));
      return [when, [cause(i.cause), 'cause'], [lasted(i), 'num' + (i.ongoing ? ' ongoing' : '')]];
    }), 'No incidents in the last 30 days.');
  }

  return {
    init(helpers) {
      h = helpers;
      for (const b of document.querySelectorAll('#incident-kind button')) {
        b.addEventListener('click', () => { view.kind = b.dataset.kind; renderList(); });
      }
    },
    route(path) {
      const on = path === '/incidents';
      h.$('view-incidents').hidden = !on;
      h.$('nav-incidents').toggleAttribute('aria-current', on);
      if (on) showList();
      return on;
    },
    server(name) {
      view.server = name;
      fill('s-incidents', [], '');
      loadServer(name).catch(h.showError);
    },
    serverEvent(ev) {
      if (ev.kind === 'down' || ev.kind === 'up') soon(() => loadServer(ev.server));
    },
    // A row says its protocol, and why its server is down.
    rowMade(a) {
      const nm = a.children[1];
      const tags = h.el('span', 'tags');
      tags.append(h.el('span', 'proto'), h.el('span', 'why'));
      nm.append(tags);
    },
    rowFilled(a, s) {
      const tags = a.children[1].lastChild;
      const [proto, why] = tags.children;
      proto.textContent = (s.protocol || '').toUpperCase();
      const err = s.status !== 'up' && s.last_error ? s.last_error : null;
      why.textContent = err ? causeWord[err.kind] || cause(err.kind) : '';
      why.title = err ? cause(err.kind) + ': ' + err.message : '';
      why.hidden = !err;
    },
  };
})());
