// GET /topics/{topic}/partitions/{partition}/batches as a reader polling a partition sees it:
// whole stored batches from an offset, an empty answer at the high watermark (the next offset to
// be written: "nothing yet", not an error), and 416 past it. (Reading at the high watermark
// answered 416 as a planted bug, and no test caught it: docs/mutation.md, the test suite.)
import { afterAll, beforeAll, expect, test } from "bun:test";
import { decodeRecordBatches } from "../../src/protocol/record-batch.ts";
import { type RunningBroker, startBrokerProcess } from "../helpers/broker-process.ts";
import { api } from "../helpers/http.ts";

let b: RunningBroker;
const path = (offset: number) => `/topics/polled/partitions/0/batches?offset=${offset}`;

beforeAll(async () => {
  b = await startBrokerProcess();
  const t = await api(b.httpUrl, "POST", "/topics", { name: "polled", partitions: 1 });
  expect(t.status).toBe(201);
  for (const value of ["a", "b"]) {
    const r = await api(b.httpUrl, "POST", "/topics/polled/records", { value });
    expect(r.status).toBe(200);
  }
}, 60_000);
afterAll(async () => {
  b?.kill();
  await b?.exited;
});

test("batches from an offset; empty at the high watermark; 416 past it", async () => {
  const all = await fetch(b.httpUrl + path(0));
  expect(all.status).toBe(200);
  expect(all.headers.get("x-high-watermark")).toBe("2");
  const batches = decodeRecordBatches(new Uint8Array(await all.arrayBuffer()));
  expect(batches.map((x) => x.header.baseOffset)).toEqual([0, 1]);

  const atEnd = await fetch(b.httpUrl + path(2));
  expect(atEnd.status).toBe(200);
  expect((await atEnd.arrayBuffer()).byteLength).toBe(0);
  expect(atEnd.headers.get("x-next-offset")).toBe("2");

  const past = await api(b.httpUrl, "GET", path(3));
  expect(past.status).toBe(416);
  expect(past.json).toMatchObject({ error_code: 41601, high_watermark: 2, log_start_offset: 0 });
});
