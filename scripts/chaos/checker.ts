// The chaos checker: judges a History (history.ts) with Jepsen's vocabulary for a log. Pure: no
// IO, no clock, so a doctored history in a unit test shows each rule fails when it should.
//
// Safety rules (any breach is a violation and a nonzero exit):
// - lost: an acknowledged record is not at its acknowledged offset in the leader's final log;
// - duplicate: a key of an idempotent producer is in the log more than once within one producer
//   session (pid and epoch; without the leader's batches, any second copy counts). Copies in
//   different epochs are the client's: librdkafka re-sends in-flight records after it bumps its
//   epoch (confluentinc/librdkafka#4953), which no broker can tell from new records;
// - phantom: a record in the log that no client sent;
// - reorder: a record acknowledged before another was sent has the higher offset;
// - divergence: two replicas hold different records at one offset below their high watermarks;
// - dirty-read: a consumer read a record that is not at that offset in the final log;
// - commit-lost: OffsetFetch served something other than the last acknowledged commit (or one in
//   flight); commit-regression: it served less than an earlier answer, with no commit to explain it;
// - double-ack: one key acknowledged twice; unreadable: a partition no replica could be read of;
// - live: what the runner saw as it happened (crashes, the harness ledger's own checks).
import type {
  AckEvent,
  BatchInfo,
  CommitEvent,
  FaultEvent,
  FetchEvent,
  History,
} from "./history.ts";

export type ViolationKind =
  | "lost"
  | "duplicate"
  | "phantom"
  | "reorder"
  | "divergence"
  | "dirty-read"
  | "commit-lost"
  | "commit-regression"
  | "double-ack"
  | "unreadable"
  | "live";

export interface Violation {
  kind: ViolationKind;
  msg: string;
}

export interface Window {
  p: number;
  from: number;
  to: number;
  ms: number;
  /** Faults active when the window opened ("kill 1"). */
  during: string[];
}

export interface FailoverTime {
  fault: string;
  p: number;
  /** Fault start -> first acknowledgement on the partition (undefined: none before the end). */
  ms: number | undefined;
}

export interface Verdict {
  ok: boolean;
  violations: Violation[];
  /** Per kind, how many (the list keeps at most 20 of each). */
  counts: Partial<Record<ViolationKind, number>>;
  sent: Record<string, number>;
  acked: Record<string, number>;
  failed: Record<string, number>;
  lost: number;
  duplicatedIdempotent: number;
  /** Keys of plain producers written more than once: allowed (a retried batch). */
  duplicatedPlain: number;
  /** Keys of idempotent producers written again under a new producer epoch (the client's doing). */
  duplicatedAcrossEpochs: number;
  records: number;
  replicasCompared: number;
  reads: number;
  commits: number;
  fetches: number;
  failovers: FailoverTime[];
  windows: Window[];
}

/** Gaps between acknowledgements on a partition longer than this are unavailability windows. */
export const WINDOW_MS = 1000;
const KEEP = 20;

export function check(h: History): Verdict {
  const violations: Violation[] = [];
  const counts: Partial<Record<ViolationKind, number>> = {};
  const violate = (kind: ViolationKind, msg: string) => {
    const n = (counts[kind] = (counts[kind] ?? 0) + 1);
    if (n <= KEEP) violations.push({ kind, msg });
  };
  const t = (at: number) => `t+${((at - h.startAt) / 1000).toFixed(3)}s`;
  const part = (p: number) => `${h.topic}-${p}`;

  for (const v of h.live) violate("live", v);

  // Who sent what: a key's source decides whether a duplicate of it is allowed.
  const srcOf = new Map<string, string>();
  const sent: Record<string, number> = {};
  for (const s of h.sends) {
    srcOf.set(s.key, s.src);
    sent[s.src] = (sent[s.src] ?? 0) + 1;
  }
  const failed: Record<string, number> = {};
  for (const f of h.fails) failed[f.src] = (failed[f.src] ?? 0) + 1;
  const idempotent = new Set(h.idempotent);

  // The final logs: the leader's copy of each partition is the reference.
  const logs: (Map<number, string> | undefined)[] = [];
  for (let p = 0; p < h.partitions; p++) {
    const r = h.replicas.find((x) => x.p === p && x.leader);
    if (r === undefined) {
      violate("unreadable", `${part(p)}: no leader's copy could be read at the end`);
      continue;
    }
    logs[p] = new Map(r.records);
  }

  // Acknowledged records: each at its offset, acknowledged once.
  const acked: Record<string, number> = {};
  const ackOf = new Map<string, AckEvent>();
  let lost = 0;
  for (const a of h.acks) {
    acked[a.src] = (acked[a.src] ?? 0) + 1;
    srcOf.set(a.key, srcOf.get(a.key) ?? a.src);
    const prev = ackOf.get(a.key);
    if (prev !== undefined) {
      violate("double-ack", `${a.key} acknowledged at ${prev.p}@${prev.o} and at ${a.p}@${a.o}`);
      continue;
    }
    ackOf.set(a.key, a);
    const log = logs[a.p];
    if (log === undefined) continue;
    const at = log.get(a.o);
    if (at !== a.key) {
      lost++;
      violate(
        "lost",
        `${a.key} (${a.src}) acknowledged at ${part(a.p)}@${a.o} (${t(a.ackAt)}) is ${
          at === undefined ? "missing" : `replaced by ${at}`
        }`,
      );
    }
  }

  // Duplicates and phantoms.
  const copies = new Map<string, [number, number][]>();
  let records = 0;
  logs.forEach((log, p) => {
    for (const [o, k] of log ?? []) {
      records++;
      const c = copies.get(k);
      if (c === undefined) copies.set(k, [[p, o]]);
      else c.push([p, o]);
    }
  });
  const session = sessions(h.batches);
  let duplicatedIdempotent = 0;
  let duplicatedPlain = 0;
  let duplicatedAcrossEpochs = 0;
  for (const [k, at] of copies) {
    const src = srcOf.get(k);
    if (src === undefined) {
      violate("phantom", `${k} is in the log ${at.length} time(s) but no client sent it`);
    } else if (at.length > 1 && idempotent.has(src)) {
      const ss = at.map(([p, o]) => session(p, o));
      const where = at.map(([p, o], i) => `${part(p)}@${o}${ss[i] ? ` (${ss[i]})` : ""}`);
      if (ss.every((x) => x !== undefined) && new Set(ss).size === ss.length) {
        duplicatedAcrossEpochs++;
      } else {
        duplicatedIdempotent++;
        violate(
          "duplicate",
          `${k} (idempotent ${src}) is in the log ${at.length} times: ${where.join(", ")}`,
        );
      }
    } else if (at.length > 1) duplicatedPlain++;
  }

  // Real-time order: an acknowledgement received before another send began has the lower offset.
  const unique = [...ackOf.values()];
  for (let p = 0; p < h.partitions; p++) {
    const mine = unique.filter((a) => a.p === p);
    const bySent = [...mine].sort((a, b) => a.sentAt - b.sentAt);
    const byAck = [...mine].sort((a, b) => a.ackAt - b.ackAt);
    let i = 0;
    let top: AckEvent | undefined;
    for (const b of bySent) {
      while (i < byAck.length && byAck[i].ackAt < b.sentAt) {
        if (top === undefined || byAck[i].o > top.o) top = byAck[i];
        i++;
      }
      if (top !== undefined && b.o < top.o) {
        violate(
          "reorder",
          `${part(p)}: ${b.key} sent ${t(b.sentAt)} got offset ${b.o}, below ${top.key}@${top.o} ` +
            `acknowledged before it was sent (${t(top.ackAt)})`,
        );
      }
    }
  }

  // Replicas agree below their high watermarks.
  let replicasCompared = 0;
  for (let p = 0; p < h.partitions; p++) {
    const lead = h.replicas.find((x) => x.p === p && x.leader);
    if (lead === undefined) continue;
    const ref = logs[p]!;
    for (const r of h.replicas) {
      if (r.p !== p || r === lead) continue;
      replicasCompared++;
      const upTo = Math.min(r.highWatermark, lead.highWatermark);
      const from = Math.max(lead.records[0]?.[0] ?? upTo, r.records[0]?.[0] ?? upTo);
      const mine = new Map(r.records);
      let bad = 0;
      for (let o = from; o < upTo; o++) {
        const a = ref.get(o);
        const b = mine.get(o);
        if (a !== b && bad++ < 3) {
          violate(
            "divergence",
            `${part(p)}@${o}: leader ${lead.broker} holds ${a ?? "nothing"}, broker ${r.broker} ` +
              `holds ${b ?? "nothing"} (both below high watermark ${upTo})`,
          );
        }
      }
    }
  }

  // Consumers read only what stays.
  for (const r of h.reads) {
    const log = logs[r.p];
    if (log === undefined) continue;
    const at = log.get(r.o);
    if (at !== r.key) {
      violate(
        "dirty-read",
        `${r.by} read ${r.key} at ${part(r.p)}@${r.o} (${t(r.at)}); the log holds ${
          at ?? "nothing"
        } there`,
      );
    }
  }

  checkOffsets(h, violate, t, part);

  const verdictCounts = Object.values(counts).reduce((a, b) => a + b, 0);
  return {
    ok: verdictCounts === 0,
    violations,
    counts,
    sent,
    acked,
    failed,
    lost,
    duplicatedIdempotent,
    duplicatedPlain,
    duplicatedAcrossEpochs,
    records,
    replicasCompared,
    reads: h.reads.length,
    commits: h.commits.length,
    fetches: h.fetches.length,
    failovers: failovers(h.acks, h.faults),
    windows: windows(h),
  };
}

/** Committed offsets as OffsetFetch served them, against the commits the group made. */
function checkOffsets(
  h: History,
  violate: (k: ViolationKind, m: string) => void,
  t: (at: number) => string,
  part: (p: number) => string,
): void {
  for (let p = 0; p < h.partitions; p++) {
    const commits = h.commits.filter((c) => c.p === p);
    const acked = commits.filter((c) => c.ackAt !== undefined).sort((a, b) => a.ackAt! - b.ackAt!);
    // A commit that could have been applied after `since`: in flight then, or never answered.
    const explains = (offset: number, since: number, before: number) =>
      commits.some((c) =>
        c.offset === offset && c.sentAt < before && (c.ackAt === undefined || c.ackAt > since)
      );
    const fetches = h.fetches.filter((f) => f.p === p).sort((a, b) => a.answeredAt - b.answeredAt);
    let seen: FetchEvent | undefined;
    let j = 0;
    const byAnswer = fetches;
    for (const f of [...fetches].sort((a, b) => a.sentAt - b.sentAt)) {
      // The last commit acknowledged before the fetch was sent.
      const last = lastBefore(acked, f.sentAt);
      if (
        last !== undefined && f.offset !== last.offset &&
        !explains(f.offset, last.ackAt!, f.answeredAt)
      ) {
        violate(
          "commit-lost",
          `${f.by} served ${f.offset} for ${part(p)} (${t(f.sentAt)}), but ${last.offset} (by ` +
            `${last.by}) was acknowledged ${f.sentAt - last.ackAt!} ms before it was asked`,
        );
      }
      // Never less than an answer given before this fetch was sent, unless a commit explains it.
      while (j < byAnswer.length && byAnswer[j].answeredAt < f.sentAt) {
        if (seen === undefined || byAnswer[j].offset > seen.offset) seen = byAnswer[j];
        j++;
      }
      if (
        seen !== undefined && f.offset < seen.offset &&
        !explains(f.offset, seen.sentAt, f.answeredAt)
      ) {
        violate(
          "commit-regression",
          `${f.by} served ${f.offset} for ${part(p)} (${
            t(f.sentAt)
          }) after ${seen.by} had served ` +
            `${seen.offset} (${t(seen.answeredAt)}), and no commit of ${f.offset} was in flight`,
        );
      }
    }
  }
}

/** (partition, offset) -> "pid N epoch E" of the idempotent batch holding it, if known. */
function sessions(batches: BatchInfo[]): (p: number, o: number) => string | undefined {
  const byP = new Map<number, BatchInfo[]>();
  for (const b of batches) {
    const l = byP.get(b.p) ?? [];
    l.push(b);
    byP.set(b.p, l);
  }
  for (const l of byP.values()) l.sort((a, b) => a.base - b.base);
  return (p, o) => {
    const l = byP.get(p) ?? [];
    let lo = 0;
    let hi = l.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (l[mid].last < o) lo = mid + 1;
      else hi = mid;
    }
    const b = l[lo];
    return b !== undefined && b.base <= o && b.pid >= 0
      ? `pid ${b.pid} epoch ${b.epoch}`
      : undefined;
  };
}

function lastBefore(sortedByAck: CommitEvent[], at: number): CommitEvent | undefined {
  let lo = 0;
  let hi = sortedByAck.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sortedByAck[mid].ackAt! < at) lo = mid + 1;
    else hi = mid;
  }
  return lo === 0 ? undefined : sortedByAck[lo - 1];
}

export function faultName(f: FaultEvent): string {
  return `${f.kind}${f.variant ? `/${f.variant}` : ""} ${f.targets.join("+")} (${f.role})`;
}

/**
 * Per fault, per partition its targets led: the fault's start -> the first acknowledgement on the
 * partition. An answer already on its way when the fault hit does not count: only sends begun
 * after it, or answers well after it.
 */
export function failovers(acks: AckEvent[], faults: FaultEvent[]): FailoverTime[] {
  const byP = new Map<number, AckEvent[]>();
  for (const a of acks) {
    const l = byP.get(a.p) ?? [];
    l.push(a);
    byP.set(a.p, l);
  }
  for (const l of byP.values()) l.sort((a, b) => a.ackAt - b.ackAt);
  const out: FailoverTime[] = [];
  for (const f of faults) {
    for (const p of f.led) {
      const first = (byP.get(p) ?? []).find((a) =>
        a.ackAt > f.startAt && (a.sentAt >= f.startAt || a.ackAt >= f.startAt + 100)
      );
      out.push({
        fault: faultName(f),
        p,
        ms: first === undefined ? undefined : first.ackAt - f.startAt,
      });
    }
  }
  return out;
}

/** Gaps of more than WINDOW_MS between acknowledgements on a partition, with the faults active. */
export function windows(h: History): Window[] {
  const out: Window[] = [];
  for (let p = 0; p < h.partitions; p++) {
    const end = h.loadEndAt ?? Infinity;
    const times = h.acks.filter((a) => a.p === p && a.ackAt <= end).map((a) => a.ackAt)
      .sort((a, b) => a - b);
    for (let i = 1; i < times.length; i++) {
      const gap = times[i] - times[i - 1];
      if (gap <= WINDOW_MS) continue;
      const from = times[i - 1];
      const during = h.faults.filter((f) =>
        f.startAt <= times[i] && (f.recoveredAt ?? f.endAt) >= from
      ).map(faultName);
      out.push({ p, from, to: times[i], ms: gap, during });
    }
  }
  return out;
}

export function pct(xs: number[], q: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * (s.length - 1) + 0.5))];
}
