// Topics: the list (with sizes and record counts from each topic's description), a topic's
// partitions, replicas, ISR and configs, and creating and deleting topics with confirmation.
import {
  badge,
  cell,
  confirmDialog,
  enc,
  fill,
  fmtBytes,
  fmtMs,
  h,
  mapLimit,
  num,
  table,
} from "./dom.js";
import { errorText, navigate } from "./api.js";

/** Topics whose descriptions the list fetches (each is one request). */
const DETAIL_LIMIT = 200;

const recordsIn = (p) => Math.max(0, (p.high_watermark ?? 0) - (p.log_start_offset ?? 0));
const sum = (xs) => xs.reduce((a, b) => a + b, 0);

function topicStatus(d) {
  const offline = d.partitions.filter((p) => p.offline).length;
  const under = d.partitions.filter((p) => p.under_replicated && !p.offline).length;
  const damaged = d.partitions.filter((p) => p.damage).length;
  const out = [];
  if (offline) out.push(badge(`${offline} offline`, "bad"));
  if (under) out.push(badge(`${under} under-replicated`, "warn"));
  if (damaged) out.push(badge(`${damaged} damaged`, "bad"));
  return out.length ? out : [badge("ok", "ok")];
}

export async function topicsPage(ctx) {
  const internal = ctx.params.get("internal") === "true";
  const filter = h("input", {
    type: "search",
    placeholder: "Filter by name",
    "data-testid": "topic-filter",
    value: ctx.params.get("q") ?? "",
  });
  const showInternal = h("input", {
    type: "checkbox",
    checked: internal,
    "data-testid": "show-internal",
  });
  const list = h("section");
  fill(
    ctx.main,
    h(
      "div",
      { class: "titlebar" },
      h("h1", null, "Topics"),
      h("button", {
        type: "button",
        class: "primary",
        "data-testid": "new-topic",
        onclick: () => createTopic(ctx),
      }, "New topic…"),
    ),
    h(
      "div",
      { class: "toolbar" },
      filter,
      h("label", null, showInternal, " internal topics"),
    ),
    list,
  );

  let topics = [];
  const details = new Map();
  function render() {
    const q = filter.value.trim().toLowerCase();
    const shown = topics.filter((t) => t.name.toLowerCase().includes(q));
    fill(
      list,
      table(
        "topics",
        ["Name", "Partitions", "Replication", "Records", "Size", "Status"],
        shown.map((t) => {
          const d = details.get(t.name);
          return [
            h("a", { href: `#/topics/${enc(t.name)}` }, t.name),
            num(t.partitions),
            num(t.replication_factor),
            num(d ? sum(d.partitions.map(recordsIn)) : undefined),
            cell(
              { class: "num" },
              d ? fmtBytes(sum(d.partitions.map((p) => p.size_bytes ?? 0))) : "–",
            ),
            d ? topicStatus(d) : "",
          ];
        }),
        q ? "No topic matches." : "No topics yet.",
      ),
      topics.length > DETAIL_LIMIT
        ? h("p", { class: "muted" }, `Sizes shown for the first ${DETAIL_LIMIT} topics.`)
        : null,
    );
  }
  filter.addEventListener("input", render);
  showInternal.addEventListener("change", () => {
    navigate(`topics${showInternal.checked ? "?internal=true" : ""}`);
  });
  topics = await ctx.api(`/topics${internal ? "?internal=true" : ""}`);
  topics.sort((a, b) => a.name.localeCompare(b.name));
  render();
  await mapLimit(topics.slice(0, DETAIL_LIMIT), 6, async (t) => {
    details.set(t.name, await ctx.api(`/topics/${enc(t.name)}`));
  });
  if (ctx.alive) render();
}

/** "key=value" lines -> a configs object (blank lines and # comments skipped). */
function parseConfigs(text) {
  const out = {};
  for (const line of text.split("\n").map((l) => l.trim())) {
    if (line === "" || line.startsWith("#")) continue;
    const eq = line.indexOf("=");
    if (eq <= 0) throw new Error(`"${line}" is not key=value`);
    out[line.slice(0, eq).trim()] = line.slice(eq + 1).trim();
  }
  return out;
}

function createTopic(ctx) {
  const name = h("input", { type: "text", required: true, "data-testid": "create-name" });
  const partitions = h("input", {
    type: "number",
    min: 1,
    placeholder: "broker default",
    "data-testid": "create-partitions",
  });
  const rf = h("input", {
    type: "number",
    min: 1,
    placeholder: "broker default",
    "data-testid": "create-rf",
  });
  const configs = h("textarea", {
    rows: 3,
    placeholder: "retention.ms=86400000",
    "data-testid": "create-configs",
  });
  const msg = h("p", { class: "error", "data-testid": "create-error" });
  const submit = h(
    "button",
    { type: "submit", class: "primary", "data-testid": "create-submit" },
    "Create…",
  );
  const cancel = h("button", { type: "button" }, "Cancel");
  const dlg = h(
    "dialog",
    { "data-testid": "create-dialog" },
    h(
      "form",
      { class: "grid" },
      h("h2", null, "New topic"),
      h("label", null, "Name", name),
      h("label", null, "Partitions", partitions),
      h("label", null, "Replication factor", rf),
      h("label", null, "Configs (key=value per line)", configs),
      msg,
      h("div", { class: "actions" }, cancel, submit),
    ),
  );
  cancel.addEventListener("click", () => dlg.close());
  dlg.addEventListener("close", () => dlg.remove());
  dlg.querySelector("form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    msg.textContent = "";
    let body;
    try {
      body = { name: name.value.trim(), configs: parseConfigs(configs.value) };
      if (partitions.value) body.partitions = Number(partitions.value);
      if (rf.value) body.replication_factor = Number(rf.value);
    } catch (e) {
      msg.textContent = e.message;
      return;
    }
    submit.disabled = true;
    try {
      // The broker checks the request first, so the confirmation only offers what will work.
      await ctx.api("/topics?validate_only=true", { method: "POST", body });
      const cfg = Object.entries(body.configs);
      const ok = await confirmDialog({
        title: "Create this topic?",
        body: h(
          "ul",
          null,
          h("li", null, "Name: ", h("code", null, body.name)),
          h("li", null, `Partitions: ${body.partitions ?? "the broker's default"}`),
          h("li", null, `Replication factor: ${body.replication_factor ?? "the broker's default"}`),
          cfg.length
            ? h("li", null, "Configs: ", cfg.map(([k, v]) => `${k}=${v}`).join(", "))
            : null,
        ),
        confirmLabel: "Create topic",
      });
      if (!ok) return;
      await ctx.api("/topics", { method: "POST", body });
      dlg.close();
      navigate(`topics/${enc(body.name)}`);
    } catch (e) {
      msg.textContent = errorText(e);
    } finally {
      submit.disabled = false;
    }
  });
  document.body.append(dlg);
  dlg.showModal();
  name.focus();
}

export async function topicPage(ctx) {
  const name = ctx.arg;
  const [d, configs] = await Promise.all([
    ctx.api(`/topics/${enc(name)}`),
    ctx.api(`/topics/${enc(name)}/configs`),
  ]);
  const parts = d.partitions;
  const overridden = configs.filter((c) => !c.is_default);
  fill(
    ctx.main,
    h(
      "div",
      { class: "titlebar" },
      h("h1", { "data-testid": "topic-name" }, name),
      h(
        "div",
        null,
        h("a", {
          class: "button",
          href: `#/messages?topic=${enc(name)}`,
          "data-testid": "browse-topic",
        }, "Browse messages"),
        " ",
        h("button", {
          type: "button",
          class: "danger",
          "data-testid": "delete-topic",
          onclick: () => deleteTopic(ctx, name),
        }, "Delete topic…"),
      ),
    ),
    h(
      "dl",
      { class: "facts" },
      h("div", null, h("dt", null, "Topic id"), h("dd", null, d.topic_id)),
      h("div", null, h("dt", null, "Partitions"), h("dd", null, String(parts.length))),
      h("div", null, h("dt", null, "Records"), h("dd", null, String(sum(parts.map(recordsIn))))),
      h(
        "div",
        null,
        h("dt", null, "Size (leaders' copies)"),
        h("dd", null, fmtBytes(sum(parts.map((p) => p.size_bytes ?? 0)))),
      ),
      h("div", null, h("dt", null, "Internal"), h("dd", null, d.internal ? "yes" : "no")),
      h("div", null, h("dt", null, "Status"), h("dd", null, topicStatus(d))),
    ),
    h("h2", null, "Partitions"),
    table(
      "partitions",
      [
        "Partition",
        "Leader",
        "Epoch",
        "Replicas",
        "ISR",
        "Log start",
        "High watermark",
        "Log end",
        "Records",
        "Size",
        "Replica lag",
        "Status",
      ],
      parts.map((p) => [
        num(p.partition),
        num(p.leader < 0 ? "none" : p.leader),
        num(p.leader_epoch),
        p.replicas.join(", "),
        p.isr.join(", "),
        num(p.log_start_offset),
        num(p.high_watermark),
        num(p.log_end_offset),
        num(recordsIn(p)),
        cell({ class: "num" }, fmtBytes(p.size_bytes)),
        (p.replica_positions ?? []).filter((r) => r.broker_id !== p.leader).map((r) =>
          `${r.broker_id}: ${r.lag ?? "?"} behind${r.lag_ms ? `, ${fmtMs(r.lag_ms)}` : ""}`
        ).join("; ") || "–",
        [
          p.offline ? badge("offline", "bad") : null,
          p.under_replicated && !p.offline ? badge("under-replicated", "warn") : null,
          p.damage ? badge(`damaged: ${p.damage.state}`, "bad") : null,
          !p.offline && !p.under_replicated && !p.damage ? badge("ok", "ok") : null,
        ],
      ]),
    ),
    h("h2", null, `Configs (${overridden.length} set on the topic)`),
    table(
      "configs",
      ["Name", "Value", "Source"],
      // The topic's own settings first, then the defaults.
      [...overridden, ...configs.filter((c) => c.is_default)].map((c) => [
        cell({ class: c.is_default ? "" : "strong" }, c.name),
        cell({ class: "mono" }, c.value ?? "–"),
        c.source,
      ]),
    ),
  );
}

async function deleteTopic(ctx, name) {
  const ok = await confirmDialog({
    title: "Delete this topic?",
    body: h(
      "p",
      null,
      "Every record of ",
      h("code", null, name),
      " is deleted on every broker, and consumer groups lose their offsets for it. This cannot be undone.",
    ),
    confirmLabel: "Delete topic",
    danger: true,
    typeToConfirm: name,
  });
  if (!ok) return;
  try {
    await ctx.api(`/topics/${enc(name)}`, { method: "DELETE" });
    navigate("topics");
  } catch (e) {
    ctx.main.prepend(h("p", { class: "error", "data-testid": "delete-error" }, errorText(e)));
  }
}
