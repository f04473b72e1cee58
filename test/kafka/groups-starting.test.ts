// The Kafka listener answers before the group coordinator has replayed __consumer_offsets. A group
// request of those first moments waits for the coordinator instead of closing its connection,
// and a connection that closes meanwhile is no error.
import { expect, test } from "bun:test";
import { Dispatcher } from "../../src/kafka/dispatch.ts";
import type { KafkaConnection } from "../../src/kafka/connection.ts";
import type { KafkaContext } from "../../src/kafka/context.ts";
import { FramePool } from "../../src/kafka/frame-pool.ts";
import { Metrics } from "../../src/core/metrics.ts";
import { createLogger } from "../../src/log.ts";
import { decodeResponseFrame, encodeRequestFrame } from "../../src/protocol/kafka/index.ts";

test("ListGroups before the coordinator runs is answered once it does", async () => {
  const started = Promise.withResolvers<void>();
  let coordinator: unknown = null;
  const disconnected: unknown[] = [];
  const ctx = {
    log: createLogger("error"),
    metrics: new Metrics(),
    get groups() {
      if (coordinator === null) throw new Error("the group coordinator is still starting");
      return coordinator;
    },
    groupsStarted: started.promise,
  } as unknown as KafkaContext;
  const d = new Dispatcher(ctx);
  const conn = {
    pool: new FramePool(1 << 20),
    remoteHost: "127.0.0.1",
    remotePort: 1,
    requestParsed() {},
  } as unknown as KafkaConnection;
  const frame = encodeRequestFrame(
    { apiKey: 16, apiVersion: 4, correlationId: 7, clientId: "t" },
    { statesFilter: [] },
  ).subarray(4);
  let outcome: unknown = "pending";
  const pending = d.dispatch(frame, conn).then((o) => (outcome = o));
  d.closed(conn); // no throw while the coordinator is not there
  await Bun.sleep(30);
  expect(outcome).toBe("pending");

  coordinator = {
    coordinator: { listGroups: () => [{ groupId: "g", protocolType: "consumer", state: "Empty" }] },
    disconnected: (c: unknown) => disconnected.push(c),
  };
  started.resolve();
  await pending;
  expect(Array.isArray(outcome)).toBe(true);
  const bytes = Buffer.concat(outcome as Uint8Array[]).subarray(4);
  const r = decodeResponseFrame(16, 4, bytes);
  expect(r.correlationId).toBe(7);
  expect(r.body.errorCode).toBe(0);
  expect((r.body.groups as { groupId: string }[]).map((g) => g.groupId)).toEqual(["g"]);
  // The close seen while starting reaches the coordinator once it runs.
  expect(disconnected).toEqual([conn]);
});
