// The brokers' disks in a disk-full run: each broker's data directory is its own small tmpfs, so
// one broker's disk can be filled (a ballast file takes every free byte, as a runaway neighbour
// would) while the others keep room. The broker must refuse writes with KAFKA_STORAGE_ERROR, lose
// nothing it acknowledged, and carry on once the ballast is gone. The mounts are registered with
// the chaos network, whose watchdog unmounts them if the runner dies before it does.
import { cpSync, existsSync, mkdirSync, renameSync, rmSync, statfsSync } from "node:fs";
import { dirname, join } from "node:path";
import type { ChaosNet } from "./net.ts";

function sh(cmd: string[]): { ok: boolean; err: string } {
  const r = Bun.spawnSync(cmd, { stdout: "ignore", stderr: "pipe" });
  return { ok: r.exitCode === 0, err: r.stderr.toString().trim() };
}

/** Bytes a non-root writer could still take on the filesystem holding `dir`. */
export function freeBytes(dir: string): number {
  const s = statfsSync(dir);
  return Number(s.bavail) * Number(s.bsize);
}

export class ChaosDisks {
  /** broker id -> its mount point (the data directory is `data/` inside it). */
  readonly #mounts = new Map<number, string>();

  constructor(readonly net: ChaosNet, readonly sizeMiB: number) {}

  /** Mounts a fresh tmpfs of `sizeMiB` at `mount` for broker `id`; returns its data directory. */
  mount(id: number, mount: string): string {
    mkdirSync(mount, { recursive: true });
    const r = sh(["mount", "-t", "tmpfs", "-o", `size=${this.sizeMiB}m`, "tmpfs", mount]);
    if (!r.ok) throw new Error(`mount tmpfs at ${mount}: ${r.err}`);
    this.net.trackMount(mount);
    this.#mounts.set(id, mount);
    const data = join(mount, "data");
    mkdirSync(data, { recursive: true });
    return data;
  }

  #ballast(id: number): string {
    const m = this.#mounts.get(id);
    if (m === undefined) throw new Error(`broker ${id} has no disk of its own (not mounted)`);
    return join(m, "ballast");
  }

  /**
   * Fills broker `id`'s disk: a ballast file next to its data directory takes every free byte.
   * Returns the ballast's size and what was left free after it.
   */
  fill(id: number): { ballast: number; free: number } {
    const file = this.#ballast(id);
    const want = freeBytes(dirname(file));
    // fallocate reserves the pages at once (tmpfs supports it); a short write is no failure here:
    // what is left is measured and reported.
    const r = sh(["fallocate", "-l", String(want), file]);
    if (!r.ok) sh(["sh", "-c", `dd if=/dev/zero of=${file} bs=1M 2>/dev/null; true`]);
    return { ballast: existsSync(file) ? Bun.file(file).size : 0, free: freeBytes(dirname(file)) };
  }

  /** Removes broker `id`'s ballast: its disk has room again. */
  drain(id: number): void {
    rmSync(this.#ballast(id), { force: true });
  }

  /**
   * Unmounts every disk (the brokers have stopped). With `keep`, each data directory is copied out
   * first and put back where it was, on the ordinary filesystem.
   */
  unmountAll(keep: boolean): void {
    for (const [id, m] of this.#mounts) {
      rmSync(join(m, "ballast"), { force: true });
      const kept = `${m}.kept`;
      if (keep) cpSync(m, kept, { recursive: true });
      const r = sh(["umount", "-l", m]);
      if (!r.ok) console.error(`chaos: umount ${m} (broker ${id}): ${r.err}`);
      if (keep) {
        rmSync(m, { recursive: true, force: true });
        renameSync(kept, m);
      }
    }
    this.#mounts.clear();
  }
}
