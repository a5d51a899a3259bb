// trowel view: the page. It asks the server (cli/view/) for the tree of the
// files given and, for the entry selected, its properties, bytes and a
// preview. Every conversion is the server's (`trowel convert`'s bytes); the
// page only draws. Tests read the preview element's data-trowel-* attributes.
'use strict';

const ROW = 22;           // px per tree row (the list is virtualised)
const HEX_PAGE = 4096;    // bytes per hex page
const LIST_MAX = 1000;    // archive entries listed in a preview

const $ = (id) => document.getElementById(id);
const el = (tag, cls, text) => {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
};

async function api(call, params) {
  const q = new URLSearchParams(params || {});
  const r = await fetch('/api/' + call + '?' + q.toString(), { credentials: 'same-origin' });
  const type = r.headers.get('Content-Type') || '';
  if (!r.ok) {
    let msg = r.status + ' ' + r.statusText;
    if (type.startsWith('application/json')) msg = (await r.json()).error || msg;
    throw new Error(msg);
  }
  return r;
}
const apiJson = async (call, params) => (await api(call, params)).json();
const url = (call, params) => '/api/' + call + '?' + new URLSearchParams(params).toString();

function humanSize(n) {
  if (n < 1024) return n + ' B';
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let u = -1;
  do { n /= 1024; u++; } while (n >= 1024 && u < units.length - 1);
  return n.toFixed(n < 10 ? 1 : 0) + ' ' + units[u];
}

// ------------------------------------------------------------------ tree

const tree = {
  nodes: new Map(),    // id -> summary from the server
  kids: new Map(),     // id -> [ids], once expanded
  open: new Set(),     // expanded ids
  roots: [],
  rows: [],            // [{id, depth}] as shown
  selected: null,
  filter: '',
};

// Entries come without their path (the parent's, '/', the name) and with
// `expandable` only when true, so a 30,000-entry list stays small.
function addNodes(list, parent) {
  const base = parent === undefined ? null : tree.nodes.get(parent).path + '/';
  for (const n of list) {
    if (base !== null) n.path = base + n.name;
    n.expandable = !!n.expandable;
    tree.nodes.set(n.id, n);
  }
  return list.map((n) => n.id);
}

async function loadKids(id) {
  if (tree.kids.has(id)) return tree.kids.get(id);
  const res = await apiJson('children', { n: id });
  const ids = addNodes(res.nodes, id);
  tree.kids.set(id, ids);
  return ids;
}

function flatten() {
  const rows = [];
  const f = tree.filter.toLowerCase();
  const walk = (ids, depth) => {
    for (const id of ids) {
      const n = tree.nodes.get(id);
      if (!f || n.path.toLowerCase().includes(f)) rows.push({ id, depth: f ? 0 : depth });
      if ((tree.open.has(id) || f) && tree.kids.has(id)) walk(tree.kids.get(id), depth + 1);
    }
  };
  walk(tree.roots, 0);
  tree.rows = rows;
  $('rows').style.height = rows.length * ROW + 'px';
  $('status').textContent = rows.length + (f ? ' matching' : ' shown') + ' of ' + tree.nodes.size + ' loaded';
  drawRows();
}

function drawRows() {
  const box = $('tree');
  const first = Math.max(0, Math.floor(box.scrollTop / ROW) - 5);
  const last = Math.min(tree.rows.length, first + Math.ceil(box.clientHeight / ROW) + 10);
  const holder = $('rows');
  holder.replaceChildren();
  for (let i = first; i < last; i++) {
    const { id, depth } = tree.rows[i];
    const n = tree.nodes.get(id);
    const row = el('div', 'row');
    row.style.top = i * ROW + 'px';
    row.style.paddingLeft = 4 + depth * 14 + 'px';
    row.dataset.id = id;
    row.title = n.path + (n.error ? '\n' + n.error : '');
    if (id === tree.selected) row.classList.add('selected');
    if (n.damaged || n.error) row.classList.add('damaged');
    const tw = el('span', 'twisty', n.expandable ? (tree.open.has(id) ? '▾' : '▸') : '');
    tw.dataset.twisty = '1';
    row.append(tw, el('span', 'name', n.name), el('span', 'size', humanSize(n.size)));
    holder.append(row);
  }
}

async function toggle(id) {
  if (tree.open.has(id)) {
    tree.open.delete(id);
  } else {
    try {
      await loadKids(id);
      tree.open.add(id);
    } catch (e) {
      const n = tree.nodes.get(id);
      n.error = e.message;
      n.expandable = false;
    }
  }
  flatten();
}

function scrollToRow(id) {
  const i = tree.rows.findIndex((r) => r.id === id);
  if (i < 0) return;
  const box = $('tree');
  if (i * ROW < box.scrollTop || (i + 1) * ROW > box.scrollTop + box.clientHeight)
    box.scrollTop = Math.max(0, i * ROW - box.clientHeight / 3);
  drawRows();
}

// ------------------------------------------------------------- selection

let generation = 0; // a newer selection makes older drawing stop

function preview() { return $('preview'); }

function setReady(extra) {
  const p = preview();
  for (const [k, v] of Object.entries(extra || {})) p.dataset[k] = String(v);
  p.dataset.trowelReady = '1';
}

function resetPreview(kind) {
  const p = preview();
  const fresh = p.cloneNode(false);
  for (const k of Object.keys(fresh.dataset)) if (k !== 'trowelEntry') delete fresh.dataset[k];
  fresh.dataset.trowelPreview = kind;
  fresh.dataset.trowelReady = '0';
  p.replaceWith(fresh);
  if (three.stop) three.stop();
  return fresh;
}

async function select(id) {
  const gen = ++generation;
  tree.selected = id;
  drawRows();
  const n = tree.nodes.get(id);
  resetPreview('').dataset.trowelEntry = n.path;
  $('title').textContent = n.path;
  location.hash = 'entry=' + encodeURIComponent(n.path).replace(/%2F/g, '/');
  lastHash = location.hash;
  $('downloads').replaceChildren();
  $('props').replaceChildren();
  $('problems').hidden = true;
  hex.id = id;
  hex.off = 0;
  hex.size = n.size;
  if ($('hex-box').open) drawHex();
  let info, pv;
  try {
    [info, pv] = await Promise.all([apiJson('info', { n: id }), apiJson('preview', { n: id })]);
  } catch (e) {
    const p = resetPreview('text');
    p.append(el('div', 'error', e.message));
    setReady({ trowelError: e.message });
    return;
  }
  if (gen !== generation) return;
  hex.size = pv.size;
  drawProps(info);
  drawDownloads(id, info, pv);
  await drawPreview(id, pv, info, gen);
}

function drawProps(info) {
  const t = $('props');
  const add = (k, v) => {
    const tr = el('tr');
    tr.append(el('th', null, k), el('td', null, typeof v === 'object' ? JSON.stringify(v) : String(v)));
    t.append(tr);
  };
  if (info.entry) for (const [k, v] of Object.entries(info.entry)) add('entry ' + k, v);
  if (info.info) for (const [k, v] of Object.entries(info.info)) add(k, v);
  if (info.error) add('error', info.error);
  const box = $('problems');
  if (info.problem_count) {
    box.replaceChildren(el('strong', null, info.problem_count + ' problem' +
      (info.problem_count === 1 ? '' : 's') + ' (damaged: what can be read is shown)'));
    for (const p of info.problems || []) {
      const where = p.offset !== undefined ? ' (offset 0x' + p.offset.toString(16) + ')' : '';
      box.append(el('div', null, (p.entry ? p.entry + ': ' : '') + p.message + where));
    }
    box.hidden = false;
  }
}

function link(text, href, download) {
  const a = el('a', null, text);
  a.href = href;
  if (download) a.setAttribute('download', '');
  return a;
}

function drawDownloads(id, info, pv) {
  const d = $('downloads');
  d.append(link(info.entry ? 'entry (as extract writes it)' : 'file', url('raw', { n: id, dl: 1 }), true));
  for (const t of pv.targets || []) {
    if ((pv.folder_targets || []).includes(t)) {
      const a = link(t + ' (folder)…', '#', false);
      a.addEventListener('click', async (ev) => {
        ev.preventDefault();
        const res = await apiJson('convert', { n: id, to: t });
        for (const f of res.files) d.append(link(f.name, url('convert', { n: id, to: t, file: f.name, dl: 1 }), true));
        a.remove();
      });
      d.append(a);
    } else {
      d.append(link(t, url('convert', { n: id, to: t, dl: 1 }), true));
    }
  }
}

// ------------------------------------------------------------------- hex

const hex = { id: null, off: 0, size: 0 };

async function drawHex() {
  if (hex.id === null) return;
  const id = hex.id, off = hex.off;
  $('hex-where').textContent = '0x' + off.toString(16) + ' of ' + hex.size + ' bytes';
  let bytes;
  try {
    bytes = new Uint8Array(await (await api('raw', { n: id, off, len: HEX_PAGE })).arrayBuffer());
  } catch (e) {
    $('hex').textContent = e.message;
    return;
  }
  if (id !== hex.id || off !== hex.off) return;
  $('hex').textContent = hexDump(bytes, off);
}

function hexDump(bytes, base) {
  const lines = [];
  for (let i = 0; i < bytes.length; i += 16) {
    let h = '', a = '';
    for (let j = 0; j < 16; j++) {
      if (i + j < bytes.length) {
        const b = bytes[i + j];
        h += b.toString(16).padStart(2, '0') + ' ';
        a += b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : '.';
      } else {
        h += '   ';
      }
      if (j === 7) h += ' ';
    }
    lines.push((base + i).toString(16).padStart(8, '0') + '  ' + h + ' ' + a);
  }
  return lines.join('\n');
}

// --------------------------------------------------------------- previews

async function drawPreview(id, pv, info, gen) {
  const kind = pv.kind === 'list' ? 'text' : pv.kind === 'error' ? 'text' : pv.kind;
  const p = resetPreview(kind);
  try {
    if (pv.kind === 'error') throw new Error(pv.error);
    const draw = { image: drawImage, animation: drawAnimation, '3d': draw3d, audio: drawAudio,
                   timeline: drawTimeline, list: drawList, text: drawText, hex: drawHexPreview }[pv.kind];
    await draw(p, id, pv, info, gen);
  } catch (e) {
    if (gen !== generation) return;
    p.append(el('div', 'error', e.message));
    setReady({ trowelError: e.message });
  }
}

// PNG bytes -> the palette (PLTE) as [r,g,b] triples, or null.
function pngPalette(buf) {
  const d = new DataView(buf);
  let o = 8;
  while (o + 8 <= d.byteLength) {
    const len = d.getUint32(o), type = String.fromCharCode(d.getUint8(o + 4), d.getUint8(o + 5), d.getUint8(o + 6), d.getUint8(o + 7));
    if (type === 'PLTE') {
      const pal = [];
      for (let i = 0; i + 2 < len; i += 3) pal.push([d.getUint8(o + 8 + i), d.getUint8(o + 9 + i), d.getUint8(o + 10 + i)]);
      return pal;
    }
    if (type === 'IDAT') return null;
    o += 12 + len;
  }
  return null;
}

function nonBlank(img) {
  const c = document.createElement('canvas');
  c.width = img.naturalWidth || img.width;
  c.height = img.naturalHeight || img.height;
  const g = c.getContext('2d');
  g.drawImage(img, 0, 0);
  const d = g.getImageData(0, 0, c.width, c.height).data;
  let count = 0;
  for (let i = 0; i < d.length; i += 4) if (d[i + 3] && (d[i] || d[i + 1] || d[i + 2])) count++;
  return count;
}

function zoomBar(parent, onZoom, initial) {
  const bar = el('div', 'toolbar');
  bar.append(el('span', null, 'zoom'));
  for (const z of [1, 2, 3, 4, 6, 8]) {
    const b = el('button', null, z + '×');
    b.type = 'button';
    b.addEventListener('click', () => onZoom(z));
    bar.append(b);
  }
  parent.append(bar);
  onZoom(initial);
  return bar;
}

function autoZoom(w, h) {
  return Math.max(1, Math.min(8, Math.floor(480 / Math.max(w, h, 1))));
}

async function loadImage(src) {
  const r = await api('convert', src);
  const buf = await r.arrayBuffer();
  const blob = new Blob([buf], { type: 'image/png' });
  const img = new Image();
  img.src = URL.createObjectURL(blob);
  await img.decode();
  return { img, buf };
}

async function loadNative(id, type) {
  const buf = await (await api('raw', { n: id, len: 1 << 30 })).arrayBuffer();
  const img = new Image();
  img.src = URL.createObjectURL(new Blob([buf], { type }));
  await img.decode();
  return { img, buf };
}

async function drawImage(p, id, pv, info, gen) {
  let sources;
  if (pv.native) {
    sources = [{ native: pv.native, label: '' }];
  } else if ((pv.folder_targets || []).includes('png')) {
    const res = await apiJson('convert', { n: id, to: 'png' });
    sources = res.files.filter((f) => f.name.endsWith('.png')).map((f) => ({ n: id, to: 'png', file: f.name, label: f.name }));
  } else {
    sources = [{ n: id, to: 'png', label: '' }];
  }
  const loaded = [];
  for (const s of sources.slice(0, 64)) {
    const { label, native, ...q } = s;
    loaded.push({ label, ...(native ? await loadNative(id, native) : await loadImage(q)) });
    if (gen !== generation) return;
  }
  const box = el('div', 'images');
  const first = loaded[0];
  let zoom = 1;
  zoomBar(p, (z) => {
    zoom = z;
    for (const l of loaded) {
      l.img.style.width = l.img.naturalWidth * z + 'px';
      l.img.style.height = l.img.naturalHeight * z + 'px';
    }
  }, first ? autoZoom(first.img.naturalWidth, first.img.naturalHeight) : 1);
  for (const l of loaded) {
    const fig = el('figure');
    const back = el('div', 'checker');
    l.img.className = 'pixelated';
    back.append(l.img);
    fig.append(back);
    if (l.label) fig.append(el('figcaption', null, l.label + ' ' + l.img.naturalWidth + '×' + l.img.naturalHeight));
    box.append(fig);
  }
  p.append(box);
  const pal = first && pngPalette(first.buf);
  if (pal) {
    const sw = el('div', 'swatches');
    pal.forEach((c, i) => {
      const s = el('div', 'swatch');
      s.style.background = 'rgb(' + c.join(',') + ')';
      s.title = i + ': #' + c.map((x) => x.toString(16).padStart(2, '0')).join('');
      sw.append(s);
    });
    p.append(el('div', null, 'palette (' + pal.length + ' colours)'), sw);
  }
  setReady({
    trowelWidth: first ? first.img.naturalWidth : 0,
    trowelHeight: first ? first.img.naturalHeight : 0,
    trowelImages: loaded.length,
    trowelNonblank: first ? nonBlank(first.img) : 0,
    trowelZoom: zoom,
  });
}

// Frames of one animation: an animated GIF decoded with ImageDecoder where
// the browser has it (else shown as it plays), or PNG frames.
async function gifFrames(buf) {
  if (typeof ImageDecoder === 'undefined') return null;
  const dec = new ImageDecoder({ data: buf, type: 'image/gif' });
  await dec.tracks.ready;
  const count = dec.tracks.selectedTrack.frameCount;
  const frames = [];
  for (let i = 0; i < count; i++) {
    const { image } = await dec.decode({ frameIndex: i });
    const c = document.createElement('canvas');
    c.width = image.displayWidth;
    c.height = image.displayHeight;
    c.getContext('2d').drawImage(image, 0, 0);
    frames.push({ canvas: c, delay: Math.max(20, (image.duration || 100000) / 1000) });
    image.close();
  }
  dec.close();
  return frames;
}

function frameHash(canvas) {
  const d = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
  let h = 2166136261;
  for (let i = 0; i < d.length; i++) h = Math.imul(h ^ d[i], 16777619);
  return h >>> 0;
}

async function drawAnimation(p, id, pv, info, gen) {
  // The animations on offer: a costume's GIFs (animNNN_DIR.gif), or one
  // animation of N frames (Cinematique ANI/SET: png with frame=N).
  let anims = [];
  if (pv.frames) {
    anims.push({ name: 'frames', frames: [...Array(pv.frames).keys()].map((i) => ({ n: id, to: 'png', opt: 'frame=' + i })) });
  } else {
    const folder = (pv.folder_targets || []).includes('gif');
    if (folder) {
      const res = await apiJson('convert', { n: id, to: 'gif' });
      for (const note of res.notes || []) p.append(el('div', 'note', 'note: ' + note));
      anims = res.files.filter((f) => f.name.endsWith('.gif')).map((f) => ({ name: f.name.replace(/\.gif$/, ''), gif: { n: id, to: 'gif', file: f.name } }));
    } else {
      anims.push({ name: 'animation', gif: { n: id, to: 'gif' } });
    }
  }
  if (!anims.length) throw new Error('no animations');
  const bar = el('div', 'toolbar');
  const pickAnim = el('select');
  const pickDir = el('select');
  const groups = new Map(); // animation number -> [{dir, anim}]
  for (const a of anims) {
    const m = /^(.*?)(?:_([A-Z]+))?$/.exec(a.name);
    const key = m[1], dir = m[2] || '';
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push({ dir, anim: a });
  }
  for (const k of groups.keys()) pickAnim.append(new Option(k, k));
  const play = el('button', null, 'pause'), step = el('button', null, 'step'), back = el('button', null, 'back');
  for (const b of [play, step, back]) b.type = 'button';
  const counter = el('span');
  bar.append(el('span', null, 'animation'), pickAnim, el('span', null, 'direction'), pickDir, play, back, step, counter);
  p.append(bar);
  const stage = el('div', 'checker');
  const canvas = el('canvas', 'pixelated');
  stage.append(canvas);
  p.append(stage);
  let frames = [], index = 0, timer = null, playing = true, zoom = 1;
  const show = () => {
    if (!frames.length) return;
    const f = frames[index];
    canvas.width = f.canvas.width;
    canvas.height = f.canvas.height;
    canvas.style.width = f.canvas.width * zoom + 'px';
    canvas.style.height = f.canvas.height * zoom + 'px';
    const g = canvas.getContext('2d');
    g.clearRect(0, 0, canvas.width, canvas.height);
    g.drawImage(f.canvas, 0, 0);
    counter.textContent = 'frame ' + (index + 1) + ' / ' + frames.length;
    p.dataset.trowelFrame = index;
  };
  const tick = () => {
    clearTimeout(timer);
    if (!playing || frames.length < 2) return;
    timer = setTimeout(() => { index = (index + 1) % frames.length; show(); tick(); }, frames[index].delay);
  };
  three.stop = () => clearTimeout(timer);
  play.addEventListener('click', () => { playing = !playing; play.textContent = playing ? 'pause' : 'play'; tick(); });
  step.addEventListener('click', () => { playing = false; play.textContent = 'play'; index = (index + 1) % frames.length; show(); });
  back.addEventListener('click', () => { playing = false; play.textContent = 'play'; index = (index + frames.length - 1) % frames.length; show(); });
  const load = async (anim) => {
    clearTimeout(timer);
    let list;
    if (anim.frames) {
      list = [];
      for (const q of anim.frames) {
        const { img } = await loadImage(q);
        const c = document.createElement('canvas');
        c.width = img.naturalWidth;
        c.height = img.naturalHeight;
        c.getContext('2d').drawImage(img, 0, 0);
        list.push({ canvas: c, delay: 120 });
      }
    } else {
      const buf = await (await api('convert', anim.gif)).arrayBuffer();
      list = await gifFrames(buf);
      if (!list) { // no ImageDecoder: the browser plays the GIF itself
        const img = new Image();
        img.src = URL.createObjectURL(new Blob([buf], { type: 'image/gif' }));
        await img.decode();
        const c = document.createElement('canvas');
        c.width = img.naturalWidth;
        c.height = img.naturalHeight;
        c.getContext('2d').drawImage(img, 0, 0);
        list = [{ canvas: c, delay: 100 }];
      }
    }
    if (gen !== generation) return null;
    frames = list;
    index = 0;
    zoom = autoZoom(...frames.reduce((m, f) => [Math.max(m[0], f.canvas.width), Math.max(m[1], f.canvas.height)], [1, 1]));
    show();
    tick();
    return frames;
  };
  const fillDirs = () => {
    pickDir.replaceChildren();
    for (const { dir } of groups.get(pickAnim.value)) pickDir.append(new Option(dir || '-', dir));
  };
  const current = () => groups.get(pickAnim.value).find((x) => x.dir === pickDir.value).anim;
  pickAnim.addEventListener('change', () => { fillDirs(); load(current()); });
  pickDir.addEventListener('change', () => load(current()));
  // Start on the animation with the most frames among the first few, so a
  // still standing pose is not what a person sees first.
  fillDirs();
  let loadedFrames = await load(current());
  if (!loadedFrames) return;
  for (const k of [...groups.keys()].slice(0, 8)) {
    if (frames.length > 1) break;
    pickAnim.value = k;
    fillDirs();
    loadedFrames = await load(current());
    if (!loadedFrames) return;
  }
  const distinct = new Set(frames.map((f) => frameHash(f.canvas))).size;
  setReady({ trowelAnimations: anims.length, trowelFrames: frames.length, trowelDistinctFrames: distinct,
             trowelWidth: canvas.width, trowelHeight: canvas.height });
}

// --------------------------------------------------------------------- 3D

const three = { stop: null };

function loadScript(src) {
  return new Promise((resolve, reject) => {
    if (document.querySelector('script[src="' + src + '"]')) return resolve();
    const s = document.createElement('script');
    s.src = src;
    s.onload = resolve;
    s.onerror = () => reject(new Error('cannot load ' + src + ' (is libjs-three installed?)'));
    document.head.append(s);
  });
}

async function draw3d(p, id, pv, info, gen) {
  await loadScript('/static/three/three.min.js');
  await loadScript('/static/three/GLTFLoader.js');
  await loadScript('/static/three/OrbitControls.js');
  const buf = await (await api('convert', { n: id, to: 'glb' })).arrayBuffer();
  if (gen !== generation) return;
  const bar = el('div', 'toolbar');
  const wire = el('button', null, 'wireframe');
  wire.type = 'button';
  bar.append(wire, el('span', null, 'drag to orbit, wheel to zoom; +Y is up'));
  p.append(bar);
  const canvas = el('canvas', 'three');
  p.append(canvas);
  const THREE = window.THREE;
  const renderer = new THREE.WebGLRenderer({ canvas, antialias: true, preserveDrawingBuffer: true });
  const width = canvas.clientWidth || 800, height = canvas.clientHeight || 480;
  renderer.setSize(width, height, false);
  const scene = new THREE.Scene();
  scene.background = new THREE.Color(0x20252b);
  scene.add(new THREE.HemisphereLight(0xffffff, 0x444444, 1.0));
  const sun = new THREE.DirectionalLight(0xffffff, 0.8);
  sun.position.set(1, 2, 1.5);
  scene.add(sun);
  const gltf = await new Promise((resolve, reject) => new THREE.GLTFLoader().parse(buf, '', resolve, reject));
  const root = gltf.scene;
  scene.add(root);
  const materials = [];
  root.traverse((o) => {
    if (o.isMesh) {
      for (const m of [].concat(o.material)) {
        m.side = THREE.DoubleSide;
        if (!m.map && m.color && m.color.getHex() === 0xffffff && !o.geometry.attributes.color)
          m.color.setHex(0xb8c4a0);
        materials.push(m);
      }
    }
  });
  const boxb = new THREE.Box3().setFromObject(root);
  const size = boxb.getSize(new THREE.Vector3()), center = boxb.getCenter(new THREE.Vector3());
  const radius = Math.max(size.length() / 2, 1e-3);
  const camera = new THREE.PerspectiveCamera(45, width / height, radius / 100, radius * 100);
  camera.position.copy(center).add(new THREE.Vector3(radius * 1.2, radius * 0.9, radius * 1.2));
  const controls = new THREE.OrbitControls(camera, canvas);
  controls.target.copy(center);
  controls.update();
  let frame = 0;
  const render = () => renderer.render(scene, camera);
  controls.addEventListener('change', render);
  wire.addEventListener('click', () => { for (const m of materials) m.wireframe = !m.wireframe; render(); });
  render();
  three.stop = () => { cancelAnimationFrame(frame); controls.dispose(); renderer.dispose(); };
  // How much was drawn: pixels that differ from the background.
  const gl = renderer.getContext();
  const px = new Uint8Array(width * height * 4);
  gl.readPixels(0, 0, width, height, gl.RGBA, gl.UNSIGNED_BYTE, px);
  let drawn = 0;
  for (let i = 0; i < px.length; i += 4)
    if (Math.abs(px[i] - 0x20) + Math.abs(px[i + 1] - 0x25) + Math.abs(px[i + 2] - 0x2b) > 12) drawn++;
  let meshes = 0, vertices = 0;
  root.traverse((o) => { if (o.isMesh) { meshes++; vertices += o.geometry.attributes.position.count; } });
  const extra = {};
  if ((pv.options || []).includes('shade') || pv.format === 'tres-wtd') {
    try {
      const q = { n: id, to: 'png' };
      if ((pv.options || []).includes('shade')) q.opt = 'shade=1';
      const { img } = await loadImage(q);
      img.className = 'pixelated';
      img.style.maxWidth = '100%';
      p.append(el('div', null, 'height map' + (q.opt ? ' (hill-shaded)' : '')), img);
      extra.trowelHeightmap = img.naturalWidth + 'x' + img.naturalHeight;
    } catch (e) {
      p.append(el('div', 'error', 'height map: ' + e.message));
    }
  }
  setReady({ trowelDrawn: drawn, trowelMeshes: meshes, trowelVertices: vertices,
             trowelSize: [size.x, size.y, size.z].map((v) => v.toFixed(2)).join(' '), ...extra });
}

// ------------------------------------------------------------------ audio

function parseWav(buf) {
  const d = new DataView(buf);
  let o = 12, fmt = null;
  while (o + 8 <= d.byteLength) {
    const id = String.fromCharCode(d.getUint8(o), d.getUint8(o + 1), d.getUint8(o + 2), d.getUint8(o + 3));
    const len = d.getUint32(o + 4, true);
    if (id === 'fmt ') fmt = { channels: d.getUint16(o + 10, true), rate: d.getUint32(o + 12, true), bits: d.getUint16(o + 22, true) };
    if (id === 'data' && fmt) {
      const n = Math.floor(Math.min(len, d.byteLength - o - 8) / (fmt.bits / 8) / fmt.channels);
      const samples = new Float32Array(n);
      for (let i = 0; i < n; i++) {
        const at = o + 8 + i * fmt.channels * (fmt.bits / 8);
        samples[i] = fmt.bits === 8 ? (d.getUint8(at) - 128) / 128 : d.getInt16(at, true) / 32768;
      }
      return { ...fmt, samples };
    }
    o += 8 + len + (len & 1);
  }
  throw new Error('not a WAV trowel can draw');
}

async function drawAudio(p, id, pv, info, gen) {
  const buf = await (pv.native ? await api('raw', { n: id, len: 1 << 30 })
                               : await api('convert', { n: id, to: 'wav' })).arrayBuffer();
  if (gen !== generation) return;
  const wav = parseWav(buf);
  const audio = el('audio');
  audio.controls = true;
  audio.src = URL.createObjectURL(new Blob([buf], { type: 'audio/wav' }));
  const canvas = el('canvas', 'wave');
  p.append(audio, canvas);
  const w = (canvas.width = 1000), h = (canvas.height = 120);
  const g = canvas.getContext('2d');
  g.fillStyle = '#2271b1';
  const per = Math.max(1, Math.ceil(wav.samples.length / w));
  for (let x = 0; x < w; x++) {
    let lo = 0, hi = 0;
    for (let i = x * per; i < Math.min((x + 1) * per, wav.samples.length); i++) {
      lo = Math.min(lo, wav.samples[i]);
      hi = Math.max(hi, wav.samples[i]);
    }
    g.fillRect(x, h / 2 - hi * h / 2, 1, Math.max(1, (hi - lo) * h / 2));
  }
  const seconds = wav.samples.length / wav.rate;
  p.append(el('div', null, wav.samples.length + ' samples, ' + wav.rate + ' Hz, ' + wav.bits + '-bit, ' + seconds.toFixed(3) + ' s'));
  await new Promise((resolve) => {
    if (audio.readyState >= 1) return resolve();
    audio.addEventListener('loadedmetadata', resolve, { once: true });
    audio.addEventListener('error', resolve, { once: true });
  });
  setReady({ trowelDuration: isFinite(audio.duration) ? audio.duration.toFixed(3) : '', trowelSamples: wav.samples.length,
             trowelRate: wav.rate });
}

// --------------------------------------------------------------- timeline

async function drawTimeline(p, id, pv, info, gen) {
  const scene = await apiJson('convert', { n: id, to: 'json-full' });
  let text = '';
  if ((pv.targets || []).includes('vcd')) text = await (await api('convert', { n: id, to: 'vcd' })).text();
  if (gen !== generation) return;
  const rows = [];
  let end = 0;
  const collect = (label, events, cls) => {
    rows.push({ label, events: events || [], cls });
    for (const e of events || []) end = Math.max(end, e.end > 0 ? e.end : e.start || 0);
  };
  if ((scene.events || []).length) collect('(scene)', scene.events, 'tl-channel');
  for (const a of scene.actors || []) {
    rows.push({ label: a.name, actor: true });
    for (const c of a.channels || []) collect(c.name, c.events, 'tl-channel');
  }
  // px per second: the whole scene in the width at hand, scrolling past 20 px/s
  const room = Math.max(300, (p.clientWidth || 1000) - 240);
  const scale = Math.max(20, room / Math.max(end, 0.5));
  const tl = el('div', 'timeline');
  const axis = el('div', 'tl-axis');
  axis.style.marginLeft = '180px';
  axis.style.width = Math.ceil(end * scale) + 40 + 'px';
  const step = end > 60 ? 10 : end > 20 ? 5 : end > 5 ? 1 : 0.5;
  for (let t = 0; t <= end + 1e-9; t += step) {
    const tick = el('span', 'tl-tick', t.toFixed(step < 1 ? 1 : 0) + ' s');
    tick.style.left = t * scale + 'px';
    axis.append(tick);
  }
  tl.append(axis);
  let shown = 0;
  for (const r of rows) {
    const row = el('div', 'tl-row' + (r.actor ? ' tl-actor' : ''));
    row.append(el('span', 'tl-label', r.actor ? r.label : '  ' + r.label));
    for (const e of r.events || []) {
      const box = el('div', 'tl-event ' + (e.type || ''));
      const start = e.start || 0, stop = e.end > start ? e.end : start;
      box.style.left = 180 + start * scale + 'px';
      box.style.width = Math.max(3, (stop - start) * scale) + 'px';
      const sound = e.type === 'speak' && e.params ? e.params[0] : '';
      box.textContent = (e.type || '') + ' ' + (sound || e.name || '');
      const tags = [];
      for (const k of ['tags', 'relativetags', 'flextimingtags', 'absolutetags'])
        if (e[k] && (Array.isArray(e[k]) ? e[k].length : Object.keys(e[k]).length)) tags.push(k + ': ' + JSON.stringify(e[k]));
      box.title = [e.type + ' "' + (e.name || '') + '"', start.toFixed(3) + ' s – ' + stop.toFixed(3) + ' s (' + (stop - start).toFixed(3) + ' s)',
                   sound ? 'sound: ' + sound : '', ...tags].filter(Boolean).join('\n');
      box.dataset.event = '1';
      row.append(box);
      shown++;
    }
    tl.append(row);
  }
  p.append(tl);
  if (text) {
    const box = el('details');
    box.open = true;
    box.append(el('summary', null, 'text VCD'), el('pre', 'text', text));
    p.append(box);
  }
  let total = (scene.events || []).length;
  for (const a of scene.actors || []) for (const c of a.channels || []) total += (c.events || []).length;
  setReady({ trowelEvents: shown, trowelEventsTotal: total, trowelActors: (scene.actors || []).length,
             trowelEnd: end.toFixed(3) });
}

// ------------------------------------------------------------ text, lists

async function drawText(p, id, pv, info, gen) {
  let text;
  if (pv.format) {
    text = JSON.stringify(await apiJson('convert', { n: id, to: 'json' }), null, 2);
  } else {
    text = await (await api('raw', { n: id, len: 262144 })).text();
  }
  if (gen !== generation) return;
  p.append(el('pre', 'text', text));
  setReady({ trowelChars: text.length });
}

async function drawList(p, id, pv, info, gen) {
  await loadKids(id);
  if (gen !== generation) return;
  const res = { nodes: tree.kids.get(id).map((k) => tree.nodes.get(k)) };
  const t = el('table', 'list');
  const head = el('tr');
  head.append(el('th', null, 'name'), el('th', null, 'size'), el('th', null, 'stored'));
  t.append(head);
  for (const n of res.nodes.slice(0, LIST_MAX)) {
    const tr = el('tr');
    const a = el('a', null, n.name);
    a.href = '#entry=' + encodeURIComponent(n.path).replace(/%2F/g, '/');
    tr.append(el('td'), el('td', null, String(n.size)), el('td', null, n.packed_size !== undefined ? String(n.packed_size) : ''));
    tr.firstChild.append(a);
    if (n.error || n.damaged) tr.className = 'damaged';
    t.append(tr);
  }
  p.append(el('div', null, res.nodes.length + ' entries' + (res.nodes.length > LIST_MAX ? ' (first ' + LIST_MAX + ' listed)' : '')), t);
  setReady({ trowelEntries: res.nodes.length });
}

async function drawHexPreview(p, id, pv, info, gen) {
  const bytes = new Uint8Array(await (await api('raw', { n: id, len: 1024 })).arrayBuffer());
  if (gen !== generation) return;
  p.append(el('pre', 'text', hexDump(bytes, 0)));
  setReady({ trowelBytes: bytes.length });
}

// ------------------------------------------------------------ deep links

let lastHash = '';

async function followHash() {
  if (location.hash === lastHash) return;
  lastHash = location.hash;
  const m = /^#entry=(.*)$/.exec(location.hash);
  if (!m) return;
  const path = decodeURIComponent(m[1]);
  let found;
  try {
    found = await apiJson('find', { path });
  } catch (e) {
    const p = resetPreview('text');
    p.append(el('div', 'error', e.message));
    setReady({ trowelError: e.message });
    return;
  }
  for (const parent of found.parents) {
    await loadKids(parent);
    tree.open.add(parent);
  }
  if (!tree.nodes.has(found.id)) await loadKids(found.parents[found.parents.length - 1]);
  flatten();
  scrollToRow(found.id);
  await select(found.id);
}

// ------------------------------------------------------------------ start

async function start() {
  const res = await apiJson('children', {});
  tree.roots = addNodes(res.nodes);
  // A single file given opens at once; several show their names first.
  if (tree.roots.length === 1 && res.nodes[0].expandable) {
    try { await loadKids(tree.roots[0]); tree.open.add(tree.roots[0]); } catch (e) { /* shown on select */ }
  }
  flatten();
  $('tree').addEventListener('scroll', drawRows);
  window.addEventListener('resize', drawRows);
  $('rows').addEventListener('click', (ev) => {
    const row = ev.target.closest('.row');
    if (!row) return;
    const id = Number(row.dataset.id);
    if (ev.target.dataset.twisty && tree.nodes.get(id).expandable) toggle(id);
    else select(id);
  });
  $('rows').addEventListener('dblclick', (ev) => {
    const row = ev.target.closest('.row');
    if (row && tree.nodes.get(Number(row.dataset.id)).expandable) toggle(Number(row.dataset.id));
  });
  $('tree').addEventListener('keydown', (ev) => {
    const i = tree.rows.findIndex((r) => r.id === tree.selected);
    if (ev.key === 'ArrowDown' && i + 1 < tree.rows.length) { select(tree.rows[i + 1].id); scrollToRow(tree.rows[i + 1].id); ev.preventDefault(); }
    if (ev.key === 'ArrowUp' && i > 0) { select(tree.rows[i - 1].id); scrollToRow(tree.rows[i - 1].id); ev.preventDefault(); }
    if ((ev.key === 'ArrowRight' || ev.key === 'Enter') && tree.selected !== null && tree.nodes.get(tree.selected).expandable && !tree.open.has(tree.selected)) toggle(tree.selected);
    if (ev.key === 'ArrowLeft' && tree.open.has(tree.selected)) toggle(tree.selected);
  });
  let pending = null;
  $('filter').addEventListener('input', () => {
    clearTimeout(pending);
    pending = setTimeout(() => { tree.filter = $('filter').value.trim(); $('tree').scrollTop = 0; flatten(); }, 120);
  });
  $('hex-box').addEventListener('toggle', () => { if ($('hex-box').open) drawHex(); });
  $('hex-prev').addEventListener('click', () => { if (hex.off > 0) { hex.off -= HEX_PAGE; drawHex(); } });
  $('hex-next').addEventListener('click', () => { if (hex.off + HEX_PAGE < hex.size) { hex.off += HEX_PAGE; drawHex(); } });
  window.addEventListener('hashchange', followHash);
  if (location.hash) await followHash();
  else if (tree.roots.length) await select(tree.roots[0]);
  document.body.dataset.trowelLoaded = '1';
}

start().catch((e) => {
  const p = resetPreview('text');
  p.append(el('div', 'error', 'cannot load the tree: ' + e.message));
  setReady({ trowelError: e.message });
});
