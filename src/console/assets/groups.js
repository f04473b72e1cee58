// Consumer groups: the list with each group's lag, a group's members, assignments and committed
// offsets with lag per partition (charted over the last minutes, from samples this page takes and
// keeps in memory), resetting offsets (previewed by a dry run first) and deleting a group.
import {
  badge,
  cell,
  confirmDialog,
  enc,
  fill,
  h,
  lineChart,
  mapLimit,
  num,
  table,
} from "./dom.js";
import { errorText, isUnauthorized, navigate } from "./api.js";

const REFRESH_MS = 5000;
/** Lag history kept for the charts: samples of the last SPAN_MS, taken while a page is open. */
const SPAN_MS = 10 * 60_000;
/** Groups whose lag the list fetches (each is one request). */
const DETAIL_LIMIT = 100;

/** group -> { total: [[ms, lag]], parts: Map("topic/partition" -> [[ms, lag]]) } */
const history = new Map();

function sample(d, now = Date.now()) {
  let g = history.get(d.group_id);
  if (!g) history.set(d.group_id, g = { total: [], parts: new Map() });
  const push = (series, v) => {
    series.push([now, v]);
    while (series.length && now - series[0][0] > SPAN_MS) series.shift();
  };
  if (d.lag !== null && d.lag !== undefined) push(g.total, d.lag);
  for (const o of d.offsets) {
    if (o.lag === null || o.lag === undefined) continue;
    const key = `${o.topic}/${o.partition}`;
    if (!g.parts.has(key)) g.parts.set(key, []);
    push(g.parts.get(key), o.lag);
  }
  return g;
}

const stateKind = (s) => s === "Stable" ? "ok" : s === "Empty" ? "" : s === "Dead" ? "bad" : "warn";

export async function groupsPage(ctx) {
  const list = h("section");
  const updated = h("span", { class: "muted" });
  fill(ctx.main, h("h1", null, "Consumer groups ", updated), list);
  async function refresh() {
    const groups = await ctx.api("/groups");
    groups.sort((a, b) => a.group_id.localeCompare(b.group_id));
    const details = await mapLimit(
      groups.slice(0, DETAIL_LIMIT),
      6,
      (g) => ctx.api(`/groups/${enc(g.group_id)}`),
    );
    if (!ctx.alive) return;
    for (const d of details) if (d) sample(d);
    fill(
      list,
      table(
        "groups",
        ["Group", "State", "Protocol type", "Members", "Lag", "Lag, last minutes"],
        groups.map((g, i) => {
          const d = details[i];
          const hist = history.get(g.group_id)?.total ?? [];
          return [
            h("a", { href: `#/groups/${enc(g.group_id)}` }, g.group_id),
            badge(g.state, stateKind(g.state)),
            g.protocol_type || "–",
            num(g.members),
            num(d ? d.lag : undefined),
            hist.length
              ? lineChart(hist, { width: 120, height: 24, spanMs: SPAN_MS, axes: false })
              : "",
          ];
        }),
        "No consumer groups yet.",
      ),
    );
    updated.textContent = `updated ${new Date().toLocaleTimeString()}`;
  }
  await refresh();
  ctx.every(REFRESH_MS, refresh);
}

export async function groupPage(ctx) {
  const group = ctx.arg;
  const facts = h("dl", { class: "facts", "data-testid": "group-info" });
  const chart = h("div", { "data-testid": "lag-chart" });
  const members = h("section");
  const offsets = h("section");
  const updated = h("span", { class: "muted" });
  let latest = null;
  const reset = resetForm(ctx, group, () => latest, () => refresh());
  fill(
    ctx.main,
    h(
      "div",
      { class: "titlebar" },
      h("h1", null, h("span", { "data-testid": "group-name" }, group), " ", updated),
      h("button", {
        type: "button",
        class: "danger",
        "data-testid": "delete-group",
        onclick: () => deleteGroup(ctx, group),
      }, "Delete group…"),
    ),
    facts,
    h("h2", null, "Lag"),
    chart,
    h("h2", null, "Members"),
    members,
    h("h2", null, "Offsets"),
    offsets,
    h("h2", null, "Reset offsets"),
    reset,
  );

  async function refresh() {
    const d = await ctx.api(`/groups/${enc(group)}`);
    if (!ctx.alive) return;
    latest = d;
    const g = sample(d);
    fill(
      facts,
      ...[
        ["State", badge(d.state, stateKind(d.state)), "group-state"],
        ["Protocol", `${d.protocol_type || "–"} / ${d.protocol || "–"}`],
        ["Generation", String(d.generation_id)],
        ["Leader", d.leader || "–"],
        ["Members", String(d.members.length)],
        ["Total lag", d.lag === null ? "unknown" : String(d.lag), "group-lag"],
      ].map(([k, v, id]) =>
        h("div", null, h("dt", null, k), h("dd", id ? { "data-testid": id } : null, v))
      ),
    );
    fill(
      chart,
      lineChart(g.total, { width: 640, height: 140, spanMs: SPAN_MS }),
      h(
        "p",
        { class: "muted" },
        `Total lag, sampled every ${REFRESH_MS / 1000} s while the console is open ` +
          `(${g.total.length} samples; kept in this page only).`,
      ),
    );
    fill(
      members,
      table(
        "group-members",
        ["Member", "Instance id", "Client id", "Host", "Assignment"],
        d.members.map((m) => [
          cell({ class: "mono" }, m.member_id),
          m.group_instance_id ?? "–",
          m.client_id,
          m.client_host,
          m.assignment.map((a) => `${a.topic}: ${a.partitions.join(", ")}`).join("; ") || "–",
        ]),
        "No members: the group is inactive (its offsets can be reset).",
      ),
    );
    const rows = [...d.offsets].sort((a, b) =>
      a.topic.localeCompare(b.topic) || a.partition - b.partition
    );
    fill(
      offsets,
      table(
        "group-offsets",
        ["Topic", "Partition", "Committed", "End", "Lag", "Trend", "Metadata"],
        rows.map((o) => {
          const hist = g.parts.get(`${o.topic}/${o.partition}`) ?? [];
          return [
            h("a", { href: `#/topics/${enc(o.topic)}` }, o.topic),
            num(o.partition),
            num(o.committed_offset ?? "none"),
            num(o.end_offset),
            num(o.lag),
            hist.length
              ? lineChart(hist, { width: 120, height: 24, spanMs: SPAN_MS, axes: false })
              : "",
            o.metadata ?? "",
          ];
        }),
        "No committed offsets.",
      ),
    );
    updated.textContent = `updated ${new Date().toLocaleTimeString()}`;
  }
  await refresh();
  ctx.every(REFRESH_MS, refresh);
}

/** The reset form: to earliest, latest, a time, or given offsets; preview, then confirm. */
function resetForm(ctx, group, current, done) {
  const to = h(
    "select",
    { "data-testid": "reset-to" },
    h("option", { value: "earliest" }, "earliest"),
    h("option", { value: "latest" }, "latest"),
    h("option", { value: "timestamp" }, "time"),
    h("option", { value: "offsets" }, "offsets"),
  );
  const topics = h("input", {
    type: "text",
    placeholder: "all topics with offsets",
    "data-testid": "reset-topics",
  });
  const time = h("input", { type: "datetime-local", step: 1, "data-testid": "reset-time" });
  const offsets = h("textarea", {
    rows: 4,
    placeholder: "topic partition offset, one per line",
    "data-testid": "reset-offsets",
  });
  const topicsField = h("label", null, "Topics (comma-separated)", topics);
  const timeField = h("label", null, "Time", time);
  const offsetsField = h("label", null, "Offsets", offsets);
  const show = () => {
    topicsField.hidden = to.value === "offsets";
    timeField.hidden = to.value !== "timestamp";
    offsetsField.hidden = to.value !== "offsets";
    if (to.value === "offsets" && offsets.value === "") {
      // Start from what is committed now.
      offsets.value = (current()?.offsets ?? []).map((o) =>
        `${o.topic} ${o.partition} ${o.committed_offset ?? 0}`
      ).join("\n");
    }
  };
  to.addEventListener("change", show);
  const result = h("div", { "data-testid": "reset-result" });
  const msg = h("p", { class: "error", "data-testid": "reset-error" });

  const body = (dryRun) => {
    const b = { to: to.value, dry_run: dryRun };
    if (to.value === "offsets") {
      b.offsets = offsets.value.split("\n").map((l) => l.trim()).filter(Boolean).map((l) => {
        const m = /^(\S+)\s+(\d+)\s+(\d+)$/.exec(l);
        if (!m) throw new Error(`"${l}" is not "topic partition offset"`);
        return { topic: m[1], partition: Number(m[2]), offset: Number(m[3]) };
      });
    } else {
      const ts = topics.value.split(",").map((t) => t.trim()).filter(Boolean);
      if (ts.length) b.topics = ts;
      if (to.value === "timestamp") {
        const t = new Date(time.value);
        if (Number.isNaN(t.getTime())) throw new Error("choose a time");
        b.timestamp = t.toISOString();
      }
    }
    return b;
  };
  const preview = (r) =>
    table(
      "reset-preview",
      ["Topic", "Partition", "New offset"],
      r.offsets.map((o) => [o.topic, num(o.partition), num(o.offset)]),
    );
  const run = async (ev, apply) => {
    ev.preventDefault();
    msg.textContent = "";
    try {
      const dry = await ctx.api(`/groups/${enc(group)}/offsets/reset`, {
        method: "POST",
        body: body(true),
      });
      if (!apply) {
        fill(result, h("p", null, "Dry run: nothing changed."), preview(dry));
        return;
      }
      const ok = await confirmDialog({
        title: `Reset the offsets of ${group}?`,
        body: [h("p", null, "The group's committed offsets become:"), preview(dry)],
        confirmLabel: "Reset offsets",
        danger: true,
      });
      if (!ok) return;
      const r = await ctx.api(`/groups/${enc(group)}/offsets/reset`, {
        method: "POST",
        body: body(false),
      });
      fill(result, h("p", null, "Offsets reset."), preview(r));
      await done();
    } catch (e) {
      if (!isUnauthorized(e)) msg.textContent = errorText(e);
    }
  };
  const form = h(
    "form",
    { class: "grid narrow", onsubmit: (ev) => run(ev, true) },
    h(
      "p",
      { class: "muted" },
      "Only while the group has no members (stop its consumers first). Offsets given by hand are clamped to the log.",
    ),
    h("label", null, "Reset to", to),
    topicsField,
    timeField,
    offsetsField,
    h(
      "div",
      { class: "actions" },
      h("button", {
        type: "button",
        "data-testid": "reset-preview-btn",
        onclick: (ev) => run(ev, false),
      }, "Preview"),
      h("button", { type: "submit", class: "danger", "data-testid": "reset-submit" }, "Reset…"),
    ),
    msg,
    result,
  );
  show();
  return form;
}

async function deleteGroup(ctx, group) {
  const ok = await confirmDialog({
    title: "Delete this group?",
    body: h(
      "p",
      null,
      "The committed offsets of ",
      h("code", null, group),
      " are deleted. Only an inactive group (no members) can be deleted.",
    ),
    confirmLabel: "Delete group",
    danger: true,
    typeToConfirm: group,
  });
  if (!ok) return;
  try {
    await ctx.api(`/groups/${enc(group)}`, { method: "DELETE" });
    navigate("groups");
  } catch (e) {
    if (!isUnauthorized(e)) {
      ctx.main.prepend(h("p", { class: "error", "data-testid": "delete-error" }, errorText(e)));
    }
  }
}
