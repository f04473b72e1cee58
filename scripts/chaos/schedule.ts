// The fault schedule of a chaos run: a sequence of steps drawn from a seed, so a run can be
// replayed. A step names its target by role ("the controller", "the leader of partition 2"), which
// the runner resolves against the live cluster when the step starts; kinds, variants, roles, hold
// times and pauses between faults all come from the seed. Pure: no IO.
import { seededRandom } from "../../src/storage/crash-fs.ts";

export const FAULT_KINDS = [
  "kill",
  "pause",
  "partition",
  "restart",
  "loss",
  "disk-full",
  "reassign",
] as const;
export type FaultKind = typeof FAULT_KINDS[number];

export const PARTITION_VARIANTS = ["isolate", "split", "one-way-out", "one-way-in"] as const;
export type PartitionVariant = typeof PARTITION_VARIANTS[number];

/**
 * A bad link between the target and every other broker, both ways. This kernel has no netem qdisc
 * and nftables has no delay verdict (`queue` needs a userspace NFQUEUE reader), so delay is made
 * the way TCP feels it: `random` drops a share of packets (every drop is a retransmission after an
 * RTO, 200 ms and doubling), `throttle` drops what exceeds a byte rate (a slow link: the sender's
 * window stalls), `flap` cuts the link on and off in bursts of a fraction of a second.
 */
export const LOSS_VARIANTS = ["random", "throttle", "flap"] as const;

export type Role =
  | { role: "controller" }
  | { role: "leader"; partition: number }
  | { role: "coordinator" }
  | { role: "broker"; id: number };

export interface Step {
  kind: FaultKind;
  /** partition: its shape; pause: "long" (past the session timeout) or "short". */
  variant: string;
  target: Role;
  /** How long the fault holds before it is healed (kill: how long the broker stays down). */
  holdMs: number;
  /** Quiet time after the cluster recovered, before this step starts. */
  gapMs: number;
  /** split: the seed's draw for which brokers form the minority side; reassign: the partition. */
  draw: number;
  /** loss/random: percent of packets dropped; loss/throttle: KiB/s let through; loss/flap: ms per
   * cut and per heal; reassign: the copy's throttle in KiB/s (0: none). */
  level?: number;
}

/** mulberry32 (the simulated disk's generator): the same sequence for a seed everywhere. */
export const rng: (seed: number) => () => number = seededRandom;

export interface ScheduleOptions {
  seed: number;
  faults: readonly FaultKind[];
  brokers: number;
  partitions: number;
  /** The broker session timeout: a long pause exceeds it, a short one stays under it. */
  sessionTimeoutMs: number;
  /** Steps to draw (the runner stops when its time is up; it never needs more than this). */
  steps?: number;
  /** Shorter holds and gaps (CI's --quick); the same kinds, variants and roles for a seed. */
  short?: boolean;
}

export function schedule(o: ScheduleOptions): Step[] {
  if (o.faults.length === 0) throw new Error("no fault kinds to draw from");
  const r = rng(o.seed);
  const between = (lo: number, hi: number) => Math.round(lo + r() * (hi - lo));
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
  const out: Step[] = [];
  for (let i = 0; i < (o.steps ?? 200); i++) {
    const kind = pick(o.faults);
    const who = r();
    const target: Role = who < 0.3
      ? { role: "controller" }
      : who < 0.75
      ? { role: "leader", partition: Math.floor(r() * o.partitions) }
      : who < 0.85
      ? { role: "coordinator" }
      : { role: "broker", id: Math.floor(r() * o.brokers) };
    let variant = "";
    let holdMs = 0;
    let level: number | undefined;
    const q = o.short === true;
    if (kind === "kill") holdMs = between(500, q ? 3000 : 8000);
    else if (kind === "restart") holdMs = between(0, q ? 500 : 1500);
    else if (kind === "pause") {
      variant = r() < 0.75 ? "long" : "short";
      holdMs = variant === "long"
        ? between(o.sessionTimeoutMs + (q ? 500 : 1000), o.sessionTimeoutMs + (q ? 2500 : 7000))
        : between(300, Math.max(400, o.sessionTimeoutMs - 1500));
    } else if (kind === "partition") {
      variant = pick(PARTITION_VARIANTS);
      holdMs = between(3000, q ? 6000 : 12_000);
    } else if (kind === "loss") {
      // throttle: replication carries tens of KiB/s here, so a few KiB/s is a link that is slow.
      variant = pick(LOSS_VARIANTS);
      holdMs = between(q ? 3000 : 4000, q ? 6000 : 20_000);
      level = variant === "random"
        ? between(5, 40)
        : variant === "throttle"
        ? between(4, 48)
        : between(200, 1500);
    } else if (kind === "disk-full") {
      // Past the session timeout often enough that a follower's failing appends show in the ISR.
      holdMs = between(2000, q ? 6000 : 15_000);
    } else {
      // reassign: how long the partition stays on the new replicas before it is moved back.
      variant = "out-and-back";
      holdMs = between(1000, q ? 3000 : 10_000);
      level = r() < 0.5 ? 0 : between(64, 512);
    }
    const gapMs = between(1000, q ? 2000 : 5000);
    out.push({
      kind,
      variant,
      target,
      holdMs,
      gapMs,
      draw: r(),
      ...(level !== undefined ? { level } : {}),
    });
  }
  return out;
}

/**
 * The two sides of a partition step: `cut` (the targets) and the rest. isolate and the one-way
 * variants cut the target alone; split cuts a minority drawn from the seed that holds the target
 * (for 3 brokers that is the target alone; for 5, the target and one more).
 */
export function sides(
  variant: string,
  target: number,
  brokers: number[],
  draw: number,
): { cut: number[]; rest: number[] } {
  let cut = [target];
  if (variant === "split") {
    const minority = Math.floor((brokers.length - 1) / 2);
    const others = brokers.filter((b) => b !== target);
    // A deterministic shuffle of the others by the draw.
    const r = rng(Math.floor(draw * 2 ** 32));
    for (let i = others.length - 1; i > 0; i--) {
      const j = Math.floor(r() * (i + 1));
      [others[i], others[j]] = [others[j], others[i]];
    }
    cut = [target, ...others.slice(0, minority - 1)];
  }
  return { cut, rest: brokers.filter((b) => !cut.includes(b)) };
}

export function describeRole(t: Role): string {
  return t.role === "leader"
    ? `leader of ${t.partition}`
    : t.role === "broker"
    ? `broker ${t.id}`
    : t.role;
}
