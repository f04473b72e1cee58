// HTTP request bodies against real broker processes: a body over --http-max-body-bytes costs no
// memory (413 from its Content-Length, or a chunked one read only up to the limit), bodies in
// flight share --http-queued-max-body-bytes (503 with Retry-After when it stays full), and record
// values nested deeper than 1000 levels get 400 (they were a 500: JSON.stringify's stack).
import { describe, expect, test } from "bun:test";
import { connect } from "node:net";
import { rssAnonMiB, type RunningBroker } from "../helpers/broker-process.ts";
import { BrokerSet, metric } from "../helpers/processes.ts";
import { api } from "../helpers/http.ts";

const MiB = 1024 * 1024;
const brokers = new BrokerSet();
const broker = (args: string[] = []) => brokers.start({ args });

interface RawResult {
  status: number;
  head: string;
  body: string;
  /** Body bytes the client managed to send before the answer came. */
  sent: number;
}

/**
 * POST `size` bytes of `fill` to `path` over a raw socket, stopping as soon as an answer
 * arrives; chunked or with a Content-Length. `stallAt`: stop sending there until `resume`.
 */
function rawPost(
  b: RunningBroker,
  path: string,
  size: number,
  opts: { chunked?: boolean; type?: string; stallAt?: number; resume?: Promise<void> } = {},
): Promise<RawResult> {
  const url = new URL(b.httpUrl);
  const piece = Buffer.alloc(256 * 1024, 0x20);
  return new Promise((resolve) => {
    const s = connect(Number(url.port), url.hostname);
    let resp = "";
    let sent = 0;
    let answered = false;
    const finish = () => {
      const end = resp.indexOf("\r\n\r\n");
      const head = end < 0 ? resp : resp.slice(0, end);
      resolve({
        status: Number(/^HTTP\/1\.1 (\d+)/.exec(resp)?.[1] ?? 0),
        head,
        body: end < 0 ? "" : resp.slice(end + 4),
        sent,
      });
    };
    s.on("data", (d) => {
      resp += d.toString();
      // A whole answer (these are small JSON bodies with a content-length): stop.
      const m = /content-length: (\d+)/i.exec(resp);
      const end = resp.indexOf("\r\n\r\n");
      if (m && end >= 0 && resp.length >= end + 4 + Number(m[1])) {
        answered = true;
        s.destroy();
        finish();
      }
    });
    s.on("close", () => {
      if (!answered) finish();
    });
    s.on("error", () => {});
    s.on("connect", async () => {
      s.write(
        `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: ${opts.type ?? "application/json"}\r\n` +
          (opts.chunked ? "Transfer-Encoding: chunked\r\n" : `Content-Length: ${size}\r\n`) +
          "\r\n",
      );
      while (sent < size && !s.destroyed && !answered) {
        if (opts.stallAt !== undefined && sent >= opts.stallAt && opts.resume) {
          await opts.resume;
          opts.resume = undefined;
        }
        const n = Math.min(
          piece.length,
          size - sent,
          (opts.stallAt ?? Infinity) - sent || piece.length,
        );
        const part = piece.subarray(0, n);
        const ok = opts.chunked
          ? (s.write(`${n.toString(16)}\r\n`), s.write(part), s.write("\r\n"))
          : s.write(part);
        sent += n;
        if (!ok) {
          await new Promise((r) => {
            s.once("drain", r);
            s.once("close", r);
          });
        }
      }
      if (opts.chunked && !s.destroyed && !answered) s.write("0\r\n\r\n");
    });
  });
}

describe("request bodies over the limit", () => {
  test(
    "10 concurrent 60 MiB bodies over a 1 MiB limit get 413 without being buffered, " +
      "with a Content-Length or chunked; RssAnon stays under 256 MiB",
    async () => {
      const b = await broker(["--http-max-body-bytes", "1MiB"]);
      await api(b.httpUrl, "POST", "/topics", { name: "big", partitions: 1 });
      let peak = rssAnonMiB(b.proc.pid);
      const sampler = setInterval(() => {
        peak = Math.max(peak, rssAnonMiB(b.proc.pid) || 0);
      }, 20);
      try {
        const t0 = performance.now();
        const withLength = await Promise.all(
          Array.from({ length: 10 }, () => rawPost(b, "/topics/big/records", 60 * MiB)),
        );
        const chunked = await Promise.all(
          Array.from(
            { length: 10 },
            () => rawPost(b, "/topics/big/records", 60 * MiB, { chunked: true }),
          ),
        );
        const ms = performance.now() - t0;
        for (const r of withLength) {
          expect(r.status).toBe(413);
          expect(JSON.parse(r.body).error_code).toBe(41300);
        }
        // A chunked body is read up to the limit, then the connection is closed after the 413.
        for (const r of chunked) expect(r.status).toBe(413);
        const sentChunked = chunked.reduce((n, r) => n + r.sent, 0);
        expect(await metric(b, 'broker_http_bodies_refused_total{reason="too_large"}')).toBe(20);
        expect((await api(b.httpUrl, "GET", "/healthz")).status).toBe(200);
        const small = await api(b.httpUrl, "POST", "/topics/big/records", { value: "fits" });
        expect(small.status).toBe(200);
        peak = Math.max(peak, rssAnonMiB(b.proc.pid));
        console.log(
          `body limits: 20 x 60 MiB refused in ${Math.round(ms)} ms (chunked clients sent ${
            Math.round(sentChunked / MiB)
          } MiB before the answer), peak RssAnon ${Math.round(peak)} MiB`,
        );
        expect(peak).toBeLessThan(256);
      } finally {
        clearInterval(sampler);
      }
    },
    60_000,
  );

  test(
    "bodies in flight share --http-queued-max-body-bytes: a request that finds it full waits, " +
      "then gets 503 with Retry-After; room again once the body is done",
    async () => {
      const b = await broker([
        "--http-max-body-bytes",
        "4MiB",
        "--http-queued-max-body-bytes",
        "4MiB",
      ]);
      await api(b.httpUrl, "POST", "/topics", { name: "q", partitions: 1 });
      // A 4 MiB octet-stream body sent up to half, then held: its 4 MiB stay taken.
      const { promise: resume, resolve } = Promise.withResolvers<void>();
      const slow = rawPost(b, "/topics/q/records", 4 * MiB, {
        type: "text/plain",
        stallAt: 2 * MiB,
        resume,
      });
      await Bun.sleep(300);
      expect(await metric(b, "broker_http_body_bytes_queued")).toBe(4 * MiB);
      const t0 = performance.now();
      const refused = await fetch(`${b.httpUrl}/topics/q/records`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ value: "waits" }),
      });
      const waited = performance.now() - t0;
      expect(refused.status).toBe(503);
      expect(refused.headers.get("retry-after")).toBe("1");
      expect(((await refused.json()) as { error_code: number }).error_code).toBe(50300);
      expect(waited).toBeGreaterThan(4000);
      // No body, no budget: the probes and reads answer meanwhile.
      expect((await api(b.httpUrl, "GET", "/healthz")).status).toBe(200);
      expect((await api(b.httpUrl, "GET", "/topics/q")).status).toBe(200);
      // A waiting request is served once the bytes are released.
      const waiting = fetch(`${b.httpUrl}/topics/q/records`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ value: "served" }),
      });
      await Bun.sleep(200);
      resolve();
      const done = await slow;
      expect(done.status).toBe(413); // one 4 MiB text line is over max.message.bytes
      expect((await waiting).status).toBe(200);
      expect(await metric(b, "broker_http_body_bytes_queued")).toBe(0);
      expect(await metric(b, 'broker_http_bodies_refused_total{reason="busy"}')).toBe(1);
    },
    60_000,
  );
});

describe("deeply nested JSON", () => {
  const nested = (depth: number) => "[".repeat(depth) + "]".repeat(depth);

  test(
    "a record value nested 100k levels deep gets 400, not 500, on every produce route",
    async () => {
      const b = await broker();
      await api(b.httpUrl, "POST", "/topics", { name: "deep", partitions: 1 });
      const deep = nested(100_000);
      const post = (path: string, body: string, type = "application/json") =>
        api(b.httpUrl, "POST", path, body, { "content-type": type });
      const cases = [
        await post("/topics/deep/records", `{"value":${deep}}`),
        await post("/topics/deep/records", `[{"key":"k","value":${deep}}]`),
        await post("/topics/deep/records", `{"records":[{"value":1},{"value":${deep}}]}`),
        await post("/topics/deep/records?acks=1", `{"value":${deep}}`),
        await post("/topics/deep/records", `{"value":${deep}}\n`, "application/x-ndjson"),
        await post("/topics/deep/records", `{"value":1,"headers":{"h":${deep}}}`),
        await post(
          "/topics/deep",
          `{"records":[{"value":${deep}}]}`,
          "application/vnd.kafka.json.v2+json",
        ),
      ];
      for (const r of cases) {
        expect(r.status).toBe(400);
        expect(r.json.error_code).toBe(40000);
        expect(r.json.message).toMatch(/more than 1000 levels deep/);
      }
      // 1000 levels are fine, 1001 are not.
      expect((await post("/topics/deep/records", `{"value":${nested(1000)}}`)).status).toBe(200);
      const over = await post("/topics/deep/records", `{"value":${nested(1001)}}`);
      expect(over.status).toBe(400);
      expect(over.json.message).toBe(
        "records[0].value nests arrays and objects more than 1000 " +
          "levels deep",
      );
      // Such a value written as text (or by a Kafka client) reads back as text, not as a 500.
      expect((await post("/topics/deep/records", deep + "\n", "text/plain")).status).toBe(200);
      const read = await api(b.httpUrl, "GET", "/topics/deep/partitions/0/records?offset=0");
      expect(read.status).toBe(200);
      expect(read.json.records.length).toBe(2);
      expect(Array.isArray(read.json.records[0].value)).toBe(true);
      expect(read.json.records[1].value).toBe(deep);
      expect((await api(b.httpUrl, "GET", "/healthz")).status).toBe(200);
    },
    60_000,
  );
});
