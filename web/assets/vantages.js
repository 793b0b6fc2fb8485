// gsq monitor's page: a fleet's vantage points on a server's page (issue
// 23). Each region's view (what it sees, its ping, when it last saw the
// server) beside the fleet's verdict, from the server's "vantages"; a
// partial outage (some regions see it down, fewer than the quorum: the
// verdict stays up) said in words while it lasts; and the partial
// outages the fleet recorded (GET /api/v1/servers/{name}/fleet-events).
// Hidden on a monitor that is not a fleet's. Loaded before app.js, which
// calls the hooks below (window.gsqParts). Text is only set as
// textContent.
'use strict';

(window.gsqParts = window.gsqParts || []).push((() => {
  let h = null;
  let name = null;
  let lastKey = '';
  let refetch = 0;
  const sees = { up: 'Up', down: 'Down', unknown: 'No fresh observation' };

  function statusCell(status) {
    const s = h.el('span', 'st st-' + (status === 'up' || status === 'down' ? status : 'pending'));
    s.append(h.el('span', 'dot'), h.el('span', null, sees[status] || sees.unknown));
    return s;
  }

  function fmtPing(ms) {
    return ms === null || ms === undefined ? '–' : (ms < 10 ? ms.toFixed(1) : Math.round(ms)) + ' ms';
  }

  function renderState(st) {
    const views = st.vantages || [];
    const sec = h.$('vantages');
    if (!views.length) { sec.hidden = true; return; }
    sec.hidden = false;
    h.$('v-verdict').textContent = 'verdict: ' + (h.statusText[st.status] || st.status);
    const tbody = h.$('v-list').tBodies[0];
    tbody.textContent = '';
    for (const v of views) {
      const tr = h.el('tr');
      tr.dataset.region = v.region;
      tr.dataset.status = v.status;
      const td = h.el('td');
      td.append(statusCell(v.status));
      tr.append(h.el('td', null, v.region), td, h.el('td', 'num', v.status === 'up' ? fmtPing(v.ping_ms) : '–'), h.el('td', 'num', v.at ? h.fmtAgo(v.at) : '–'));
      tbody.append(tr);
    }
    const down = views.filter((v) => v.status === 'down').map((v) => v.region);
    const up = views.filter((v) => v.status === 'up').map((v) => v.region);
    const p = h.$('v-partial');
    p.hidden = !(down.length && st.status !== 'down');
    if (!p.hidden) {
      p.textContent = 'Partial outage: down from ' + down.join(', ') + (up.length ? ', up from ' + up.join(', ') : '') +
        '. Fewer regions than the quorum see it down, so the verdict stays ' + (h.statusText[st.status] || st.status).toLowerCase() + ' and nobody is paged.';
    }
    // A partial outage that begins is recorded by the fleet: read the list again.
    const key = down.join(',');
    if (key !== lastKey) {
      lastKey = key;
      if (down.length) setTimeout(() => loadEvents(st.name).catch(h.showError), 1500);
    }
  }

  async function loadEvents(server) {
    const body = await h.api('/api/v1/servers/' + encodeURIComponent(server) + '/fleet-events?limit=20');
    if (server !== name) return;
    const evs = body.events.filter((e) => e.kind === 'partial').reverse();
    const table = h.$('v-events');
    table.hidden = h.$('v-events-h').hidden = evs.length === 0;
    const tbody = table.tBodies[0];
    tbody.textContent = '';
    for (const e of evs) {
      const of = (s) => e.vantages.filter((v) => v.status === s).map((v) => v.region).join(', ') || '–';
      const tr = h.el('tr', 'v-event');
      tr.append(h.el('td', null, h.fmtWhen(e.at)), h.el('td', 'st-down', of('down')), h.el('td', null, of('up')));
      tbody.append(tr);
    }
  }

  // The page says itself when the server is not monitored.
  function quiet404(err) { if (err.status !== 404) h.showError(err); }

  function clear() {
    name = null;
    lastKey = '';
    clearTimeout(refetch);
    refetch = 0;
    h.$('vantages').hidden = true;
    h.$('v-events').hidden = h.$('v-events-h').hidden = true;
  }

  return {
    init(shared) { h = shared; },
    server(n) { clear(); name = n; },
    serverLoad(n) {
      const base = '/api/v1/servers/' + encodeURIComponent(n);
      h.api(base).then((st) => { if (n === name) renderState(st); }).catch(quiet404);
      loadEvents(n).catch(quiet404);
    },
    // A poll's event carries the poller's state, which has no vantages on
    // a worker (the fleet's view is the API's): read the server again,
    // at most every two seconds.
    serverEvent(ev) {
      if (!ev.state || ev.server !== name) return;
      if (ev.state.vantages) { renderState(ev.state); return; }
      if (refetch) return;
      refetch = setTimeout(() => {
        refetch = 0;
        const n = name;
        if (n) h.api('/api/v1/servers/' + encodeURIComponent(n)).then((st) => { if (n === name) renderState(st); }).catch(quiet404);
      }, 2000);
    },
    serverHidden: clear,
  };
})());
