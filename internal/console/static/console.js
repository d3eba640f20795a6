// Anylift console: live regions, confirmations and the metric graph.
// Everything shown comes from the server already escaped (live regions
// are html/template fragments) or is set as text (graph labels).
"use strict";

(function () {
  const every = 2000;

  // Live regions: fetch the same page as a fragment and swap it in when
  // it changed. A 401 means the session ended: reload to sign in.
  function liveURL() {
    const u = new URL(location.href);
    u.searchParams.set("fragment", "1");
    return u.toString();
  }
  async function refresh(el) {
    try {
      const resp = await fetch(liveURL(), { headers: { "X-Console-Fetch": "1" }, credentials: "same-origin" });
      if (resp.status === 401) { location.reload(); return; }
      if (!resp.ok) { el.dataset.stale = "true"; return; }
      const html = await resp.text();
      el.dataset.stale = "false";
      if (html !== el.dataset.last) {
        el.dataset.last = html;
        el.innerHTML = html;
      }
    } catch (e) {
      el.dataset.stale = "true";
    }
  }
  function startLive() {
    const els = document.querySelectorAll("[data-live]");
    if (els.length === 0) return;
    setInterval(() => els.forEach(refresh), every);
  }

  // Forms that change state ask first.
  document.addEventListener("submit", (ev) => {
    const f = ev.target;
    if (f.classList && f.classList.contains("confirm") && !window.confirm(f.dataset.confirm || "Are you sure?")) {
      ev.preventDefault();
    }
  });

  // The graph: one polyline per location, drawn into an SVG.
  const NS = "http://www.w3.org/2000/svg";
  const colors = ["#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2", "#4b5563"];
  function el(name, attrs, text) {
    const e = document.createElementNS(NS, name);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function fmtTime(ms, span) {
    const d = new Date(ms);
    const hm = d.toISOString().slice(11, 16);
    return span > 2 * 86400000 ? d.toISOString().slice(5, 10) + " " + hm : hm;
  }
  function draw(svg, data) {
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    const W = 800, H = 260, L = 50, R = 30, T = 10, B = 30;
    let maxV = 0, n = 0;
    data.series.forEach((s) => s.points.forEach((p) => { maxV = Math.max(maxV, p[1]); n++; }));
    if (maxV <= 0) maxV = 1;
    maxV = niceMax(maxV);
    const span = Math.max(1, data.to - data.from);
    const x = (t) => L + ((t - data.from) / span) * (W - L - R);
    const y = (v) => T + (1 - v / maxV) * (H - T - B);
    for (let i = 0; i <= 5; i++) {
      const v = (maxV * i) / 5, yy = y(v);
      svg.appendChild(el("line", { x1: L, x2: W - R, y1: yy, y2: yy, class: "grid" }));
      svg.appendChild(el("text", { x: L - 6, y: yy + 4, "text-anchor": "end", class: "axis" }, fmtNum(v)));
    }
    for (let i = 0; i <= 4; i++) {
      const t = data.from + (span * i) / 4;
      svg.appendChild(el("text", { x: x(t), y: H - 8, "text-anchor": "middle", class: "axis" }, fmtTime(t, span)));
    }
    const legend = document.getElementById("legend");
    if (legend) legend.textContent = "";
    data.series.forEach((s, i) => {
      const color = colors[i % colors.length];
      const pts = s.points.map((p) => x(p[0]).toFixed(1) + "," + y(p[1]).toFixed(1)).join(" ");
      const line = el("polyline", { points: pts, fill: "none", stroke: color, "stroke-width": 2, class: "series" });
      line.dataset.location = s.location;
      svg.appendChild(line);
      s.points.forEach((p) => svg.appendChild(el("circle", { cx: x(p[0]), cy: y(p[1]), r: 2.5, fill: color })));
      if (legend) {
        const item = document.createElement("span");
        item.className = "legend-item";
        const sw = document.createElement("span");
        sw.className = "swatch c" + (i % colors.length);
        item.appendChild(sw);
        item.appendChild(document.createTextNode(s.location));
        legend.appendChild(item);
      }
    });
    svg.appendChild(el("text", { x: L + 4, y: T + 12, class: "title" }, data.metric));
    svg.dataset.drawn = String(n);
  }
  function niceMax(v) {
    const p = Math.pow(10, Math.floor(Math.log10(v)));
    for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v) return m * p;
    return 10 * p;
  }
  function fmtNum(v) {
    return Number.isInteger(v) ? String(v) : String(Math.round(v * 100) / 100);
  }
  function startChart() {
    const svg = document.getElementById("chart");
    if (!svg) return;
    const metric = document.getElementById("metric"), range = document.getElementById("range");
    async function load() {
      const u = new URL(svg.dataset.src, location.href);
      u.searchParams.set("metric", metric.value);
      u.searchParams.set("range", range.value);
      try {
        const resp = await fetch(u, { headers: { "X-Console-Fetch": "1" }, credentials: "same-origin" });
        if (resp.ok) draw(svg, await resp.json());
      } catch (e) { /* keep the last drawing */ }
    }
    metric.addEventListener("change", load);
    range.addEventListener("change", load);
    load();
    setInterval(load, 15000);
  }

  document.addEventListener("DOMContentLoaded", () => { startLive(); startChart(); });
})();
