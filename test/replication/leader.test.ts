// LeaderCore (src/replication/leader.ts): follower positions, the maximal ISR, the lag rule and a
// high watermark that only counts durable bytes and never goes back.
import { describe, expect, test } from "bun:test";
import { ErrorCode } from "../../src/protocol/kafka/error-codes.ts";
import {
  JOIN_RETRY_MS,
  LeaderCore,
  type LeaderInit,
  PROPOSAL_RETRY_MS,
} from "../../src/replication/leader.ts";

const LAG = 1000;

function core(o: Partial<LeaderInit> = {}): LeaderCore {
  return new LeaderCore({
    self: 1,
    leaderEpoch: 5,
    partitionEpoch: 10,
    replicas: [1, 2, 3],
    isr: [1, 2, 3],
    epochStartOffset: 0,
    highWatermark: 0,
    logEnd: 0,
    durableEnd: 0,
    nowMs: 0,
    lagTimeMaxMs: LAG,
    ...o,
  });
}

describe("high watermark", () => {
  test("is the minimum durable end over the ISR", () => {
    const c = core();
    c.onLocal(10, 10);
    expect(c.highWatermark).toBe(0); // followers unknown yet
    c.onFetch(2, 10, 6, 1);
    expect(c.highWatermark).toBe(0);
    expect(c.onFetch(3, 10, 8, 2).hwMoved).toBe(true);
    expect(c.highWatermark).toBe(6);
    c.onFetch(2, 10, 10, 3);
    expect(c.highWatermark).toBe(8);
    c.onFetch(3, 10, 10, 4);
    expect(c.highWatermark).toBe(10);
  });

  test("counts a follower's durable end, not its log end", () => {
    const c = core();
    c.onLocal(10, 10);
    c.onFetch(2, 10, 3, 1);
    c.onFetch(3, 10, 10, 1);
    expect(c.highWatermark).toBe(3);
    // A durable end reported beyond the fetch offset is capped at it.
    c.onFetch(2, 7, 9, 2);
    expect(c.followers.get(2)!.durableEnd).toBe(7);
    expect(c.highWatermark).toBe(7);
  });

  test("counts the leader's own durable end, not its log end", () => {
    const c = core();
    c.onLocal(10, 4);
    c.onFetch(2, 10, 10, 1);
    c.onFetch(3, 10, 10, 1);
    expect(c.highWatermark).toBe(4);
    c.onLocal(10, 10);
    expect(c.highWatermark).toBe(10);
  });

  test("a replica outside the ISR does not hold it back", () => {
    const c = core({ isr: [1, 2] });
    c.onLocal(10, 10);
    c.onFetch(2, 10, 10, 1);
    expect(c.highWatermark).toBe(10);
  });

  test("never goes back within the leadership", () => {
    const c = core();
    c.onLocal(10, 10);
    c.onFetch(2, 10, 10, 1);
    c.onFetch(3, 10, 10, 1);
    expect(c.highWatermark).toBe(10);
    // A follower restarted and reports less; a commit adds nobody new: the watermark stays.
    expect(c.onFetch(2, 4, 4, 2).hwMoved).toBe(false);
    expect(c.highWatermark).toBe(10);
    c.onCommitted(11, [1, 2, 3], [1, 2, 3]);
    expect(c.highWatermark).toBe(10);
  });

  test("starts at the checkpointed value, capped by the log end", () => {
    expect(core({ highWatermark: 7, logEnd: 5, durableEnd: 5 }).highWatermark).toBe(5);
    expect(core({ highWatermark: 3, logEnd: 5, durableEnd: 5 }).highWatermark).toBe(3);
  });

  test("RF 1 with countUnsynced follows the log end", () => {
    const c = core({ replicas: [1], isr: [1], countUnsynced: true });
    c.onLocal(5, 0);
    expect(c.highWatermark).toBe(5);
    const d = core({ replicas: [1], isr: [1] });
    d.onLocal(5, 0);
    expect(d.highWatermark).toBe(0);
  });
});

describe("maximal ISR", () => {
  test("a pending shrink does not lower the bar: the removed follower holds the HW until committed", () => {
    const c = core();
    c.onLocal(10, 10);
    c.onFetch(2, 10, 10, 0);
    c.onFetch(3, 2, 2, 0); // 3 stays behind
    expect(c.highWatermark).toBe(2);
    for (let t = 100; t <= LAG; t += 100) c.onFetch(2, 10, 10, t);
    const p = c.tick(LAG + 1);
    expect(p?.isr).toEqual([1, 2]);
    expect(p?.partitionEpoch).toBe(10);
    expect(p?.leaderEpoch).toBe(5);
    // Proposed, not committed: 3 still counts.
    expect(c.highWatermark).toBe(2);
    c.onLocal(10, 10);
    c.onFetch(2, 10, 10, LAG + 2);
    expect(c.highWatermark).toBe(2);
    // Committed: now it moves.
    expect(c.onCommitted(11, [1, 2], [1, 2, 3])).toBe(true);
    expect(c.highWatermark).toBe(10);
    expect(c.pending).toBeNull();
  });

  test("a pending expansion counts at once", () => {
    const c = core({ isr: [1, 2] });
    c.onLocal(10, 10);
    c.onFetch(2, 10, 10, 1);
    expect(c.highWatermark).toBe(10);
    const r = c.onFetch(3, 10, 10, 2);
    expect(r.proposal?.isr).toEqual([1, 2, 3]);
    expect(c.maximalIsr().sort()).toEqual([1, 2, 3]);
    // 3 is counted before the controller commits it: it now holds the HW back.
    c.onLocal(20, 20);
    c.onFetch(2, 20, 20, 3);
    expect(c.highWatermark).toBe(10);
    c.onFetch(3, 20, 15, 4);
    expect(c.highWatermark).toBe(15);
  });

  test("one change in flight; resent after PROPOSAL_RETRY_MS; refused as not applied means forgotten", () => {
    const c = core({ isr: [1, 2] });
    c.onLocal(10, 10);
    c.onFetch(2, 10, 10, 0);
    const p = c.onFetch(3, 10, 10, 0).proposal!;
    expect(p).toBeDefined();
    expect(c.onFetch(3, 10, 10, 1).proposal).toBeUndefined();
    expect(c.tick(PROPOSAL_RETRY_MS - 1)).toBeUndefined();
    expect(c.tick(PROPOSAL_RETRY_MS)).toBe(p);
    c.onProposalRefused(ErrorCode.INELIGIBLE_REPLICA, undefined, PROPOSAL_RETRY_MS);
    expect(c.pending).toBeNull();
    // Not asked again on the very next fetch (each ask counts 3 for the HW until answered)…
    expect(c.onFetch(3, 10, 10, PROPOSAL_RETRY_MS + 1).proposal).toBeUndefined();
    expect(c.pending).toBeNull();
    // …but once JOIN_RETRY_MS has passed.
    expect(c.onFetch(3, 10, 10, PROPOSAL_RETRY_MS + JOIN_RETRY_MS).proposal?.isr).toEqual([
      1,
      2,
      3,
    ]);
  });

  test("a follower that may not join (fenced or shutting down) is never proposed or counted", () => {
    const c = core({ isr: [1, 2] });
    c.onLocal(10, 10);
    c.onFetch(2, 10, 10, 0);
    for (let t = 0; t < 5; t++) expect(c.onFetch(3, 10, 10, t, false).proposal).toBeUndefined();
    expect(c.pending).toBeNull();
    // It does not hold the HW either: only the ISR counts.
    c.onLocal(20, 20);
    c.onFetch(2, 20, 20, 6);
    c.onFetch(3, 10, 10, 6, false);
    expect(c.highWatermark).toBe(20);
    // Once it may join again, it is proposed as soon as it is in sync.
    expect(c.onFetch(3, 20, 20, 7).proposal?.isr).toEqual([1, 2, 3]);
  });

  test("a refused addition that may have been applied keeps counting until the metadata settles it", () => {
    // Found by the replication simulation: a resend (or duplicate) of an addition is refused as
    // stale once the first copy committed; dropping the addition let the HW pass what the
    // added replica held, which the controller then elected.
    for (
      const code of [undefined, ErrorCode.INVALID_UPDATE_VERSION, ErrorCode.FENCED_LEADER_EPOCH]
    ) {
      const c = core({ isr: [1, 2] });
      c.onLocal(10, 10);
      c.onFetch(2, 10, 10, 0);
      expect(c.onFetch(3, 10, 10, 0).proposal?.isr).toEqual([1, 2, 3]);
      c.onProposalRefused(code);
      expect(c.pending?.isr).toEqual([1, 2, 3]);
      c.onLocal(20, 20);
      c.onFetch(2, 20, 20, 1);
      expect(c.highWatermark).toBe(10); // 3 still counts
      // The metadata arrives (here: the addition did commit): settled.
      c.onCommitted(11, [1, 2, 3], [1, 2, 3]);
      expect(c.pending).toBeNull();
      c.onFetch(3, 20, 20, 2);
      expect(c.highWatermark).toBe(20);
    }
  });

  test("a refusal of an earlier proposal leaves the pending one alone", () => {
    const c = core({ isr: [1, 2] });
    c.onLocal(10, 10);
    c.onFetch(2, 10, 10, 0);
    const first = c.onFetch(3, 10, 10, 0).proposal!;
    c.onCommitted(11, [1, 2, 3], [1, 2, 3]); // settled; a late answer to it is still on its way
    c.onLocal(20, 20);
    const second = c.tick(LAG + 1)!; // 2 fell behind: a removal is pending now
    expect(second).toBeDefined();
    expect(second).not.toBe(first);
    c.onProposalRefused(ErrorCode.INELIGIBLE_REPLICA, first);
    expect(c.pending).toBe(second);
    c.onProposalRefused(ErrorCode.INELIGIBLE_REPLICA, second);
    expect(c.pending).toBeNull();
  });

  test("a refused removal is forgotten (a removal never counted for the HW)", () => {
    const c = core();
    c.onLocal(10, 10);
    c.onFetch(2, 10, 10, LAG);
    expect(c.tick(LAG + 1)?.isr).toEqual([1, 2]);
    c.onProposalRefused(ErrorCode.INVALID_UPDATE_VERSION);
    expect(c.pending).toBeNull();
  });

  test("a stale commit (older partition epoch) is ignored", () => {
    const c = core();
    expect(c.onCommitted(9, [1], [1, 2, 3])).toBe(false);
    expect(c.isr).toEqual([1, 2, 3]);
    expect(c.partitionEpoch).toBe(10);
  });

  test("refuses to lead outside its own ISR", () => {
    expect(() => core({ isr: [2, 3] })).toThrow();
    const c = core();
    expect(() => c.onCommitted(11, [2, 3], [1, 2, 3])).toThrow();
  });
});

describe("lag rule (Kafka's lastCaughtUpTimeMs)", () => {
  test("a grace period from the start of the leadership, then silent followers leave", () => {
    const c = core({ nowMs: 500 });
    expect(c.tick(500 + LAG)).toBeUndefined();
    const p = c.tick(500 + LAG + 1);
    expect(p?.isr).toEqual([1]);
  });

  test("a follower fetching at the log end stays", () => {
    const c = core();
    c.onLocal(10, 10);
    for (let t = 0; t <= 3 * LAG; t += 200) {
      c.onFetch(2, 10, 10, t);
      c.onFetch(3, 10, 10, t);
      expect(c.tick(t)).toBeUndefined();
    }
  });

  test("behind the current end but reaching the end of its previous fetch counts as caught up then", () => {
    const c = core({ isr: [1, 2], replicas: [1, 2] });
    let end = 10;
    c.onLocal(end, end);
    c.onFetch(2, 0, 0, 0); // leader end then: 10
    for (let t = 300; t <= 3 * LAG; t += 300) {
      const prevEnd = end;
      end += 5;
      c.onLocal(end, end); // the leader keeps growing
      c.onFetch(2, prevEnd, prevEnd, t); // never at the end, but always at the previous end
      expect(c.tick(t)).toBeUndefined();
    }
  });

  test("a follower stuck below what the end was at its last fetch leaves after lagTimeMaxMs", () => {
    const c = core({ isr: [1, 2], replicas: [1, 2] });
    c.onLocal(10, 10);
    c.onFetch(2, 10, 10, 0); // caught up at 0
    c.onLocal(20, 20);
    for (let t = 100; t <= LAG; t += 100) {
      c.onFetch(2, 12, 12, t); // fetching, but never reaching 20
      expect(c.tick(t)).toBeUndefined();
    }
    c.onFetch(2, 12, 12, LAG + 1);
    expect(c.tick(LAG + 1)?.isr).toEqual([1]);
  });

  test("the leader never proposes to remove itself", () => {
    const c = core({ isr: [1], replicas: [1, 2] });
    expect(c.tick(10 * LAG)).toBeUndefined();
  });
});

describe("rejoining the ISR", () => {
  test("requires durableEnd >= HW", () => {
    const c = core({
      isr: [1, 2],
      epochStartOffset: 10,
      logEnd: 10,
      durableEnd: 10,
      highWatermark: 10,
    });
    expect(c.onFetch(3, 8, 8, 1).proposal).toBeUndefined();
    expect(c.onFetch(3, 10, 9, 2).proposal).toBeUndefined(); // at the end, not yet synced
    expect(c.onFetch(3, 10, 10, 3).proposal?.isr).toEqual([1, 2, 3]);
  });

  test("requires logEnd >= epochStartOffset even when already past the HW", () => {
    const c = core({
      isr: [1, 2],
      epochStartOffset: 10,
      logEnd: 10,
      durableEnd: 10,
      highWatermark: 4,
    });
    expect(c.highWatermark).toBe(4);
    expect(c.onFetch(3, 6, 6, 1).proposal).toBeUndefined();
    expect(c.onFetch(3, 9, 9, 2).proposal).toBeUndefined();
    expect(c.onFetch(3, 10, 10, 3).proposal?.isr).toEqual([1, 2, 3]);
  });

  test("a replica that is not an assigned replica is ignored", () => {
    const c = core();
    expect(c.onFetch(7, 0, 0, 1)).toEqual({ hwMoved: false });
  });
});
