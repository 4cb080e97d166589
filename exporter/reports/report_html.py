"""The pieces of a standalone HTML report: the page, its style and script, tables, bars, numbers.

A report is one file that a browser opens from disk: no server, nothing fetched, inline
CSS, SVG and script only. Everything here is text in, text out, so the same data gives the same
bytes: no clock, no path, no randomness, and JSON with sorted keys.
"""

import html
import json

CSS = """
:root{--ink:#0f172a;--muted:#64748b;--line:#e2e8f0;--bg:#f8fafc;--card:#fff;--accent:#2563eb}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;
 color:var(--ink);background:var(--bg)}
header{background:linear-gradient(120deg,#0f172a,#1e3a8a);color:#fff;padding:22px 32px 18px}
header h1{margin:0;font-size:22px;font-weight:650;letter-spacing:.2px}
header .sub{color:#cbd5e1;margin-top:2px;font-size:13px}
nav{position:sticky;top:0;z-index:5;background:#fff;border-bottom:1px solid var(--line);
 padding:0 32px;display:flex;gap:4px;flex-wrap:wrap}
nav a{color:var(--muted);text-decoration:none;padding:10px 10px;font-weight:550;border-bottom:2px solid transparent}
nav a:hover{color:var(--ink);border-bottom-color:var(--accent)}
main{padding:18px 32px 40px;max-width:1500px}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(170px,1fr));gap:12px;margin:18px 32px 0;max-width:1436px}
.kpi{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:10px 14px}
.kpi .v{font-size:20px;font-weight:650}.kpi .k{color:var(--muted);font-size:12px;text-transform:uppercase;letter-spacing:.4px}
section{background:var(--card);border:1px solid var(--line);border-radius:12px;padding:16px 20px;margin:16px 0;overflow-x:auto}
section h2{margin:0 0 10px;font-size:17px}section h3{font-size:14px;margin:16px 0 6px;color:#334155}
p.note{color:var(--muted);margin:4px 0 10px}
table{border-collapse:collapse;width:100%;font-size:13px;margin:4px 0 8px}
th,td{text-align:left;padding:5px 8px;border-bottom:1px solid var(--line);vertical-align:top}
th{color:var(--muted);font-weight:600;font-size:12px;text-transform:uppercase;letter-spacing:.3px}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px}
.bar{display:flex;height:18px;border-radius:5px;overflow:hidden;background:#eef2f7;min-width:120px}
.bar span{display:block;height:100%}
.legend{display:flex;gap:14px;flex-wrap:wrap;color:var(--muted);font-size:12px;margin:6px 0}
.legend i{display:inline-block;width:11px;height:11px;border-radius:3px;margin-right:5px;vertical-align:-1px}
.tabs{display:flex;gap:6px;margin:0 0 8px;flex-wrap:wrap}
.tabs button,.tools button{border:1px solid var(--line);background:#fff;border-radius:7px;padding:4px 10px;
 cursor:pointer;font:inherit;font-size:13px}
.tabs button.on{background:var(--accent);border-color:var(--accent);color:#fff}
.graphbox{display:grid;grid-template-columns:1fr 320px;gap:12px}.graphbox.solo{grid-template-columns:1fr}
.sides{display:grid;grid-template-columns:1fr 1fr;gap:14px}
pre.diff{background:#0f172a;color:#e2e8f0;padding:12px 14px;border-radius:10px;overflow:auto;font-size:12px;max-height:520px}
pre.diff .a{color:#86efac}pre.diff .r{color:#fca5a5}pre.diff .h{color:#93c5fd}
.viewport{height:640px;border:1px solid var(--line);border-radius:10px;overflow:hidden;background:
 radial-gradient(circle,#e2e8f0 1px,transparent 1px) 0 0/18px 18px;cursor:grab;position:relative}
.viewport svg{width:100%;height:100%}
.viewport g.node{cursor:pointer}.viewport g.node.hit polygon,.viewport g.node.hit path,
 .viewport g.node.hit ellipse{stroke:#dc2626;stroke-width:3}
.viewport g.node.sel polygon,.viewport g.node.sel path,.viewport g.node.sel ellipse{stroke:#111827;stroke-width:3}
.tools{display:flex;gap:6px;margin-bottom:8px;align-items:center;flex-wrap:wrap}
.tools input{border:1px solid var(--line);border-radius:7px;padding:4px 8px;font:inherit;width:240px}
.details{border:1px solid var(--line);border-radius:10px;padding:10px 12px;font-size:13px;height:640px;overflow:auto}
.details h4{margin:0 0 6px;font-size:14px;word-break:break-all}.details dt{color:var(--muted);font-size:12px;margin-top:6px}
.details dd{margin:0;word-break:break-all}
.method{display:none}.method.on{display:block}
.chart{width:100%;height:auto;border:1px solid var(--line);border-radius:8px;background:#fff}
.missing{color:var(--muted);font-style:italic}
footer{color:var(--muted);font-size:12px;padding:0 32px 24px}
"""

JS = """
(function(){
const data=JSON.parse(document.getElementById('report-data').textContent);
function fmt(n){return n==null?'-':n.toLocaleString('en-US')}
document.querySelectorAll('.tabs').forEach(function(tabs){
 tabs.addEventListener('click',function(e){const b=e.target.closest('button');if(!b)return;
  tabs.querySelectorAll('button').forEach(function(x){x.classList.toggle('on',x===b)});
  const scope=tabs.parentElement;scope.querySelectorAll(':scope > .method').forEach(function(m){
   m.classList.toggle('on',m.dataset.method===b.dataset.method)});
  scope.querySelectorAll(':scope > .method.on .viewport').forEach(start)});});
function view(vp){if(!vp._v){const s=vp.querySelector('svg');const b=s.viewBox.baseVal;
 vp._v={x:b.x,y:b.y,w:b.width,h:b.height,x0:b.x,y0:b.y,w0:b.width,h0:b.height}}return vp._v}
function apply(vp){const v=view(vp);vp.querySelector('svg').setAttribute('viewBox',[v.x,v.y,v.w,v.h].join(' '))}
function fit(vp){const v=view(vp);v.x=v.x0;v.y=v.y0;v.w=v.w0;v.h=v.h0;apply(vp)}
function start(vp){const v=view(vp),r=vp.getBoundingClientRect();if(!r.width){fit(vp);return}
 const s=Math.max(v.w0/r.width,v.h0/r.height);if(s<=1.25){fit(vp);return}
 v.w=r.width;v.h=r.height;v.x=v.x0+(v.w0-v.w)/2;v.y=v.y0;apply(vp);
 const m=vp.querySelector('g.node.mark');if(!m)return;const svg=vp.querySelector('svg'),b=m.getBoundingClientRect();
 const p=svg.createSVGPoint();p.x=b.x+b.width/2;p.y=b.y+b.height/2;const q=p.matrixTransform(svg.getScreenCTM().inverse());
 v.x=q.x-v.w/2;v.y=Math.max(v.y0,q.y-v.h/3);apply(vp)}
function zoom(vp,f,cx,cy){const v=view(vp);cx=cx==null?.5:cx;cy=cy==null?.5:cy;
 const nw=v.w*f,nh=v.h*f;v.x+=(v.w-nw)*cx;v.y+=(v.h-nh)*cy;v.w=nw;v.h=nh;apply(vp)}
document.querySelectorAll('.viewport').forEach(function(vp){
 let drag=null;
 vp.addEventListener('wheel',function(e){e.preventDefault();const r=vp.getBoundingClientRect();
  zoom(vp,e.deltaY>0?1.15:1/1.15,(e.clientX-r.left)/r.width,(e.clientY-r.top)/r.height)},{passive:false});
 vp.addEventListener('mousedown',function(e){drag={x:e.clientX,y:e.clientY};vp.style.cursor='grabbing'});
 window.addEventListener('mouseup',function(){drag=null;vp.style.cursor=''});
 window.addEventListener('mousemove',function(e){if(!drag)return;const v=view(vp),r=vp.getBoundingClientRect();
  const s=Math.max(v.w/r.width,v.h/r.height);v.x-=(e.clientX-drag.x)*s;v.y-=(e.clientY-drag.y)*s;
  drag={x:e.clientX,y:e.clientY};apply(vp)});
 vp.addEventListener('click',function(e){const g=e.target.closest('g.node');if(!g)return;
  vp.querySelectorAll('g.node.sel').forEach(function(x){x.classList.remove('sel')});g.classList.add('sel');
  show(vp.dataset.method,g.id)});});
document.querySelectorAll('.tools').forEach(function(t){const vp=t.nextElementSibling.querySelector('.viewport');
 t.addEventListener('click',function(e){const b=e.target.closest('button');if(!b)return;
  if(b.dataset.z==='fit')fit(vp);else zoom(vp,parseFloat(b.dataset.z))});
 const input=t.querySelector('input');if(input)input.addEventListener('input',function(){
  const q=input.value.trim().toLowerCase();const nodes=data.nodes[vp.dataset.method]||{};let n=0;
  vp.querySelectorAll('g.node').forEach(function(g){const d=nodes[g.id];
   const hit=q!==''&&d&&((d.op||'')+' '+(d.module||'')+' '+d.name).toLowerCase().indexOf(q)>=0;
   g.classList.toggle('hit',!!hit);if(hit)n++});
  t.querySelector('.count').textContent=q?n+' found':''});});
function show(method,id){const d=(data.nodes[method]||{})[id];const box=document.getElementById('details-'+method);
 if(!d||!box)return;let h='<h4></h4><dl>';box.innerHTML=h+'</dl>';box.querySelector('h4').textContent=d.op||d.name;
 const dl=box.querySelector('dl');
 [['node',d.name],['runs on',d.runs_on],['module',d.module?(d.module+(d.module_type?' ('+d.module_type+')':'')):''],
  ['outputs',(d.values||[]).join('\\n')],['weights',(d.weights||[]).join('\\n')],['parameters',d.params?fmt(d.params):''],
  ['FLOPs (largest shapes)',d.flops?fmt(d.flops):''],['planned at',d.memory||''],
  ['native time',d.time||'']].forEach(function(r){
  if(!r[1])return;const dt=document.createElement('dt');dt.textContent=r[0];const dd=document.createElement('dd');
  dd.textContent=r[1];dd.style.whiteSpace='pre-wrap';dl.appendChild(dt);dl.appendChild(dd)});}
document.querySelectorAll('.viewport').forEach(function(vp){if(vp.offsetParent)start(vp)});
})();
"""


def esc(text):
    return html.escape(str(text), quote=True)


def json_script(element_id, value):
    """A <script type="application/json"> block; '</' is escaped so no value can close it."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True).replace("</", "<\\/")
    return f'<script type="application/json" id="{esc(element_id)}">{text}</script>'


def number(n):
    return "-" if n is None else f"{n:,}"


def size(n):
    """'44.6 MiB', '512 B'."""
    if n is None:
        return "-"
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n:,} B"


def percent(part, whole):
    return "-" if not whole else f"{100.0 * part / whole:.1f}%"


def table(headers, rows, numeric=()):
    """A table; columns whose index is in numeric are right-aligned. Cells are escaped text,
    except values wrapped in Raw."""
    head = "".join(f'<th class="n">{esc(h)}</th>' if i in numeric else f"<th>{esc(h)}</th>"
                   for i, h in enumerate(headers))
    body = []
    for row in rows:
        cells = "".join((f'<td class="n">{cell(c)}</td>' if i in numeric else f"<td>{cell(c)}</td>")
                        for i, c in enumerate(row))
        body.append(f"<tr>{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


class Raw(str):
    """HTML that table() puts in a cell as it is."""


def cell(value):
    return value if isinstance(value, Raw) else esc(value)


def bar(parts, total=None):
    """A horizontal stacked bar of (label, amount, colour) parts, each titled with its share."""
    total = total if total is not None else sum(p[1] for p in parts)
    spans = []
    for label, amount, colour in parts:
        if amount and total:
            width = 100.0 * amount / total
            spans.append(f'<span style="width:{width:.3f}%;background:{colour}" '
                         f'title="{esc(label)}: {esc(percent(amount, total))}"></span>')
    return Raw(f'<div class="bar">{"".join(spans)}</div>')


def legend(items):
    """Coloured keys: (label, colour) pairs."""
    keys = "".join(f'<span><i style="background:{colour}"></i>{esc(label)}</span>' for label, colour in items)
    return f'<div class="legend">{keys}</div>'


def section(anchor, title, body):
    return f'<section id="{esc(anchor)}"><h2>{esc(title)}</h2>{body}</section>'


def note(text):
    return f'<p class="note">{esc(text)}</p>'


def page(title, subtitle, kpis, sections, data, footer):
    """The whole document: header, key figures, a link per section, the sections, the data the
    script reads, and the script."""
    nav = "".join(f'<a href="#{esc(anchor)}">{esc(name)}</a>' for anchor, name, _ in sections)
    cards = "".join(f'<div class="kpi"><div class="k">{esc(k)}</div><div class="v">{esc(v)}</div></div>'
                    for k, v in kpis)
    body = "".join(html_text for _, _, html_text in sections)
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        f"<title>{esc(title)}</title><style>{CSS}</style></head><body>"
        f"<header><h1>{esc(title)}</h1><div class=\"sub\">{esc(subtitle)}</div></header>"
        f"<nav>{nav}</nav><div class=\"cards\">{cards}</div><main>{body}</main>"
        f"<footer>{esc(footer)}</footer>{json_script('report-data', data)}<script>{JS}</script>"
        "</body></html>\n"
    )
