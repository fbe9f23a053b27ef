// browser.js: a tiny Chrome DevTools Protocol driver for the report tests,
// with no npm package: Node's own WebSocket (node --experimental-websocket,
// Node 20) and fetch, and Debian's chromium, headless.
//   node --experimental-websocket browser.js SCRIPT.json
// SCRIPT.json: {"steps": [{"goto": URL}, {"eval": "js expression"},
//   {"click": "css selector"}, {"type": "text"}, {"key": "j"},
//   {"screenshot": "out.png"}]}. Prints one JSON line: {"results": [...]}
// (an eval's value; a screenshot's {bytes, colors, nonwhite}: distinct
// colours and the share of pixels that are not white, from the PNG
// decoded here) or {"error": "..."}. The browser and its profile dir are
// gone when it exits.
'use strict';
const { spawn } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const zlib = require('zlib');

const script = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const exe = process.env.ROCK_CHROMIUM || 'chromium';
const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'rock-chromium.'));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
let browser;

// PNG (8-bit RGB or RGBA, not interlaced) -> {colors, nonwhite}
function pngStats(buf) {
  let pos = 8, w = 0, h = 0, ctype = 0;
  const idat = [];
  while (pos < buf.length) {
    const len = buf.readUInt32BE(pos), type = buf.toString('ascii', pos + 4, pos + 8);
    const data = buf.subarray(pos + 8, pos + 8 + len);
    if (type === 'IHDR') { w = data.readUInt32BE(0); h = data.readUInt32BE(4); ctype = data[9]; }
    if (type === 'IDAT') idat.push(data);
    pos += 12 + len;
  }
  const bpp = ctype === 6 ? 4 : 3, stride = w * bpp;
  const raw = zlib.inflateSync(Buffer.concat(idat));
  const px = Buffer.alloc(stride * h);
  for (let y = 0; y < h; y++) {
    const f = raw[y * (stride + 1)], src = y * (stride + 1) + 1, dst = y * stride;
    for (let x = 0; x < stride; x++) {
      const a = x >= bpp ? px[dst + x - bpp] : 0, b = y > 0 ? px[dst - stride + x] : 0;
      const c = x >= bpp && y > 0 ? px[dst - stride + x - bpp] : 0;
      let v = raw[src + x];
      if (f === 1) v += a; else if (f === 2) v += b; else if (f === 3) v += (a + b) >> 1;
      else if (f === 4) { const p = a + b - c, pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
        v += pa <= pb && pa <= pc ? a : pb <= pc ? b : c; }
      px[dst + x] = v & 255;
    }
  }
  const colors = new Set();
  let nonwhite = 0;
  for (let i = 0; i < px.length; i += bpp) {
    colors.add((px[i] << 16) | (px[i + 1] << 8) | px[i + 2]);
    if (px[i] < 250 || px[i + 1] < 250 || px[i + 2] < 250) nonwhite++;
  }
  return { width: w, height: h, colors: colors.size, nonwhite: nonwhite / (w * h) };
}

async function main() {
  browser = spawn(exe, ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--remote-debugging-port=0',
    '--user-data-dir=' + profile, '--window-size=1280,900', 'about:blank'], { stdio: ['ignore', 'ignore', 'ignore'], detached: true });
  const portFile = path.join(profile, 'DevToolsActivePort');
  let port;
  for (let i = 0; i < 200 && !port; i++) {
    await sleep(50);
    try { port = fs.readFileSync(portFile, 'utf8').split('\n')[0]; } catch (e) { /* not yet */ }
  }
  if (!port) throw new Error('chromium did not start (no DevToolsActivePort)');
  const pages = await (await fetch('http://127.0.0.1:' + port + '/json/list')).json();
  const page = pages.find((p) => p.type === 'page');
  const ws = new WebSocket(page.webSocketDebuggerUrl);
  await new Promise((ok, bad) => { ws.onopen = ok; ws.onerror = bad; });
  let next = 0;
  const waiting = new Map(), events = [];
  ws.onmessage = (m) => {
    const msg = JSON.parse(m.data);
    if (msg.id && waiting.has(msg.id)) {
      const w = waiting.get(msg.id);
      waiting.delete(msg.id);
      msg.error ? w.bad(new Error(msg.error.message)) : w.ok(msg.result);
    } else if (msg.method) events.push(msg.method);
  };
  const send = (method, params) => new Promise((ok, bad) => {
    const id = ++next;
    waiting.set(id, { ok, bad });
    ws.send(JSON.stringify({ id, method, params: params || {} }));
  });
  const evaluate = async (expression) => {
    const r = await send('Runtime.evaluate', { expression, returnByValue: true, awaitPromise: true });
    if (r.exceptionDetails) throw new Error('eval: ' + (r.exceptionDetails.exception && r.exceptionDetails.exception.description || r.exceptionDetails.text));
    return r.result.value;
  };
  await send('Page.enable');
  const results = [];
  for (const s of script.steps) {
    if (s.goto) {
      events.length = 0;
      await send('Page.navigate', { url: s.goto });
      for (let i = 0; i < 200 && !events.includes('Page.loadEventFired'); i++) await sleep(25);
      results.push(true);
    } else if (s.eval !== undefined) {
      results.push(await evaluate(s.eval));
    } else if (s.click) {
      const r = await evaluate('(function(){var e=document.querySelector(' + JSON.stringify(s.click) +
        ');if(!e)return null;e.scrollIntoView({block:"center"});var b=e.getBoundingClientRect();return [b.x+b.width/2,b.y+b.height/2];})()');
      if (!r) throw new Error('click: no element ' + s.click);
      for (const type of ['mousePressed', 'mouseReleased']) {
        await send('Input.dispatchMouseEvent', { type, x: r[0], y: r[1], button: 'left', clickCount: 1 });
      }
      results.push(true);
    } else if (s.type !== undefined) {
      await send('Input.insertText', { text: s.type });
      results.push(true);
    } else if (s.key) {
      await send('Input.dispatchKeyEvent', { type: 'keyDown', key: s.key, text: s.key });
      await send('Input.dispatchKeyEvent', { type: 'keyUp', key: s.key });
      results.push(true);
    } else if (s.screenshot) {
      const shot = await send('Page.captureScreenshot', { format: 'png' });
      const buf = Buffer.from(shot.data, 'base64');
      fs.writeFileSync(s.screenshot, buf);
      results.push(Object.assign({ bytes: buf.length }, pngStats(buf)));
    } else if (s.sleep) {
      await sleep(s.sleep);
      results.push(true);
    }
  }
  ws.close();
  return results;
}

// the browser's whole process group, then its profile: nothing is left
function finish(out, code) {
  process.stdout.write(JSON.stringify(out) + '\n');
  const alive = () => { try { process.kill(-browser.pid, 0); return true; } catch (e) { return false; } };
  const done = () => { fs.rmSync(profile, { recursive: true, force: true }); process.exit(code); };
  if (!browser || !browser.pid) return done();
  try { process.kill(-browser.pid, 'SIGTERM'); } catch (e) { /* gone */ }
  let n = 0;
  const poll = setInterval(() => {
    if (!alive()) { clearInterval(poll); return done(); }
    if (++n === 60) { try { process.kill(-browser.pid, 'SIGKILL'); } catch (e) { /* gone */ } }
  }, 50);
}

main().then((results) => finish({ results }, 0), (e) => finish({ error: String(e && e.message || e) }, 1));
