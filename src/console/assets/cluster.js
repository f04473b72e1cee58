// Cluster page: brokers and their sessions as the controller sees them, the gossip membership,
// the metadata quorum, and the partitions that are under-replicated or offline.
import { badge, cell, enc, fill, fmtBytes, fmtMs, h, mapLimit, num, table } from "./dom.js";
import { errorText, isAbort, isUnauthorized } from "./api.js";

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
  const moves = h("section", { "data-testid": "reassignments-section" });
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
    h("h2", null, "Partition reassignments"),
    moves,
    h("h2", null, "Membership (gossip)"),
    members,
  );

  async function refresh() {
    const [c, parts, r] = await Promise.all([
      ctx.api("/cluster"),
      allPartitions(ctx),
      // The section says why it has nothing; the rest of the page does not depend on it.
      ctx.api("/reassignments").catch((e) => {
        if (isAbort(e) || isUnauthorized(e)) throw e;
        return { error: e };
      }),
    ]);
    if (!ctx.alive) return;
    fill(moves, reassignments(r));
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

/** Partitions moving between brokers (GET /reassignments), with each new replica's copy. */
function reassignments(r) {
  if (r.error) {
    return h("p", { class: "muted" }, `Not available here: ${errorText(r.error)}`);
  }
  const summary = h("p", { "data-testid": "reassignment-summary" });
  if (r.partitions.length === 0) {
    summary.textContent = "No partition is moving.";
    return summary;
  }
  const pct = (a, b) => (b > 0 ? `${Math.floor((100 * a) / b)} %` : "–");
  const rate = (x) => (x === null || x === undefined ? "" : `, ${fmtBytes(Math.round(x))}/s`);
  const eta = (x) => (x === null || x === undefined ? "" : `, ${fmtMs(Math.round(x * 1000))} left`);
  summary.textContent = `${r.partitions.length} partition${
    r.partitions.length === 1 ? "" : "s"
  } moving: ${fmtBytes(r.copied_bytes)} of ${fmtBytes(r.total_bytes)} copied (${
    pct(r.copied_bytes, r.total_bytes)
  })${rate(r.rate_bytes_per_sec)}${eta(r.eta_sec)}.`;
  return [
    summary,
    table(
      "reassignments",
      [
        "Topic",
        "Partition",
        "State",
        "Replicas",
        "Target",
        "Adding",
        "Removing",
        "Copy",
        "Throttle",
      ],
      r.partitions.map((m) => [
        h("a", { href: `#/topics/${enc(m.topic)}` }, m.topic),
        num(m.partition),
        badge(m.state, m.state === "copying" ? "warn" : ""),
        m.replicas.join(", "),
        m.target.join(", "),
        m.adding.join(", ") || "–",
        m.removing.join(", ") || "–",
        m.progress.map((p) =>
          h(
            "div",
            null,
            h("progress", { max: Math.max(1, p.total_bytes), value: p.copied_bytes }),
            ` broker ${p.broker}: ${fmtBytes(p.copied_bytes)} of ${fmtBytes(p.total_bytes)} (${
              pct(p.copied_bytes, p.total_bytes)
            })${p.in_isr ? ", in the ISR" : ""}${rate(p.rate_bytes_per_sec)}${eta(p.eta_sec)}`,
          )
        ),
        m.throttle > 0 ? `${fmtBytes(m.throttle)}/s` : "none",
      ]),
    ),
  ];
}
