// Cluster page: brokers and their sessions as the controller sees them, the gossip membership,
// the metadata quorum, and the partitions that are under-replicated or offline.
import { badge, cell, enc, fill, fmtMs, h, mapLimit, num, table } from "./dom.js";

const REFRESH_MS = 5000;

const stateKind = (s) =>
  s === "alive" ? "ok" : ["unknown", "suspect", "shutting_down"].includes(s) ? "warn" : "bad";

/** Every partition of every topic (internal ones too), from each topic's own answer. */
export async function allPartitions(ctx) {
  const topics = await ctx.api("/topics?internal=true");
  const details = await mapLimit(topics, 6, (t) => ctx.api(`/topics/${enc(t.name)}`));
  return details.filter(Boolean).flatMap((d) => d.partitions.map((p) => ({ topic: d.name, ...p })));
}

function partitionRows(parts) {
  return parts.map((p) => [
    h("a", { href: `#/topics/${enc(p.topic)}` }, p.topic),
    num(p.partition),
    num(p.leader < 0 ? "none" : p.leader),
    p.replicas.join(", "),
    p.isr.join(", "),
  ]);
}

export async function clusterPage(ctx) {
  const info = h("section", { "data-testid": "cluster-info" });
  const brokers = h("section");
  const members = h("section");
  const health = h("section", { "data-testid": "partition-health" });
  const updated = h("span", { class: "muted" });
  let refreshNow = () => {};
  fill(
    ctx.main,
    h(
      "div",
      { class: "titlebar" },
      h("h1", null, "Cluster ", updated),
      h(
        "button",
        { type: "button", "data-testid": "refresh", onclick: () => refreshNow() },
        "Refresh",
      ),
    ),
    info,
    h("h2", null, "Brokers"),
    brokers,
    h("h2", null, "Partitions needing attention"),
    health,
    h("h2", null, "Membership (gossip)"),
    members,
    // Partition reassignment progress goes here once the API has it (GET of the reassignments in
    // flight); nothing is shown until then, rather than a section that cannot know.
  );

  async function refresh() {
    const [c, parts] = await Promise.all([ctx.api("/cluster"), allPartitions(ctx)]);
    if (!ctx.alive) return;
    const q = c.quorum ?? {};
    fill(
      info,
      h(
        "dl",
        { class: "facts" },
        fact("Cluster id", c.cluster_id, "cluster-id"),
        fact("Controller", c.controller < 0 ? "none" : `broker ${c.controller}`, "controller"),
        fact("This broker", `broker ${c.node_id} (version ${c.version})`, "node-id"),
        fact("Topics", c.topics, "topic-count"),
        fact("Partitions", c.partitions, "partition-count"),
        fact("Groups", c.groups, "group-count"),
        fact(
          "Quorum leader",
          typeof q.leader !== "number" || q.leader < 0 ? "none" : `broker ${q.leader}`,
          "quorum-leader",
        ),
        fact("Term", q.term, "term"),
        fact("This broker's role", q.role, "role"),
        fact("Commit / applied", `${q.commit_index ?? "–"} / ${q.applied_index ?? "–"}`, "index"),
        fact(
          "Voters / learners",
          `${(q.voters ?? []).join(", ") || "–"} / ${(q.learners ?? []).join(", ") || "–"}`,
          "voters",
        ),
      ),
    );
    fill(
      brokers,
      table(
        "brokers",
        [
          "Node",
          "Host",
          "Kafka",
          "HTTP",
          "Cluster",
          "Session",
          "Last heartbeat",
          "Role",
        ],
        c.brokers.map((b) => [
          num(b.node_id),
          b.host,
          num(b.kafka_port),
          num(b.http_port),
          num(b.cluster_port),
          badge(b.state ?? (b.fenced ? "fenced" : "unfenced"), stateKind(b.state)),
          cell({ class: "num" }, fmtMs(b.heartbeat_age_ms)),
          [
            b.node_id === c.controller ? "controller" : "",
            (q.voters ?? []).includes(b.node_id) ? " voter" : "",
            (q.learners ?? []).includes(b.node_id) ? " learner" : "",
          ].join("").trim(),
        ]),
        "No brokers registered.",
      ),
      c.broker_states_from === "metadata"
        ? h(
          "p",
          { class: "muted" },
          "The controller did not answer: sessions are from the metadata's fenced flags.",
        )
        : null,
    );
    const under = parts.filter((p) => p.under_replicated && !p.offline);
    const offline = parts.filter((p) => p.offline);
    const head = ["Topic", "Partition", "Leader", "Replicas", "ISR"];
    fill(
      health,
      h(
        "p",
        { "data-testid": "health-summary" },
        badge(`${offline.length} offline`, offline.length ? "bad" : "ok"),
        " ",
        badge(`${under.length} under-replicated`, under.length ? "warn" : "ok"),
        ` of ${parts.length} partitions.`,
      ),
      offline.length ? h("h3", null, "Offline (no leader)") : null,
      offline.length ? table("offline", head, partitionRows(offline)) : null,
      under.length ? h("h3", null, "Under-replicated (ISR smaller than the replicas)") : null,
      under.length ? table("under-replicated", head, partitionRows(under)) : null,
    );
    fill(
      members,
      table(
        "members",
        ["Node", "State", "Incarnation", "Kafka", "HTTP", "Cluster"],
        (c.members ?? []).map((m) => [
          num(m.id),
          badge(m.state, stateKind(m.state)),
          num(m.incarnation),
          m.addresses?.kafka ?? "–",
          m.addresses?.http ?? "–",
          m.addresses?.cluster ?? "–",
        ]),
        "No gossip members known.",
      ),
    );
    updated.textContent = `updated ${new Date().toLocaleTimeString()}`;
  }

  await refresh();
  refreshNow = ctx.every(REFRESH_MS, refresh);
}

function fact(label, value, testid) {
  return h(
    "div",
    null,
    h("dt", null, label),
    h("dd", { "data-testid": testid }, String(value ?? "–")),
  );
}
