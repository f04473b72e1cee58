// Error codes at any depth of a response are counted by API and error name.
import { expect, test } from "bun:test";
import { Counter } from "../../src/core/metrics.ts";
import { countResponseErrors } from "../../src/kafka/error-metrics.ts";

test("error codes at every level are counted; zeros and record bytes are not", () => {
  const c = new Counter("broker_kafka_request_errors_total", "h");
  countResponseErrors(c, "Produce", {
    throttleTimeMs: 0,
    responses: [{
      name: "t",
      partitionResponses: [
        { index: 0, errorCode: 0 },
        { index: 1, errorCode: 3 },
        { index: 2, errorCode: 3 },
        { index: 3, errorCode: 6, records: { errorCode: 99 } },
      ],
    }],
    bytes: new Uint8Array([1, 2, 3]),
  });
  countResponseErrors(c, "FindCoordinator", { errorCode: 15, nodeId: -1 });
  expect(c.get({ api: "Produce", code: "3", error: "UNKNOWN_TOPIC_OR_PARTITION" })).toBe(2);
  expect(c.get({ api: "Produce", code: "6", error: "NOT_LEADER_OR_FOLLOWER" })).toBe(1);
  expect(c.get({ api: "Produce", code: "99", error: "UNKNOWN_ERROR_99" })).toBe(0);
  expect(c.get({ api: "FindCoordinator", code: "15", error: "COORDINATOR_NOT_AVAILABLE" })).toBe(1);
  const out: string[] = [];
  c.render(out);
  expect(out.length).toBe(2 + 3);
});
