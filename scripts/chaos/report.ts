// The plain summary of a chaos run: faults injected, records, the checker's verdict, failover
// times and unavailability windows, and the command that replays the run.
import { faultName, pct, type Verdict } from "./checker.ts";
import type { History } from "./history.ts";

export interface SummaryOptions {
  seed: number;
  durationS: number;
  faults: readonly string[];
  brokers: number;
  out: string;
  steps?: number;
  quick?: boolean;
}

const sec = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

export function summary(o: SummaryOptions, h: History, v: Verdict, rdkafka: boolean): string {
  const L: string[] = [];
  const rel = (at: number) => `t+${((at - h.startAt) / 1000).toFixed(1)}s`;
  L.push(
    `chaos: seed ${o.seed}, ${o.brokers} brokers, ${o.durationS} s of faults (${
      o.faults.join(",")
    }), ${((h.endAt - h.startAt) / 1000).toFixed(0)} s in all`,
  );
  const kinds = new Map<string, number>();
  for (const f of h.faults) {
    const k = `${f.kind}${f.variant ? `/${f.variant}` : ""}`;
    kinds.set(k, (kinds.get(k) ?? 0) + 1);
  }
  L.push(
    `faults injected: ${h.faults.length} (${[...kinds].map(([k, n]) => `${k} ${n}`).join(", ")})`,
  );
  for (const f of h.faults) {
    L.push(
      `  ${rel(f.startAt)} ${faultName(f)} held ${sec(f.endAt - f.startAt)}, led [${f.led}], ${
        f.recoveredAt === undefined
          ? "NOT recovered"
          : `ISRs full ${sec(f.recoveredAt - f.endAt)} after the heal`
      }${f.note ? `; ${f.note}` : ""}`,
    );
    const errs = faultErrors(h, f);
    if (errs !== "") L.push(`    clients saw: ${errs}`);
  }
  const total = (r: Record<string, number>) => Object.values(r).reduce((a, b) => a + b, 0);
  const by = (r: Record<string, number>) =>
    Object.entries(r).map(([k, n]) => `${k} ${n}`).join(", ") || "none";
  L.push(`records sent: ${total(v.sent)} (${by(v.sent)})`);
  L.push(`acknowledged: ${total(v.acked)} (${by(v.acked)})`);
  L.push(`not acknowledged: ${total(v.failed)} (${by(v.failed)})`);
  if (!rdkafka) L.push(`(python3 confluent_kafka not found: no librdkafka producers)`);
  L.push(
    `lost: ${v.lost}; duplicated (idempotent, one producer session): ${v.duplicatedIdempotent}; ` +
      `re-sent by a client after bumping its epoch (allowed): ${v.duplicatedAcrossEpochs}; ` +
      `duplicated (plain producers, allowed): ${v.duplicatedPlain}; records in the log: ${v.records}`,
  );
  L.push(
    `replicas compared: ${v.replicasCompared}; consumer reads checked: ${v.reads}; commits: ${v.commits}` +
      ` (${h.commits.filter((c) => c.ackAt === undefined).length} not acknowledged); ` +
      `OffsetFetch answers checked: ${v.fetches}`,
  );
  const fo = new Map<string, number[]>();
  let never = 0;
  for (const f of v.failovers) {
    const kind = f.fault.split(" ")[0];
    if (f.ms === undefined) {
      never++;
      continue;
    }
    fo.set(kind, [...(fo.get(kind) ?? []), f.ms]);
  }
  L.push(`failover (fault start -> first acknowledged write on a partition the target led):`);
  for (const [k, xs] of [...fo].sort()) {
    L.push(
      `  ${k}: ${xs.length} partitions, p50 ${sec(pct(xs, 0.5))}, max ${sec(Math.max(...xs))}`,
    );
  }
  if (never > 0) L.push(`  ${never} partition(s) with no acknowledged write before the end`);
  const w = v.windows;
  L.push(
    `unavailability windows (> 1 s without an acknowledgement on a partition): ${w.length}` +
      (w.length > 0
        ? `, total ${sec(w.reduce((a, x) => a + x.ms, 0))}, max ${
          sec(Math.max(...w.map((x) => x.ms)))
        }`
        : ""),
  );
  for (const x of [...w].sort((a, b) => b.ms - a.ms).slice(0, 8)) {
    L.push(
      `  ${h.topic}-${x.p} ${rel(x.from)} for ${sec(x.ms)}${
        x.during.length ? ` during ${x.during.join(", ")}` : " (no fault active)"
      }`,
    );
  }
  if (h.load.length > 0) {
    L.push(
      `machine load (1-minute average, ${h.load.length} samples): start ${h.load[0]}, median ${
        pct(h.load, 0.5)
      }, max ${Math.max(...h.load)}`,
    );
  }
  if (h.liveness.length > 0) {
    L.push(`liveness problems (not violations): ${h.liveness.length}`);
    for (const l of h.liveness.slice(0, 10)) L.push(`  ${l}`);
  }
  if (v.ok) L.push(`VERDICT: OK, no violation`);
  else {
    L.push(
      `VERDICT: ${Object.values(v.counts).reduce((a, b) => a + b, 0)} VIOLATIONS (${
        Object.entries(v.counts).map(([k, n]) => `${k} ${n}`).join(", ")
      })`,
    );
    for (const x of v.violations.slice(0, 30)) L.push(`  ${x.kind}: ${x.msg}`);
  }
  L.push(`history, logs and summary: ${o.out}`);
  L.push(
    `replay: npm run chaos -- --seed ${o.seed} --duration ${o.durationS} --faults ${
      o.faults.join(",")
    } --brokers ${o.brokers}${o.steps !== undefined ? ` --steps ${o.steps}` : ""}${
      o.quick ? " --quick" : ""
    }`,
  );
  return L.join("\n") + "\n";
}

/**
 * The sends that failed while a fault held (until the cluster was whole again), by error: what the
 * clients were told, so a fault is seen to have bitten (a full disk: the storage error).
 */
export function faultErrors(h: History, f: History["faults"][number]): string {
  const until = f.recoveredAt ?? f.endAt;
  const by = new Map<string, number>();
  for (const e of h.fails) {
    if (e.at < f.startAt || e.at > until) continue;
    const k = e.error.split("\n")[0].slice(0, 80);
    by.set(k, (by.get(k) ?? 0) + 1);
  }
  return [...by].sort((a, b) => b[1] - a[1]).slice(0, 3).map(([k, n]) => `${n}× ${k}`).join("; ");
}
