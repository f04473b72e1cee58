// Forwarded calls are bounded per peer and lane: at most LANE_LIMITS in flight, the rest wait for
// a slot only until their deadline; failures are typed for the HTTP layer.
import { expect, test } from "bun:test";
import { LANE_LIMITS, PeerCallError, PeerCalls } from "../../src/cluster/peer-calls.ts";
import type { PeerLink } from "../../src/cluster/peer-link.ts";

function fakeCluster(answer: (method: string) => Promise<{ body: unknown; tail: Uint8Array }>) {
  let inFlight = 0;
  let most = 0;
  const link = {
    retarget: () => {},
    close: () => {},
    call: async (method: string) => {
      most = Math.max(most, ++inFlight);
      try {
        return await answer(method);
      } finally {
        inFlight--;
      }
    },
  } as unknown as PeerLink;
  return {
    cluster: {
      nodeId: 0,
      link: () => link,
      peerAddress: (id: number) => (id === 1 ? "127.0.0.1:1" : undefined),
    },
    most: () => most,
  };
}

test("at most LANE_LIMITS calls in flight per lane; a call without a slot by its deadline is busy", async () => {
  const gates: (() => void)[] = [];
  const f = fakeCluster(() =>
    new Promise((resolve) => gates.push(() => resolve({ body: 1, tail: new Uint8Array() })))
  );
  const calls = new PeerCalls(f.cluster);
  const far = performance.now() + 10_000;
  const held = Array.from(
    { length: LANE_LIMITS.poll + 5 },
    () => calls.call(1, "poll", "partitionRead", {}, far),
  );
  await Bun.sleep(10);
  expect(f.most()).toBe(LANE_LIMITS.poll);
  // Another lane is not held up by a full one.
  const data = calls.call(1, "data", "partitionAppend", {}, far);
  await Bun.sleep(10);
  expect(gates.length).toBe(LANE_LIMITS.poll + 1);
  // A caller whose deadline passes while queued gives up.
  const late = calls.call(1, "poll", "partitionRead", {}, performance.now() + 20);
  const err = await late.catch((e) => e);
  expect(err).toBeInstanceOf(PeerCallError);
  expect((err as PeerCallError).kind).toBe("busy");
  // Slots pass on in order as calls finish: every queued call is answered.
  while (gates.length > 0) {
    gates.shift()!();
    await Bun.sleep(1);
  }
  expect((await Promise.all([...held, data])).length).toBe(LANE_LIMITS.poll + 6);
  expect(f.most()).toBe(LANE_LIMITS.poll + 1);
});

test("unknown brokers, timeouts and failures are typed", async () => {
  const f = fakeCluster((method) =>
    method === "slow"
      ? Promise.reject(new Error("slow to 127.0.0.1:1: no answer in 50 ms"))
      : Promise.reject(new Error("connection to 127.0.0.1:1 closed"))
  );
  const calls = new PeerCalls(f.cluster);
  const kind = (p: Promise<unknown>) => p.then(() => "ok", (e) => (e as PeerCallError).kind);
  const soon = performance.now() + 1000;
  expect(await kind(calls.call(7, "data", "x", {}, soon))).toBe("unknown");
  expect(await kind(calls.call(0, "data", "x", {}, soon))).toBe("unknown"); // itself
  expect(await kind(calls.call(1, "data", "slow", {}, soon))).toBe("timeout");
  expect(await kind(calls.call(1, "data", "x", {}, soon))).toBe("failed");
  calls.close();
  expect(await kind(calls.call(1, "data", "x", {}, soon))).toBe("unknown");
});
