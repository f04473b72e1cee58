// Scaffolding the tests that run real broker processes share: the brokers a test file starts
// (killed when its tests end), the flags of a three-voter test cluster, bounded polling and one
// /metrics sample.
import { afterAll } from "bun:test";
import {
  type RunningBroker,
  startBrokerProcess,
  type StartOptions,
  tempDir,
} from "./broker-process.ts";

/** Brokers started through this set are killed (and awaited) after the file's tests. */
export class BrokerSet {
  readonly all: RunningBroker[] = [];

  /** Call at a test file's top level: it registers the file's afterAll. */
  constructor(signal: NodeJS.Signals = "SIGTERM") {
    afterAll(async () => {
      for (const b of this.all) b.kill(signal);
      // Bounded: a broker stuck in its shutdown (its cluster gone) must not hang the test run.
      const all = Promise.all(this.all.map((b) => b.exited));
      if (await Promise.race([all.then(() => true), Bun.sleep(20_000).then(() => false)])) return;
      for (const b of this.all) b.kill("SIGKILL");
      await all;
    }, 30_000);
  }

  async start(opts: StartOptions = {}): Promise<RunningBroker> {
    const b = await startBrokerProcess(opts);
    this.all.push(b);
    return b;
  }

  /** Broker `id` of a three-voter test cluster (voterArgs, a 2 s broker session). */
  voter(id: number, join: string | undefined, dirPrefix: string): Promise<RunningBroker> {
    return this.start({
      dataDir: tempDir(dirPrefix),
      args: voterArgs(id, join, 2000),
      timeoutMs: 30_000,
    });
  }
}

/**
 * The flags of broker `id` in a three-voter test cluster (joining through `join`): no group
 * rebalance delay, and a broker session of `sessionMs` so failovers are quick.
 */
export function voterArgs(id: number, join: string | undefined, sessionMs: number): string[] {
  return [
    "--node-id",
    String(id),
    "--voters",
    "3",
    "--group-initial-rebalance-delay-ms",
    "0",
    "--broker-session-timeout-ms",
    String(sessionMs),
    ...(join ? ["--join", join] : []),
  ];
}

/**
 * Polls `fn` every `everyMs` until it gives a value, for at most `timeoutMs`; a throw counts as
 * not yet, and the last one is named in the timeout's error.
 */
export async function waitFor<T>(
  what: string,
  timeoutMs: number,
  fn: () => Promise<T | undefined>,
  everyMs = 100,
): Promise<T> {
  const until = performance.now() + timeoutMs;
  let last: unknown;
  while (performance.now() < until) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch (e) {
      last = e;
    }
    await Bun.sleep(everyMs);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${last}` : ""}`);
}

/** A sample of a broker's /metrics, by its full series text (name{labels}); 0 when absent. */
export async function metric(b: RunningBroker, series: string): Promise<number> {
  const text = await (await fetch(`${b.httpUrl}/metrics`)).text();
  for (const line of text.split("\n")) {
    const at = line.lastIndexOf(" ");
    const name = line.slice(0, at);
    if (name === series || name === `${series}{}`) return Number(line.slice(at + 1));
  }
  return 0;
}

/**
 * A test file's clean-up of its clients: each stop gets at most `ms`, failures ignored, so a
 * client stuck on a broker that is gone cannot keep the file's brokers (killed after this) alive
 * and hang the whole test run.
 */
export async function stopAll(
  stops: (() => Promise<unknown>)[],
  ms = 15_000,
): Promise<void> {
  await Promise.all(stops.map((stop) =>
    Promise.race([
      Promise.resolve().then(stop).catch(() => {}),
      Bun.sleep(ms),
    ])
  ));
}
