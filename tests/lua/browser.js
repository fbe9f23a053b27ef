// browser.js: a tiny Chrome DevTools Protocol driver for the report tests,
// with no npm package and no global WebSocket (Debian 12's Node 18 has
// none; Node 20 only behind a flag): a small WebSocket client over node:http's
// upgrade (RFC 6455: masked text frames out, fragments, ping, close in),
// and Debian's chromium, headless.
//   node browser.js SCRIPT.json
// SCRIPT.json: {"steps": [{"goto": URL}, {"eval": "js expression"},
//   {"click": "css selector"}, {"type": "text"}, {"key": "j"},
//   {"screenshot": "out.png"}, {"requests": true},
//   {"key": "l", "nav": "js condition"} (and a click's "nav"): the key or
//   the click, then wait (10 s at most) for a new page loaded where the
//   condition holds (redirects on the way are passed: the old page is
//   marked, a new one is not)]}.
//   Prints one JSON line: {"results": [...]}
// (an eval's value; a screenshot's {bytes, colors, nonwhite}: distinct
// colours and the share of pixels that are not white, from the PNG
// decoded here; requests: every URL the page asked for since the last
// goto, from the Network domain, its own document included) or {"error": "..."}. The browser and its profile dir are
// gone when it exits.
'use strict';
const { spawn } = require('child_process');
const crypto = require('crypto');
const fs = require('fs');
const http = require('http');
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

// GET url's JSON body (the DevTools endpoint's /json/list)
function getJSON(url) {
  return new Promise((ok, bad) => {
    http.get(url, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => { body += d; });
      res.on('end', () => { try { ok(JSON.parse(body)); } catch (e) { bad(e); } });
    }).on('error', bad);
  });
}

// A WebSocket client (text messages only, what CDP speaks): resolves to
// {send(text), close(), onmessage(text)} once the server accepted the upgrade.
function wsConnect(url) {
  const u = new URL(url);
  const key = crypto.randomBytes(16).toString('base64');
  return new Promise((ok, bad) => {
    const req = http.request({ host: u.hostname, port: u.port, path: u.pathname + u.search, headers: {
      Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Version': '13', 'Sec-WebSocket-Key': key } });
    req.on('error', bad);
    req.on('response', (res) => bad(new Error('websocket: no upgrade, HTTP ' + res.statusCode)));
    req.on('upgrade', (res, sock, head) => {
      const want = crypto.createHash('sha1').update(key + '258EAFA5-E914-47DA-95CA-C5AB0DC85B11').digest('base64');
      if (res.headers['sec-websocket-accept'] !== want) { sock.destroy(); return bad(new Error('websocket: bad accept')); }
      sock.setNoDelay(true);
      const ws = { onmessage: () => {} };
      const frame = (op, payload) => { // a client frame is masked
        const n = payload.length, mask = crypto.randomBytes(4);
        const hdr = n < 126 ? Buffer.from([0x80 | op, 0x80 | n])
          : n < 65536 ? Buffer.from([0x80 | op, 0x80 | 126, n >> 8, n & 255])
          : Buffer.concat([Buffer.from([0x80 | op, 0x80 | 127]), (() => { const b = Buffer.alloc(8); b.writeBigUInt64BE(BigInt(n)); return b; })()]);
        const body = Buffer.alloc(n);
        for (let i = 0; i < n; i++) body[i] = payload[i] ^ mask[i & 3];
        sock.write(Buffer.concat([hdr, mask, body]));
      };
      ws.send = (text) => frame(1, Buffer.from(text, 'utf8'));
      ws.close = () => { try { frame(8, Buffer.alloc(0)); } catch (e) { /* gone */ } sock.end(); };
      let buf = head && head.length ? Buffer.from(head) : Buffer.alloc(0), parts = [];
      sock.on('data', (d) => {
        buf = buf.length ? Buffer.concat([buf, d]) : d;
        for (;;) {
          if (buf.length < 2) return;
          const fin = buf[0] & 0x80, op = buf[0] & 15, masked = buf[1] & 0x80;
          let n = buf[1] & 127, pos = 2;
          if (n === 126) { if (buf.length < 4) return; n = buf.readUInt16BE(2); pos = 4; }
          else if (n === 127) { if (buf.length < 10) return; n = Number(buf.readBigUInt64BE(2)); pos = 10; }
          if (masked) pos += 4;
          if (buf.length < pos + n) return;
          let payload = buf.subarray(pos, pos + n);
          if (masked) { const m = buf.subarray(pos - 4, pos); payload = Buffer.from(payload.map((b, i) => b ^ m[i & 3])); }
          buf = buf.subarray(pos + n);
          if (op === 8) { sock.end(); return; }
          if (op === 9) { frame(10, payload); continue; }
          if (op === 10) continue;
          parts.push(Buffer.from(payload));
          if (fin) { const text = Buffer.concat(parts).toString('utf8'); parts = []; ws.onmessage(text); }
        }
      });
      sock.on('error', () => {});
      ok(ws);
    });
    req.end();
  });
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
  const pages = await getJSON('http://127.0.0.1:' + port + '/json/list');
  const page = pages.find((p) => p.type === 'page');
  const ws = await wsConnect(page.webSocketDebuggerUrl);
  let next = 0;
  const waiting = new Map(), events = [], requests = [];
  ws.onmessage = (text) => {
    const msg = JSON.parse(text);
    if (msg.id && waiting.has(msg.id)) {
      const w = waiting.get(msg.id);
      waiting.delete(msg.id);
      msg.error ? w.bad(new Error(msg.error.message)) : w.ok(msg.result);
    } else if (msg.method) {
      events.push(msg.method);
      if (msg.method === 'Network.requestWillBeSent') requests.push(msg.params.request.url);
    }
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
  // a new page (not the one marked before the action) loaded, where cond holds
  const settle = async (what, cond) => {
    for (let i = 0; i < 400; i++) {
      await sleep(25);
      try {
        if (await evaluate('!window.__rockOld && document.readyState === "complete" && !!(' + cond + ')')) return;
      } catch (e) { /* between two pages */ }
    }
    throw new Error(what + ': no page loaded where ' + cond);
  };
  await send('Page.enable');
  await send('Network.enable');
  const results = [];
  for (const s of script.steps) {
    if (s.goto) {
      events.length = 0;
      requests.length = 0;
      await send('Page.navigate', { url: s.goto });
      for (let i = 0; i < 200 && !events.includes('Page.loadEventFired'); i++) await sleep(25);
      results.push(true);
    } else if (s.eval !== undefined) {
      results.push(await evaluate(s.eval));
    } else if (s.click) {
      if (s.nav) await evaluate('window.__rockOld = 1');
      const r = await evaluate('(function(){var e=document.querySelector(' + JSON.stringify(s.click) +
        ');if(!e)return null;e.scrollIntoView({block:"center"});var b=e.getBoundingClientRect();return [b.x+b.width/2,b.y+b.height/2];})()');
      if (!r) throw new Error('click: no element ' + s.click);
      for (const type of ['mousePressed', 'mouseReleased']) {
        await send('Input.dispatchMouseEvent', { type, x: r[0], y: r[1], button: 'left', clickCount: 1 });
      }
      if (s.nav) await settle('click ' + s.click, s.nav);
      results.push(true);
    } else if (s.type !== undefined) {
      await send('Input.insertText', { text: s.type });
      results.push(true);
    } else if (s.key) {
      if (s.nav) await evaluate('window.__rockOld = 1');
      await send('Input.dispatchKeyEvent', { type: 'keyDown', key: s.key, text: s.key });
      await send('Input.dispatchKeyEvent', { type: 'keyUp', key: s.key });
      if (s.nav) await settle('key ' + s.key, s.nav);
      results.push(true);
    } else if (s.screenshot) {
      const shot = await send('Page.captureScreenshot', { format: 'png' });
      const buf = Buffer.from(shot.data, 'base64');
      fs.writeFileSync(s.screenshot, buf);
      results.push(Object.assign({ bytes: buf.length }, pngStats(buf)));
    } else if (s.requests) {
      results.push(requests.slice());
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
