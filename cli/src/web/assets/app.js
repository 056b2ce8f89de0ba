// kubectl update-status --web / -o html: draws the page model (cli/src/web/model.rs).
//
// Safety: every string from the cluster is inserted with textContent or drawn on a canvas,
// never parsed as markup (the Content-Security-Policy also requires Trusted Types for any
// HTML sink, so a stray innerHTML would throw). Control and bidi characters are made visible.
'use strict';
(function () {
  const D = document;
  // The live view's session path, /s/<random>: every URL of the server is under it (cli/src/web/guard.rs).
  const base = (location.pathname.match(/^\/s\/[A-Za-z0-9_-]+/) || [''])[0];

  // Cell states, in the order of model.rs's CellState (the model sends their index).
  const STATES = [
    { key: 'updated', label: 'Updated', letter: 'C', bg: '#2e7d32', fg: '#ffffff', pattern: null },
    { key: 'pending', label: 'Pending', letter: 'P', bg: '#d0d7de', fg: '#1f2328', pattern: null },
    { key: 'draining', label: 'Draining', letter: 'D', bg: '#1f5fbf', fg: '#ffffff', pattern: ['stripes', '#174a94'] },
    { key: 'updating', label: 'Updating', letter: 'U', bg: '#1f5fbf', fg: '#ffffff', pattern: null },
    { key: 'rebooting', label: 'Rebooting', letter: 'R', bg: '#1f5fbf', fg: '#ffffff', pattern: ['dots', '#0f3570'] },
    { key: 'excluded', label: 'Excluded (paused pool)', letter: 'X', bg: '#6e5f8f', fg: '#ffffff', pattern: ['hlines', '#54476f'] },
    { key: 'degraded', label: 'Degraded', letter: '!', bg: '#c62828', fg: '#ffffff', pattern: ['cross', '#8e1b1b'] },
    { key: 'unavailable', label: 'Unavailable', letter: 'N', bg: '#f59e0b', fg: '#1f2328', pattern: ['vlines', '#fcd34d'] },
    { key: 'unknown', label: 'Unknown', letter: '?', bg: '#ffffff', fg: '#1f2328', pattern: ['border', '#57606a'] },
  ];
  const BY_KEY = Object.fromEntries(STATES.map((s) => [s.key, s]));
  const OPERATOR_STATES = ['updated', 'updating', 'pending', 'degraded', 'unavailable'];
  const FLEET_STATES = [
    { key: 'attention', css: 'degraded', label: 'Needs attention (an Error or Critical insight)', letter: '!' },
    { key: 'warning', css: 'warning', label: 'Warning insight', letter: 'W' },
    { key: 'slow', css: 'slow', label: 'Stalled or slow', letter: 'S' },
    { key: 'progressing', css: 'updating', label: 'Progressing', letter: 'U' },
    { key: 'completed', css: 'updated', label: 'Completed', letter: 'C' },
    { key: 'unknown', css: 'unknown', label: 'Not reported or unknown', letter: '?' },
    { key: 'stale', css: 'stale', label: 'Stale: no report for too long', letter: 'Z' },
  ];

  // --- text -------------------------------------------------------------------------------
  // As the text output escapes them (cli/src/escape.rs, whose test checks this class is its
  // set): ESC ^[, CR \r, other C0 ^X, DEL ^?, C1 controls and the characters that print
  // nothing or move text (Unicode's default-ignorable ones: bidi overrides, isolates and
  // marks, zero-width characters, BOM, soft hyphen, variation selectors, tag characters,
  // Hangul fillers...; and U+2028/U+2029: cli/src/invisible.rs) \uXXXX, beyond U+FFFF
  // \u{XXXXX} (flag u: a match is a whole code point, never half a surrogate pair). Line
  // feeds and tabs are kept, as the oc-identical text view prints them; the elements showing
  // such text preserve them (CSS white-space: pre-wrap), as text, never as markup. `line` escapes them too (\n, \t): the fleet's own table does.
  function vis(s, line) {
    return String(s == null ? '' : s).replace(
      /[\u0000-\u001f\u007f-\u009f\u00ad\u034f\u061c\u115f-\u1160\u17b4-\u17b5\u180b-\u180f\u200b-\u200f\u2028-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8\u{1bca0}-\u{1bca3}\u{1d173}-\u{1d17a}\u{e0000}-\u{e0fff}]/gu,
      (c) => {
        const n = c.codePointAt(0);
        if (c === '\n') return line ? '\\n' : '\n';
        if (c === '\t') return line ? '\\t' : '\t';
        if (c === '\r') return '\\r';
        if (n < 0x20) return '^' + String.fromCharCode(n + 64);
        if (n === 0x7f) return '^?';
        return n > 0xffff ? '\\u{' + n.toString(16) + '}' : '\\u' + n.toString(16).padStart(4, '0');
      });
  }
  // The fleet page: as `kubectl update-status --fleet` prints them (line feeds and tabs escaped).
  const visLine = (s) => vis(s, true);
  function el(tag, attrs, ...children) {
    const e = D.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v == null || v === false) continue;
      if (k === 'class') e.className = v;
      else if (k === 'text') e.textContent = v;
      else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v === true ? '' : String(v));
    }
    for (const c of children) if (c != null) e.append(c);
    return e;
  }
  const txt = (s, cls) => el('span', { class: cls ? 'txt ' + cls : 'txt', text: vis(s) });
  function fmtTime(t) {
    if (!t) return '-';
    const d = new Date(t);
    if (isNaN(d)) return vis(t);
    return d.toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z').replace('Z', ' UTC');
  }
  function swatch(css, letter) {
    return el('span', { class: 'sw st-' + css, 'aria-hidden': 'true', text: letter });
  }
  function fact(name, value) {
    return el('span', { 'data-fact': name, text: String(value) });
  }

  // --- tooltip ----------------------------------------------------------------------------
  const tip = el('div', { id: 'tip', role: 'tooltip', hidden: true });
  function showTip(lines, x, y) {
    tip.replaceChildren();
    lines.forEach((l, i) => tip.append(i === 0 ? el('b', { text: l }) : el('div', { text: l })));
    tip.hidden = false;
    const w = tip.offsetWidth;
    const maxX = D.documentElement.scrollWidth - w - 8;
    tip.style.left = Math.max(4, Math.min(x, maxX)) + 'px';
    tip.style.top = (y + 8) + 'px';
  }
  function hideTip() { tip.hidden = true; }
  function tipAt(elem, lines) {
    const r = elem.getBoundingClientRect();
    showTip(lines, r.left + window.scrollX, r.bottom + window.scrollY);
  }

  // --- state of the page ------------------------------------------------------------------
  const ui = { model: null, renders: 0, active: {}, focus: null, tileFocus: null };
  const announce = el('div', { id: 'announce', class: 'sr-only', 'aria-live': 'polite' });

  function legend(items) {
    return el('ul', { class: 'legend', 'aria-label': 'Legend' },
      ...items.map((s) => el('li', {}, swatch(s.css || s.key, s.letter), el('span', { text: s.label }))));
  }

  function progress(label, pct, fillState) {
    const bar = el('div', {
      class: 'bar', role: 'progressbar', 'aria-label': label,
      'aria-valuemin': 0, 'aria-valuemax': 100, 'aria-valuenow': pct,
    }, el('div', { class: 'fill st-' + (fillState || 'updated') }));
    bar.firstChild.style.width = Math.max(0, Math.min(100, pct)) + '%';
    return bar;
  }

  // --- roving focus over a list of tiles --------------------------------------------------
  function roving(list, key) {
    const items = () => Array.from(list.querySelectorAll('.tile'));
    list.addEventListener('keydown', (ev) => {
      const all = items();
      const i = all.indexOf(D.activeElement);
      if (i < 0) return;
      const cols = Math.max(1, all.filter((t) => t.offsetTop === all[0].offsetTop).length);
      const moves = { ArrowRight: 1, ArrowLeft: -1, ArrowDown: cols, ArrowUp: -cols, Home: -i, End: all.length - 1 - i };
      if (!(ev.key in moves)) return;
      ev.preventDefault();
      const j = Math.max(0, Math.min(all.length - 1, i + moves[ev.key]));
      all[i].tabIndex = -1;
      all[j].tabIndex = 0;
      all[j].focus();
    });
    list.addEventListener('focusin', (ev) => {
      const t = ev.target.closest('.tile');
      if (!t) return;
      ui.tileFocus = { key, name: t.dataset.name };
      items().forEach((x) => { x.tabIndex = x === t ? 0 : -1; });
      t.dispatchEvent(new Event('showtip'));
    });
    list.addEventListener('focusout', () => { ui.tileFocus = null; hideTip(); });
    const first = items()[0];
    if (first) first.tabIndex = 0;
  }

  // --- node grids (canvas) ----------------------------------------------------------------
  const sprites = new Map();
  function sprite(state, size, dpr) {
    const key = state + ':' + size + ':' + dpr;
    let c = sprites.get(key);
    if (c) return c;
    const s = STATES[state] || STATES[8];
    const px = Math.max(1, Math.round((size) * dpr));
    c = D.createElement('canvas');
    c.width = px; c.height = px;
    const g = c.getContext('2d');
    g.fillStyle = s.bg;
    g.fillRect(0, 0, px, px);
    const step = Math.max(3, Math.round(4 * dpr));
    const lw = Math.max(1, Math.round(dpr * (size >= 10 ? 1.5 : 1)));
    if (s.pattern) {
      const [kind, color] = s.pattern;
      g.strokeStyle = color; g.fillStyle = color; g.lineWidth = lw;
      g.beginPath();
      if (kind === 'stripes' || kind === 'cross') {
        for (let k = -px; k < px; k += step) { g.moveTo(k, px); g.lineTo(k + px, 0); }
      }
      if (kind === 'cross') {
        for (let k = -px; k < 2 * px; k += step) { g.moveTo(k, 0); g.lineTo(k + px, px); }
      }
      if (kind === 'hlines') for (let y = step - lw; y < px; y += step) { g.moveTo(0, y); g.lineTo(px, y); }
      if (kind === 'vlines') for (let x = step - lw; x < px; x += step) { g.moveTo(x, 0); g.lineTo(x, px); }
      g.stroke();
      if (kind === 'dots') {
        for (let y = step / 2; y < px; y += step) for (let x = step / 2; x < px; x += step) g.fillRect(x - lw / 2, y - lw / 2, lw, lw);
      }
      if (kind === 'border') { g.strokeRect(lw / 2, lw / 2, px - lw, px - lw); }
    }
    if (size >= 14) {
      g.fillStyle = s.fg;
      g.font = 'bold ' + Math.round(size * 0.62 * dpr) + 'px system-ui, "DejaVu Sans", sans-serif';
      g.textAlign = 'center'; g.textBaseline = 'middle';
      if (s.fg === '#ffffff') { g.shadowColor = 'rgba(0,0,0,.6)'; g.shadowBlur = 2 * dpr; }
      g.fillText(s.letter, px / 2, px / 2 + dpr);
    }
    sprites.set(key, c);
    return c;
  }

  function cellSize(n, width) {
    if (n <= 60) return 26;
    if (n <= 300) return 18;
    if (n <= 1200) return 12;
    return Math.max(6, Math.min(11, Math.floor(Math.sqrt((width * 380) / n))));
  }

  function nodeLines(pool, i) {
    const n = pool.nodes;
    const s = STATES[n.state[i]] || STATES[8];
    const lines = [vis(n.name[i]), 'State: ' + s.label + ' (' + s.letter + ')'];
    if (n.phase[i]) lines.push('Phase: ' + vis(n.phase[i]));
    lines.push('Assessment: ' + vis(n.assessment[i]));
    lines.push('Version: ' + vis(n.version[i]));
    if (n.estimate[i]) lines.push('Estimate: ' + vis(n.estimate[i]));
    if (n.message[i]) lines.push(vis(n.message[i]));
    return lines;
  }

  function grid(pool, width) {
    const n = pool.nodes.name.length;
    const size = cellSize(n, width);
    const gap = size >= 12 ? 2 : 1;
    const pitch = size + gap;
    const cols = Math.max(1, Math.floor((width + gap) / pitch));
    const rows = Math.ceil(n / cols);
    const dpr = window.devicePixelRatio || 1;
    const counts = STATES.map(() => 0);
    pool.nodes.state.forEach((s) => { counts[s] = (counts[s] || 0) + 1; });
    const summary = STATES.map((s, i) => counts[i] ? counts[i] + ' ' + s.label : null).filter(Boolean).join(', ');
    const canvas = el('canvas', {
      class: 'grid', tabindex: 0, role: 'application', 'aria-roledescription': 'node grid',
      'aria-label': (pool.controlPlane ? 'Control plane nodes' : 'Nodes of pool ' + vis(pool.name)) + ': ' + n + ' nodes' + (summary ? ', ' + summary : '') + '. Arrow keys move between nodes.',
      'data-pool': pool.name, 'data-pitch': pitch, 'data-cols': cols, 'data-size': size,
    });
    canvas.style.width = (cols * pitch - gap) + 'px';
    canvas.style.height = Math.max(size, rows * pitch - gap) + 'px';
    canvas.width = Math.round((cols * pitch - gap) * dpr);
    canvas.height = Math.round(Math.max(size, rows * pitch - gap) * dpr);
    const key = pool.name;
    const draw = () => {
      const g = canvas.getContext('2d');
      g.clearRect(0, 0, canvas.width, canvas.height);
      const st = pool.nodes.state;
      for (let i = 0; i < n; i++) {
        const x = (i % cols) * pitch, y = Math.floor(i / cols) * pitch;
        g.drawImage(sprite(st[i], size, dpr), Math.round(x * dpr), Math.round(y * dpr));
      }
      const a = ui.active[key];
      if (a != null && a < n && D.activeElement === canvas) {
        const x = (a % cols) * pitch, y = Math.floor(a / cols) * pitch;
        g.lineWidth = 2 * dpr; g.strokeStyle = '#0b57d0';
        g.strokeRect((x - 1) * dpr, (y - 1) * dpr, (size + 2) * dpr, (size + 2) * dpr);
        g.lineWidth = 1 * dpr; g.strokeStyle = '#ffffff';
        g.strokeRect((x + 1) * dpr, (y + 1) * dpr, (size - 2) * dpr, (size - 2) * dpr);
      }
    };
    const showCell = (i, speak) => {
      const x = (i % cols) * pitch, y = Math.floor(i / cols) * pitch;
      const r = canvas.getBoundingClientRect();
      showTip(nodeLines(pool, i), r.left + window.scrollX + x, r.top + window.scrollY + y + size);
      if (speak) announce.textContent = nodeLines(pool, i).slice(0, 4).join(', ') + ' (node ' + (i + 1) + ' of ' + n + ')';
    };
    const at = (ev) => {
      const r = canvas.getBoundingClientRect();
      const c = Math.floor((ev.clientX - r.left) / pitch), row = Math.floor((ev.clientY - r.top) / pitch);
      const i = row * cols + c;
      return c >= 0 && c < cols && i >= 0 && i < n ? i : -1;
    };
    canvas.addEventListener('mousemove', (ev) => { const i = at(ev); if (i >= 0) showCell(i, false); else hideTip(); });
    canvas.addEventListener('mouseleave', () => { if (D.activeElement !== canvas) hideTip(); });
    canvas.addEventListener('click', (ev) => { const i = at(ev); if (i >= 0) { ui.active[key] = i; canvas.focus(); draw(); showCell(i, true); } });
    canvas.addEventListener('focus', () => {
      if (ui.active[key] == null || ui.active[key] >= n) ui.active[key] = 0;
      ui.focus = { pool: key };
      draw();
      if (n) showCell(ui.active[key], true);
    });
    canvas.addEventListener('blur', () => { ui.focus = null; hideTip(); draw(); });
    canvas.addEventListener('keydown', (ev) => {
      if (!n) return;
      const i = ui.active[key] || 0;
      const page = cols * Math.max(1, Math.floor(300 / pitch));
      const moves = { ArrowRight: 1, ArrowLeft: -1, ArrowDown: cols, ArrowUp: -cols, Home: -i, End: n - 1 - i, PageDown: page, PageUp: -page };
      if (!(ev.key in moves)) { if (ev.key === 'Escape') hideTip(); return; }
      ev.preventDefault();
      ui.active[key] = Math.max(0, Math.min(n - 1, i + moves[ev.key]));
      draw();
      showCell(ui.active[key], true);
    });
    draw();
    return canvas;
  }

  // --- the cluster page -------------------------------------------------------------------
  function countsLine(c) {
    const parts = [c.available + ' Available', c.progressing + ' Progressing', c.draining + ' Draining'];
    if (c.excluded) parts.push(c.excluded + ' Excluded');
    if (c.degraded) parts.push(c.degraded + ' Degraded');
    return parts.join(', ');
  }

  function controlPlane(cp) {
    const s = el('section', { 'aria-labelledby': 'h-cp' }, el('h2', { id: 'h-cp', text: 'Control plane' }));
    const ops = cp.operators;
    const dl = el('dl', { class: 'facts' });
    const row = (k, ...v) => dl.append(el('dt', { text: k }), el('dd', {}, ...v));
    row('Assessment', el('span', { 'data-fact': 'cp-assessment', text: cp.assessment }));
    row('Target version', txt(cp.target));
    row('Completion', progress('Control plane completion', cp.completion),
      fact('cp-completion', cp.completion + '%'), ' (', fact('ops-updated', ops.updated), ' operators updated, ',
      fact('ops-updating', ops.updating), ' updating, ', fact('ops-waiting', ops.waiting), ' waiting; ',
      fact('ops-total', ops.total), ' in all)');
    row('Started', el('span', { text: fmtTime(cp.startedAt) }));
    if (cp.completedAt) row('Completed', el('span', { text: fmtTime(cp.completedAt) }));
    row('Duration', el('span', { 'data-fact': 'cp-duration', text: cp.duration }));
    if (cp.estimate) row('Est. time remaining', el('span', { 'data-fact': 'cp-estimate', text: cp.estimate }),
      cp.estimatedAt ? ' (about ' + fmtTime(cp.estimatedAt) + ')' : '');
    row('Operator health', el('span', { 'data-fact': 'ops-health', text: cp.operatorHealth }));
    s.append(dl);
    s.append(el('h3', { id: 'h-ops', text: 'Cluster operators (' + cp.tiles.length + ')' }));
    const list = el('ul', { class: 'tiles', 'aria-labelledby': 'h-ops' });
    for (const t of cp.tiles) {
      const st = BY_KEY[t.state] || BY_KEY.unknown;
      const label = st.key === 'pending' ? 'Pending' : st.label;
      const lines = [vis(t.name), 'State: ' + label + ' (' + st.letter + ')'];
      if (t.version) lines.push('Version: ' + vis(t.version));
      if (t.since) lines.push('Since: ' + fmtTime(t.since));
      if (t.message) lines.push(vis(t.message));
      // The accessible name is the visible name plus the state (the letter is decoration);
      // the message is the description.
      const b = el('button', {
        type: 'button', class: 'tile', tabindex: -1, 'data-name': t.name, 'data-state': t.state,
        'aria-description': t.message ? vis(t.message) : null,
      }, swatch(st.key, st.letter), el('span', { class: 'name', text: vis(t.name) }),
      el('span', { class: 'sr-only', text: ': ' + label }));
      b.addEventListener('showtip', () => tipAt(b, lines));
      b.addEventListener('mouseenter', () => tipAt(b, lines));
      b.addEventListener('mouseleave', () => { if (D.activeElement !== b) hideTip(); });
      list.append(el('li', {}, b));
    }
    roving(list, 'ops');
    s.append(list);
    return s;
  }

  // The estimates of the UpdateHistory (issue #40): learned, or oc's method when nothing was
  // learned yet, as the object states.
  function estimates(e) {
    const s = el('section', { 'aria-labelledby': 'h-est' },
      el('h2', { id: 'h-est', text: 'Estimated time remaining' }),
      el('p', { class: 'meta' }, 'Method: ', el('span', { 'data-fact': 'est-method', text: e.method }),
        ' (' + vis(e.message) + '; computed ' + fmtTime(e.computedAt) + ')'));
    const t = el('table', { 'data-fact': 'estimates' }, el('caption', { class: 'sr-only', text: 'Estimated time remaining per scope' }));
    t.append(el('thead', {}, el('tr', {}, ...['Scope', 'Remaining (p50)', 'Interval (p10\u2013p90)', 'About']
      .map((h) => el('th', { scope: 'col', text: h })))));
    const tb = el('tbody');
    const row = (key, name, r) => tb.append(el('tr', { 'data-scope': key },
      el('td', { text: name + (r.paused ? ' (paused: assumed resumed now)' : '') }),
      el('td', { 'data-fact': 'est-' + key, text: r.remaining }),
      el('td', { text: r.earliest + ' \u2013 ' + r.latest }),
      el('td', { text: fmtTime(r.at) })));
    if (e.update) row('update', 'Whole update', e.update);
    if (e.controlPlane) row('control-plane', 'Control plane', e.controlPlane);
    for (const p of e.pools) row('pool-' + p.name, 'Pool ' + vis(p.name), p);
    t.append(tb);
    s.append(t);
    return s;
  }

  function pools(model, width) {
    const s = el('section', { 'aria-labelledby': 'h-nodes' }, el('h2', { id: 'h-nodes', text: 'Nodes' }));
    if (!model.pools.length) s.append(el('p', { text: 'No pool with nodes.' }));
    for (const p of model.pools) {
      const id = 'h-pool-' + ui.renders + '-' + model.pools.indexOf(p);
      const title = p.controlPlane ? 'Control plane nodes (' + vis(p.name) + ')' : 'Worker pool ' + vis(p.name);
      const sec = el('section', { class: 'pool', 'aria-labelledby': id, 'data-pool': p.name },
        el('h3', { id }, el('span', { class: 'txt', text: title })));
      const total = p.counts.total;
      sec.append(el('p', {},
        el('span', { 'data-fact': 'pool-assessment', text: p.assessment }), ' · ',
        progress('Completion of ' + title, p.completion),
        fact('pool-completion', p.completion + '%'), ' (', fact('pool-updated', p.updated), '/', fact('pool-total', total), ')'));
      if (total > 0) sec.append(el('p', { class: 'counts', 'data-fact': 'pool-status', text: countsLine(p.counts) }));
      if (p.nodes.name.length) {
        sec.append(grid(p, width));
        sec.append(el('p', { class: 'grid-note', text: p.nodes.name.length + ' nodes by name; hover, or focus and use the arrow keys, to see one.' }));
      }
      s.append(sec);
    }
    return s;
  }

  function resourceText(r) {
    const kind = vis(r.kind) + (r.group ? '.' + vis(r.group) : '');
    return kind + ' ' + (r.namespace ? vis(r.namespace) + '/' : '') + vis(r.name);
  }

  function health(model) {
    const s = el('section', { 'aria-labelledby': 'h-health' }, el('h2', { id: 'h-health', text: 'Update health' }));
    const table = el('table', { 'data-fact': 'health' }, el('caption', { class: 'sr-only', text: 'Health insights, most severe first' }));
    const head = el('tr', {}, ...['Since', 'Level', 'Impact', 'Message', 'Resources'].map((h) => el('th', { scope: 'col', text: h })));
    table.append(el('thead', {}, head));
    const body = el('tbody');
    if (!model.health.length && model.healthNoneSince != null) {
      body.append(el('tr', { 'data-insight': '' },
        el('td', { text: model.healthNoneSince }), el('td', {}, level('Info')), el('td', { text: 'None' }),
        el('td', { text: 'Update is proceeding well' }), el('td', { text: '-' })));
    }
    for (const h of model.health) {
      const res = el('ul', { class: 'related' }, el('li', { class: 'txt', text: resourceText(h.resource) }));
      for (const r of h.related || []) res.append(el('li', { class: 'txt', 'data-related': '', text: resourceText(r) }));
      const msg = el('td', {}, el('div', { class: 'txt', text: vis(h.summary) }));
      if (h.description || h.reference) {
        const det = el('details', {}, el('summary', { text: 'Details' }));
        if (h.description) det.append(el('div', { class: 'txt', text: vis(h.description) }));
        if (h.reference) {
          const ref = String(h.reference);
          det.append(el('div', {}, 'Reference: ', /^https:\/\/[^\s]+$/.test(ref)
            ? el('a', { href: ref, rel: 'noreferrer noopener', target: '_blank', class: 'txt', text: vis(ref) })
            : txt(ref)));
        }
        msg.append(det);
      }
      body.append(el('tr', { 'data-insight': '' },
        el('td', { title: h.startedAt ? fmtTime(h.startedAt) : null, text: h.since }),
        el('td', {}, level(h.level)), el('td', { text: h.impact }), msg, el('td', {}, res)));
    }
    table.append(body);
    s.append(table);
    return s;
  }

  function level(l) {
    const css = { Critical: 'degraded', Error: 'degraded', Warning: 'unavailable', Info: 'updating', Unknown: 'unknown' }[l] || 'unknown';
    const letter = { Critical: '!', Error: '!', Warning: 'W', Info: 'i', Unknown: '?' }[l] || '?';
    return el('span', { class: 'lvl lvl-' + l }, swatch(css, letter), el('span', { text: l }));
  }

  function header(model, subtitle) {
    const h = el('header', {},
      el('h1', {}, 'Update status: ', el('span', { class: 'txt', text: vis(model.title) })),
      el('p', { class: 'meta' }, subtitle));
    if (model.error) h.append(el('p', { class: 'banner bad', role: 'alert', text: vis(model.error) }));
    return h;
  }

  function subtitleOf(model) {
    return model.source === 'live'
      ? 'Live: updated ' + fmtTime(model.now) + ' (changes appear as they happen)'
      : 'Snapshot evaluated at ' + fmtTime(model.now);
  }

  function clusterPage(model) {
    const width = Math.min(1160, (D.documentElement.clientWidth || 1200) - 40);
    const main = el('main', { id: 'main' });
    if (model.controlPlane && !model.updating) main.append(el('p', { class: 'banner', 'data-fact': 'not-updating', text: 'The cluster is not updating.' }));
    main.append(el('h2', { id: 'h-legend', text: 'Legend' }),
      el('p', { class: 'meta', text: 'Every state has a colour, a pattern and a letter.' }),
      legend(STATES));
    if (model.controlPlane) main.append(controlPlane(model.controlPlane));
    if (model.estimates) main.append(estimates(model.estimates));
    main.append(pools(model, width));
    if (model.controlPlane) main.append(health(model));
    return [header(model, subtitleOf(model)), main];
  }

  // --- the fleet page ---------------------------------------------------------------------
  function fleetState(c) {
    const h = c.health || {};
    if (!c.reported) return 'unknown';
    // What the row says may be out of date: that comes first.
    if (c.freshness === 'Stale') return 'stale';
    if (h.critical || h.error) return 'attention';
    if (c.assessment === 'Stalled' || c.assessment === 'Progressing - Slow') return 'slow';
    if (h.warning) return 'warning';
    if (c.assessment === 'Completed') return 'completed';
    if (c.assessment === 'Unknown') return 'unknown';
    return 'progressing';
  }

  function healthText(h) {
    const parts = [];
    for (const [k, label] of [['critical', 'Critical'], ['error', 'Error'], ['warning', 'Warning'], ['info', 'Info'], ['unknown', 'Unknown']]) {
      if (h && h[k]) parts.push(h[k] + ' ' + label);
    }
    return parts.join(', ') || 'no health insight';
  }

  function fleetPage(model) {
    const main = el('main', { id: 'main' });
    const states = FLEET_STATES.map((f) => f.key === 'stale' && model.staleAfter
      ? Object.assign({}, f, { label: 'Stale: no report for over ' + model.staleAfter }) : f);
    main.append(el('h2', { id: 'h-legend', text: 'Legend' }), legend(states));
    // What --fleet prints on standard error: names claimed by another namespace, namespaces
    // that could not be read, add-ons that could not be read.
    const warnings = model.warnings || [];
    if (warnings.length) {
      main.append(el('h2', { id: 'h-warnings', text: 'Warnings (' + warnings.length + ')' }),
        el('ul', { class: 'banner warnings', 'aria-labelledby': 'h-warnings', 'data-fact': 'fleet-warnings' },
          ...warnings.map((w) => el('li', { class: 'txt', text: visLine(w) }))));
    }
    main.append(el('h2', { id: 'h-fleet', text: 'Clusters (' + model.clusters.length + '), worst first' }));
    const list = el('ul', { class: 'tiles fleet', 'aria-labelledby': 'h-fleet', 'data-fact': 'fleet' });
    for (const c of model.clusters) {
      const key = fleetState(c);
      const fs = states.find((f) => f.key === key);
      const version = c.reported ? (c.from ? visLine(c.from) + ' → ' : '') + visLine(c.to) : 'not reported';
      const workers = c.workerNodes ? c.workerNodesUpdated + '/' + c.workerNodes + ' workers updated' : 'no worker node';
      const lines = [visLine(c.cluster), 'State: ' + fs.label + ' (' + fs.letter + ')',
        'Assessment: ' + visLine(c.assessment) + ', ' + c.completionPercent + '%', 'Version: ' + version, workers,
        'Health: ' + healthText(c.health), 'Namespace: ' + visLine(c.namespace)];
      if (c.hostedCluster != null) lines.push('Hosted cluster: ' + visLine(c.hostedCluster) + ' (as claimed by namespace ' + visLine(c.namespace) + ')');
      if (c.reported) lines.push('Last report: ' + visLine(c.lastReport));
      if (c.addOnText) lines.push('Add-on: ' + visLine(c.addOnText));
      const rowWarnings = c.warnings || [];
      for (const w of rowWarnings) lines.push('Warning: ' + visLine(w));
      const attrs = { class: rowWarnings.length ? 'tile claimed' : 'tile', tabindex: -1, 'data-name': c.cluster, 'data-state': key,
        'data-namespace': c.namespace, 'data-last-report': c.lastReport,
        'aria-description': fs.label + '; version ' + version + '; ' + workers + '; ' + healthText(c.health) +
          (c.reported ? '; last report ' + visLine(c.lastReport) : '') +
          (rowWarnings.length ? '; warning: ' + rowWarnings.map(visLine).join('; ') : '') };
      const sub = visLine(c.assessment) + ' · ' + c.completionPercent + '%' + (c.reported && c.lastReport !== '<unknown>' ? ' · ' + visLine(c.lastReport) : '');
      const body = [swatch(fs.css, fs.letter), el('span', { class: 'lines' },
        el('span', { class: 'name', text: visLine(c.cluster) }),
        el('span', { class: 'sub', text: sub }))];
      if (rowWarnings.length) body.push(el('span', { class: 'warn-mark', 'aria-hidden': 'true', title: 'See the warnings', text: '!' }));
      let t;
      if (model.source === 'live' && c.reported && c.href) t = el('a', Object.assign(attrs, { href: base + c.href }), ...body);
      else t = el('button', Object.assign(attrs, { type: 'button' }), ...body);
      t.addEventListener('showtip', () => tipAt(t, lines));
      t.addEventListener('mouseenter', () => tipAt(t, lines));
      t.addEventListener('mouseleave', () => { if (D.activeElement !== t) hideTip(); });
      list.append(el('li', {}, t));
    }
    roving(list, 'fleet');
    main.append(list);
    if (!model.clusters.length) main.append(el('p', { text: 'No cluster has reported yet.' }));
    const sub = model.source === 'live'
      ? 'Live fleet: updated ' + fmtTime(model.now) + '. Choose a cluster to open its view.'
      : 'Fleet snapshot at ' + fmtTime(model.now);
    return [header(model, sub), main];
  }

  // --- rendering and updates --------------------------------------------------------------
  const root = D.getElementById('app');
  const status = el('p', { id: 'conn', class: 'sr-only', role: 'status' });

  function render(model) {
    if (!model || (model.kind !== 'cluster' && model.kind !== 'fleet')) return;
    const y = window.scrollY;
    const had = D.activeElement;
    const restore = ui.focus ? { pool: ui.focus.pool } : ui.tileFocus ? Object.assign({}, ui.tileFocus) : null;
    ui.model = model;
    const parts = model.kind === 'fleet' ? fleetPage(model) : clusterPage(model);
    root.replaceChildren(...parts, el('footer', {}, el('p', { text: 'kubectl update-status ' + (model.source === 'live' ? '--web' : '-o html') + ' · read-only · ' + (model.kind === 'fleet' ? 'fleet view' : 'cluster view') })));
    D.title = 'Update status: ' + vis(model.title);
    ui.renders += 1;
    D.body.dataset.renders = String(ui.renders);
    if (restore && had && had !== D.body) {
      let target = null;
      if (restore.pool != null) target = Array.from(D.querySelectorAll('canvas.grid')).find((c) => c.dataset.pool === restore.pool);
      else target = Array.from(D.querySelectorAll('.tile')).find((t) => t.dataset.name === restore.name);
      if (target) { target.focus({ preventScroll: true }); }
    }
    window.scrollTo(0, y);
  }

  function first(model) {
    render(model);
    if (!performance.getEntriesByName('update-status:rendered').length) {
      performance.mark('update-status:rendered');
      requestAnimationFrame(() => setTimeout(() => performance.mark('update-status:interactive'), 0));
    }
  }

  D.body.append(tip, announce, status);
  window.addEventListener('resize', () => { if (ui.model) render(ui.model); });
  window.addEventListener('scroll', hideTip, { passive: true });

  const embedded = D.getElementById('update-status-data');
  if (embedded) {
    try { first(JSON.parse(embedded.textContent)); } catch (e) { root.textContent = 'Cannot read the embedded data: ' + e; }
    return;
  }
  // Live. The URL kubectl update-status printed carries the session's token (?token=...); the
  // server answered it with a cookie, which the page's requests carry from now on: the token
  // leaves the address bar and the history entry (cli/src/web/guard.rs).
  const query = new URLSearchParams(location.search);
  if (query.has('token')) {
    query.delete('token');
    const rest = query.toString();
    history.replaceState(history.state, '', location.pathname + (rest ? '?' + rest : '') + location.hash);
  }
  // Everything is under the session's path, /s/<random> (the cookie is scoped to it).
  // /events (cluster or fleet), /c/<namespace>[/<hosted cluster>] -> /events/c/...
  const path = location.pathname.slice(base.length).replace(/\/+$/, '');
  const events = base + (path.startsWith('/c/') ? '/events' + path : '/events');
  const es = new EventSource(events);
  let seen = false;
  es.addEventListener('view', (e) => {
    let model;
    try { model = JSON.parse(e.data); } catch (err) { status.textContent = 'A malformed update was ignored.'; return; }
    if (!seen) { seen = true; first(model); } else render(model);
    status.textContent = '';
  });
  es.addEventListener('error', () => { status.textContent = 'Connection to kubectl update-status lost; reconnecting.'; });
})();
