// streamd's live page: polls the JSON API under /api/ every second and
// draws the streams, one stream's quantiles over time, its distribution and
// its heavy hitters (an item stream's heavy hitters only: it has no
// quantiles; a pair stream's totals and correlated sums at p50 and p99 of
// x only). The view (stream, quantiles, window, span, support)
// lives in the URL's fragment, so that a view can be bookmarked.
"use strict";

(function () {
  const POLL_MS = 1000;
  const LIST_PAGE = 100; // streams listed at first, and added by "More streams"
  const MAX_LIST_CALLS = 10; // calls of /api/streams a poll makes at most
  const KEEP_S = 3600; // points the page keeps for its chart
  const CDF_PHIS = Array.from({ length: 101 }, (_, i) => i / 100);
  const DEFAULT_PHIS = [0.5, 0.9, 0.99];
  const SUM_PHIS = [0.5, 0.99]; // a pair stream's correlated sums, at these quantiles of x
  const COLORS = ["#8c959f", "#bf8700", "#1a7f37", "#0969da", "#8250df", "#cf222e",
    "#953800", "#0550ae", "#bf3989", "#116329", "#6639ba", "#24292f"];

  const $ = (id) => document.getElementById(id);
  const state = {
    stream: "", phis: DEFAULT_PHIS.slice(), scope: "all", lastN: 10000, last: "5m", span: 300, support: null,
    logX: false,
    filter: "", listed: LIST_PAGE, grid: [], float64: false, items: false, hierarchy: "", pairs: false, epsilon: 0, count: 0,
    // The chart's points: times in seconds and, per grid φ, a column.
    times: [], cols: [], since: 0, sampled: true,
    timeChart: null, timeKey: "", cdfChart: null, updates: 0, ready: false,
  };

  // ---- formatting ----

  // fmtValue prints a value as the stream stores it: the shortest decimal
  // that reads back to the same float32 (or float64) value.
  function fmtValue(v) {
    if (v === null || v === undefined || Number.isNaN(v)) return "—";
    if (!Number.isFinite(v) || state.float64) return String(v);
    const f = Math.fround(v);
    for (let p = 1; p <= 9; p++) {
      const s = Number(f.toPrecision(p));
      if (Math.fround(s) === f) return String(s);
    }
    return String(f);
  }
  const intFmt = new Intl.NumberFormat("en-US");
  const compactFmt = new Intl.NumberFormat("en-US", { notation: "compact", maximumFractionDigits: 1 });
  function fmtCount(n) { return n < 1e5 ? intFmt.format(n) : compactFmt.format(n); }
  function fmtRate(r) {
    if (r === null || r === undefined) return "—";
    return r < 100 ? r.toFixed(1) : compactFmt.format(r);
  }
  function fmtBytes(b) {
    const units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let i = 0;
    while (b >= 1024 && i < units.length - 1) { b /= 1024; i++; }
    return (i === 0 ? b : b.toFixed(b < 10 ? 1 : 0)) + " " + units[i];
  }
  // appendCells appends to the table row tr a cell for each [text, class]
  // of cells.
  function appendCells(tr, cells) {
    for (const [text, cls] of cells) {
      const td = document.createElement("td");
      td.textContent = text;
      td.className = cls;
      tr.appendChild(td);
    }
  }
  function phiLabel(phi) {
    if (phi === 0) return "min";
    if (phi === 1) return "max";
    return "p" + String(Number((phi * 100).toPrecision(6)));
  }

  // ---- the API ----

  class APIError extends Error {}

  async function api(path, params) {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(params || {})) {
      if (v === null || v === undefined || v === "") continue;
      q.set(k, Array.isArray(v) ? v.join(",") : String(v));
    }
    const resp = await fetch("/api/" + path + "?" + q.toString(), { headers: { Accept: "application/json" } });
    if (resp.status === 401) {
      location.reload(); // the login form
      throw new APIError("logged out");
    }
    const body = await resp.json();
    if (!resp.ok) throw new APIError(body.error || resp.statusText);
    return body;
  }
  // scopeFields returns the request fields of the chosen scope: the last n
  // values, the values of the last duration, or all history.
  const scopeFields = () => ({ last_n: state.scope === "last" ? state.lastN : 0, last: state.scope === "time" ? state.last : "" });
  const scopeText = () => ({
    last: `over the last ${intFmt.format(state.lastN)} values`,
    time: `over the last ${state.last}`,
  })[state.scope] || "over all history";

  // ---- the URL fragment ----

  function readHash() {
    const p = new URLSearchParams(location.hash.slice(1));
    state.stream = p.get("stream") || state.stream;
    if (p.get("phi")) {
      const phis = p.get("phi").split(",").map(Number).filter((x) => x >= 0 && x <= 1);
      if (phis.length) state.phis = phis;
    }
    const n = Number(p.get("last_n"));
    state.scope = n > 0 ? "last" : p.get("last") ? "time" : "all";
    if (n > 0) state.lastN = n;
    if (p.get("last")) state.last = p.get("last");
    state.logX = p.get("log") === "1";
    if (Number(p.get("span")) > 0) state.span = Number(p.get("span"));
    state.support = Number(p.get("support")) > 0 ? Number(p.get("support")) : null;
  }
  function writeHash() {
    const p = new URLSearchParams();
    if (state.stream) p.set("stream", state.stream);
    p.set("phi", state.phis.join(","));
    if (state.scope === "last") p.set("last_n", String(state.lastN));
    if (state.scope === "time") p.set("last", state.last);
    p.set("span", String(state.span));
    if (state.logX) p.set("log", "1");
    if (state.support) p.set("support", String(state.support));
    history.replaceState(null, "", "#" + p.toString());
  }

  // ---- the streams ----

  function renderList(list) {
    const tbody = $("stream-list").tBodies[0];
    tbody.replaceChildren();
    for (const e of list.streams) {
      const tr = document.createElement("tr");
      tr.dataset.stream = e.stream;
      if (e.stream === state.stream) tr.className = "selected";
      const cells = [e.stream, fmtCount(Number(e.stats.count)), fmtRate(e.valuesPerSecond),
        fmtCount(Number(e.stats.rejectedTotal)), fmtBytes(Number(e.stats.memoryBytes))];
      cells.forEach((text, i) => {
        const td = document.createElement("td");
        td.textContent = text;
        if (i > 0) td.className = "num";
        if (i === 0) td.title = e.stream;
        tr.appendChild(td);
      });
      tr.addEventListener("click", () => select(e.stream));
      tbody.appendChild(tr);
    }
    const shown = list.streams.length;
    $("list-note").textContent = list.nextCursor ? `The first ${intFmt.format(shown)}` +
      (state.filter ? " matching" : "") + ` of ${intFmt.format(list.total)} streams.` : "";
    $("list-more").hidden = !list.nextCursor;
    $("summary").textContent = `${intFmt.format(list.total)} stream${list.total === 1 ? "" : "s"}`;
  }

  // fetchList asks for the first state.listed streams that match the
  // filter, page after page (the server searches), and returns them with
  // the total and the cursor of what is left: "" when nothing is.
  async function fetchList() {
    const list = { total: 0, streams: [], nextCursor: "" };
    let cursor = "";
    for (let calls = 0; calls < MAX_LIST_CALLS; calls++) {
      const limit = Math.min(state.listed - list.streams.length, 10000);
      const page = await api("streams", { match: state.filter, limit, cursor });
      list.total = page.total;
      list.streams.push(...page.streams);
      cursor = page.nextCursor;
      if (!cursor || list.streams.length >= state.listed) break;
    }
    list.nextCursor = cursor;
    return list;
  }

  function select(name) {
    if (name === state.stream) return;
    state.stream = name;
    state.support = null;
    resetPoints();
    writeHash();
    refresh();
  }

  function resetPoints() {
    state.times = [];
    state.cols = state.grid.map(() => []);
    state.since = 0;
    state.timeKey = "";
  }

  // ---- one stream ----

  function renderCards(st, rate) {
    const count = Number(st.count);
    const rejected = Object.entries(st.rejected || {}).sort().map(([k, v]) => `${k}: ${v}`).join(", ");
    // An item stream has no mean, min or max.
    // A pair stream's mean, min and max are those of x.
    const x = state.pairs ? " x" : "";
    const values = state.items ? [] : [
      ["mean" + x, count ? String(Number((st.sum / count).toPrecision(6))) : "—"],
      ["min" + x, count ? fmtValue(st.min) : "—"],
      ["max" + x, count ? fmtValue(st.max) : "—"],
    ];
    const cards = [
      [state.pairs ? "pairs" : "count", intFmt.format(count)],
      [state.items ? "items/s" : state.pairs ? "pairs/s" : "values/s", fmtRate(rate)],
      ...values,
      ["ε", String(st.epsilon)],
      ["window W", intFmt.format(Number(st.windowSize))],
      ["last n ≤", intFmt.format(Number(st.slidingWindow))],
      // What the memory budget charges the stream, as streamd query stats
      // says; its summaries' share in the title.
      ["memory", fmtBytes(Number(st.memoryBytes)), `summaries ${fmtBytes(Number(st.summaryBytes))}, reserved ${fmtBytes(Number(st.memoryReservedBytes))}`],
      ["rejected", intFmt.format(Number(st.rejectedTotal)), rejected],
    ];
    const root = $("cards");
    root.replaceChildren();
    for (const [label, value, title] of cards) {
      const div = document.createElement("div");
      div.className = "card";
      div.dataset.card = label;
      const l = document.createElement("div");
      l.className = "label";
      l.textContent = label;
      const v = document.createElement("div");
      v.className = "value";
      v.textContent = value;
      if (title) v.title = title;
      div.append(l, v);
      root.appendChild(div);
    }
  }

  function renderPhiChoice() {
    const fs = $("phi-choice");
    if (fs.dataset.grid === state.grid.join(",") && fs.dataset.phis === state.phis.join(",")) return;
    fs.dataset.grid = state.grid.join(",");
    fs.dataset.phis = state.phis.join(",");
    fs.querySelectorAll("label").forEach((l) => l.remove());
    for (const phi of state.grid) {
      const label = document.createElement("label");
      const box = document.createElement("input");
      box.type = "checkbox";
      box.value = String(phi);
      box.checked = state.phis.includes(phi);
      box.addEventListener("change", () => {
        const chosen = [...fs.querySelectorAll("input:checked")].map((b) => Number(b.value));
        state.phis = chosen.length ? chosen : DEFAULT_PHIS.slice();
        writeHash();
        refresh();
      });
      label.append(box, " " + phiLabel(phi));
      fs.appendChild(label);
    }
  }

  // addPoints appends the server's samples, or one point the page asked
  // for itself (a last-n window, or a stream the server does not sample).
  function addSamples(samples) {
    for (const s of samples) {
      state.times.push(s.timeUnixMs / 1000);
      state.grid.forEach((_, i) => state.cols[i].push(s.quantiles ? s.quantiles[i] : null));
      state.since = Math.max(state.since, s.timeUnixMs);
    }
    const cut = Date.now() / 1000 - KEEP_S;
    let drop = 0;
    while (drop < state.times.length && state.times[drop] < cut) drop++;
    if (drop) {
      state.times.splice(0, drop);
      state.cols.forEach((c) => c.splice(0, drop));
    }
  }

  function renderTimeChart() {
    const el = $("chart-time");
    const shown = state.grid.map((phi, i) => [phi, i]).filter(([phi]) => state.phis.includes(phi));
    const from = Date.now() / 1000 - state.span;
    let start = 0;
    while (start < state.times.length && state.times[start] < from) start++;
    const data = [state.times.slice(start), ...shown.map(([, i]) => state.cols[i].slice(start))];
    const key = shown.map(([phi]) => phi).join(",") + "|" + state.float64;
    if (!state.timeChart || state.timeKey !== key) {
      if (state.timeChart) state.timeChart.destroy();
      state.timeKey = key;
      state.timeChart = new uPlot({
        width: el.clientWidth, height: 300,
        cursor: { drag: { x: false, y: false } },
        // The axis spans the chosen span from the start, so that a fresh
        // chart's few points do not make it read in milliseconds.
        scales: { x: { time: true, range: (u, min, max) => [Math.min(min, max - state.span), max] } },
        series: [{ label: "time" }, ...shown.map(([phi, i]) => ({
          label: phiLabel(phi), stroke: COLORS[i % COLORS.length], width: 1.5,
          value: (u, v) => fmtValue(v), spanGaps: false,
        }))],
        axes: [{ grid: { stroke: "#eaeef2" } }, { size: 70, grid: { stroke: "#eaeef2" } }],
      }, data, el);
    } else {
      state.timeChart.setData(data);
    }
    showLatest(state.timeChart);
    const missing = state.phis.filter((phi) => !state.grid.includes(phi));
    $("time-note").textContent = scopeText() +
      (missing.length ? `; ${missing.map(phiLabel).join(", ")} only in the table` : "") +
      (state.scope === "all" && !state.sampled ? "; since the page opened (the daemon does not sample this stream)" : "");
  }

  // showLatest puts the newest point's values in the chart's legend while
  // the pointer is not over the chart.
  function showLatest(u) {
    const n = u.data[0].length;
    if (n && u.cursor.left < 0) u.setLegend({ idx: n - 1 });
  }

  function renderCDF(q) {
    const el = $("chart-cdf");
    const xs = [], ys = [];
    for (const a of q.quantiles) {
      xs.push(a.value);
      ys.push(a.phi);
    }
    const data = [xs, ys];
    // A log axis spreads skewed data: logarithmic for positive values,
    // asinh (logarithmic away from 0, linear near it) when some are not.
    const distr = !state.logX ? 1 : xs.length && xs[0] > 0 ? 3 : 4;
    const key = state.float64 + "|" + distr;
    if (!state.cdfChart || state.cdfChart.cdfKey !== key) {
      if (state.cdfChart) state.cdfChart.destroy();
      state.cdfChart = new uPlot({
        width: el.clientWidth, height: 240,
        cursor: { drag: { x: false, y: false } },
        scales: { x: { time: false, distr, log: 10, asinh: 1 }, y: { range: [0, 1] } },
        series: [{ label: "value", value: (u, v) => fmtValue(v) },
          { label: "φ", stroke: "#0969da", width: 1.5, fill: "rgba(9,105,218,0.08)", value: (u, v) => (v === null ? "—" : v.toFixed(2)) }],
        axes: [{ grid: { stroke: "#eaeef2" } }, { size: 50, grid: { stroke: "#eaeef2" } }],
      }, data, el);
      state.cdfChart.cdfKey = key;
    } else {
      state.cdfChart.setData(data);
    }
    // The legend shows the median while the pointer is not over the chart.
    const median = ys.indexOf(0.5);
    if (median >= 0 && state.cdfChart.cursor.left < 0) state.cdfChart.setLegend({ idx: median });
  }

  function renderQuantiles(q) {
    const tbody = $("quantiles").tBodies[0];
    tbody.replaceChildren();
    for (const a of q.quantiles) {
      const tr = document.createElement("tr");
      tr.dataset.phi = String(a.phi);
      tr.dataset.value = String(a.value);
      tr.dataset.rankMin = a.rankMin;
      tr.dataset.rankMax = a.rankMax;
      appendCells(tr, [[phiLabel(a.phi), ""], [fmtValue(a.value), "num"],
        [intFmt.format(Number(a.rankMin)), "num"], [intFmt.format(Number(a.rankMax)), "num"]]);
      tbody.appendChild(tr);
    }
    const n = Number(q.count);
    $("quantiles-note").textContent = n
      ? `Of ${intFmt.format(n)} values; each rank within ε·n = ${intFmt.format(Math.floor(q.epsilon * n))} of φ·n.`
      : "No values yet.";
  }

  // renderSums shows a pair stream's correlated sums, one row per answer:
  // each count and Σy as its bounds, one number when they meet.
  function renderSums(sums, st) {
    const tbody = $("sums-table").tBodies[0];
    tbody.replaceChildren();
    const range = (lo, hi, fmt) => (lo === hi ? fmt(lo) : `${fmt(lo)} – ${fmt(hi)}`);
    const num = (v) => String(Number(v.toPrecision(6)));
    for (const [i, a] of sums.entries()) {
      const tr = document.createElement("tr");
      tr.dataset.phi = String(SUM_PHIS[i]);
      tr.dataset.threshold = String(a.threshold);
      const cells = [[phiLabel(SUM_PHIS[i]) + " of x", ""], [fmtValue(a.threshold), "num"]];
      for (const b of [a.atMost, a.atLeast]) {
        cells.push([range(Number(b.countMin), Number(b.countMax), (n) => intFmt.format(n)), "num"],
          [range(b.sumMin, b.sumMax, num), "num"]);
      }
      appendCells(tr, cells);
      tbody.appendChild(tr);
    }
    const a = sums[0];
    $("sums-note").textContent = a
      ? `Of ${intFmt.format(Number(a.count))} pairs, Σy ${num(a.sumY)}, Σ|y| ${num(a.sumAbsY)}; each count within ε·n = ${num(a.countWidth)}, each Σy within ε·Σ|y| = ${num(a.sumWidth)}.`
      : "No pairs yet.";
  }

  function renderHeavyHitters(hh, support) {
    const tbody = $("heavy-hitters").tBodies[0];
    tbody.replaceChildren();
    const n = Number(hh.count) || 1;
    for (const it of hh.items) {
      const lo = Number(it.countMin), hi = Number(it.countMax);
      const tr = document.createElement("tr");
      // An item the daemon kept no string for shows its fingerprint.
      const key = state.items ? [it.item || `fingerprint ${it.fingerprint}`, "item"] : [fmtValue(it.value), "num"];
      if (state.items) tr.dataset.item = it.item;
      else tr.dataset.value = String(it.value);
      tr.dataset.countMin = it.countMin;
      tr.dataset.countMax = it.countMax;
      appendCells(tr, [key, [intFmt.format(lo), "num"], [intFmt.format(hi), "num"]]);
      const td = document.createElement("td");
      const bar = document.createElement("div");
      bar.className = "bar";
      const max = document.createElement("span");
      max.className = "max";
      max.style.width = Math.min(100, (100 * hi) / n) + "%";
      const min = document.createElement("span");
      min.style.width = Math.min(100, (100 * lo) / n) + "%";
      const pct = document.createElement("em");
      pct.textContent = ((100 * lo) / n).toFixed(2) + "%";
      bar.append(max, min, pct);
      td.appendChild(bar);
      tr.appendChild(td);
      tbody.appendChild(tr);
    }
    $("hh-note").textContent = `Every ${state.items ? "item" : "value"} with at least ${(support * 100).toPrecision(3)}% of the ${state.scope === "all" ? "stream" : "window"}, ` +
      `and none below ${(Math.max(0, support - hh.epsilon) * 100).toPrecision(3)}%` + (hh.items.length ? "." : ": none.");
  }

  // renderHHH fills the table of a hierarchy stream's discounted
  // hierarchical heavy hitters.
  function renderHHH(r, support) {
    const tbody = $("hhh").tBodies[0];
    tbody.replaceChildren();
    for (const h of r.hitters) {
      const tr = document.createElement("tr");
      tr.dataset.prefix = h.prefix;
      appendCells(tr, [[h.prefix, "item"], [String(h.level || 0), "num"],
        [intFmt.format(Number(h.discountedMin)), "num"], [intFmt.format(Number(h.discountedMax)), "num"]]);
      tbody.appendChild(tr);
    }
    $("hhh-note").textContent = `Every prefix whose count, less that of the prefixes listed below it, is at least ${(support * 100).toPrecision(3)}% of the ${state.scope === "all" ? "stream" : "window"}, ` +
      `and none below ${(Math.max(0, support - r.precision) * 100).toPrecision(3)}%` + (r.hitters.length ? "." : ": none.");
  }

  // showKind shows the quantile charts, tables and controls for a stream of
  // values and hides them for an item stream, whose heavy hitters are
  // items.
  function showKind() {
    for (const el of [$("chart-time").closest(".panel"), $("chart-cdf").closest(".row"),
      $("phi-choice"), $("span").closest("fieldset")]) {
      el.hidden = state.items || state.pairs;
    }
    // A pair stream answers correlated sums over all history, nothing else.
    $("heavy-hitters").closest(".panel").hidden = state.pairs;
    $("scope-choice").hidden = state.pairs;
    $("sums").hidden = !state.pairs;
    $("heavy-hitters").tHead.rows[0].cells[0].textContent = state.items ? "item" : "value";
    $("heavy-hitters").tHead.rows[0].cells[0].className = state.items ? "item" : "num";
  }

  // ---- the loop ----

  let busy = false;
  async function refresh() {
    if (busy) return;
    busy = true;
    try {
      await update();
      state.updates++;
      document.body.dataset.updates = String(state.updates);
      $("status").textContent = "live · " + new Date().toLocaleTimeString();
      $("status").classList.remove("bad");
    } catch (e) {
      $("status").textContent = "not updating: " + e.message;
      $("status").classList.add("bad");
    } finally {
      busy = false;
    }
  }

  async function update() {
    const list = await fetchList();
    if (!state.stream && list.streams.length) {
      state.stream = list.streams[0].stream;
      writeHash();
    }
    renderList(list);
    $("empty").hidden = list.total > 0 || !!state.filter || !!state.stream;
    $("detail").hidden = !state.stream;
    if (!state.stream) {
      document.body.dataset.state = "empty";
      return;
    }
    const stream = state.stream;
    const [st, hist] = await Promise.all([api("stats", { stream }), api("history", { stream, since: state.since || null })]);
    if (stream !== state.stream) return; // another stream was chosen meanwhile
    $("stream-name").textContent = stream;
    state.float64 = !!st.float64;
    state.items = st.kind === "STREAM_KIND_ITEMS";
    state.hierarchy = st.hierarchy || "";
    $("hhh-panel").hidden = !state.hierarchy;
    $("hhh-hierarchy").textContent = state.hierarchy;
    state.pairs = st.kind === "STREAM_KIND_PAIRS";
    state.epsilon = st.epsilon;
    showKind();
    if (state.grid.join(",") !== hist.phis.join(",")) {
      state.grid = hist.phis;
      resetPoints();
    }
    state.sampled = hist.sampled;
    const entry = list.streams.find((e) => e.stream === stream);
    renderCards(st, entry ? entry.valuesPerSecond : null);
    renderPhiChoice();

    if (state.pairs) {
      const sums = Number(st.count) ? await Promise.all(SUM_PHIS.map((phi) => api("correlated-sum", { stream, aggregate: "quantile", phi }))) : [];
      if (stream !== state.stream) return;
      renderSums(sums, st);
      state.ready = true;
      document.body.dataset.state = "ready";
      return;
    }
    const w = scopeFields();
    const support = state.support || (0.01 > st.epsilon ? 0.01 : Math.min(1, 2 * st.epsilon));
    if (!state.support) $("support").placeholder = String(support);
    // An item stream answers heavy hitters only.
    const asks = [api("heavy-hitters", { stream, support, ...w })];
    // A hierarchy stream is an item stream: its answers are the heavy
    // hitters', then the hierarchical heavy hitters'.
    if (state.hierarchy) asks.push(api("hierarchical-heavy-hitters", { stream, support, ...w }));
    if (!state.items) {
      asks.push(api("quantiles", { stream, phi: state.phis, ...w }),
        api("quantiles", { stream, phi: CDF_PHIS, ...w }));
    }
    const local = !state.items && (state.scope !== "all" || !hist.sampled);
    if (local) asks.push(api("quantiles", { stream, phi: state.grid, ...w }));
    let answers;
    try {
      answers = await Promise.all(asks);
      $("error").hidden = true;
    } catch (e) {
      $("error").textContent = e.message;
      $("error").hidden = false;
      throw e;
    }
    if (stream !== state.stream) return;
    const [hh, now, cdf, point] = answers;
    renderHeavyHitters(hh, support);
    if (state.hierarchy) renderHHH(answers[1], support);
    if (!state.items) {
      if (local) {
        addSamples([{ timeUnixMs: Date.now(), quantiles: Number(point.count) ? point.quantiles.map((a) => a.value) : null }]);
      } else {
        addSamples(hist.samples);
      }
      renderTimeChart();
      renderCDF(cdf);
      renderQuantiles(now);
    }
    state.ready = true;
    document.body.dataset.state = "ready";
  }

  function bindControls() {
    $("filter").addEventListener("input", (e) => { state.filter = e.target.value.trim(); state.listed = LIST_PAGE; refresh(); });
    $("list-more").addEventListener("click", () => { state.listed += LIST_PAGE; refresh(); });
    document.querySelectorAll("input[name=scope]").forEach((r) => r.addEventListener("change", (e) => {
      state.scope = e.target.value;
      resetPoints();
      writeHash();
      refresh();
    }));
    $("last-n").addEventListener("change", (e) => {
      const n = Math.floor(Number(e.target.value));
      if (n > 0) state.lastN = n;
      if (state.scope === "last") resetPoints();
      writeHash();
      refresh();
    });
    $("last-time").addEventListener("change", (e) => {
      state.last = e.target.value;
      if (state.scope === "time") resetPoints();
      writeHash();
      refresh();
    });
    $("log-x").addEventListener("change", (e) => { state.logX = e.target.checked; writeHash(); refresh(); });
    $("span").addEventListener("change", (e) => { state.span = Number(e.target.value); writeHash(); renderTimeChart(); });
    $("support").addEventListener("change", (e) => {
      const s = Number(e.target.value);
      state.support = s > 0 ? s : null;
      writeHash();
      refresh();
    });
    window.addEventListener("hashchange", () => {
      const before = [state.stream, state.scope, state.lastN, state.last].join("|");
      readHash();
      if ([state.stream, state.scope, state.lastN, state.last].join("|") !== before) resetPoints();
      syncControls();
      refresh();
    });
    new ResizeObserver(() => {
      for (const [chart, el] of [[state.timeChart, "chart-time"], [state.cdfChart, "chart-cdf"]]) {
        if (chart) chart.setSize({ width: $(el).clientWidth, height: chart.height });
      }
    }).observe($("detail"));
  }

  function syncControls() {
    document.querySelectorAll("input[name=scope]").forEach((r) => { r.checked = r.value === state.scope; });
    $("last-n").value = String(state.lastN);
    $("last-time").value = state.last;
    $("log-x").checked = state.logX;
    $("span").value = String(state.span);
    $("support").value = state.support ? String(state.support) : "";
  }

  readHash();
  syncControls();
  bindControls();
  (async function loop() {
    await refresh();
    setTimeout(loop, POLL_MS);
  })();
})();
