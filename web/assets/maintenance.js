// gsq monitor's page: maintenance on a server's chart. The stretches of
// the server's maintenance incidents (GET /api/v1/servers/{name}/
// incidents, kind "maintenance": down inside a maintenance window) are
// shaded amber and hatched, not in the outage red; the maintenance
// windows themselves (GET /api/v1/servers/{name}/maintenance: the
// config's and the API's, whether or not the server went down in them)
// are a faint amber tint with dashed edges and a strip along the top,
// named in a tip while the pointer is on one. Both are keyed under the
// chart. Loaded before app.js, which asks for the stretches of the
// chart's range and draws them through window.gsqMaint. A window's
// reason is only ever set as text.
'use strict';

window.gsqMaint = (() => {
  let g = null;
  window.gsqParts = window.gsqParts || [];
  window.gsqParts.push({ init(shared) { g = shared; } });

  // spans returns the server's maintenance incidents that overlap
  // [from, to) (Unix seconds) as [start, end] pairs; one that lasts ends
  // at to.
  async function spans(name, from, to) {
    const body = await g.api('/api/v1/servers/' + encodeURIComponent(name) + '/incidents?from=' + Math.floor(from) +
      '&to=' + Math.ceil(to) + '&limit=1000');
    return body.incidents.filter((i) => i.kind === 'maintenance')
      .map((i) => [Date.parse(i.start) / 1000, i.end ? Date.parse(i.end) / 1000 : to]);
  }

  // windows returns the stretches of the maintenance windows on the
  // server that overlap [from, to) (Unix seconds), as [start, end, what]
  // with what the window's description.
  async function windows(name, from, to) {
    const body = await g.api('/api/v1/servers/' + encodeURIComponent(name) + '/maintenance?from=' + Math.floor(from) +
      '&to=' + Math.ceil(to));
    return body.windows.map((w) => {
      const s = Date.parse(w.from) / 1000, e = Date.parse(w.to) / 1000;
      const what = ['Maintenance window ' + g.fmtWhen(w.from) + '–' + g.timeFmt.format(new Date(e * 1000)),
        w.every ? 'every ' + w.every.replace(/^every /i, '') : '', w.reason || ''].filter(Boolean).join(' · ');
      return [s, e, what];
    });
  }

  // covered is the share of [a, b) that the spans cover.
  function covered(a, b, list) {
    let n = 0;
    for (const [s, e] of list) n += Math.max(0, Math.min(b, e) - Math.max(a, s));
    return b > a ? Math.min(1, n / (b - a)) : 0;
  }

  // outageShare is the share of a bucket's polls, share of them down,
  // that failed outside the spans: the failures the spans' part of the
  // bucket can hold are taken to be theirs, and the rest is an outage.
  function outageShare(a, b, share, list) {
    const c = covered(a, b, list);
    return c >= 1 ? 0 : Math.max(0, share - c) / (1 - c);
  }

  // draw shades the spans on a uPlot chart: a light fill of --maint-text
  // and diagonal hatching in it, so that maintenance tells from an outage
  // by pattern as well as colour.
  function draw(u, list) {
    if (!list.length) return;
    const ctx = u.ctx;
    const { left, top, width, height } = u.bbox;
    const c = g.cssColor('--maint-text');
    const k = devicePixelRatio;
    ctx.save();
    ctx.beginPath();
    ctx.rect(left, top, width, height);
    ctx.clip();
    for (const [s, e] of list) {
      const x0 = u.valToPos(s, 'x', true), x1 = Math.max(x0 + 3 * k, u.valToPos(e, 'x', true));
      if (x1 < left || x0 > left + width) continue;
      ctx.fillStyle = g.cssColor('--maint-text', 0.2);
      ctx.fillRect(x0, top, x1 - x0, height);
      ctx.save();
      ctx.beginPath();
      ctx.rect(x0, top, x1 - x0, height);
      ctx.clip();
      ctx.strokeStyle = c;
      ctx.globalAlpha = 0.85; // 3:1 and more against the panel in both themes (WCAG 1.4.11)
      ctx.lineWidth = 1.5 * k;
      ctx.beginPath();
      for (let x = x0 - height; x < x1; x += 9 * k) {
        ctx.moveTo(x, top + height);
        ctx.lineTo(x + height, top);
      }
      ctx.stroke();
      ctx.restore();
    }
    ctx.restore();
  }

  // drawWindows shades the windows' stretches: a faint tint of
  // --maint-text, dashed edges and a solid strip along the top, under the
  // outage and maintenance shading.
  function drawWindows(u, list) {
    if (!list.length) return;
    const ctx = u.ctx;
    const { left, top, width, height } = u.bbox;
    const k = devicePixelRatio;
    ctx.save();
    ctx.beginPath();
    ctx.rect(left, top, width, height);
    ctx.clip();
    const c = g.cssColor('--maint-text');
    for (const [s, e] of list) {
      const x0 = u.valToPos(s, 'x', true), x1 = Math.max(x0 + 3 * k, u.valToPos(e, 'x', true));
      if (x1 < left || x0 > left + width) continue;
      ctx.fillStyle = g.cssColor('--maint-text', 0.12);
      ctx.fillRect(x0, top, x1 - x0, height);
      ctx.fillStyle = c;
      ctx.fillRect(x0, top, x1 - x0, 5 * k);
      ctx.strokeStyle = c;
      ctx.lineWidth = k;
      ctx.setLineDash([4 * k, 3 * k]);
      ctx.beginPath();
      for (const x of [x0, x1]) {
        ctx.moveTo(x, top);
        ctx.lineTo(x, top + height);
      }
      ctx.stroke();
    }
    ctx.restore();
  }

  // hover shows, while the pointer is on a window's stretch, a tip that
  // names it: its span, schedule and reason.
  function hover(u, list) {
    let tip = u.over.querySelector('.win-tip');
    const x = u.cursor.left;
    const t = x === undefined || x < 0 ? null : u.posToVal(x, 'x');
    const w = t === null ? null : list.find(([s, e]) => t >= s && t < e);
    if (!w) {
      if (tip) tip.hidden = true;
      return;
    }
    if (!tip) {
      tip = g.el('div', 'win-tip');
      tip.setAttribute('role', 'status');
      u.over.append(tip);
    }
    tip.textContent = w[2];
    tip.hidden = false;
    tip.style.left = Math.min(x + 10, Math.max(0, u.over.clientWidth - tip.offsetWidth)) + 'px';
  }

  // key is the note under the chart that names the shading, when the
  // incidents' spans or the windows' wins show in [from, to).
  function key(list, wins, from, to) {
    const on = (l) => l.some(([s, e]) => e > from && s < to);
    if (!on(list) && !on(wins)) return null;
    const f = document.createDocumentFragment();
    if (on(wins)) f.append(g.el('span', 'k-win'), ' maintenance window (scheduled or set; alerts silenced)');
    if (on(list) && on(wins)) f.append(' · ');
    if (on(list)) f.append(g.el('span', 'k-maint'), ' maintenance: down inside a maintenance window, not an outage');
    return f;
  }

  return { spans, windows, outageShare, draw, drawWindows, hover, key };
})();
