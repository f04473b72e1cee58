// The CLI's pure parts: suggestions, server addresses, network errors in its words, JSON produce
// bodies, the progress line and the record formatter (stdin cut into bodies: line-bodies.test.ts).
import { describe, expect, test } from "bun:test";
import { closest, editDistance } from "../../src/cli/suggest.ts";
import { explainNetworkError, serverList, serverUrl, UsageError } from "../../src/cli/client.ts";
import { jsonBody } from "../../src/cli/produce.ts";
import { formatBytes, formatDuration, Progress } from "../../src/cli/progress.ts";
import { decodeBatches, formatter } from "../../src/cli/consume.ts";
import { ATTR_CONTROL, encodeRecordBatch } from "../../src/protocol/record-batch.ts";

describe("suggest", () => {
  test("edit distance counts a transposition as one edit", () => {
    expect(editDistance("prodcue", "produce")).toBe(1);
    expect(editDistance("", "abc")).toBe(3);
    expect(editDistance("topic", "topic")).toBe(0);
  });
  test("closest: near words and unique prefixes; nothing for far ones", () => {
    const words = ["produce", "consume", "topic", "group", "cluster", "completion"];
    expect(closest("prodcue", words)).toBe("produce");
    expect(closest("consme", words)).toBe("consume");
    expect(closest("clu", words)).toBe("cluster");
    expect(closest("co", words)).toBeUndefined();
    expect(closest("xyzzy", words)).toBeUndefined();
    expect(closest("--sever", ["--server", "--token", "--json"])).toBe("--server");
  });
});

describe("server addresses", () => {
  test("HOST:PORT, [v6]:PORT, a bare host, URLs; lists", () => {
    expect(serverUrl("broker-1:8080")).toBe("http://broker-1:8080");
    expect(serverUrl("[::1]:9000")).toBe("http://[::1]:9000");
    expect(serverUrl("localhost")).toBe("http://localhost:8080");
    expect(serverUrl("https://b.example:8443/")).toBe("https://b.example:8443");
    expect(serverUrl("http://b:1/base/")).toBe("http://b:1/base");
    expect(serverList("a:1, b:2,a:1")).toEqual(["http://a:1", "http://b:2"]);
    for (const bad of ["ftp://x", "a:0", "a:70000", "a b:1", "", ","]) {
      expect(() => serverList(bad)).toThrow(UsageError);
    }
  });
  test("network errors in the CLI's words", () => {
    const e = (code: string, message = "x") => Object.assign(new TypeError(message), { code });
    expect(
      explainNetworkError(
        e("ECONNREFUSED", "Is the computer able to access the url?"),
        "http://h:1",
      ),
    )
      .toBe(
        "nothing is listening on h:1 (connection refused): is the broker running, and is this its --http-addr?",
      );
    expect(explainNetworkError(e("ENOTFOUND"), "http://nope:1")).toContain("cannot resolve");
    expect(explainNetworkError(e("EPROTO"), "https://h:1")).toContain("TLS");
    expect(explainNetworkError(e("ECONNRESET"), "http://h:1")).toContain("closed the connection");
    const t = new DOMException("timed out", "TimeoutError");
    expect(explainNetworkError(t, "http://h:1")).toBe("h:1 did not answer in time");
  });
});

describe("produce bodies", () => {
  test("jsonBody: keys split at the first separator, headers on every record", () => {
    const j = jsonBody("k:v:w\nnokey\r\n:empty", ":", { h: "1" });
    expect(JSON.parse(j.body)).toEqual([
      { key: "k", value: "v:w", headers: { h: "1" } },
      { value: "nokey", headers: { h: "1" } },
      { key: "", value: "empty", headers: { h: "1" } },
    ]);
    expect(j.records).toBe(3);
  });
});

describe("progress", () => {
  test("records, bytes, rate, percentage and ETA; erased when done; silent when disabled", () => {
    let now = 0;
    const written: string[] = [];
    const p = new Progress({
      verb: "produced",
      enabled: true,
      now: () => now,
      write: (s) => written.push(s),
    });
    p.totalBytes = 4 << 20;
    now = 1000;
    p.add(100_000, 1 << 20);
    expect(written.at(-1)).toBe(
      "\r\x1b[Kproduced 100,000 records (25%), 1.0 MiB, 100,000 rec/s, ETA 3s",
    );
    now = 1100;
    p.add(1, 1); // within 200 ms: not redrawn
    expect(written).toHaveLength(1);
    p.done();
    expect(written.at(-1)).toBe("\r\x1b[K");
    const quiet: string[] = [];
    const q = new Progress({ verb: "consumed", enabled: false, write: (s) => quiet.push(s) });
    q.add(5, 5);
    q.done();
    expect(quiet).toEqual([]);
    const r = new Progress({ verb: "consumed", enabled: true, now: () => 2000, write: () => {} });
    r.totalRecords = 1000;
    expect(r.line(2000)).toBe("consumed 0 records, 0 B, 0 rec/s");
    expect(formatBytes(1536)).toBe("1.5 KiB");
    expect(formatDuration(3725)).toBe("1h02m");
  });
});

test("formatter fills templates and escapes", () => {
  const r = {
    topic: "t",
    partition: 1,
    offset: 7,
    timestamp: 9,
    key: null,
    value: "v",
    headers: [{ key: "a", value: "1" }, { key: "b", value: null }],
  };
  expect(formatter(undefined, false)(r)).toBe("v\n");
  expect(formatter("{partition}:{offset}\\t{key}={value} {headers} {x}", false)(r)).toBe(
    "1:7\t=v a=1,b= {x}\n",
  );
  expect(JSON.parse(formatter(undefined, true)(r))).toEqual(r);
});

test("decodeBatches: records at or after the offset asked, control batches skipped, text or base64", () => {
  const enc = new TextEncoder();
  const a = encodeRecordBatch({
    baseOffset: 10,
    baseTimestamp: 1000,
    records: [
      { key: enc.encode("k"), value: enc.encode("v10") },
      { key: null, value: new Uint8Array([0xff]), headers: [{ key: "h", value: enc.encode("1") }] },
    ],
  });
  const control = encodeRecordBatch({
    baseOffset: 12,
    attributes: ATTR_CONTROL,
    records: [{ key: new Uint8Array(4), value: new Uint8Array(6) }],
  });
  const b = encodeRecordBatch({ baseOffset: 13, records: [{ value: enc.encode("v13") }] });
  const buf = new Uint8Array([...a, ...control, ...b]);
  const d = decodeBatches(buf, "t", 2, 11);
  expect(d.next).toBe(14);
  expect(d.records.map((r) => [r.offset, r.key, r.value, r.headers])).toEqual([
    [11, null, "/w==", [{ key: "h", value: "1" }]],
    [13, null, "v13", []],
  ]);
  expect(d.records[0]).toMatchObject({ topic: "t", partition: 2, timestamp: 1000 });
  // A batch cut short (a read's end) is left for the next read.
  expect(decodeBatches(buf.subarray(0, buf.length - 5), "t", 2, 10).next).toBe(13);
});
