// A kafkajs 2.2.4 consumer stopped while its fetchers are being rebuilt never stops and starves
// the event loop. Its fetch manager rebuilds the fetchers when the cluster's broker list changes
// (a broker left or rejoined the Metadata): it stops the old ones, waiting out their long polls,
// then starts new ones. `consumer.disconnect()` in that window stops only the old ones, and the
// new ones loop on `Runner.fetch`, which answers `[]` at once when the consumer is not running:
// a loop of resolved promises that never yields to timers or IO. The replication tests' clean-up
// hung so in CI (one core busy, no timer firing, after the group's coordinator was killed and
// restarted). Here a stopped runner's fetch fails instead: the fetcher ends, the fetch manager
// gives up, and the runner's retry sees it is not running and finishes stopping.
// test/helpers/kafkajs-stop-fix.test.ts runs the race with kafkajs' own Runner.
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);

interface RunnerProto {
  running: boolean;
  fetch(nodeId: number): Promise<unknown[]>;
  __stopFix?: (nodeId: number) => Promise<unknown[]>;
}

/** kafkajs' consumer Runner class (the one `new Kafka().consumer()` uses: one module cache). */
export const Runner = require("kafkajs/src/consumer/runner.js") as {
  prototype: RunnerProto;
  new (o: unknown): RunnerProto & { start(): Promise<void>; stop(): Promise<void> };
};

const proto = Runner.prototype;
/** kafkajs' own fetch, kept so the test can show the race without the fix. */
export const originalFetch: (this: RunnerProto, nodeId: number) => Promise<unknown[]> =
  proto.__stopFix ?? proto.fetch;

export function installKafkajsStopFix(on = true): void {
  proto.__stopFix = originalFetch;
  proto.fetch = on
    ? function (this: RunnerProto, nodeId: number) {
      if (!this.running) return Promise.reject(new Error("consumer stopped"));
      return originalFetch.call(this, nodeId);
    }
    : originalFetch;
}

installKafkajsStopFix();
