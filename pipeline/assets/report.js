// report.html's script: draws everything from the JSON in <script id="data">.
// Ids come from the user's files: text goes in through textContent and setAttribute only.
"use strict";
const DATA = JSON.parse(document.getElementById("data").textContent);
const SVG = "http://www.w3.org/2000/svg";
const UNIT_COLOURS = {pcu: "#4c72b0", pmu: "#55a868", fcmu: "#8172b2", agcu: "#8c8c8c"};
const UNIT_NAMES = {pcu: "PCU (compute)", pmu: "PMU (memory)", fcmu: "FCMU", agcu: "AGCU (DRAM port)"};
const PARTS = [["reconfig_s", "reconfiguration", "#8c8c8c"], ["dram_s", "DRAM", "#55a868"],
               ["compute_s", "compute", "#4c72b0"], ["transfer_s", "on-chip transfer", "#dd8452"]];

function el(tag, attrs, text) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = String(text);
  return node;
}

function svgEl(tag, attrs, parent) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
  if (parent) parent.appendChild(node);
  return node;
}

function tooltip(node, text) {
  svgEl("title", {}, node).textContent = text;
}

function table(target, header, rows) {
  const head = el("tr");
  header.forEach(h => head.appendChild(el("th", {}, h)));
  target.appendChild(head);
  rows.forEach(row => {
    const tr = el("tr");
    row.forEach(cell => tr.appendChild(el("td", {}, cell === null ? "-" : cell)));
    target.appendChild(tr);
  });
}

function loadColour(ratio) {
  // 0 -> pale yellow, 1 -> dark red; over-full links are bright red
  if (ratio > 1) return "#ff0000";
  const t = Math.max(0, Math.min(1, ratio));
  const r = Math.round(255 - 90 * t), g = Math.round(220 - 200 * t), b = Math.round(120 - 100 * t);
  return `rgb(${r},${g},${b})`;
}

function header() {
  const status = document.getElementById("status");
  status.className = DATA.status;
  status.textContent = DATA.status === "mapped"
    ? "Mapped: every answer passed the independent checker."
    : `Not mapped: ${DATA.diagnosis || DATA.status}`;
  const list = document.getElementById("result");
  DATA.result.forEach(line => list.appendChild(el("li", {}, line.replace(/^result: /, ""))));
  table(document.getElementById("metrics"), ["metric", "value", "unit", "meaning"],
        DATA.metrics.map(([k, v, u, m]) => [k, typeof v === "boolean" ? (v ? "yes" : "no") : v,
                                              u || "-", m || "-"]));
  table(document.getElementById("stages"), ["stage", "section", "method", "status", "duration (s)"],
        DATA.stages);
}

function timeline() {
  const rows = DATA.sections.filter(s => s.perf);
  if (!rows.length) return;
  document.getElementById("timeline-box").hidden = false;
  const total = rows.reduce((t, s) => t + PARTS.reduce((a, [k]) => a + (s.perf[k] || 0), 0), 0);
  const width = 900, left = 90, rowH = 22, height = rows.length * rowH + 50;
  const svg = svgEl("svg", {class: "timeline", width: width, height: height,
                            viewBox: `0 0 ${width} ${height}`});
  const scale = (width - left - 20) / (total || 1);
  let start = 0;
  rows.forEach((s, i) => {
    const y = 10 + i * rowH;
    svgEl("text", {x: 4, y: y + 14}, svg).textContent = `section ${s.id}`;
    PARTS.forEach(([key, name, colour]) => {
      const seconds = s.perf[key] || 0;
      const bar = svgEl("rect", {x: left + start * scale, y: y, height: rowH - 6, fill: colour,
                                 width: Math.max(seconds * scale, seconds > 0 ? 0.5 : 0),
                                 class: "part", "data-section": s.id}, svg);
      tooltip(bar, `section ${s.id}: ${name} ${seconds.toPrecision(4)} s`);
      start += seconds;
    });
  });
  const axisY = 10 + rows.length * rowH + 4;
  svgEl("line", {x1: left, x2: width - 20, y1: axisY, y2: axisY, stroke: "#444"}, svg);
  svgEl("text", {x: left, y: axisY + 16}, svg).textContent = "0 s";
  const end = svgEl("text", {x: width - 20, y: axisY + 16, "text-anchor": "end"}, svg);
  end.textContent = `${total.toPrecision(4)} s per batch of ${metric("perf batch") || "?"} samples`;
  const box = document.getElementById("timeline");
  box.appendChild(svg);
  box.appendChild(legendOf(PARTS.map(([, name, colour]) => [name, colour])));
}

function metric(name) {
  const row = DATA.metrics.find(m => m[0] === name);
  return row ? row[1] : null;
}

function legendOf(entries) {
  const legend = el("div", {class: "legend"});
  entries.forEach(([name, colour]) => {
    legend.appendChild(el("span", {class: "swatch", style: `background:${colour}`}));
    legend.appendChild(document.createTextNode(name));
  });
  return legend;
}

function gridLegend() {
  const kinds = [...new Set(DATA.fabric.sites.map(s => s[3]))];
  const entries = kinds.map(k => [UNIT_NAMES[k] || k, UNIT_COLOURS[k] || "#ccc"]);
  entries.push(["unused site", "#ffffff"]);
  [0.25, 0.5, 1, 1.5].forEach(r => entries.push([`link load ${r <= 1 ? r : "> 1 (over-full)"}`,
                                                 loadColour(r)]));
  document.getElementById("legend").appendChild(legendOf(entries));
}

function drawGrid(section) {
  const f = DATA.fabric;
  const box = el("div", {class: "grid-box rdu-section", "data-section": section.id});
  const units = section.units.length, perf = section.perf;
  box.appendChild(el("h3", {}, `section ${section.id}: ${units} units` +
    (perf ? `, ${perf.total_s.toPrecision(3)} s per batch` : "")));
  const scale = Math.max(12, Math.min(40, 640 / Math.max(f.cols, f.rows)));
  const svg = svgEl("svg", {class: "grid", viewBox: `-0.5 -0.5 ${f.cols + 1} ${f.rows + 1}`,
                            width: (f.cols + 1) * scale, height: (f.rows + 1) * scale});
  const background = f.segments.map(([x1, y1, x2, y2]) => `M${x1} ${y1}L${x2} ${y2}`).join("");
  svgEl("path", {d: background, stroke: "#e4e4e4", "stroke-width": 0.04, fill: "none"}, svg);
  const links = drawLinks(svg, section);
  const sites = drawSites(svg, section);
  f.switches.forEach(([x, y]) => svgEl("circle", {cx: x, cy: y, r: 0.07, fill: "#555"}, svg));
  wireClicks(svg, section, links, sites);
  box.appendChild(svg);
  return box;
}

function drawLinks(svg, section) {
  const f = DATA.fabric, bySegment = {};
  section.loads.forEach(([link, ratio]) => {
    const s = f.segment_of[link];
    if (s !== undefined) bySegment[s] = Math.max(bySegment[s] || 0, ratio);
  });
  const drawn = {};
  Object.entries(bySegment).forEach(([s, ratio]) => {
    const [x1, y1, x2, y2] = f.segments[s];
    const line = svgEl("line", {x1, y1, x2, y2, class: "link", stroke: loadColour(ratio),
                                "stroke-width": 0.08 + 0.1 * Math.min(ratio, 1.5)}, svg);
    tooltip(line, `load ${ratio} (nets / channels)`);
    drawn[s] = line;
  });
  return drawn;
}

function drawSites(svg, section) {
  const byId = {};
  section.units.forEach(u => { byId[u[0]] = u; });
  const rects = {};
  DATA.fabric.sites.forEach(([id, x, y, unit]) => {
    const used = byId[id];
    const colour = UNIT_COLOURS[unit] || "#999";
    const rect = svgEl("rect", {x: x - 0.35, y: y - 0.35, width: 0.7, height: 0.7,
                                fill: used ? colour : "#fff", stroke: colour,
                                class: used ? "site used" : "site"}, svg);
    if (used) {
      const [, node, op, kind, count] = used;
      rect.setAttribute("data-node", node);
      const text = `${node}\nop: ${op}\nunit: ${kind} at ${id} (${count} unit(s) for this node)`;
      tooltip(rect, text);
      rect.addEventListener("mouseenter", () => {
        document.getElementById("info").textContent = text.replace(/\n/g, "; ");
      });
      rects[node] = rect;
    }
  });
  return rects;
}

function wireClicks(svg, section, links, sites) {
  const segmentOf = DATA.fabric.segment_of;
  let picked = null;
  const clear = () => {
    svg.querySelectorAll(".dim, .hot, .picked").forEach(n => n.classList.remove("dim", "hot", "picked"));
    picked = null;
  };
  svg.addEventListener("click", event => {
    const node = event.target.getAttribute && event.target.getAttribute("data-node");
    const again = node === picked;
    clear();
    if (!node || again) return;
    picked = node;
    Object.values(links).forEach(l => l.classList.add("dim"));
    section.routes.filter(([src, dst]) => src === node || dst === node).forEach(([src, dst, ls]) => {
      ls.forEach(l => { const line = links[segmentOf[l]]; if (line) line.classList.add("hot"); });
      [src, dst].forEach(n => { if (sites[n]) sites[n].classList.add("picked"); });
    });
    const nets = section.routes.filter(([src, dst]) => src === node || dst === node).length;
    document.getElementById("info").textContent = `${node}: ${nets} edge(s) highlighted`;
  });
}

function grids() {
  if (!DATA.fabric) return;
  document.getElementById("grids-box").hidden = false;
  gridLegend();
  const target = document.getElementById("grids");
  DATA.sections.forEach(s => target.appendChild(drawGrid(s)));
}

function schedule() {
  if (!DATA.schedule) return;
  document.getElementById("schedule-box").hidden = false;
  const target = document.getElementById("schedule");
  target.appendChild(el("p", {class: "note"}, `${DATA.schedule.what}s x time slots: an ` +
    `iteration's operation in slot s runs at every cycle c with c mod II = s; a new iteration ` +
    `starts every II = ${DATA.schedule.ii} cycles. Hover a cell for the full names.`));
  DATA.schedule.parts.forEach(part => {
    target.appendChild(el("h3", {}, part.title));
    const t = el("table", {class: "schedule"});
    const head = el("tr");
    head.appendChild(el("th", {}, "slot"));
    part.columns.forEach(c => head.appendChild(el("th", {}, c)));
    t.appendChild(head);
    for (let slot = 0; slot < part.slots; slot++) {
      const tr = el("tr");
      tr.appendChild(el("th", {}, slot));
      part.columns.forEach((c, i) => tr.appendChild(scheduleCell(part.cells[`${slot},${i}`])));
      t.appendChild(tr);
    }
    target.appendChild(t);
  });
}

function scheduleCell(entries) {
  const td = el("td");
  if (!entries) return td;
  td.className = entries.every(e => e[1] === "delay") ? "delay" : "busy";
  td.textContent = entries.map(e => e[0]).join(", ");
  td.setAttribute("title", entries.map(e => e.filter(Boolean).join(" | ")).join("\n"));
  return td;
}

header();
if (DATA.sections) { timeline(); grids(); }
schedule();
document.body.setAttribute("data-ready", "yes");
