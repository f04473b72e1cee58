// Timing and sizing parameters of the SWIM node, with defaults and the log(n) scalings.

export interface SwimConfig {
  /** Base protocol period: one probe per period (scaled by local health). */
  probeIntervalMs: number;
  /** Wait for a direct ack before asking helpers (scaled by local health). */
  probeTimeoutMs: number;
  /** Helpers asked to ping-req a target that missed its direct ack (SWIM's k). */
  indirectChecks: number;
  /** Minimum suspicion = suspicionMult * max(1, log10(n)) * probeIntervalMs. */
  suspicionMult: number;
  /** Lifeguard: suspicion starts at suspicionMaxMult * minimum and shrinks with confirmations. */
  suspicionMaxMult: number;
  /** Each update is piggybacked retransmitMult * ceil(log10(n + 1)) times (SWIM's λ·log n). */
  retransmitMult: number;
  /** Bound on piggybacked updates per message, by count and by encoded bytes. */
  maxPiggybackUpdates: number;
  maxPiggybackBytes: number;
  /** Full state exchange with a random member (dead ones included: partitions heal). */
  pushPullIntervalMs: number;
  /** Retry a join (to the next seed) while no other member is known. */
  joinRetryMs: number;
  /** Dead and left members are forgotten after this long. */
  deadRetentionMs: number;
  /** Lifeguard local health multiplier: probe interval/timeout scale by 1 + score, score < this. */
  maxLocalHealth: number;
  /** Members told directly of a graceful leave. */
  leaveFanout: number;
}

export const DEFAULT_SWIM_CONFIG: Readonly<SwimConfig> = {
  probeIntervalMs: 1000,
  probeTimeoutMs: 400,
  indirectChecks: 5,
  suspicionMult: 6,
  suspicionMaxMult: 6,
  retransmitMult: 4,
  maxPiggybackUpdates: 8,
  maxPiggybackBytes: 1024,
  pushPullIntervalMs: 10_000,
  joinRetryMs: 2000,
  deadRetentionMs: 10 * 60_000,
  maxLocalHealth: 8,
  leaveFanout: 3,
};

export class SwimConfigError extends Error {
  override readonly name: string = "SwimConfigError";
}

/** Fill defaults and refuse values that would make the protocol meaningless. */
export function resolveSwimConfig(partial: Partial<SwimConfig> = {}): SwimConfig {
  const c: SwimConfig = { ...DEFAULT_SWIM_CONFIG, ...partial };
  for (const [k, v] of Object.entries(c)) {
    if (typeof v !== "number" || !Number.isFinite(v) || v < 0) {
      throw new SwimConfigError(`${k} must be a finite non-negative number`);
    }
  }
  if (c.probeIntervalMs <= 0) throw new SwimConfigError("probeIntervalMs must be > 0");
  if (c.probeTimeoutMs <= 0 || c.probeTimeoutMs >= c.probeIntervalMs) {
    throw new SwimConfigError("probeTimeoutMs must be in (0, probeIntervalMs)");
  }
  if (c.suspicionMult < 1 || c.suspicionMaxMult < 1) {
    throw new SwimConfigError("suspicion multipliers must be >= 1");
  }
  if (c.retransmitMult < 1 || c.maxPiggybackUpdates < 1 || c.maxLocalHealth < 1) {
    throw new SwimConfigError("retransmitMult, maxPiggybackUpdates, maxLocalHealth must be >= 1");
  }
  if (c.maxPiggybackUpdates > 64) throw new SwimConfigError("maxPiggybackUpdates must be <= 64");
  if (c.pushPullIntervalMs <= 0 || c.joinRetryMs <= 0) {
    throw new SwimConfigError("pushPullIntervalMs and joinRetryMs must be > 0");
  }
  return c;
}

/** Retransmissions per update for a cluster of n live members. */
export function retransmitLimit(c: SwimConfig, n: number): number {
  return c.retransmitMult * Math.max(1, Math.ceil(Math.log10(n + 1)));
}

/** Minimum suspicion timeout for n live members (memberlist's log10 scaling). */
export function suspicionMinMs(c: SwimConfig, n: number): number {
  return c.suspicionMult * Math.max(1, Math.log10(Math.max(1, n))) * c.probeIntervalMs;
}

/**
 * Lifeguard: the timeout falls from max toward min as independent confirmations arrive; with k
 * expected confirmations, `confirmations >= k` reaches min.
 */
export function suspicionTimeoutMs(
  minMs: number,
  maxMs: number,
  k: number,
  confirmations: number,
): number {
  if (k < 1) return minMs;
  const frac = Math.log(confirmations + 1) / Math.log(k + 1);
  return Math.max(minMs, Math.floor(maxMs - frac * (maxMs - minMs)));
}
