// While the broker starts or shuts down (isReady false) the API answers a JSON 503 on every route
// but the probes. In-process with a broker whose readiness the test controls: the window is too
// short to hit reliably in a real process (its /readyz is checked in api.test.ts).
import { expect, test } from "bun:test";
import type { Broker } from "../../src/broker.ts";
import { createHttpApp } from "../../src/http/app.ts";
import { createLogger } from "../../src/log.ts";

test("503 with error_code and message while not ready; probes still answer", async () => {
  let ready = false;
  const broker = {
    nodeId: 0,
    version: "test",
    log: createLogger("error"),
    isReady: () => ready,
  } as unknown as Broker;
  const app = createHttpApp(broker);
  const call = async (method: string, path: string, body?: string) => {
    const res = await app.fetch(
      new Request(`http://localhost${path}`, {
        method,
        body,
        headers: body ? { "content-type": "application/json" } : {},
      }),
    );
    return { status: res.status, json: (await res.json()) as Record<string, unknown> };
  };
  for (
    const [m, p, b] of [
      ["GET", "/topics"],
      ["POST", "/topics", '{"name":"a"}'],
      ["POST", "/topics/a/records?acks=1", '{"value":1}'],
      ["GET", "/topics/a/partitions/0/records"],
      ["GET", "/groups"],
    ]
  ) {
    const r = await call(m, p, b);
    expect([p, r.status, r.json.error_code]).toEqual([p, 503, 50300]);
    expect(String(r.json.message)).toContain("not ready");
  }
  const rz = await call("GET", "/readyz");
  expect(rz.status).toBe(503);
  expect(rz.json).toMatchObject({ ready: false, error_code: 50300 });
  expect((await call("GET", "/healthz")).status).toBe(200);
  ready = true;
  expect(await call("GET", "/readyz")).toEqual({ status: 200, json: { ready: true } });
});
