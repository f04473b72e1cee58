// DOM building for the console. Everything shown is created as elements and text nodes: record
// keys, values and headers are written by whoever can produce, so no string is ever parsed as
// HTML (the page's Trusted Types policy makes innerHTML throw anyway).

const SVG_NS = "http://www.w3.org/2000/svg";

function setProps(el, props) {
  for (const [k, v] of Object.entries(props ?? {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) {
      // Only functions: a string here would be an inline handler.
      if (typeof v !== "function") throw new Error(`${k} must be a function`);
      el.addEventListener(k.slice(2), v);
    } else if (k === "class") {
      el.setAttribute("class", Array.isArray(v) ? v.filter(Boolean).join(" ") : v);
    } else if (k === "value" || k === "checked" || k === "selected") {
      el[k] = v;
    } else if (k === "href" && !String(v).startsWith("#/") && !String(v).startsWith("/")) {
      throw new Error("the console links only to its own pages");
    } else {
      el.setAttribute(k, v === true ? "" : String(v));
    }
  }
}

function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

/** An element: h("td", { class: "num" }, "text", otherNode). Strings become text nodes. */
export function h(tag, props, ...children) {
  const el = document.createElement(tag);
  setProps(el, props);
  append(el, children);
  return el;
}

/** An SVG element (charts). */
export function s(tag, props, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  setProps(el, props);
  append(el, children);
  return el;
}

/** Replace an element's children (strings become text; null, undefined and false are skipped). */
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/** A table cell with attributes: cell({ class: "num" }, "12"). */
export const cell = (props, ...children) => ({ cellProps: props, children });

/** A table: headers, then rows of cells (nodes, strings, arrays of them, or cell(…)). */
export function table(testid, headers, rows, empty = "None.") {
  if (rows.length === 0) return h("p", { class: "muted", "data-testid": testid }, empty);
  const mk = (tag, c) =>
    c?.cellProps !== undefined ? h(tag, c.cellProps, c.children) : h(tag, null, c ?? "");
  return h(
    "table",
    { "data-testid": testid },
    h("thead", null, h("tr", null, headers.map((x) => mk("th", x)))),
    h("tbody", null, rows.map((r) => h("tr", null, r.map((c) => mk("td", c))))),
  );
}

/** A right-aligned number cell. */
export const num = (n) => cell({ class: "num" }, n === null || n === undefined ? "–" : String(n));

export const enc = encodeURIComponent;

export function fmtBytes(n) {
  if (n === null || n === undefined) return "–";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  let v = n;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return i === 0 ? `${n} B` : `${v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`;
}

export function fmtTime(ms) {
  if (typeof ms !== "number" || !Number.isFinite(ms)) return "–";
  const d = new Date(ms);
  const pad = (x, n = 2) => String(x).padStart(n, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ` +
    `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${
      pad(d.getMilliseconds(), 3)
    }`;
}

export function fmtMs(ms) {
  if (ms === null || ms === undefined) return "–";
  return ms < 1000
    ? `${ms} ms`
    : ms < 120_000
    ? `${(ms / 1000).toFixed(1)} s`
    : `${Math.round(ms / 60_000)} min`;
}

/** A small state label (alive, fenced, Stable, under-replicated, …). */
export function badge(text, kind = "") {
  return h("span", { class: ["badge", kind] }, text);
}

/**
 * A modal confirmation. With `typeToConfirm`, the button stays disabled until that text is typed
 * (deleting a topic). Resolves true when confirmed.
 */
export function confirmDialog({ title, body, confirmLabel, danger = false, typeToConfirm }) {
  return new Promise((resolve) => {
    const input = typeToConfirm
      ? h("input", { type: "text", "data-testid": "confirm-input", autocomplete: "off" })
      : null;
    const ok = h("button", {
      type: "submit",
      class: danger ? "danger" : "primary",
      "data-testid": "confirm-ok",
      disabled: !!typeToConfirm,
    }, confirmLabel);
    const cancel = h("button", { type: "button", "data-testid": "confirm-cancel" }, "Cancel");
    const dlg = h(
      "dialog",
      { "data-testid": "confirm-dialog" },
      h(
        "form",
        { method: "dialog" },
        h("h2", null, title),
        body,
        input
          ? h("label", null, "Type ", h("code", null, typeToConfirm), " to confirm: ", input)
          : null,
        h("div", { class: "actions" }, cancel, ok),
      ),
    );
    let result = false;
    input?.addEventListener("input", () => (ok.disabled = input.value !== typeToConfirm));
    ok.addEventListener("click", () => (result = true));
    cancel.addEventListener("click", () => dlg.close());
    dlg.addEventListener("close", () => {
      dlg.remove();
      resolve(result);
    });
    document.body.append(dlg);
    dlg.showModal();
    (input ?? ok).focus();
  });
}

/** Run fn over items with at most `limit` at a time; results in order (errors as undefined). */
export async function mapLimit(items, limit, fn) {
  const out = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      try {
        out[i] = await fn(items[i], i);
      } catch (e) {
        if (e?.name === "AbortError") throw e;
        out[i] = undefined;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/**
 * A line chart of [time, value] points, as an SVG element. The time axis covers the samples there
 * are (at least a minute, at most `spanMs`), so a page opened a minute ago still has a readable
 * chart.
 */
export function lineChart(points, { width, height, spanMs, now = Date.now(), axes = true }) {
  const pad = axes ? { l: 48, r: 8, t: 8, b: 18 } : { l: 1, r: 1, t: 2, b: 2 };
  const w = width - pad.l - pad.r;
  const hgt = height - pad.t - pad.b;
  const visible = points.filter((p) => now - p[0] <= spanMs);
  const max = Math.max(1, ...visible.map((p) => p[1]));
  const span = Math.min(spanMs, Math.max(60_000, visible.length ? now - visible[0][0] : 0));
  const x = (t) => pad.l + w * Math.max(0, 1 - (now - t) / span);
  const y = (v) => pad.t + hgt * (1 - v / max);
  const svg = s("svg", {
    width,
    height,
    viewBox: `0 0 ${width} ${height}`,
    class: axes ? "chart" : "spark",
    role: "img",
  });
  if (axes) {
    svg.append(
      s("line", { x1: pad.l, y1: pad.t, x2: pad.l, y2: pad.t + hgt, class: "axis" }),
      s("line", { x1: pad.l, y1: pad.t + hgt, x2: pad.l + w, y2: pad.t + hgt, class: "axis" }),
      s("text", { x: pad.l - 4, y: pad.t + 8, "text-anchor": "end" }, String(max)),
      s("text", { x: pad.l - 4, y: pad.t + hgt, "text-anchor": "end" }, "0"),
      s(
        "text",
        { x: pad.l, y: height - 4 },
        span < 120_000 ? `−${Math.round(span / 1000)} s` : `−${Math.round(span / 60_000)} min`,
      ),
      s("text", { x: pad.l + w, y: height - 4, "text-anchor": "end" }, "now"),
    );
  }
  if (visible.length > 0) {
    svg.append(s("polyline", {
      points: visible.map((p) => `${x(p[0]).toFixed(1)},${y(p[1]).toFixed(1)}`).join(" "),
      class: "series",
      "data-points": visible.length,
    }));
    const last = visible[visible.length - 1];
    svg.append(s("circle", { cx: x(last[0]), cy: y(last[1]), r: axes ? 3 : 2, class: "dot" }));
  }
  return svg;
}
