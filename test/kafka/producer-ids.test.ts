// Producer id blocks from the metadata log: unique per committed record index, shared by
// concurrent requests, above a legacy floor, and errors passed to the caller.
import { expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  PRODUCER_ID_BLOCK,
  PRODUCER_ID_FILE,
  ProducerIdAllocator,
} from "../../src/kafka/producer-ids.ts";

function dataDir(): string {
  return mkdtempSync(join(tmpdir(), "pids-"));
}

test("ids come from the block of the record's index; a used-up block takes the next record", async () => {
  const dir = dataDir();
  let index = 41;
  let requests = 0;
  const alloc = new ProducerIdAllocator(dir, () => {
    requests++;
    return Promise.resolve(++index);
  });
  const first = await alloc.allocate();
  expect(first).toBe(42 * PRODUCER_ID_BLOCK);
  for (let i = 1; i < PRODUCER_ID_BLOCK; i++) expect(await alloc.allocate()).toBe(first + i);
  expect(requests).toBe(1);
  expect(await alloc.allocate()).toBe(43 * PRODUCER_ID_BLOCK);
  expect(requests).toBe(2);
  rmSync(dir, { recursive: true });
});

test("two brokers' allocators never overlap: blocks follow distinct log indexes", async () => {
  const dir = dataDir();
  let index = 0;
  const log = () => Promise.resolve(++index); // one metadata log, two brokers appending to it
  const a = new ProducerIdAllocator(dir, log);
  const b = new ProducerIdAllocator(dir, log);
  const ids = new Set<number>();
  for (let i = 0; i < 2500; i++) {
    ids.add(await a.allocate());
    ids.add(await b.allocate());
  }
  expect(ids.size).toBe(5000);
  rmSync(dir, { recursive: true });
});

test("concurrent requests share one block request; a failed request rejects, the next retries", async () => {
  const dir = dataDir();
  let release!: (i: number) => void;
  let fail = true;
  let requests = 0;
  const alloc = new ProducerIdAllocator(dir, () => {
    requests++;
    if (fail) return Promise.reject(new Error("no metadata leader known yet"));
    return new Promise<number>((r) => (release = r));
  });
  await expect(alloc.allocate()).rejects.toThrow("no metadata leader");
  fail = false;
  const many = Array.from({ length: 50 }, () => alloc.allocate());
  await Bun.sleep(1);
  expect(requests).toBe(2);
  release(7);
  const got = await Promise.all(many);
  expect(new Set(got).size).toBe(50);
  expect(Math.min(...got)).toBe(7 * PRODUCER_ID_BLOCK);
  rmSync(dir, { recursive: true });
});

test("blocks below the legacy producer-ids file's floor are skipped", async () => {
  const dir = dataDir();
  writeFileSync(join(dir, PRODUCER_ID_FILE), "5000\n");
  let index = 0;
  const alloc = new ProducerIdAllocator(dir, () => Promise.resolve(++index));
  expect(await alloc.allocate()).toBe(5 * PRODUCER_ID_BLOCK);
  expect(index).toBe(5);
  rmSync(dir, { recursive: true });
});
