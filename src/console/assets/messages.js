// Message browser: a topic's records by partition and offset or time, keys, values and headers
// (JSON pretty-printed), and a live tail (the topic's NDJSON stream for all partitions, long-polls
// for one). Keys, values and headers are whatever producers wrote: they are shown as text only.
import { enc, fill, fmtTime, h } from "./dom.js";
import { apiStream, errorText, isAbort, isUnauthorized } from "./api.js";

/** Rows kept on screen while tailing (the oldest go first). */
const TAIL_ROWS = 500;
/** Characters of a key or value shown before "show all". */
const CLIP = 4000;

const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;

/** A key, value or header value as text: JSON pretty-printed, bytes labelled. */
function valueNode(v, format, compact = false) {
  if (v === null || v === undefined) return h("span", { class: "muted" }, "null");
  if (format === "base64") return clipped(String(v), "b64");
  if (
    format === "json" && typeof v === "object" && !Array.isArray(v) &&
    Object.keys(v).length === 1 && typeof v.base64 === "string"
  ) {
    // The json format's way of giving bytes that are not UTF-8.
    return h(
      "span",
      null,
      h("span", { class: "muted" }, "bytes (base64) "),
      clipped(v.base64, "b64"),
    );
  }
  if (typeof v === "string") {
    if (format === "text" && !compact && /^\s*[[{]/.test(v)) {
      try {
        return clipped(JSON.stringify(JSON.parse(v), null, 2), "json");
      } catch { /* not JSON: shown as it is */ }
    }
    return clipped(v, "");
  }
  return clipped(JSON.stringify(v, null, compact ? 0 : 2), "json");
}

function clipped(text, kind) {
  const pre = h("pre", { class: ["val", kind] }, text.length > CLIP ? text.slice(0, CLIP) : text);
  if (text.length <= CLIP) return pre;
  const more = h("button", {
    type: "button",
    class: "link",
    onclick: () => {
      pre.textContent = text;
      more.remove();
    },
  }, `show all ${text.length} characters`);
  return h("div", null, pre, more);
}

function recordRow(r, format) {
  return h(
    "tr",
    { "data-testid": "record", "data-partition": r.partition, "data-offset": r.offset },
    h("td", { class: "num" }, String(r.partition)),
    h("td", { class: "num" }, String(r.offset)),
    h("td", { class: "nowrap" }, fmtTime(r.timestamp)),
    h("td", { class: "key" }, valueNode(r.key, format, true)),
    h("td", { class: "value" }, valueNode(r.value, format)),
    h(
      "td",
      { class: "headers" },
      (r.headers ?? []).map((x) =>
        h("div", null, h("span", { class: "hkey" }, `${x.key}: `), valueNode(x.value, format, true))
      ),
    ),
  );
}

/** A Last-Event-ID resuming every partition at `next` (the first pair names a record read). */
function resumeId(next) {
  const pairs = Object.entries(next).map(([p, o]) => [Number(p), o]);
  const lead = pairs.findIndex(([, o]) => o >= 1);
  if (lead < 0) return undefined;
  const [[p0, o0]] = pairs.splice(lead, 1);
  return [`${p0}:${o0 - 1}`, ...pairs.map(([p, o]) => `${p}:${o}`)].join(",");
}

export async function messagesPage(ctx) {
  const p = ctx.params;
  const topics = await ctx.api("/topics?internal=true");
  topics.sort((a, b) => Number(a.internal) - Number(b.internal) || a.name.localeCompare(b.name));
  if (topics.length === 0) {
    fill(ctx.main, h("h1", null, "Messages"), h("p", null, "No topics yet."));
    return;
  }
  const field = (label, el) => h("label", null, label, el);
  const topic = h(
    "select",
    { "data-testid": "msg-topic" },
    topics.map((t) => h("option", { value: t.name }, t.name)),
  );
  topic.value = p.get("topic") && topics.some((t) => t.name === p.get("topic"))
    ? p.get("topic")
    : topics[0].name;
  const partition = h("select", { "data-testid": "msg-partition" });
  const fillPartitions = () => {
    const n = topics.find((t) => t.name === topic.value)?.partitions ?? 0;
    fill(
      partition,
      h("option", { value: "all" }, "all"),
      ...Array.from({ length: n }, (_, i) => h("option", { value: String(i) }, String(i))),
    );
  };
  fillPartitions();
  partition.value = p.get("partition") ?? "all";
  if (partition.value === "") partition.value = "all";
  const start = h(
    "select",
    { "data-testid": "msg-start" },
    h("option", { value: "earliest" }, "oldest"),
    h("option", { value: "newest" }, "newest"),
    h("option", { value: "offset" }, "offset"),
    h("option", { value: "time" }, "time"),
  );
  start.value = p.get("start") ?? "earliest";
  const offset = h("input", {
    type: "number",
    min: 0,
    value: p.get("offset") ?? "0",
    "data-testid": "msg-offset",
  });
  const time = h("input", { type: "datetime-local", step: 1, "data-testid": "msg-time" });
  if (p.get("time")) time.value = p.get("time");
  const limit = h("input", {
    type: "number",
    min: 1,
    max: 1000,
    value: p.get("limit") ?? "50",
    "data-testid": "msg-limit",
  });
  const format = h(
    "select",
    { "data-testid": "msg-format" },
    ["json", "text", "base64"].map((f) => h("option", { value: f }, f)),
  );
  format.value = p.get("format") ?? "json";
  const offsetField = field("Offset", offset);
  const timeField = field("Time", time);
  const showStart = () => {
    offsetField.hidden = start.value !== "offset";
    timeField.hidden = start.value !== "time";
  };
  showStart();
  start.addEventListener("change", showStart);
  topic.addEventListener("change", fillPartitions);

  const readBtn = h(
    "button",
    { type: "submit", class: "primary", "data-testid": "msg-read" },
    "Read",
  );
  const tailBtn = h("button", { type: "button", "data-testid": "msg-tail" }, "Live tail");
  const status = h("p", { class: "muted", "data-testid": "msg-status" });
  const tbody = h("tbody");
  const moreBtn = h(
    "button",
    { type: "button", "data-testid": "msg-more", hidden: true },
    "Next page",
  );
  fill(
    ctx.main,
    h("h1", null, "Messages"),
    h(
      "form",
      {
        class: "toolbar",
        onsubmit: (ev) => {
          ev.preventDefault();
          void read(false);
        },
      },
      field("Topic", topic),
      field("Partition", partition),
      field("From", start),
      offsetField,
      timeField,
      field("Limit", limit),
      field("Format", format),
      readBtn,
      tailBtn,
    ),
    status,
    h(
      "table",
      { class: "records", "data-testid": "records" },
      h(
        "thead",
        null,
        h(
          "tr",
          null,
          ["Partition", "Offset", "Timestamp", "Key", "Value", "Headers"].map((x) =>
            h("th", null, x)
          ),
        ),
      ),
      tbody,
    ),
    moreBtn,
  );

  /** Where "Next page" goes on: next_offset (one partition) or next_offsets (all). */
  let cursor = null;
  let tail = null;

  const base = () => `/topics/${enc(topic.value)}`;
  const lim = () => Math.min(1000, Math.max(1, Number(limit.value) || 50));

  function keepInHash() {
    const q = new URLSearchParams({
      topic: topic.value,
      partition: partition.value,
      start: start.value,
      limit: String(lim()),
      format: format.value,
    });
    if (start.value === "offset") q.set("offset", offset.value);
    if (start.value === "time") q.set("time", time.value);
    history.replaceState(null, "", `#/messages?${q}`);
  }

  async function read(more) {
    stopTail();
    status.classList.remove("error");
    status.textContent = "Reading…";
    if (!more) fill(tbody);
    const fmt = format.value;
    const n = lim();
    try {
      let records;
      if (partition.value !== "all") {
        const q = new URLSearchParams({ limit: String(n), format: fmt });
        if (more) q.set("offset", String(cursor));
        else if (start.value === "time") q.set("timestamp", timeIso());
        else if (start.value === "offset") q.set("offset", String(Number(offset.value) || 0));
        else if (start.value === "newest") {
          const d = await ctx.api(base());
          const part = d.partitions.find((x) => x.partition === Number(partition.value));
          q.set("offset", String(Math.max(part.log_start_offset, part.high_watermark - n)));
        } else q.set("offset", "earliest");
        const r = await ctx.api(`${base()}/partitions/${partition.value}/records?${q}`);
        records = r.records;
        cursor = r.next_offset;
        status.textContent =
          `${plural(records.length, "record")} from partition ${partition.value}` +
          ` (log start ${r.log_start_offset}, high watermark ${r.high_watermark}).`;
      } else {
        const q = new URLSearchParams({ limit: String(n), format: fmt, from: "earliest" });
        let resume;
        if (more) resume = resumeId(cursor);
        else if (start.value === "time") q.set("from", timeIso());
        else if (start.value === "offset") q.set("from", String(Number(offset.value) || 0));
        else if (start.value === "newest") {
          // The last records of each partition: its share of the limit back from its end.
          const d = await ctx.api(base());
          const share = Math.max(1, Math.ceil(n / d.partitions.length));
          resume = resumeId(Object.fromEntries(d.partitions.map((x) => [
            x.partition,
            Math.max(x.log_start_offset, x.high_watermark - share),
          ])));
        }
        const r = await ctx.api(`${base()}/records?${q}`, {
          headers: resume ? { "last-event-id": resume } : {},
        });
        records = r.records.sort((a, b) =>
          a.timestamp - b.timestamp || a.partition - b.partition || a.offset - b.offset
        );
        cursor = r.next_offsets;
        status.textContent = `${plural(records.length, "record")} from ${
          plural(Object.keys(r.next_offsets).length, "partition")
        }, oldest first.`;
      }
      if (!ctx.alive) return;
      tbody.append(...records.map((r) => recordRow(r, fmt)));
      if (records.length === 0 && more) status.textContent = "No more records for now.";
      moreBtn.hidden = records.length === 0;
      keepInHash();
    } catch (e) {
      if (isAbort(e) || isUnauthorized(e)) return;
      status.classList.add("error");
      status.textContent = errorText(e);
    }
  }
  moreBtn.addEventListener("click", () => void read(true));

  function timeIso() {
    const t = new Date(time.value);
    if (Number.isNaN(t.getTime())) throw new Error("choose a time");
    return t.toISOString();
  }

  function stopTail() {
    if (!tail) return;
    tail.abort();
    tail = null;
    tailBtn.textContent = "Live tail";
    tailBtn.classList.remove("active");
  }

  let received = 0;
  function showTailed(r, fmt) {
    received++;
    tbody.prepend(recordRow(r, fmt));
    while (tbody.rows.length > TAIL_ROWS) tbody.lastElementChild.remove();
    status.textContent = `Live: ${plural(received, "record")} received (newest first).`;
  }

  async function startTail() {
    stopTail();
    const ac = new AbortController();
    tail = ac;
    const signal = AbortSignal.any([ac.signal, ctx.signal]);
    tailBtn.textContent = "Stop";
    tailBtn.classList.add("active");
    fill(tbody);
    moreBtn.hidden = true;
    received = 0;
    status.classList.remove("error");
    status.textContent = "Connecting…";
    const fmt = format.value;
    try {
      if (partition.value === "all") {
        // The topic's live stream across partitions, from now on: one JSON record per line.
        const q = new URLSearchParams({ follow: "true", from: "latest", format: fmt });
        const res = await apiStream(`${base()}/records?${q}`, {
          signal,
          accept: "application/x-ndjson",
        });
        status.textContent = "Live: waiting for records…";
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        let buf = "";
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buf += value;
          let nl;
          while ((nl = buf.indexOf("\n")) >= 0) {
            const line = buf.slice(0, nl).trim();
            buf = buf.slice(nl + 1);
            // Empty lines are the stream's heartbeats.
            if (line) showTailed(JSON.parse(line), fmt);
          }
        }
        if (tail === ac) status.textContent += " The stream ended (the broker is stopping).";
      } else {
        // One partition: long-polls, each answered as soon as records arrive.
        const path = `${base()}/partitions/${partition.value}/records`;
        let next = (await ctx.api(`${path}?offset=latest&limit=1`, { signal })).next_offset;
        status.textContent = "Live: waiting for records…";
        while (!signal.aborted) {
          const q = new URLSearchParams({
            offset: String(next),
            limit: "200",
            max_wait_ms: "10000",
            format: fmt,
          });
          const r = await ctx.api(`${path}?${q}`, { signal });
          for (const rec of r.records) showTailed(rec, fmt);
          next = r.next_offset;
        }
      }
    } catch (e) {
      if (isAbort(e) || isUnauthorized(e) || signal.aborted) return;
      status.classList.add("error");
      status.textContent = `Live tail stopped: ${errorText(e)}`;
    } finally {
      if (tail === ac) stopTail();
    }
  }
  tailBtn.addEventListener("click", () => (tail ? stopTail() : void startTail()));

  if (p.get("topic")) await read(false);
  else status.textContent = "Choose a topic and press Read, or start a live tail.";
}
