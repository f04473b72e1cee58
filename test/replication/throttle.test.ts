// The reassignment throttle (src/replication/throttle.ts): a reader that takes what the bucket
// allows, batch by batch, gets the configured rate on average, and waits when it overdraws.
import { expect, test } from "bun:test";
import { Throttle } from "../../src/replication/throttle.ts";

test("the average rate holds to the throttle, whatever the batch size", () => {
  for (const [rate, batch] of [[10_000_000, 1 << 20], [100_000, 16_384], [2048, 4096]]) {
    let now = 0;
    const t = new Throttle(() => now);
    let sent = 0;
    // A fetch loop: ask the allowance; read at most that (a batch goes whole); wait as told.
    while (now < 60_000) {
      const allow = t.allowance(rate);
      if (allow === 0) {
        now += 10;
        continue;
      }
      const n = Math.max(Math.min(allow, batch), Math.min(batch, 4096));
      sent += n;
      now += t.take(n, rate) + 1;
    }
    const measured = sent / 60;
    expect(Math.abs(measured - rate) / rate).toBeLessThan(0.1);
  }
});

test("an overdraft makes the next read wait until the bucket refills", () => {
  let now = 0;
  const t = new Throttle(() => now);
  expect(t.allowance(1000)).toBe(1000); // a second's worth to start
  expect(t.take(3000, 1000)).toBe(2000); // 2000 bytes over: 2 s
  expect(t.allowance(1000)).toBe(0);
  now = 2000;
  expect(t.allowance(1000)).toBe(0);
  now = 2500;
  expect(t.allowance(1000)).toBe(500);
});
