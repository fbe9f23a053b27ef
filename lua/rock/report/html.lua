--- rock.report.html: escaping and the page shell every report page shares
-- (its CSS and scripts inline: a page fetches nothing, from file:// too;
-- its Content-Security-Policy lets only its own script run, by a nonce).
-- esc() is the only way text reaches a page: &, <, >, " and ' become
-- entities, so a trajectory's `<script>` is shown, never run.
local M = {}

local ENT = { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;", ['"'] = "&quot;", ["'"] = "&#39;" }

--- s as HTML text (or an attribute value); nil is "".
function M.esc(s)
  if s == nil then return "" end
  return (tostring(s):gsub("[&<>\"']", ENT))
end

M.CSS = [[
:root{--fg:#1d2330;--mut:#6b7280;--bg:#fff;--pan:#f4f6f9;--bd:#d9dee7;--ok:#15803d;--bad:#b91c1c;--unk:#a16207;--acc:#1d4ed8}
*{box-sizing:border-box}body{font:14px/1.45 system-ui,sans-serif;color:var(--fg);background:var(--bg);margin:0;padding:16px 24px}
h1{font-size:20px;margin:0 0 8px}h2{font-size:16px;margin:20px 0 8px}a{color:var(--acc)}
.mut{color:var(--mut)}.note{background:#fff7e0;border:1px solid #f0d890;padding:6px 10px;border-radius:4px;margin:8px 0}
.warn{background:#fdecec;border:1px solid #f2b8b8;padding:6px 10px;border-radius:4px;margin:8px 0}
dl.kv{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:0}dl.kv dt{color:var(--mut)}dl.kv dd{margin:0}
.cards{display:flex;flex-wrap:wrap;gap:10px;margin:8px 0}.card{background:var(--pan);border:1px solid var(--bd);border-radius:6px;padding:8px 12px;min-width:110px}
.card b{display:block;font-size:20px}.plots{display:flex;flex-wrap:wrap;gap:14px}.plots figure{margin:0;background:var(--pan);border:1px solid var(--bd);border-radius:6px;padding:6px}
figcaption{font-size:12px;color:var(--mut)}
table{border-collapse:collapse;width:100%}th,td{border-bottom:1px solid var(--bd);padding:3px 8px;text-align:left;vertical-align:top}
th{background:var(--pan);cursor:pointer;user-select:none;position:sticky;top:0}th.asc:after{content:" \25B2"}th.desc:after{content:" \25BC"}
td.n{text-align:right;font-variant-numeric:tabular-nums}.st-resolved{color:var(--ok)}.st-unresolved,.st-empty{color:var(--bad)}.st-error,.st-ungraded,.st-torn,.st-pending{color:var(--unk)}
tr.torn td{background:#fdecec}.filters{display:flex;gap:10px;align-items:center;margin:8px 0}
pre{background:var(--pan);border:1px solid var(--bd);border-radius:4px;padding:6px 8px;overflow:auto;white-space:pre-wrap;word-break:break-word;margin:4px 0;max-height:480px}
.msg{border-left:4px solid var(--bd);padding:2px 8px;margin:6px 0}.msg .role{font-size:12px;font-weight:600;text-transform:uppercase;color:var(--mut)}
.role-system{border-color:#9ca3af}.role-user{border-color:#2563eb}.role-assistant{border-color:#16a34a}.role-tool{border-color:#d97706}
.step{border:1px solid var(--bd);border-radius:6px;padding:6px 10px;margin:10px 0;scroll-margin-top:36px}.step.cur{outline:3px solid var(--acc)}
.step h3{font-size:14px;margin:0 0 4px}.act{background:#eef4ff}.rc0{color:var(--ok)}.rcx{color:var(--bad)}.elided{background:#fde68a;color:#713f12;font-weight:600}
.diff .a{color:#166534;background:#ecfdf3}.diff .d{color:#991b1b;background:#fef2f2}.diff .h{color:#1d4ed8}.diff .f{font-weight:700}
.twocol{display:grid;grid-template-columns:1fr 1fr;gap:10px}.nav{position:sticky;top:0;background:var(--bg);padding:4px 0;border-bottom:1px solid var(--bd);z-index:2}
.stepnav{position:static;font-size:12px;max-height:4.5em;overflow:auto}.stepnav a{text-decoration:none;padding:0 2px}
.pass{color:var(--ok)}.fail{color:var(--bad)}
]]

-- the index's table: sort by a column, filter by status and text; the
-- state lives in the URL's hash (#sort=steps&dir=desc&status=resolved&q=x),
-- so a view is a deep link and the header clicks go through the same path.
-- A task's link carries the view (t/x.html#view=...), so h/l on its page
-- come back here with go=next|prev&from=x and go on to the neighbour in
-- the view's order (the rows with a page, data-file), or stay at the end.
M.INDEX_JS = [[
(function(){
var tb=document.getElementById('tasks'),body=tb.tBodies[0],rows=Array.prototype.slice.call(body.rows);
var st=document.getElementById('f-status'),q=document.getElementById('f-q'),shown=document.getElementById('shown');
function parse(){var h={};location.hash.replace(/^#/,'').split('&').forEach(function(p){if(!p)return;var i=p.indexOf('=');
 h[decodeURIComponent(i<0?p:p.slice(0,i))]=i<0?'':decodeURIComponent(p.slice(i+1));});return h;}
function ser(h){return Object.keys(h).map(function(x){return encodeURIComponent(x)+'='+encodeURIComponent(h[x]);}).join('&');}
function page(file,view){return 't/'+file+'.html'+(view?'#view='+encodeURIComponent(view):'');}
var keys=Array.prototype.map.call(tb.tHead.rows[0].cells,function(c){return c.dataset.k;});
function apply(){var h=parse(),key=keys.indexOf(h.sort)>=0?h.sort:'',dir=h.dir==='desc'?-1:1,status=h.status||'',text=(h.q||'').toLowerCase();
 st.value=status;q.value=h.q||'';
 Array.prototype.forEach.call(tb.tHead.rows[0].cells,function(c){c.className=c.dataset.k===key?(dir<0?'desc':'asc'):'';});
 var list=rows;
 if(key){var num=tb.tHead.querySelector('th[data-k="'+key+'"]');num=num&&num.dataset.t==='n';
  var ks=rows.map(function(r,i){var v=r.getAttribute('data-'+key)||'';return {r:r,i:i,v:num?(v===''?-Infinity:+v):v};});
  ks.sort(function(a,b){var c=num?(a.v-b.v)*dir:(a.v<b.v?-dir:a.v>b.v?dir:0);return c||a.i-b.i;});
  list=ks.map(function(k){return k.r;});}
 var n=0,frag=document.createDocumentFragment(),view=location.hash.replace(/^#/,'');list.forEach(function(r){var ok=(!status||r.getAttribute('data-status')===status)&&
  (!text||r.getAttribute('data-text').indexOf(text)>=0);
  if(r.hidden===ok)r.hidden=!ok;if(ok)n++;frag.appendChild(r);
  var a=r.dataset.file&&r.querySelector('a[href]');if(a)a.setAttribute('href',page(r.dataset.file,view));});body.appendChild(frag);
 shown.textContent=n+' of '+rows.length+' shown';}
function set(k,v){var h=parse();if(v)h[k]=v;else delete h[k];
 history.replaceState(null,'','#'+ser(h));apply();}
tb.tHead.addEventListener('click',function(e){var c=e.target.closest('th');if(!c)return;var h=parse();
 if(h.sort===c.dataset.k){set('dir',h.dir==='desc'?'':'desc');}else{h.sort=c.dataset.k;delete h.dir;
 history.replaceState(null,'','#'+ser(h));apply();}});
st.addEventListener('change',function(){set('status',st.value);});
q.addEventListener('input',function(){set('q',q.value);});
window.addEventListener('hashchange',apply);
var h=parse();
if(h.go&&h.from){var go=h.go,from=h.from;delete h.go;delete h.from;var view=ser(h);history.replaceState(null,'','#'+view);apply();
 var vis=Array.prototype.filter.call(body.rows,function(r){return !r.hidden&&r.dataset.file;}).map(function(r){return r.dataset.file;});
 var i=vis.indexOf(from),next=i<0?null:vis[i+(go==='prev'?-1:1)];
 location.replace(page(next||from,view));return;}
apply();
})();
]]

-- a trajectory page: j/k (or arrows) move between steps, h/l go to the
-- previous / next trajectory: in the index's view the page was opened
-- from (its hash's view=..., by way of the index), else in the file's
-- order (the prev / next links). The hash: #step-N, then &view=...
M.TRAJ_JS = [[
(function(){
var steps=Array.prototype.slice.call(document.querySelectorAll('.step')),cur=-1;
var vm=/(?:^#|&)(view=[^&]*)/.exec(location.hash),view=vm?vm[1]:null;
var file=decodeURIComponent(location.pathname.replace(/^.*\//,'').replace(/\.html$/,''));
function go(i){if(!steps.length)return;i=Math.max(0,Math.min(steps.length-1,i));if(cur>=0)steps[cur].classList.remove('cur');
 cur=i;steps[i].classList.add('cur');steps[i].scrollIntoView({block:'start'});history.replaceState(null,'','#'+steps[i].id+(view?'&'+view:''));
 var p=document.getElementById('pos');if(p)p.textContent='step '+(i+1)+' of '+steps.length;}
function fromHash(){var m=/^#step-(\d+)(&|$)/.exec(location.hash);if(m&&+m[1]-1!==cur)go(+m[1]-1);}
fromHash();window.addEventListener('hashchange',fromHash);
document.addEventListener('keydown',function(e){if(e.target.tagName==='INPUT'||e.ctrlKey||e.metaKey||e.altKey)return;
 var k=e.key;if(k==='j'||k==='ArrowDown'&&e.shiftKey)go(cur+1);else if(k==='k'||k==='ArrowUp'&&e.shiftKey)go(cur-1);
 else if(k==='h'||k==='l'){var dir=k==='h'?'prev':'next';
  if(view!==null){var v=decodeURIComponent(view.slice(5));
   location.href='../index.html#'+v+(v?'&':'')+'go='+dir+'&from='+encodeURIComponent(file);return;}
  var a=document.getElementById(dir);if(a&&a.href)location.href=a.href;}});
})();
]]

-- a fresh nonce a page (/dev/urandom): what a trajectory holds was written
-- before it, so an injected <script> cannot carry it
local function nonce()
  local f = io.open("/dev/urandom", "rb")
  local bytes = f and f:read(18)
  if f then f:close() end
  if not bytes or #bytes < 18 then error("report: cannot read /dev/urandom", 0) end
  return (require("rock.core").base64_encode(bytes):gsub("[+/=]", ""))
end

--- A whole page: title (text), body (HTML), script (JS or nil).
function M.page(title, body, script)
  local n = nonce()
  return table.concat({ '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width,initial-scale=1">',
    -- nothing may be fetched, and no script runs but the page's own (its
    -- nonce): were text ever to escape esc(), an injected <script> or
    -- onerror= handler would still not run
    '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; style-src \'unsafe-inline\'; ',
    "script-src 'nonce-", n, "'; img-src data:\">",
    '<title>', M.esc(title), '</title><style>', M.CSS, '</style></head><body>\n', body,
    script and ('\n<script nonce="' .. n .. '">' .. script .. "</script>") or "", '\n</body></html>\n' })
end

return M
