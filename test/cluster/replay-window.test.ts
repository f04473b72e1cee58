// The SWIM replay window's edge: a datagram whose counter is a whole window (5 s of sender
// microseconds) below the newest is refused, since the set of counters seen has already let it
// go; one just inside is still accepted once. (A planted off-by-one no test caught:
// docs/mutation.md, the test suite.)
import { expect, test } from "bun:test";
import { ReplayWindow } from "../../src/cluster/auth.ts";

const WINDOW = 5_000_000;

test("a counter exactly one window below the newest is refused, every time", () => {
  const w = new ReplayWindow();
  const t = 1_000_000_000;
  expect(w.accept(7, t)).toBe(true);
  expect(w.accept(7, t + 1)).toBe(true);
  expect(w.accept(7, t + WINDOW)).toBe(true); // t is now a whole window old and forgotten
  expect(w.accept(7, t)).toBe(false);
  expect(w.accept(7, t)).toBe(false);
  expect(w.accept(7, t + 1)).toBe(false); // seen, and still inside the window
  expect(w.accept(7, t + 2)).toBe(true); // inside the window, never seen
  expect(w.accept(7, t + 2)).toBe(false);
});
