//! `report.html`: the report as one self-contained page — the headline, the verdict with its
//! evidence, with several devices the host verdict and each device's share and idle (the
//! section *Devices and the host* of report.md), the charts (inline SVG) and an interactive
//! waterfall (zoom with the wheel or a drag-selected range, pan by dragging, hover for a
//! span's kind, job, partition and duration). No network: the page carries its data (spans as
//! compact arrays, colours from [`crate::chart::style`]) and its script; it opens offline in
//! any browser.
//!
//! The waterfall draws with level of detail: within one row, bars narrower than a pixel at the
//! current zoom are merged into a busy band, and labels are drawn only where they fit, so a
//! day-long run draws as fast as a short one. Rows are the run's serial lanes
//! ([`crate::lanes::LaidOut`], the same assignment and rows as the SVG waterfall and the
//! trace's threads).
//!
//! The page signals its own health for tests and for people: on load it writes
//! `data-status="ok"` (or `error: …`) on `<body>`, and any script error shows in a red banner.

use std::collections::HashMap;
use std::fmt::Write as _;

use serde::Serialize;

use crate::analysis::Summary;
use crate::chart::style::{cause_color, kind_color};
use crate::event::SpanKind;
use crate::lanes::{LaneGroup, LaidOut};

/// A chart to embed: its section title and its SVG text.
pub struct HtmlChart<'a> {
    pub title: &'a str,
    pub svg: &'a str,
}

#[derive(Serialize)]
struct PageData {
    /// Kind names, index = the kind id used in `rows[].s`.
    kinds: Vec<String>,
    colors: Vec<String>,
    rows: Vec<PageRow>,
    /// Idle gaps: [device row index, start ms, end ms, cause id].
    gaps: Vec<(usize, f64, f64, usize)>,
    causes: Vec<String>,
    cause_colors: Vec<String>,
    jobs: Vec<String>,
    end_ms: f64,
}

#[derive(Serialize)]
struct PageRow {
    label: String,
    /// Spans: [start ms, end ms, kind id, job id (-1 none), partition (-1 none), depth, open (0/1)].
    s: Vec<(f64, f64, usize, i64, i64, u32, u8)>,
}

fn hex(c: plotters::style::RGBColor) -> String {
    format!("#{:02x}{:02x}{:02x}", c.0, c.1, c.2)
}

fn ms(ns: u64) -> f64 {
    // Microsecond precision is enough for a picture and keeps the page small.
    (ns as f64 / 1e3).round() / 1e3
}

fn page_data(laid: &LaidOut<'_>, summary: &Summary) -> PageData {
    let run = laid.run();
    let lanes = laid.lanes();
    // Kinds and jobs interned in order of first appearance (a day-long log has tens of
    // thousands of jobs: a map, not a search per span).
    let mut kinds: Vec<SpanKind> = Vec::new();
    let mut kind_ids: HashMap<&SpanKind, usize> = HashMap::new();
    let mut jobs: Vec<String> = Vec::new();
    let mut job_ids: HashMap<&str, i64> = HashMap::new();
    let mut rows = Vec::new();
    let mut device_row: Vec<(u32, usize)> = Vec::new();
    for lane in lanes {
        if let LaneGroup::Device(d) = lane.group {
            if !device_row.iter().any(|(x, _)| *x == d) {
                device_row.push((d, rows.len()));
                rows.push(PageRow { label: format!("device {d} idle gaps"), s: Vec::new() });
            }
        }
        let mut s = Vec::with_capacity(lane.spans.len());
        for p in &lane.spans {
            let span = &run.spans[p.index];
            let k = *kind_ids.entry(&span.kind).or_insert_with(|| {
                kinds.push(span.kind.clone());
                kinds.len() - 1
            });
            let j = match span.job.as_deref() {
                Some(job) => *job_ids.entry(job).or_insert_with(|| {
                    jobs.push(job.to_string());
                    jobs.len() as i64 - 1
                }),
                None => -1,
            };
            let part = span.partition.map_or(-1, i64::from);
            s.push((ms(p.start_ns), ms(p.end_ns), k, j, part, p.depth, u8::from(p.open)));
        }
        rows.push(PageRow { label: lane.label(run), s });
    }
    let mut causes: Vec<String> = Vec::new();
    let mut gaps = Vec::new();
    for g in &summary.idle_gaps {
        let Some((_, row)) = device_row.iter().find(|(d, _)| *d == g.device) else { continue };
        let cause = g.cause.as_str().to_string();
        let c = match causes.iter().position(|x| *x == cause) {
            Some(i) => i,
            None => {
                causes.push(cause);
                causes.len() - 1
            }
        };
        gaps.push((*row, ms(g.start_ns), ms(g.end_ns), c));
    }
    let end_ns = run.end_ns().max(summary.idle_gaps.iter().map(|g| g.end_ns).max().unwrap_or(0));
    PageData {
        colors: kinds.iter().map(|k| hex(kind_color(k))).collect(),
        kinds: kinds.iter().map(|k| k.as_str().to_string()).collect(),
        rows,
        gaps,
        cause_colors: causes.iter().map(|c| hex(cause_color(c))).collect(),
        causes,
        jobs,
        end_ms: ms(end_ns).max(1e-3),
    }
}

fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            _ => o.push(c),
        }
    }
    o
}

fn secs(v: Option<f64>) -> String {
    v.map_or("–".into(), |x| format!("{x:.3} s"))
}

fn pct(v: Option<f64>) -> String {
    v.map_or("–".into(), |x| format!("{:.1} %", x * 100.0))
}

/// Render the page of a run laid out on its lanes. `charts` are embedded in order after the
/// waterfall.
pub fn render(laid: &LaidOut<'_>, summary: &Summary, charts: &[HtmlChart<'_>]) -> String {
    let data = page_data(laid, summary);
    // `</` inside a script element would end it: JSON never needs a raw `</`.
    let json = serde_json::to_string(&data).unwrap_or_else(|_| "null".into()).replace("</", "<\\/");
    let device = super::markdown::device_word(summary);
    let mut h = String::with_capacity(json.len() + 64 * 1024);
    let title = summary.input.as_deref().map_or("proofscope report".to_string(), |i| format!("proofscope report — {i}"));
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title>\n<style>{CSS}</style></head>\n<body data-status=\"loading\">\n",
        esc(&title)
    );
    let _ = write!(h, "<div id=\"err\" class=\"err\" hidden></div>\n<h1>{}</h1>\n", esc(&title));
    let v = &summary.verdict;
    let _ = write!(
        h,
        "<table class=\"head\"><tr><th>proofs completed</th><td>{}</td></tr><tr><th>total s/proof</th><td>{}</td></tr><tr><th>steady-state s/proof</th><td>{}</td></tr><tr><th>{device} busy</th><td>{}</td></tr><tr><th>kernel utilisation</th><td>{}</td></tr><tr><th>binding resource</th><td><b>{}</b></td></tr></table>\n",
        summary.proofs_completed,
        secs(summary.total_s_per_proof),
        secs(summary.steady_state_s_per_proof),
        pct(summary.gpu_utilization),
        pct(summary.kernel_utilization),
        esc(&summary.binding_resource)
    );
    let _ = write!(h, "<h2>Verdict</h2>\n<p>{}</p>\n<ul>", esc(&v.headline));
    for e in &v.evidence {
        let _ = write!(h, "<li>{}</li>", esc(e));
    }
    h.push_str("</ul>\n");
    devices_section(&mut h, summary);
    h.push_str(
        "<h2>Waterfall</h2>\n<p class=\"help\">Wheel: zoom at the pointer · drag: pan · shift+drag: zoom to a range · double-click: whole run. Bars narrower than a pixel merge into a band.</p>\n<div class=\"tools\"><button id=\"reset\">whole run</button> <span id=\"range\"></span></div>\n<div id=\"wf\"><canvas id=\"cv\"></canvas><div id=\"tip\" hidden></div></div>\n<div id=\"legend\"></div>\n",
    );
    for c in charts {
        let _ = write!(h, "<h2>{}</h2>\n<div class=\"chart\">{}</div>\n", esc(c.title), strip_xml_decl(c.svg));
    }
    let _ = write!(h, "<script id=\"data\" type=\"application/json\">{json}</script>\n<script>{SCRIPT}</script>\n</body></html>\n");
    h
}

/// With two or more devices, the *Devices and the host* section of report.md: the host
/// verdict, its evidence and the per-device table ([`Summary::multi_device`], formatted by
/// the same cells as report.md); nothing for one device.
fn devices_section(h: &mut String, summary: &Summary) {
    let Some(md) = &summary.multi_device else { return };
    let v = &md.host;
    let _ = write!(h, "<h2 id=\"devices\">Devices and the host: {}</h2>\n<p><b>{}</b></p>\n<ul>", esc(&v.binding), esc(&v.headline));
    for e in &v.evidence {
        let _ = write!(h, "<li>{}</li>", esc(e));
    }
    let _ = write!(h, "</ul>\n<p class=\"help\">{}</p>\n<table class=\"devices\"><tr>", esc(&super::markdown::devices_note(md)));
    for (name, _) in super::markdown::DEVICE_COLUMNS {
        let _ = write!(h, "<th>{}</th>", esc(name));
    }
    h.push_str("</tr>\n");
    for d in &md.devices {
        h.push_str("<tr>");
        for ((_, numeric), cell) in super::markdown::DEVICE_COLUMNS.iter().zip(super::markdown::device_cells(d)) {
            let _ = write!(h, "<td{}>{}</td>", if *numeric { " class=\"num\"" } else { "" }, esc(&cell));
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</table>\n");
}

/// An SVG file's text without its XML declaration (not allowed inside HTML).
fn strip_xml_decl(svg: &str) -> &str {
    let t = svg.trim_start();
    if t.starts_with("<?xml") {
        t.find("?>").map_or(t, |i| &t[i + 2..])
    } else {
        t
    }
}

const CSS: &str = r#"
body{font-family:system-ui,sans-serif;margin:1.5em;color:#222;max-width:1600px}
h1{font-size:1.3em} h2{font-size:1.1em;margin-top:1.6em}
table.head th{text-align:left;padding-right:1em;font-weight:normal;color:#555}
.err{background:#c62828;color:#fff;padding:.5em;font-family:monospace}
.help{color:#666;font-size:.85em}
#wf{position:relative;border:1px solid #ccc;overflow:hidden}
#cv{display:block;width:100%;cursor:grab}
#tip{position:absolute;pointer-events:none;background:rgba(30,30,30,.92);color:#fff;padding:4px 8px;font:12px monospace;white-space:pre;border-radius:3px}
#legend span{display:inline-block;margin:2px 10px 2px 0;font-size:12px}
#legend i{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:-2px}
.chart svg{max-width:100%;height:auto}
table.devices{border-collapse:collapse;font-size:.9em}
table.devices th,table.devices td{border:1px solid #ddd;padding:2px 8px}
table.devices th{background:#f3f3f3;font-weight:normal;color:#555}
table.devices td.num{text-align:right;font-variant-numeric:tabular-nums}
"#;

/// The waterfall's script (plain ES2015, no library).
const SCRIPT: &str = r#"
(function(){
'use strict';
var body=document.body, errBox=document.getElementById('err');
function fail(msg){errBox.hidden=false;errBox.textContent='script error: '+msg;body.setAttribute('data-status','error: '+msg);}
window.addEventListener('error',function(e){fail(e.message||String(e));});
try{
var D=JSON.parse(document.getElementById('data').textContent);
var cv=document.getElementById('cv'), tip=document.getElementById('tip'), ctx=cv.getContext('2d');
var LABEL=150, ROW=18, AXIS=24, PAD=6;
var t0=0, t1=D.end_ms, W=0, H=0, dpr=window.devicePixelRatio||1;
function fmt(ms){ if(ms===0) return '0'; if(ms>=1000) return (ms/1000).toFixed(ms>=10000?1:3)+' s'; if(ms>=1) return ms.toFixed(2)+' ms'; return (ms*1000).toFixed(1)+' µs'; }
function size(){ W=cv.clientWidth||1000; H=AXIS+D.rows.length*ROW+PAD; cv.width=W*dpr; cv.height=H*dpr; cv.style.height=H+'px'; ctx.setTransform(dpr,0,0,dpr,0,0); }
function x(t){ return LABEL+(t-t0)/(t1-t0)*(W-LABEL-PAD); }
function tAt(px){ return t0+(px-LABEL)/(W-LABEL-PAD)*(t1-t0); }
function draw(){
  ctx.clearRect(0,0,W,H); ctx.font='11px sans-serif'; ctx.textBaseline='middle';
  var pxPerMs=(W-LABEL-PAD)/(t1-t0);
  // time axis
  var step=Math.pow(10,Math.floor(Math.log10((t1-t0)/6))); if((t1-t0)/step>12) step*=2; if((t1-t0)/step>12) step*=2.5;
  ctx.fillStyle='#444'; ctx.strokeStyle='#eee';
  for(var g=Math.ceil(t0/step)*step; g<=t1; g+=step){ var gx=x(g); ctx.beginPath(); ctx.moveTo(gx,AXIS-4); ctx.lineTo(gx,H); ctx.stroke(); ctx.fillText(fmt(g),gx+2,10); }
  // gaps (behind the bars of the device's rows)
  for(var i=0;i<D.gaps.length;i++){ var G=D.gaps[i]; if(G[2]<t0||G[1]>t1) continue; var gx0=Math.max(LABEL,x(G[1])), gx1=Math.min(W-PAD,x(G[2]));
    ctx.fillStyle=D.cause_colors[G[3]]; ctx.globalAlpha=0.55; ctx.fillRect(gx0,AXIS+G[0]*ROW+2,Math.max(1,gx1-gx0),ROW-4); ctx.globalAlpha=1; }
  for(var r=0;r<D.rows.length;r++){
    var row=D.rows[r], y=AXIS+r*ROW;
    if(r%2){ ctx.fillStyle='#fafafa'; ctx.fillRect(LABEL,y,W-LABEL,ROW); }
    ctx.fillStyle='#333'; ctx.fillText(row.label.length>22?row.label.slice(0,21)+'…':row.label,4,y+ROW/2);
    var bandStart=-1, bandEnd=-1;
    function flush(){ if(bandStart>=0){ ctx.fillStyle='#666'; ctx.fillRect(bandStart,y+ROW*0.35,Math.max(1,bandEnd-bandStart),ROW*0.3); bandStart=-1; } }
    for(var k=0;k<row.s.length;k++){
      var s=row.s[k]; if(s[1]<t0||s[0]>t1) continue;
      var bx0=Math.max(LABEL,x(s[0])), bx1=Math.min(W-PAD,x(s[1])), inset=Math.min(s[5],3)*3;
      if(bx1-bx0<1){ if(bandStart<0){bandStart=bx0;bandEnd=bx0+1;} else if(bx0<=bandEnd+1){bandEnd=Math.max(bandEnd,bx0+1);} else {flush(); bandStart=bx0; bandEnd=bx0+1;} continue; }
      flush();
      ctx.fillStyle=D.colors[s[2]]; ctx.fillRect(bx0,y+2+inset,bx1-bx0,ROW-4-2*inset);
      if(s[6]){ ctx.strokeStyle='#c62828'; ctx.strokeRect(bx0,y+2,bx1-bx0,ROW-4); }
      if(s[5]===0 && bx1-bx0>46){ var lab=(s[4]>=0?'p'+s[4]+' ':'')+(s[3]>=0?D.jobs[s[3]].slice(0,8):''); if(lab){ ctx.fillStyle='#fff'; ctx.save(); ctx.beginPath(); ctx.rect(bx0,y,bx1-bx0-2,ROW); ctx.clip(); ctx.fillText(lab,bx0+3,y+ROW/2); ctx.restore(); } }
    }
    flush();
  }
  document.getElementById('range').textContent='showing '+fmt(t0)+' – '+fmt(t1)+' of '+fmt(D.end_ms);
}
function hit(px,py){
  var r=Math.floor((py-AXIS)/ROW); if(r<0||r>=D.rows.length||px<LABEL) return null;
  var t=tAt(px), tol=3*(t1-t0)/(W-LABEL-PAD), best=null;
  var s=D.rows[r].s; for(var k=0;k<s.length;k++){ if(s[k][0]-tol<=t && t<=s[k][1]+tol && (!best||s[k][5]>=best[5])) best=s[k]; }
  if(best) return {row:D.rows[r].label,s:best};
  for(var i=0;i<D.gaps.length;i++){ var G=D.gaps[i]; if(G[0]===r&&G[1]<=t&&t<=G[2]) return {row:D.rows[r].label,gap:G}; }
  return null;
}
var drag=null;
cv.addEventListener('mousedown',function(e){ drag={x:e.offsetX,t0:t0,t1:t1,zoom:e.shiftKey}; });
window.addEventListener('mouseup',function(e){ if(drag&&drag.zoom){ var a=tAt(Math.min(drag.x,e.offsetX)), b=tAt(Math.max(drag.x,e.offsetX)); if(b-a>1e-6){t0=Math.max(0,a);t1=Math.min(D.end_ms,b);draw();} } drag=null; });
cv.addEventListener('mousemove',function(e){
  if(drag&&!drag.zoom){ var dt=(e.offsetX-drag.x)/(W-LABEL-PAD)*(drag.t1-drag.t0); t0=drag.t0-dt; t1=drag.t1-dt; draw(); return; }
  var h=hit(e.offsetX,e.offsetY);
  if(!h){ tip.hidden=true; return; }
  var txt;
  if(h.s){ var s=h.s; txt=D.kinds[s[2]]+(s[3]>=0?'  job '+D.jobs[s[3]]:'')+(s[4]>=0?'  partition '+s[4]:'')+'\n'+fmt(s[0])+' → '+fmt(s[1])+'  ('+fmt(s[1]-s[0])+(s[6]?', never ended':'')+')\n'+h.row; }
  else { var G=h.gap; txt='idle: '+D.causes[G[3]]+'\n'+fmt(G[1])+' → '+fmt(G[2])+'  ('+fmt(G[2]-G[1])+')'; }
  tip.textContent=txt; tip.hidden=false; tip.style.left=Math.min(e.offsetX+12,W-260)+'px'; tip.style.top=(e.offsetY+14)+'px';
});
cv.addEventListener('mouseleave',function(){ tip.hidden=true; });
cv.addEventListener('wheel',function(e){ e.preventDefault(); var t=tAt(e.offsetX), f=e.deltaY>0?1.25:0.8; var n0=t-(t-t0)*f, n1=t+(t1-t)*f; if(n1-n0<1e-4) return; t0=Math.max(0,n0); t1=Math.min(D.end_ms,n1); draw(); },{passive:false});
cv.addEventListener('dblclick',function(){ t0=0; t1=D.end_ms; draw(); });
document.getElementById('reset').addEventListener('click',function(){ t0=0; t1=D.end_ms; draw(); });
window.addEventListener('resize',function(){ size(); draw(); });
var lg=document.getElementById('legend'), html='';
for(var i=0;i<D.kinds.length;i++) html+='<span><i style="background:'+D.colors[i]+'"></i>'+D.kinds[i]+'</span>';
for(var i=0;i<D.causes.length;i++) html+='<span><i style="background:'+D.cause_colors[i]+';opacity:.55"></i>idle: '+D.causes[i]+'</span>';
lg.innerHTML=html;
size(); draw();
body.setAttribute('data-status','ok');
}catch(e){ fail(e&&e.message?e.message:String(e)); }
})();
"#;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::{summarize, AnalyzeOptions};
    use crate::event::{Run, Span};

    fn run() -> Run {
        let mut r = Run::default();
        let mut s = Span::new(SpanKind::Synthesis, 0, 4_000_000);
        s.job = Some("j<1>".into());
        s.partition = Some(0);
        s.worker = Some(0);
        r.spans.push(s);
        let mut g = Span::new(SpanKind::Gpu, 5_000_000, 9_000_000);
        g.job = Some("j<1>".into());
        g.partition = Some(0);
        g.worker = Some(0);
        g.device = Some(0);
        r.spans.push(g);
        r
    }

    #[test]
    fn the_page_carries_its_data_and_script_and_escapes_names() {
        let r = run();
        let s = summarize(&r, &AnalyzeOptions::default());
        let page = render(&LaidOut::new(&r), &s, &[HtmlChart { title: "Chart <a>", svg: "<?xml version=\"1.0\"?><svg></svg>" }]);
        assert!(page.starts_with("<!DOCTYPE html>"));
        assert!(page.contains("Chart &lt;a&gt;"), "titles are escaped");
        assert!(page.contains("<div class=\"chart\"><svg></svg></div>"), "the XML declaration is dropped");
        assert!(!page.contains("http://") && !page.contains("https://"), "no network reference");
        // The data block parses back and holds both spans on their rows.
        let start = page.find("type=\"application/json\">").unwrap() + "type=\"application/json\">".len();
        let end = start + page[start..].find("</script>").unwrap();
        let d: serde_json::Value = serde_json::from_str(&page[start..end].replace("<\\/", "</")).unwrap();
        assert_eq!(d["jobs"][0], "j<1>");
        let spans: usize = d["rows"].as_array().unwrap().iter().map(|r| r["s"].as_array().unwrap().len()).sum();
        assert_eq!(spans, 2);
        assert!(d["kinds"].as_array().unwrap().iter().any(|k| k == "gpu"));
        assert_eq!(d["end_ms"].as_f64().unwrap(), 9.0);
    }

    /// report.html's rows, trace.json's threads and the SVG waterfall's rows come from one
    /// lane assignment: the same lanes, in the same order.
    #[test]
    fn page_rows_trace_threads_and_waterfall_rows_are_one_assignment() {
        let run = crate::export::fixtures::synthetic(3, 4, 2, true);
        let laid = LaidOut::new(&run);
        let s = summarize(&run, &AnalyzeOptions::default());
        let page: Vec<String> = page_data(&laid, &s).rows.into_iter().map(|r| r.label).filter(|l| !l.ends_with(" idle gaps")).collect();
        let lanes: Vec<String> = laid.lanes().iter().map(|l| l.label(&run)).collect();
        assert_eq!(page, lanes);
        assert!(lanes.len() >= 5 && lanes.iter().any(|l| l.starts_with("gpu1")), "{lanes:?}");
        let trace = crate::export::trace::trace_json(&laid);
        let threads: Vec<&str> = trace["traceEvents"].as_array().unwrap().iter().filter(|e| e["name"] == "thread_name").filter_map(|e| e["args"]["name"].as_str()).collect();
        assert_eq!(threads, lanes);
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("w.svg");
        crate::chart::waterfall_svg(&laid, &crate::analysis::gaps::marks(&s.idle_gaps), &p).unwrap();
        let svg = std::fs::read_to_string(&p).unwrap();
        // The row labels are the SVG's texts equal to a lane's label, in order.
        let texts: Vec<&str> = svg.split("<text").skip(1).filter_map(|t| Some(t[t.find('>')? + 1..t.find("</text>")?].trim())).filter(|t| lanes.iter().any(|l| l == t)).collect();
        assert_eq!(texts, lanes);
    }

    #[test]
    fn a_closing_script_tag_in_a_name_cannot_end_the_data_block() {
        let mut r = run();
        r.spans[0].job = Some("</script><script>alert(1)</script>".into());
        let s = summarize(&r, &AnalyzeOptions::default());
        let page = render(&LaidOut::new(&r), &s, &[]);
        assert_eq!(page.matches("</script>").count(), 2, "only the page's own two script elements close");
    }
}
