// The Kafka listener's limits against real broker processes: request bytes in memory across all
// connections (queued.max.request.bytes), the pre-authentication frame limit, max.connections,
// max.connections.per.ip and connections.max.idle.ms. Each attack once took a broker down (3.9 GB
// RssAnon from 40 connections announcing 99 MiB frames; 20k idle sockets using up descriptors).
import { describe, expect, test } from "bun:test";
import { encodeRecordBatch } from "../../src/protocol/record-batch.ts";
import { rssAnonMiB, type RunningBroker } from "../helpers/broker-process.ts";
import { BrokerSet, metric } from "../helpers/processes.ts";
import { RawClient } from "./raw-client.ts";

const MiB = 1024 * 1024;
const brokers = new BrokerSet();
const broker = (args: string[] = []) => brokers.start({ args });

/** The start of a Metadata v1 frame announcing `size` bytes: the body never follows. */
function announce(size: number): Uint8Array {
  const f = new Uint8Array(16);
  const v = new DataView(f.buffer);
  v.setInt32(0, size);
  v.setInt16(4, 3); // Metadata
  v.setInt16(6, 1);
  v.setInt32(8, 7);
  v.setInt16(12, 1); // client id "a"
  f[14] = 0x61;
  return f;
}

/** Announce a frame of `size` and send all of it but its last byte, until `until`. */
async function sendFor(c: RawClient, size: number, until: number): Promise<number> {
  const piece = new Uint8Array(MiB);
  let at = announce(size).length - 4;
  c.socket.write(announce(size));
  while (at < size - 1 && performance.now() < until && !c.closed) {
    const n = c.socket.write(piece.subarray(0, Math.min(piece.length, size - 1 - at)));
    at += Math.max(0, n);
    if (n <= 0) await Bun.sleep(5);
  }
  return at;
}

async function healthy(b: RunningBroker): Promise<boolean> {
  const r = await fetch(`${b.httpUrl}/healthz`, { signal: AbortSignal.timeout(3000) });
  return r.status === 200;
}

async function produceOne(c: RawClient, topic: string): Promise<number> {
  const records = encodeRecordBatch({
    records: [{ value: new TextEncoder().encode("still served") }],
    baseTimestamp: Date.now(),
  });
  const r = await c.call(0, 7, {
    transactionalId: null,
    acks: 1,
    timeoutMs: 5000,
    topicData: [{ name: topic, partitionData: [{ index: 0, records }] }],
  }, 5000);
  // deno-lint-ignore no-explicit-any
  return (r.responses as any)[0].partitionResponses[0].errorCode;
}

describe("request bytes in memory", () => {
  test(
    "40 connections announcing 99 MiB frames: refused before a first request; after one, " +
      "at most queued.max.request.bytes is held, RssAnon stays under 512 MiB, others are served",
    async () => {
      const b = await broker();
      const admin = await RawClient.connect(b.kafkaPort);
      expect(await admin.createTopics(["lim"])).toEqual([0]);
      let peak = rssAnonMiB(b.proc.pid);
      const sampler = setInterval(() => {
        try {
          peak = Math.max(peak, rssAnonMiB(b.proc.pid));
        } catch { /* the broker has gone */ }
      }, 20);

      // A connection that has not sent a valid request may not announce more than 2 MiB.
      const fresh = await Promise.all(
        Array.from({ length: 40 }, () => RawClient.connect(b.kafkaPort)),
      );
      await Promise.all(fresh.map((c) => c.write(announce(99 * MiB))));
      const closed = await Promise.all(fresh.map((c) => c.waitClosed(3000)));
      expect(closed.every((x) => x)).toBe(true);
      expect(
        await metric(
          b,
          'broker_kafka_requests_refused_total{reason="unauthenticated_request_too_large"}',
        ),
      ).toBe(40);

      // After a valid request they may: the request budget (256 MiB) holds two 99 MiB frames,
      // the other 38 connections are not read until bytes are released. Each sends all of its
      // frame but the last byte, as fast as the broker reads it (for at most 4 s).
      const proven = await Promise.all(
        Array.from({ length: 40 }, () => RawClient.connect(b.kafkaPort)),
      );
      for (const c of proven) expect((await c.call(18, 0, {})).errorCode).toBe(0);
      const until = performance.now() + 4000;
      const sent = await Promise.all(proven.map((c) => sendFor(c, 99 * MiB, until)));
      await Bun.sleep(300);
      // Two frames were read almost whole; the others sent what the socket buffers take.
      expect(sent.filter((n) => n === 99 * MiB - 1).length).toBe(2);
      expect(await metric(b, "broker_kafka_request_bytes_queued")).toBe(2 * 99 * MiB);
      expect(await metric(b, "broker_kafka_connections_waiting_for_memory")).toBe(38);
      // Meanwhile the broker serves others: health, metadata and a produce (it fits beside).
      const t0 = performance.now();
      expect(await healthy(b)).toBe(true);
      const other = await RawClient.connect(b.kafkaPort);
      expect((await other.call(3, 1, { topics: [{ name: "lim" }] }, 5000)).topics).toBeDefined();
      expect(await produceOne(other, "lim")).toBe(0);
      const servedMs = performance.now() - t0;
      peak = Math.max(peak, rssAnonMiB(b.proc.pid));
      const holding = peak;

      // Gone, they give their bytes back.
      // (A connection that is not read sees its client's close only once it is read again: the
      // waiting ones take their turn, each finds the end of its stream.)
      for (const c of proven) c.close();
      for (let i = 0; i < 50; i++) {
        if (await metric(b, "broker_kafka_request_bytes_queued") === 0) break;
        await Bun.sleep(100);
      }
      expect(await metric(b, "broker_kafka_request_bytes_queued")).toBe(0);
      expect(await metric(b, 'broker_connections{listener="kafka"}')).toBe(2);
      clearInterval(sampler);
      console.log(
        `limits test: 40 x 99 MiB announced after a first request, peak RssAnon ${
          Math.round(peak)
        } MiB (${Math.round(holding)} while held); health, metadata and a produce answered in ${
          Math.round(servedMs)
        } ms`,
      );
      expect(peak).toBeLessThan(512);
      other.close();
      admin.close();
    },
    60_000,
  );
});

describe("connection limits", () => {
  test(
    "over max.connections or max.connections.per.ip a connection is closed at once; " +
      "/healthz keeps answering and new connections work once others close",
    async () => {
      const b = await broker(["--max-connections", "50", "--max-connections-per-ip", "30"]);
      const open = async (n: number, from: string) => {
        const cs = await Promise.all(
          Array.from({ length: n }, () => RawClient.connect(b.kafkaPort, from)),
        );
        await Bun.sleep(300);
        return cs;
      };
      // 100 from 127.0.0.1: 30 kept (per address), 70 closed.
      const one = await open(100, "127.0.0.1");
      expect(one.filter((c) => !c.closed).length).toBe(30);
      expect(await healthy(b)).toBe(true);
      // 100 from 127.0.0.2: 20 kept (50 in all), 80 closed.
      const two = await open(100, "127.0.0.2");
      expect(two.filter((c) => !c.closed).length).toBe(20);
      expect(await healthy(b)).toBe(true);
      const kept = [...one, ...two].filter((c) => !c.closed);
      for (const c of kept.slice(0, 5)) expect((await c.call(18, 0, {})).errorCode).toBe(0);
      expect(await metric(b, 'broker_connections{listener="kafka"}')).toBe(50);
      expect(
        await metric(
          b,
          'broker_connections_refused_total{listener="kafka",limit="max_connections_per_ip"}',
        ),
      ).toBe(70);
      expect(
        await metric(
          b,
          'broker_connections_refused_total{listener="kafka",limit="max_connections"}',
        ),
      ).toBe(80);
      // The refused sockets' descriptors are free again: the broker holds about 50 client ones.
      const fds = () => {
        try {
          return Number(
            Bun.spawnSync(["sh", "-c", `ls /proc/${b.proc.pid}/fd | wc -l`]).stdout.toString(),
          );
        } catch {
          return NaN;
        }
      };
      const withClients = fds();
      for (const c of [...one, ...two]) c.close();
      await Bun.sleep(300);
      const without = fds();
      expect(withClients - without).toBeGreaterThanOrEqual(45);
      expect(withClients - without).toBeLessThanOrEqual(55);
      // Room again, from both addresses.
      const again = await RawClient.connect(b.kafkaPort, "127.0.0.1");
      expect((await again.call(18, 0, {})).errorCode).toBe(0);
      const again2 = await RawClient.connect(b.kafkaPort, "127.0.0.2");
      expect((await again2.call(18, 0, {})).errorCode).toBe(0);
      again.close();
      again2.close();
      const log = b.logs.filter((l) => l.includes("max.connections.per.ip reached"));
      // Rate-limited: 70 refusals, one line (the summary comes after 10 s).
      expect(log.length).toBe(1);
    },
    60_000,
  );

  test("a connection without a request for connections.max.idle.ms is closed", async () => {
    const b = await broker(["--connections-max-idle-ms", "600"]);
    const idle = await RawClient.connect(b.kafkaPort);
    expect((await idle.call(18, 0, {})).errorCode).toBe(0);
    const silent = await RawClient.connect(b.kafkaPort); // never sends anything
    const busy = await RawClient.connect(b.kafkaPort);
    const t0 = performance.now();
    let calls = 0;
    while (performance.now() - t0 < 2000) {
      expect((await busy.call(18, 0, {})).errorCode).toBe(0);
      calls++;
      await Bun.sleep(200);
    }
    expect(idle.closed).toBe(true);
    expect(silent.closed).toBe(true);
    expect(busy.closed).toBe(false);
    expect(calls).toBeGreaterThan(5);
    expect(await metric(b, 'broker_connections_idle_closed_total{listener="kafka"}')).toBe(2);
    busy.close();
  }, 30_000);
});
