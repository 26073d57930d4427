// The tabula web board: draws any game from what its view/3 gives, takes
// moves by clicks (move_clicks/3) or typed notation, and follows the
// session's changes through Server-Sent Events. No build step, no library.
'use strict';

const SVG = 'http://www.w3.org/2000/svg';
const params = new URLSearchParams(location.search);
const session = params.has('session') ? Number(params.get('session')) : null;
const seat = params.get('seat') || 'spectator';
const token = params.get('token');
// The seats' tokens this tab knows: its own, and all of them in the tab
// that created the session (to hand out the links).
const tokens = JSON.parse(sessionStorage.getItem(`tabula-tokens-${session}`) || '{}');
if (token) tokens[seat] = token;
let flipped = false;
let view = null;      // the last `view` reply
let path = [];        // the clicks made so far towards a move
let hinted = null;    // clicks of a suggested move
let missed = null;    // the last click, when it began no move
let clicked = 0;      // clicks so far (an explanation of older ones is not shown)
let thinking = null;  // the seat the computer is thinking for
// How long the page took to show a move (ms), for scripts and tests: from
// a click (or typed move) to the new position drawn, and from the news of
// another player's move (the computer's) to it drawn.
const timings = { click: [], news: [] };
window.tabulaTimings = timings;
let since = null;     // [kind, when] of the move waiting to be shown

const $ = (id) => document.getElementById(id);

async function api(req) {
  const r = await fetch('/api', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(req),
  });
  const reply = await r.json();
  if (!reply.ok) {
    const e = new Error(reply.error.message);
    e.why = reply.error.why;
    throw e;
  }
  return reply;
}

function say(text) { $('message').textContent = text || ''; }

// Why a move is refused, from the rules: a box under the site clicked
// last (or under the board), until the next click.
function explainBox(text, site) {
  const box = $('why');
  box.textContent = text;
  box.hidden = false;
  const area = $('board-area').getBoundingClientRect();
  const at = site && document.querySelector(`[data-site="${CSS.escape(site)}"]`);
  const r = at ? at.getBoundingClientRect() : null;
  box.style.left = `${r ? Math.max(0, Math.min(r.left - area.left, area.width - box.offsetWidth)) : 0}px`;
  box.style.top = `${r ? r.bottom - area.top + 4 : area.height}px`;
  box.onclick = hideWhy;
}

function hideWhy() { $('why').hidden = true; }

// Asks the server why the clicks make no legal move, and says so (that no
// move of the game is clicked so, only if `none`), unless the person has
// clicked again since.
async function explainClicks(clicks, none) {
  const n = clicked;
  try {
    const r = await api({ op: 'explain', session, token, clicks });
    if (n !== clicked) return;
    const last = clicks[clicks.length - 1];
    if (r.verdict === 'refused') explainBox(`${clicks.join(' → ')} is no legal move here. The rules say:\n${r.why}`, last);
    else if (r.verdict === 'no_such_move' && none) explainBox(`No move of the game is made by clicking ${clicks.join(', ')}.`, last);
  } catch (e) { say(e.message); }
}

function el(name, attrs, parent) {
  const e = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (parent) parent.appendChild(e);
  return e;
}

function html(name, attrs, text, parent) {
  const e = document.createElement(name);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  if (parent) parent.appendChild(e);
  return e;
}

// ---- a new game ----------------------------------------------------------

async function newGame() {
  $('new-game').hidden = false;
  let games = [];
  try {
    games = (await api({ op: 'games' })).games.filter((g) => !g.error);
  } catch (e) { say(e.message); return; }
  const choice = $('game-choice');
  for (const g of games) html('option', { value: g.name }, g.title, choice);
  const fill = () => {
    const g = games.find((x) => x.name === choice.value);
    $('game-help').textContent = g.description || '';
    $('analyze-link').href = '/analyze/' + encodeURIComponent(g.name);
    const opts = $('option-fields');
    opts.replaceChildren(html('legend', {}, 'Options'));
    for (const o of g.options) {
      const label = html('label', { title: o.help }, o.name + ' ', opts);
      let input;
      if (o.allowed.oneof) {
        input = html('select', { name: o.name }, undefined, label);
        for (const v of o.allowed.oneof) html('option', { value: v }, v, input);
      } else if (o.allowed.between) {
        input = html('input', { name: o.name, type: 'number', min: o.allowed.between[0], max: o.allowed.between[1] }, undefined, label);
      } else {
        input = html('input', { name: o.name }, undefined, label);
      }
      input.value = o.default;
      html('small', {}, ' ' + o.help, label);
    }
    const seats = $('seat-fields');
    seats.replaceChildren(html('legend', {}, 'Seats'));
    g.players.forEach((p, i) => {
      const label = html('label', {}, p + ' ', seats);
      const input = html('input', { name: p, list: 'controllers' }, undefined, label);
      input.value = i === 0 ? 'human' : 'mcts:1000';
    });
  };
  choice.onchange = fill;
  fill();
  $('new-form').onsubmit = async (ev) => {
    ev.preventDefault();
    const g = games.find((x) => x.name === choice.value);
    const options = {};
    for (const input of $('option-fields').querySelectorAll('[name]')) {
      const o = g.options.find((x) => x.name === input.name);
      if (input.value !== o.default) options[input.name] = input.value;
    }
    const seats = {};
    for (const input of $('seat-fields').querySelectorAll('[name]')) seats[input.name] = input.value.trim() || 'human';
    try {
      const seed = Math.floor(Math.random() * 1e9);
      const r = await api({ op: 'new', game: g.name, options, seats, seed, auto: true });
      sessionStorage.setItem(`tabula-tokens-${r.session}`, JSON.stringify(r.tokens));
      const human = r.players.find((p) => (r.seats[p] || 'human') === 'human');
      location.search = human ? `?session=${r.session}&seat=${human}&token=${r.tokens[human]}` : `?session=${r.session}`;
    } catch (e) { say(e.message); }
  };
}

// ---- playing -------------------------------------------------------------

// Replies may arrive out of order; the session answers requests in
// order, so the reply to the latest request is the latest position.
let asked = 0;
let shown = 0;

async function load() {
  const n = ++asked;
  let reply;
  try {
    reply = await api({ op: 'view', session, viewer: seat, token });
  } catch (e) {
    say(e.message);
    return;
  }
  show(reply, n);
}

// Draws a `view` reply, unless a later one is already drawn.
function show(reply, n) {
  if (n < shown) return;
  shown = n;
  const moved = view && reply.ply !== view.ply;
  view = reply;
  // Still the computer's turn: it is still thinking.
  if (!thinking || reply.to_move !== thinking || reply.game_over) thinking = null;
  path = [];
  render();
  // For tests and scripts: the last reply, and the ply on the page.
  window.tabulaView = view;
  document.body.dataset.ply = view.ply;
  if (moved && since) {
    timings[since[0]].push(performance.now() - since[1]);
    since = null;
  }
}

function myTurn() {
  return view && !view.game_over && view.to_move === seat && (view.seats[seat] || 'human') === 'human';
}

function resultText(o) {
  if (!o) return '';
  return o.result === 'draw' ? 'Game over: a draw' : `Game over: ${o.player} wins`;
}

function render() {
  $('title').textContent = view.title;
  document.title = `${view.title} — tabula`;
  const turn = $('turn');
  if (view.game_over) turn.textContent = resultText(view.game_over);
  else if (thinking) turn.textContent = `${thinking} is thinking…`;
  else turn.textContent = `${view.to_move} to move` + (myTurn() ? ' (you)' : '');
  turn.className = thinking ? 'thinking' : '';
  $('scores').textContent = Object.entries(view.scores).map(([p, s]) => `${p}: ${s}`).join('   ');
  const hist = $('history');
  hist.replaceChildren();
  view.history.forEach((m, i) => html('li', i === view.history.length - 1 ? { class: 'last' } : {}, m, hist));
  hist.scrollTop = hist.scrollHeight;
  if (view.board) drawBoard(view.board);
  $('board').hidden = !view.board;
  $('text-board').hidden = !!view.board;
  if (!view.board) $('text-board').textContent = view.text || '';
  drawHands();
  drawLegal();
  $('move-form').hidden = !myTurn();
  $('undo').disabled = view.history.length === 0 || seat === 'spectator';
  $('hint').disabled = !myTurn();
  const links = $('links');
  links.replaceChildren();
  // A seat's link carries its token: only the creator's tab has them all.
  for (const p of [...view.players, 'spectator']) {
    const li = html('li', {}, undefined, links);
    const who = p === 'spectator' ? 'spectator' : `${p} (${view.seats[p] || 'human'})`;
    if (p === 'spectator') html('a', { href: `?session=${session}` }, who, li);
    else if (tokens[p]) html('a', { href: `?session=${session}&seat=${p}&token=${tokens[p]}` }, who + (p === seat ? ', this page' : ''), li);
    else li.textContent = who;
  }
}

// The moves still possible after the clicks in `path`.
function candidates() {
  return (view.moves || []).filter((m) => m.clicks && m.clicks.length > path.length && path.every((c, i) => m.clicks[i] === c));
}

function targets() {
  if (!myTurn()) return new Set();
  return new Set(candidates().map((m) => m.clicks[path.length]));
}

const NAMED = { dark: 'var(--dark)', light: 'var(--light)' };
const PALETTE = ['#f4f4f4', '#2b2b2b', '#c0392b', '#2e6fd8'];
const DARK_TEXT_ON = new Set(['white', 'ivory', 'yellow', '#f4f4f4', 'var(--light)']);

function colour(name) {
  if (NAMED[name]) return NAMED[name];
  const i = view.players.indexOf(name);
  if (CSS.supports('color', name)) return name;
  return i >= 0 ? PALETTE[i % PALETTE.length] : '#888';
}

function inkOn(fill) { return DARK_TEXT_ON.has(fill) ? '#222' : '#fff'; }

// A pale version of a colour, for areas behind the pieces.
function tint(c) { return `color-mix(in srgb, ${c} 35%, white)`; }

// The convex hull of points (monotone chain), in order around.
function hull(points) {
  const p = [...points].sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  if (p.length < 3) return p;
  const cross = (o, a, b) => (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
  const half = (pts) => {
    const out = [];
    for (const q of pts) {
      while (out.length >= 2 && cross(out[out.length - 2], out[out.length - 1], q) <= 0) out.pop();
      out.push(q);
    }
    out.pop();
    return out;
  };
  return half(p).concat(half([...p].reverse()));
}

function drawBoard(b) {
  const svg = $('board');
  svg.replaceChildren();
  const xs = b.sites.map((s) => s.x).concat(b.labels.filter((l) => l.point).map((l) => l.point[0]));
  const ys = b.sites.map((s) => s.y).concat(b.labels.filter((l) => l.point).map((l) => l.point[1]));
  const [x0, x1, y0, y1] = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
  const fx = (x) => (flipped ? x0 + x1 - x : x);
  const fy = (y) => (flipped ? y0 + y1 - y : y);
  svg.setAttribute('viewBox', `${x0 - 0.6} ${y0 - 0.6} ${x1 - x0 + 1.2} ${y1 - y0 + 1.2}`);
  const at = new Map(b.sites.map((s) => [s.id, s]));
  // A region of squares tints each square (a chequered board); one of
  // circles, hexes or points tints the area they span (Campo Bello's
  // triangles, a Go board).
  const tinted = new Map();
  for (const r of b.regions) {
    const sites = r.sites.map((id) => at.get(id)).filter(Boolean);
    if (sites.every((s) => s.shape === 'square')) {
      for (const s of sites) tinted.set(s.id, r.colour);
      continue;
    }
    const pts = hull(sites.map((s) => [fx(s.x), fy(s.y)]));
    el('polygon', {
      class: 'region', points: pts.map((p) => p.join(',')).join(' '),
      style: `fill: ${tint(colour(r.colour))}; stroke: ${tint(colour(r.colour))}`,
    }, svg);
  }
  for (const [a, c] of b.lines) {
    const p = at.get(a), q = at.get(c);
    if (p && q) el('line', { class: 'line', x1: fx(p.x), y1: fy(p.y), x2: fx(q.x), y2: fy(q.y) }, svg);
  }
  const open = targets();
  const last = new Set(view.last_clicks || []);
  const hint = new Set(hinted || []);
  for (const s of b.sites) {
    const cls = ['site', s.shape];
    if (open.has(s.id)) cls.push('target');
    if (path.includes(s.id) || hint.has(s.id)) cls.push('chosen');
    if (last.has(s.id)) cls.push('last');
    const attrs = { class: cls.join(' '), 'data-site': s.id, 'aria-label': s.id, role: 'button' };
    let shape;
    if (s.shape === 'circle') shape = el('circle', { ...attrs, cx: fx(s.x), cy: fy(s.y), r: 0.42 }, svg);
    else if (s.shape === 'point') shape = el('circle', { ...attrs, cx: fx(s.x), cy: fy(s.y), r: 0.46 }, svg);
    else if (s.shape === 'hex') {
      const pts = [...Array(6).keys()].map((k) => {
        const a = Math.PI / 3 * k + Math.PI / 6;
        return `${fx(s.x) + 0.5 * Math.cos(a)},${fy(s.y) + 0.5 * Math.sin(a)}`;
      });
      shape = el('polygon', { ...attrs, points: pts.join(' ') }, svg);
    } else shape = el('rect', { ...attrs, x: fx(s.x) - 0.5, y: fy(s.y) - 0.5, width: 1, height: 1 }, svg);
    const t = tinted.get(s.id);
    if (t && !cls.includes('chosen')) shape.style.fill = colour(t);
    shape.addEventListener('click', () => click(s.id));
  }
  const inTile = new Set();
  for (const [a, c] of b.tiles) {
    const p = at.get(a), q = at.get(c);
    if (!p || !q) continue;
    inTile.add(a); inTile.add(c);
    const [xa, xb] = [Math.min(fx(p.x), fx(q.x)), Math.max(fx(p.x), fx(q.x))];
    const [ya, yb] = [Math.min(fy(p.y), fy(q.y)), Math.max(fy(p.y), fy(q.y))];
    const piece = b.pieces.find((x) => x.at === a);
    el('rect', {
      class: 'domino', x: xa - 0.45, y: ya - 0.45, width: xb - xa + 0.9, height: yb - ya + 0.9, rx: 0.12,
      style: `fill: ${piece ? colour(piece.colour) : 'none'}`,
    }, svg);
    el('line', { class: 'domino', x1: (fx(p.x) + fx(q.x)) / 2 - (ya === yb ? 0 : 0.35), y1: (fy(p.y) + fy(q.y)) / 2 - (ya === yb ? 0.35 : 0),
      x2: (fx(p.x) + fx(q.x)) / 2 + (ya === yb ? 0 : 0.35), y2: (fy(p.y) + fy(q.y)) / 2 + (ya === yb ? 0.35 : 0) }, svg);
  }
  for (const p of b.pieces) {
    const s = at.get(p.at);
    if (!s) continue;
    const fill = colour(p.colour);
    if (p.style === 'glyph') {
      const t = el('text', { class: 'piece-glyph', x: fx(s.x), y: fy(s.y), style: `fill: ${fill}; stroke: ${inkOn(fill)}` }, svg);
      t.textContent = p.label;
      continue;
    }
    const disc = p.style ? p.style === 'disc' : p.label === '';
    // A stone on a point fills the space between the lines.
    const r = s.shape === 'point' ? 0.47 : 0.36;
    if (disc) el('circle', { class: 'piece', cx: fx(s.x), cy: fy(s.y), r, style: `fill: ${fill}` }, svg);
    else if (!inTile.has(p.at)) {
      el('rect', { class: 'piece', x: fx(s.x) - 0.42, y: fy(s.y) - 0.42, width: 0.84, height: 0.84, rx: 0.12, style: `fill: ${fill}` }, svg);
    }
    if (p.label !== '') {
      const t = el('text', { class: 'piece-label', x: fx(s.x), y: fy(s.y), style: `fill: ${inkOn(fill)}` }, svg);
      t.textContent = p.label;
    }
  }
  // A stone on a point covers the point's outline: the last move is
  // marked on top of it.
  for (const s of b.sites) {
    if (s.shape === 'point' && last.has(s.id)) el('circle', { class: 'last-mark', cx: fx(s.x), cy: fy(s.y), r: 0.2 }, svg);
  }
  for (const [id, h] of b.stacks) {
    const s = at.get(id);
    if (!s) continue;
    const t = el('text', { class: 'stack', x: fx(s.x) + 0.27, y: fy(s.y) - 0.27 }, svg);
    t.textContent = `▲${h}`;
  }
  for (const l of b.labels) {
    const s = l.site ? at.get(l.site) : null;
    const [x, y] = s ? [s.x, s.y] : l.point;
    const t = el('text', { class: 'label', x: fx(x), y: fy(y) }, svg);
    t.textContent = l.text;
  }
  svg.setAttribute('aria-label', b.texts.join('; ') || 'board');
}

function drawHands() {
  const box = $('hands');
  box.replaceChildren();
  if (!view.board) return;
  const open = targets();
  for (const h of view.board.hands) {
    const div = html('div', { class: 'hand' }, undefined, box);
    html('strong', {}, `${h.player}: `, div);
    for (const item of h.items) {
      if (item.kind === 'hidden') {
        html('span', {}, `${item.count} hidden `, div);
        continue;
      }
      const cls = ['tile'];
      if (open.has(item.at)) cls.push('target');
      if (path.includes(item.at)) cls.push('chosen');
      const b = html('button', { type: 'button', class: cls.join(' '), 'data-hand': item.at, 'aria-label': `${item.label} (${item.at})` }, item.label, div);
      b.onclick = () => click(item.at);
    }
  }
  for (const t of view.board.texts) html('p', {}, t, box);
}

// Moves without clicks (a pass), every move when nothing is drawn, and
// the choices when clicks leave more than one move.
function drawLegal() {
  const box = $('legal');
  box.replaceChildren();
  if (!myTurn()) return;
  const list = (view.moves || []).filter((m) => !view.board || !m.clicks || m.clicks.length === 0);
  for (const m of list) html('button', { type: 'button' }, m.text, box).onclick = () => play(m.text);
}

function offer(moves, stopHere) {
  const box = $('choices');
  box.replaceChildren();
  if (!moves.length) return;
  html('span', {}, stopHere ? 'Stop here, or click on: ' : 'Which move? ', box);
  for (const m of moves) html('button', { type: 'button' }, m.text, box).onclick = () => play(m.text);
}

function click(id) {
  if (!myTurn()) return;
  hinted = null;
  hideWhy();
  clicked++;
  // After a click that began no move (a piece that cannot move), the
  // two clicks together may be the move meant: the rules say why not.
  if (!path.length && missed !== null && missed !== id) explainClicks([missed, id], false);
  missed = null;
  const next = [...path, id];
  const fits = (view.moves || []).filter((m) => m.clicks && m.clicks.length >= next.length && next.every((c, i) => m.clicks[i] === c));
  if (!fits.length) {
    // Not a continuation: the rules say why, and play starts again from
    // this click, or clears.
    path = [];
    offer([]);
    if (next.length > 1) {
      explainClicks(next, true);
      clicked--;
      return click(id);
    }
    missed = id;
    render();
    return;
  }
  path = next;
  const done = fits.filter((m) => m.clicks.length === next.length);
  const longer = fits.filter((m) => m.clicks.length > next.length);
  if (done.length === 1 && !longer.length) return play(done[0].text);
  offer(done, longer.length > 0);
  render();
}

async function play(text) {
  since = ['click', performance.now()];
  path = [];
  offer([]);
  say('');
  // The reply brings the new position (before any computer's answer).
  const n = ++asked;
  try {
    const r = await api({ op: 'play', session, move: text, token, viewer: seat });
    show(r.view, n);
  } catch (e) {
    say(e.message);
    if (e.why) explainBox(e.why, null);
    await load();
  }
}

// The session's events. The browser reconnects a stream that drops (the
// server restarted: its games come back from its database); the page then
// loads the position anew, since moves may have been made meanwhile. A
// stream the server refused is tried again every few seconds.
let lost = false;
function follow() {
  const source = new EventSource(`/api/events?session=${session}`);
  source.onopen = () => {
    if (lost) { lost = false; say(''); load(); }
  };
  source.onerror = () => {
    if (!lost) { lost = true; say('connection to the server lost; reconnecting…'); }
    if (source.readyState === EventSource.CLOSED) {
      setTimeout(() => { follow(); }, 2000);
    }
  };
  source.onmessage = (e) => {
    const ev = JSON.parse(e.data);
    if (ev.event === 'thinking') {
      thinking = ev.player;
      if (view) render();
    } else if (ev.event === 'move') {
      if (!since || since[0] !== 'click') since = ['news', performance.now()];
      load();
    }
    else if (ev.event === 'error') say(ev.message);
  };
}

function start() {
  if (session === null) { newGame(); return; }
  $('play').hidden = false;
  $('move-form').onsubmit = (ev) => {
    ev.preventDefault();
    const text = $('move-box').value.trim();
    $('move-box').value = '';
    if (text) play(text);
  };
  $('undo').onclick = async () => {
    try { await api({ op: 'undo', session, token }); } catch (e) { say(e.message); }
    load();
  };
  $('flip').onclick = () => { flipped = !flipped; render(); };
  $('hint').onclick = async () => {
    say('thinking of a hint…');
    try {
      const h = await api({ op: 'hint', session, token });
      hinted = h.clicks;
      say(`hint: ${h.move}`);
      render();
    } catch (e) { say(e.message); }
  };
  follow();
  load();
}

start();
