// A chaos broker's own disk: a tmpfs mounted for it, filled to the last byte by the ballast (a write
// then fails with ENOSPC), emptied again (writes work), and unmounted at the end with its data kept
// on the ordinary filesystem when asked. Skipped where namespaces and mounts cannot be made.
import { afterAll, expect, test } from "bun:test";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ChaosDisks, freeBytes } from "../../scripts/chaos/disk.ts";
import { ChaosNet, netAvailable } from "../../scripts/chaos/net.ts";
import { tempDir } from "../helpers/broker-process.ts";

const why = netAvailable();
let net: ChaosNet | undefined;
let disks: ChaosDisks | undefined;
afterAll(() => {
  disks?.unmountAll(false);
  net?.down();
});

test.skipIf(why !== undefined)(
  `fill refuses writes, drain gives room back, unmount keeps the data${
    why ? ` (skipped: ${why})` : ""
  }`,
  () => {
    net = ChaosNet.create(1);
    disks = new ChaosDisks(net, 8);
    const root = tempDir("chaos-disk-");
    const mount = join(root, "broker-0");
    const data = disks.mount(0, mount);
    expect(data).toBe(join(mount, "data"));
    writeFileSync(join(data, "before"), "kept");
    expect(freeBytes(data)).toBeGreaterThan(7 * 2 ** 20);

    const { ballast, free } = disks.fill(0);
    expect(ballast).toBeGreaterThan(7 * 2 ** 20);
    expect(free).toBe(0);
    let code: string | undefined;
    try {
      writeFileSync(join(data, "during"), Buffer.alloc(64 * 1024));
    } catch (e) {
      code = (e as NodeJS.ErrnoException).code;
    }
    expect(code).toBe("ENOSPC");

    disks.drain(0);
    expect(freeBytes(data)).toBeGreaterThan(7 * 2 ** 20);
    writeFileSync(join(data, "after"), Buffer.alloc(64 * 1024));

    disks.unmountAll(true);
    disks = undefined;
    // Off the tmpfs now (a plain directory on the parent filesystem), the data as it was.
    const mounts = readFileSync("/proc/mounts", "utf8");
    expect(mounts).not.toContain(` ${mount} `);
    expect(readFileSync(join(data, "before"), "utf8")).toBe("kept");
    expect(existsSync(join(data, "after"))).toBe(true);
    expect(existsSync(join(mount, "ballast"))).toBe(false);
    rmSync(root, { recursive: true, force: true });
  },
  60_000,
);
