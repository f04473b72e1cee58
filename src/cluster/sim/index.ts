// Shared deterministic simulation kit for the sans-IO cluster cores (Raft, SWIM).
//
// API (stable; node ids are numbers, messages are opaque values):
//
//   new Rng(seed)                      seeded PRNG: u32(), next() in [0,1), int(lo, hi) in
//                                      [lo,hi), chance(p), pick(xs), shuffle(xs), fork()
//   new EventQueue<E>()                time-ordered heap, FIFO on ties: push(at, e) -> handle,
//                                      cancel(handle), peekTime() (Infinity if empty), pop(),
//                                      size, clear()
//   new SimClock()                     global ms clock `now`, advanceTo(ms); per-node skew
//                                      setSkew(id, {offsetMs, rate}), localNow(id),
//                                      localAt(id, g), globalAt(id, local) (>= now)
//   new SimNetwork<M>(rng, opts?)      opts: NetworkOptions {minDelayMs, maxDelayMs, lossRate,
//                                      dupRate, stragglerRate}; send(from, to, msg, nowMs);
//                                      nextDeliveryAt(); popDue(nowMs) -> Delivery | undefined;
//                                      partition(a[], b[]) (symmetric), blockOneWay(from, to),
//                                      heal(), canReach(from, to), partitioned, setDown(id, b),
//                                      isDown(id), setOptions(partial), stats, clear()
//   new SimDisk<S>(initial, clone)     per-node stable storage: write(mutation), sync(), live,
//                                      durable, unsynced, crash(rng?) -> state after restart
//                                      (durable + a random prefix of unsynced writes)
//   CAMPAIGNS (campaigns.ts)           registry for scripts/sim.ts: name -> () => Campaign
//
// A typical loop: t = min(net.nextDeliveryAt(), timers.peekTime()); clock.advanceTo(t);
// deliver every net.popDue(t) and fire every due timer, feeding each node its
// clock.localNow(id). Reordering comes from random per-message delays.
export { Rng } from "./rng.ts";
export { EventQueue, type Scheduled } from "./queue.ts";
export { SimClock, type Skew } from "./clock.ts";
export {
  DEFAULT_NETWORK,
  type Delivery,
  type NetworkOptions,
  type NetworkStats,
  type NodeId,
  SimNetwork,
} from "./network.ts";
export { type Mutation, SimDisk } from "./disk.ts";
export type { Campaign, RunOptions, SeedOutcome } from "./campaigns.ts";
export { CAMPAIGNS } from "./campaigns.ts";
