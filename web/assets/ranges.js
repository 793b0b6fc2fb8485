// gsq monitor's page: the range of a server's chart, kept in the URL so
// that a link shows what its sender saw. ?range=1h|24h|7d|30d is a range
// up to now; ?from=UNIX&to=UNIX a fixed one (a drag on the chart, or the
// custom range form); ?compare=week draws the week before on the same
// chart. Loaded before app.js, which reads the range through
// window.gsqRanges and calls the hooks below (window.gsqParts).
'use strict';

window.gsqRanges = (() => {
  const presets = { '1h': 3600, '24h': 86400, '7d': 7 * 86400, '30d': 30 * 86400 };
  const week = 7 * 86400;
  const maxSpan = 400 * 86400;
  let onChange = () => {};
  let g = null;

  // read returns the range the URL asks for: {kind ('1h'… or 'custom'),
  // from, to (Unix seconds), compare}. Without one, the last preset used.
  function read() {
    const u = new URL(location.href).searchParams;
    const compare = u.get('compare') === 'week';
    const from = Number(u.get('from')), to = Number(u.get('to'));
    if (from > 0 && to > from && to - from <= maxSpan && to < 1e11) return { kind: 'custom', from, to, compare };
    let p = u.get('range');
    if (!presets[p]) p = localStorage.getItem('gsq-range');
    if (!presets[p]) p = '1h';
    const now = Date.now() / 1000;
    return { kind: p, from: now - presets[p], to: now, compare };
  }

  // write sets the URL's range parameters: a new history entry for a new
  // range (Back returns to the one before), the same entry otherwise.
  function write(set, push) {
    const u = new URL(location.href);
    for (const [k, v] of Object.entries(set)) {
      if (v === null || v === undefined || v === '') u.searchParams.delete(k);
      else u.searchParams.set(k, v);
    }
    const url = u.pathname + u.search + u.hash;
    if (url === location.pathname + location.search + location.hash) return;
    if (push) history.pushState(null, '', url);
    else history.replaceState(history.state, '', url);
  }

  function setPreset(p) {
    localStorage.setItem('gsq-range', p);
    write({ range: p, from: null, to: null }, true);
    onChange();
  }

  // zoom shows [from, to): a drag on the chart, or the custom form.
  function zoom(from, to) {
    from = Math.floor(from);
    to = Math.ceil(Math.min(to, Date.now() / 1000 + 60));
    if (!(to - from >= 60)) to = from + 60;
    write({ range: null, from: String(from), to: String(to) }, true);
    onChange();
  }

  function setCompare(on) {
    write({ compare: on ? 'week' : null }, false);
    onChange();
  }

  // localInput is a time as a datetime-local input's value.
  function localInput(sec) {
    const d = new Date(sec * 1000);
    const p = (n) => String(n).padStart(2, '0');
    return d.getFullYear() + '-' + p(d.getMonth() + 1) + '-' + p(d.getDate()) + 'T' + p(d.getHours()) + ':' + p(d.getMinutes());
  }

  // ui adds the custom range form and the comparison toggle beside the
  // range buttons.
  function ui() {
    const { el, $ } = g;
    const seg = $('range');
    const custom = el('button', 'seg-btn', 'Custom…');
    custom.type = 'button';
    custom.id = 'range-custom';
    custom.setAttribute('aria-expanded', 'false');
    custom.setAttribute('aria-controls', 'range-form');
    const compare = el('button', 'seg-btn', 'vs. week before');
    compare.type = 'button';
    compare.id = 'compare';
    compare.setAttribute('aria-pressed', 'false');
    compare.title = 'Draw the same range a week earlier on the chart';
    const box = el('div', 'range-tools');
    seg.replaceWith(box);
    box.append(seg, custom, compare);
    const form = el('form', 'range-form');
    form.id = 'range-form';
    form.hidden = true;
    const input = (label, id) => {
      const l = el('label', null, label);
      const i = el('input');
      i.type = 'datetime-local';
      i.id = id;
      i.required = true;
      l.append(i);
      return [l, i];
    };
    const [fromL, from] = input('From ', 'range-from');
    const [toL, to] = input('to ', 'range-to');
    const go = el('button', 'primary', 'Show');
    go.type = 'submit';
    const err = el('span', 'range-err');
    err.setAttribute('role', 'alert');
    form.append(fromL, toL, go, err);
    box.closest('.card-head').after(form);
    custom.addEventListener('click', () => {
      const r = read();
      form.hidden = !form.hidden;
      custom.setAttribute('aria-expanded', String(!form.hidden));
      if (!form.hidden) {
        from.value = localInput(r.from);
        to.value = localInput(r.to);
        from.focus();
      }
    });
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      const a = new Date(from.value).getTime() / 1000, b = new Date(to.value).getTime() / 1000;
      if (!(a < b)) { err.textContent = 'The start must be before the end.'; return; }
      if (b - a > maxSpan) { err.textContent = 'At most 400 days.'; return; }
      err.textContent = '';
      form.hidden = true;
      custom.setAttribute('aria-expanded', 'false');
      zoom(a, b);
    });
    compare.addEventListener('click', () => setCompare(compare.getAttribute('aria-pressed') !== 'true'));
  }

  // updateUI shows the range read() gives on the buttons.
  function updateUI() {
    const r = read();
    for (const b of document.querySelectorAll('#range button')) b.setAttribute('aria-pressed', String(b.dataset.range === r.kind));
    const c = document.getElementById('range-custom');
    if (c) c.setAttribute('aria-pressed', String(r.kind === 'custom'));
    const cmp = document.getElementById('compare');
    if (cmp) cmp.setAttribute('aria-pressed', String(r.compare));
  }

  window.gsqParts = window.gsqParts || [];
  window.gsqParts.push({ init(shared) { g = shared; ui(); } });
  return {
    read, setPreset, zoom, updateUI, week,
    // onChange is what app.js does when the range changes: load the
    // chart again.
    set onChange(fn) { onChange = fn; },
  };
})();
