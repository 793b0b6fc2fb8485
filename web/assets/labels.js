// gsq monitor's labels in the server list: the most common label keys
// are columns of the list (sortable, empty where a server lacks the key;
// at most MAX_COLS, fewer on narrow screens and none on a phone), the
// other labels chips beside the server's name; a select filters by one
// (as ?label=KEY:VALUE does in the API, and the choice stays in the URL),
// and another groups the list by a label: the rows sorted by its value,
// with each group's count. Label keys and values come from the config
// and are only ever set as text.
'use strict';

(window.gsqParts = window.gsqParts || []).push((() => {
  const MAX_COLS = 6;
  const COL = 96 + 14; // a label column and its gap (px)
  let h = null;
  const st = { filter: '', group: '', keys: '', cols: [] };

  // colCap is how many label columns fit beside the list's other
  // columns (app.css: 764 px of fixed columns, gaps and padding from
  // 1100 px wide, 592 px below) and leave the server and map columns
  // 300 px; the list widens past its 1240 px by a column each, as far as
  // the window goes. None on a phone.
  function colCap() {
    const w = document.documentElement.clientWidth;
    if (w <= 720) return 0;
    const fixed = w < 1100 ? 592 : 764;
    for (let n = MAX_COLS; n > 0; n--) {
      if (Math.min(w, 1240 + n * COL) - 34 - fixed - n * COL >= 300) return n;
    }
    return 0;
  }

  // columns makes the label columns' headers, sort choices and widths.
  function columns(cols) {
    st.cols = cols;
    const table = document.querySelector('#view-list .table');
    const head = table.querySelector('.thead');
    for (const b of head.querySelectorAll('.lc-h')) b.remove();
    const sel = h.$('sort-select');
    for (const o of [...sel.options]) if (o.value.startsWith('label:')) o.remove();
    for (const k of cols) {
      const b = h.el('button', 'lc-h', k);
      b.type = 'button';
      b.dataset.sort = 'label:' + k;
      b.setAttribute('role', 'columnheader');
      b.title = 'Label ' + k;
      head.append(b);
      sel.add(new Option('Sort: ' + k, 'label:' + k));
    }
    if (cols.length) table.style.setProperty('--lab', 'repeat(' + cols.length + ', ' + (COL - 14) + 'px)');
    else table.style.removeProperty('--lab');
    // The list and, while it shows, the header bar above it (app.css).
    if (cols.length) document.documentElement.style.setProperty('--list-w', 1240 + cols.length * COL + 'px');
    else document.documentElement.style.removeProperty('--list-w');
    h.sortUI();
  }

  function fromURL() {
    const q = new URLSearchParams(location.search);
    st.filter = q.get('label') || '';
    st.group = q.get('group') || '';
  }

  function toURL() {
    if (location.pathname !== '/') return;
    const q = new URLSearchParams(location.search);
    for (const [k, v] of [['label', st.filter], ['group', st.group]]) {
      if (v) q.set(k, v); else q.delete(k);
    }
    const s = q.toString();
    history.replaceState(null, '', '/' + (s ? '?' + s : ''));
  }

  // options rebuilds the selects and the columns when the set of labels
  // (or the room for columns) changes.
  function options(servers) {
    const pairs = new Map(); // "k:v" → count
    const keys = new Map(); // k → servers with it
    for (const s of servers) {
      for (const [k, v] of Object.entries(s.labels || {})) {
        keys.set(k, (keys.get(k) || 0) + 1);
        pairs.set(k + ':' + v, (pairs.get(k + ':' + v) || 0) + 1);
      }
    }
    const cap = colCap();
    const sig = cap + '\n' + [...pairs.keys()].sort().join('\n');
    if (sig === st.keys) return;
    st.keys = sig;
    columns([...keys.keys()].sort((a, b) => keys.get(b) - keys.get(a) || (a < b ? -1 : 1)).slice(0, cap));
    h.$('labelbar').hidden = keys.size === 0;
    const f = h.$('label-filter'), g = h.$('label-group');
    f.length = 1;
    g.length = 1;
    for (const p of [...pairs.keys()].sort()) {
      const [k, v] = [p.slice(0, p.indexOf(':')), p.slice(p.indexOf(':') + 1)];
      f.add(new Option(k + ': ' + v + ' (' + pairs.get(p) + ')', p));
    }
    for (const k of [...keys.keys()].sort()) g.add(new Option(k, k));
    f.value = st.filter;
    g.value = st.group;
  }

  function labelOf(s, key) {
    return (s.labels && Object.prototype.hasOwnProperty.call(s.labels, key)) ? s.labels[key] : null;
  }

  return {
    init(helpers) {
      h = helpers;
      fromURL();
      h.$('label-filter').addEventListener('change', (e) => { st.filter = e.target.value; toURL(); h.relist(); });
      h.$('label-group').addEventListener('change', (e) => { st.group = e.target.value; toURL(); h.relist(); });
    },
    route(path) {
      if (path === '/') fromURL();
      return false;
    },
    matches(s) {
      if (!st.filter) return true;
      const i = st.filter.indexOf(':');
      return labelOf(s, st.filter.slice(0, i)) === st.filter.slice(i + 1);
    },
    // arrange orders the filtered rows by the group label, keeping the
    // chosen sort within each group, and counts the groups.
    arrange(rows, all) {
      options(all);
      const info = h.$('label-groups');
      info.textContent = '';
      if (!st.group) return rows;
      const counts = new Map();
      for (const s of rows) {
        const v = labelOf(s, st.group);
        counts.set(v, (counts.get(v) || 0) + 1);
      }
      const order = [...counts.keys()].sort((a, b) => (a === null) - (b === null) || String(a).localeCompare(String(b)));
      const rank = new Map(order.map((v, i) => [v, i]));
      const out = rows.map((s, i) => [s, i]).sort((a, b) => rank.get(labelOf(a[0], st.group)) - rank.get(labelOf(b[0], st.group)) || a[1] - b[1]).map((x) => x[0]);
      for (const v of order) {
        info.append(h.el('span', 'gchip', (v === null ? '(no ' + st.group + ')' : v) + ' ' + h.fmtInt(counts.get(v))));
      }
      return out;
    },
    // sorter orders the list by a label column's key ("label:KEY"), the
    // servers without it last.
    sorter(key) {
      if (!key.startsWith('label:')) return null;
      const k = key.slice(6);
      return (a, b, d) => {
        const x = labelOf(a, k), y = labelOf(b, k);
        return x === null || y === null ? (x === null) - (y === null) : h.collator.compare(x, y) * d;
      };
    },
    rowMade(a) {
      a.children[1].lastChild.append(h.el('span', 'lbls'));
      a._lc = [];
      for (let i = 0; i < MAX_COLS; i++) {
        const c = h.el('span', 'lc');
        c.hidden = true;
        a._lc.push(c);
        a.append(c);
      }
    },
    rowFilled(a, s) {
      for (let i = 0; i < MAX_COLS; i++) {
        const c = a._lc[i], k = st.cols[i];
        c.hidden = k === undefined;
        const v = k === undefined ? null : labelOf(s, k);
        if (c._v === v && c._k === k) continue;
        c._v = v;
        c._k = k;
        c.textContent = v === null ? '' : v;
        c.title = v === null ? '' : k + ': ' + v;
      }
      const box = a.children[1].lastChild.lastChild;
      box.textContent = '';
      const labels = s.labels || {};
      for (const k of Object.keys(labels).sort()) {
        if (st.cols.includes(k)) continue;
        const chip = h.el('span', 'lchip' + (k === st.group ? ' lchip-g' : ''), labels[k]);
        chip.title = k + ': ' + labels[k];
        box.append(chip);
      }
    },
  };
})());
