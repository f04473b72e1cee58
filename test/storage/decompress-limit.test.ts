// A compressed batch that decodes past the broker's ceiling (a guard against decompression bombs)
// is refused as too large (MESSAGE_TOO_LARGE, which clients do not retry), not as corrupt
// (CORRUPT_MESSAGE, which kafkajs retries in vain). A batch under the ceiling is stored.
import { afterAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import {
  compress,
  decompress,
  DEFAULT_MAX_OUTPUT_BYTES,
} from "../../src/protocol/compression/index.ts";
import { encodeRecordBatch } from "../../src/protocol/record-batch.ts";
import { SegmentLogStore } from "../../src/storage/log-store.ts";
import { MessageTooLargeError } from "../../src/storage/types.ts";
import { tempDir } from "../helpers/broker-process.ts";

const dir = tempDir();
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const zstdBatch = (valueBytes: number) =>
  encodeRecordBatch({
    records: [{ key: null, value: new Uint8Array(valueBytes) }],
    codec: 4,
    compress: (c, b) => compress(c, b),
  });

test("past the decode ceiling: MESSAGE_TOO_LARGE naming the ceiling; under it: stored", async () => {
  const store = await SegmentLogStore.open({
    dataDir: dir,
    checkpointIntervalMs: 0,
    decompress: (c, b) => decompress(c, b),
  });
  const log = await store.openLog({
    topic: "z",
    partition: 0,
    topicId: "z",
    config: { maxMessageBytes: 1 << 20 },
  });
  const bomb = zstdBatch(DEFAULT_MAX_OUTPUT_BYTES + 1024);
  expect(bomb.length).toBeLessThan(1 << 20);
  let err: unknown;
  try {
    log.append(bomb, { leaderEpoch: 0 });
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(MessageTooLargeError);
  expect((err as MessageTooLargeError).errorCode).toBe(10);
  expect((err as Error).message).toContain("more than 64 MiB");
  expect(log.append(zstdBatch(1 << 20), { leaderEpoch: 0 }).baseOffset).toBe(0);
  await store.closeAll();
});
