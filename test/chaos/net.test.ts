// The chaos network's link faults on real namespaces: a cut, random loss, a throttle and the flap
// set each drop what they should (counted by their nftables counters), and a heal lets everything
// through again and starts the count over. Skipped where namespaces cannot be made (not root).
import { afterAll, expect, test } from "bun:test";
import { ChaosNet, netAvailable } from "../../scripts/chaos/net.ts";

const why = netAvailable();
let net: ChaosNet | undefined;
afterAll(() => net?.down());

/** A TCP connection attempt from broker `from`'s namespace to a closed port of broker `to`. */
function connect(from: number, to: number, n = 1): boolean[] {
  const out: boolean[] = [];
  for (let i = 0; i < n; i++) {
    // Refused at once when the link works (exit 7); a dropped SYN times out (exit 28).
    const r = Bun.spawnSync([
      ...net!.exec(from),
      "curl",
      "-s",
      "-m",
      "0.5",
      `http://${net!.ip(to)}:1/`,
    ]);
    out.push(r.exitCode === 7);
  }
  return out;
}

test.skipIf(why !== undefined)(
  `cut, loss, throttle and flap drop packets; heal restores${why ? ` (skipped: ${why})` : ""}`,
  async () => {
    net = ChaosNet.create(2);
    expect(connect(1, 0)).toEqual([true]);
    expect(net.dropped()).toBe(0);

    net.block(1, 0);
    expect(connect(1, 0)).toEqual([false]);
    // One way: 0's SYN reaches 1, whose answer is dropped on the way back (as TCP sees it).
    expect(connect(0, 1)).toEqual([false]);
    expect(net.heal()).toBeGreaterThan(0);
    expect(net.dropped()).toBe(0);
    expect(connect(1, 0)).toEqual([true]);

    net.lose(1, 0, 100);
    expect(connect(1, 0)).toEqual([false]);
    expect(net.heal()).toBeGreaterThan(0);

    // 50 %: some attempts pass, some do not (a SYN is retried within 0.5 s only after 1 s).
    net.lose(1, 0, 50);
    const half = connect(1, 0, 16);
    expect(half.filter((x) => x).length).toBeGreaterThan(0);
    expect(half.filter((x) => !x).length).toBeGreaterThan(0);
    net.heal();

    // A throttle: 64 KiB posted to a server in broker 0's namespace passes at once, and not in
    // 2 s at 4 KiB/s (the excess is dropped and counted).
    const server = Bun.spawn([
      ...net.exec(0),
      process.execPath,
      "-e",
      `Bun.serve({ hostname: "${net.ip(0)}", port: 8080, fetch: async (r) => ` +
      `new Response(String((await r.arrayBuffer()).byteLength)) }); console.log("up");`,
    ], { stdout: "pipe", stderr: "ignore" });
    try {
      const reader = server.stdout.getReader();
      await reader.read(); // "up"
      const post = () =>
        Bun.spawnSync([
          ...net!.exec(1),
          "sh",
          "-c",
          `head -c 65536 /dev/zero | curl -s -m 2 --data-binary @- http://${net!.ip(0)}:8080/`,
        ]).stdout.toString();
      expect(post()).toBe("65536");
      net.throttle(1, 0, 4);
      expect(post()).toBe("");
      expect(net.heal()).toBeGreaterThan(0);
      expect(post()).toBe("65536");
    } finally {
      server.kill();
    }

    await net.flap(0, [1], true);
    expect(connect(1, 0)).toEqual([false]);
    await net.flap(0, [1], false);
    expect(connect(1, 0)).toEqual([true]);
    expect(net.heal()).toBeGreaterThan(0);
    expect(net.dropped()).toBe(0);
    expect(() => net!.lose(0, 1, 0)).toThrow();
    expect(() => net!.throttle(0, 1, 0)).toThrow();
  },
  60_000,
);
