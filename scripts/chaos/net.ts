// The chaos network: one bridge, one network namespace per broker joined to it by a veth pair, and
// an nftables table in each namespace whose input chain drops what a cut says. Addresses are
// 10.199.<slot>.0/24 (the host side is .1, broker i is .10+i); a slot is claimed with a pid file
// under /run/broker-chaos, so runs side by side get different slots, and a slot whose owner died
// (a crash, SIGKILL) is swept by the next run. A watchdog process removes everything as soon as
// the runner is gone, however it went.
import { closeSync, mkdirSync, openSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const RUN_DIR = "/run/broker-chaos";
const SLOTS = 64;

function sh(cmd: string[], allowFail = false): string {
  const r = Bun.spawnSync(cmd, { stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0 && !allowFail) {
    throw new Error(`${cmd.join(" ")}: exit ${r.exitCode}: ${r.stderr.toString().trim()}`);
  }
  return r.stdout.toString();
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Whether this machine can run the chaos network (root, iproute2 with netns, nftables). */
export function netAvailable(): string | undefined {
  if (process.getuid?.() !== 0) return "not root";
  for (
    const [cmd, what] of [[["ip", "netns", "list"], "ip netns"], [["nft", "--version"], "nft"]]
  ) {
    try {
      const r = Bun.spawnSync(cmd as string[], { stdout: "ignore", stderr: "ignore" });
      if (r.exitCode !== 0) return `${what} does not work`;
    } catch {
      return `${what} is not installed`;
    }
  }
  return undefined;
}

/** The shell commands that remove slot `slot` (and kill whatever runs in its namespaces). */
function teardownScript(slot: number, brokers: number): string {
  const lines: string[] = [];
  for (let i = 0; i < brokers; i++) {
    const ns = nsName(slot, i);
    lines.push(`for p in $(ip netns pids ${ns} 2>/dev/null); do kill -CONT $p; kill -9 $p; done`);
    lines.push(`ip netns del ${ns} 2>/dev/null`);
  }
  // The brokers' data filesystems (disk-full runs), once nothing runs on them.
  lines.push(
    `[ -f ${RUN_DIR}/${slot}.mounts ] && while read -r m; do umount -l "$m" 2>/dev/null; done < ${RUN_DIR}/${slot}.mounts`,
  );
  lines.push(
    `[ -f ${RUN_DIR}/${slot}.procs ] && for p in $(cat ${RUN_DIR}/${slot}.procs); do kill -9 $p 2>/dev/null; done`,
  );
  lines.push(`ip link del ${bridgeName(slot)} 2>/dev/null`);
  lines.push(`rm -f ${RUN_DIR}/${slot}.procs ${RUN_DIR}/${slot}.mounts ${RUN_DIR}/${slot}.pid`);
  return lines.join("\n");
}

const nsName = (slot: number, i: number) => `chaos${slot}-b${i}`;
const bridgeName = (slot: number) => `chaosbr${slot}`;
const vethName = (slot: number, i: number) => `chaos${slot}v${i}`;
/** The flap set and the rule that drops what its addresses send (loss/flap turns them on and off). */
const FLAP_SET = "add set inet chaos flap { type ipv4_addr; }; " +
  "add chain inet chaos flapin { type filter hook input priority 1; }; " +
  "add rule inet chaos flapin ip saddr @flap counter drop";

/** Enough for any slot: brokers beyond this are refused. */
export const MAX_BROKERS = 9;

/** Removes slots whose runner is gone (it crashed or was SIGKILLed before its watchdog ran). */
export function sweepStale(): string[] {
  mkdirSync(RUN_DIR, { recursive: true });
  const swept: string[] = [];
  for (let slot = 0; slot < SLOTS; slot++) {
    let owner: number;
    try {
      owner = Number(readFileSync(join(RUN_DIR, `${slot}.pid`), "utf8").trim());
    } catch {
      continue;
    }
    if (owner > 0 && alive(owner)) continue;
    sh(["sh", "-c", teardownScript(slot, MAX_BROKERS)], true);
    swept.push(`slot ${slot} (runner ${owner} is gone)`);
  }
  return swept;
}

export class ChaosNet {
  readonly ids: number[];
  #watchdog: ReturnType<typeof Bun.spawn> | undefined;
  #up = false;
  readonly #procs = new Set<number>();
  readonly #mounts = new Set<string>();

  private constructor(readonly slot: number, readonly brokers: number) {
    this.ids = Array.from({ length: brokers }, (_, i) => i);
  }

  /** Claims a free slot and builds the bridge, namespaces and nftables tables. */
  static create(brokers: number): ChaosNet {
    if (brokers < 1 || brokers > MAX_BROKERS) throw new Error(`1-${MAX_BROKERS} brokers`);
    sweepStale();
    for (let slot = 0; slot < SLOTS; slot++) {
      let fd: number;
      try {
        fd = openSync(join(RUN_DIR, `${slot}.pid`), "wx");
      } catch {
        continue;
      }
      writeFileSync(fd, `${process.pid}\n`);
      closeSync(fd);
      const net = new ChaosNet(slot, brokers);
      try {
        net.#build();
      } catch (e) {
        net.down();
        throw e;
      }
      return net;
    }
    throw new Error(`no free chaos network slot under ${RUN_DIR}`);
  }

  ns(id: number): string {
    return nsName(this.slot, id);
  }

  ip(id: number): string {
    return `10.199.${this.slot}.${10 + id}`;
  }

  get hostIp(): string {
    return `10.199.${this.slot}.1`;
  }

  /** The command prefix that runs a program inside broker `id`'s namespace. */
  exec(id: number): string[] {
    return ["ip", "netns", "exec", this.ns(id)];
  }

  #build(): void {
    const br = bridgeName(this.slot);
    sh(["ip", "link", "add", br, "type", "bridge"]);
    sh(["ip", "addr", "add", `${this.hostIp}/24`, "dev", br]);
    sh(["ip", "link", "set", br, "up"]);
    for (const id of this.ids) {
      const ns = this.ns(id);
      const veth = vethName(this.slot, id);
      sh(["ip", "netns", "add", ns]);
      sh(["ip", "link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", ns]);
      sh(["ip", "link", "set", veth, "master", br, "up"]);
      sh(["ip", "netns", "exec", ns, "ip", "addr", "add", `${this.ip(id)}/24`, "dev", "eth0"]);
      sh(["ip", "netns", "exec", ns, "ip", "link", "set", "eth0", "up"]);
      sh(["ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up"]);
      sh([
        "ip",
        "netns",
        "exec",
        ns,
        "nft",
        "add table inet chaos; add chain inet chaos in { type filter hook input priority 0; }; " +
        FLAP_SET,
      ]);
    }
    this.#up = true;
    // The watchdog: once the runner is gone (however), it removes the slot, unless the runner
    // removed it itself and a later run owns the slot by then (the pid file says whose it is).
    const pidFile = join(RUN_DIR, `${this.slot}.pid`);
    const script = `while kill -0 ${process.pid} 2>/dev/null; do sleep 1; done\n` +
      `[ "$(cat ${pidFile} 2>/dev/null)" = "${process.pid}" ] || exit 0\n` +
      teardownScript(this.slot, this.brokers);
    this.#watchdog = Bun.spawn(["setsid", "sh", "-c", script], {
      stdin: "ignore",
      stdout: "ignore",
      stderr: "ignore",
    });
    this.#watchdog.unref();
  }

  /** A host-side process (a client) the watchdog kills if the runner dies without doing so. */
  track(pid: number | undefined): void {
    if (pid === undefined) return;
    this.#procs.add(pid);
    writeFileSync(join(RUN_DIR, `${this.slot}.procs`), [...this.#procs].join("\n") + "\n");
  }

  /** A filesystem mounted for a broker: the watchdog unmounts it if the runner dies first. */
  trackMount(path: string): void {
    this.#mounts.add(path);
    writeFileSync(join(RUN_DIR, `${this.slot}.mounts`), [...this.#mounts].join("\n") + "\n");
  }

  /** Adds a rule to `to`'s input chain matching what `from` sends; it counts what it drops. */
  #rule(from: number, to: number, match: string): void {
    sh([
      "ip",
      "netns",
      "exec",
      this.ns(to),
      "nft",
      `add rule inet chaos in ip saddr ${this.ip(from)} ${match} counter drop`,
    ]);
  }

  /** Drops everything `from` sends to `to` (on arrival, as a lost link: the sender sees nothing). */
  block(from: number, to: number): void {
    this.#rule(from, to, "");
  }

  /** Drops `percent` % of the packets `from` sends to `to`, each by a random draw (nft numgen). */
  lose(from: number, to: number, percent: number): void {
    if (!(percent >= 1 && percent <= 100)) throw new Error(`loss of ${percent} %`);
    // nft's numgen compare stops at 99 (the range is 0-99): all of it is a plain drop.
    const p = Math.round(percent);
    this.#rule(from, to, p >= 100 ? "" : `numgen random mod 100 < ${p}`);
  }

  /** Lets through at most `kib` KiB/s of what `from` sends to `to`; the excess is dropped. */
  throttle(from: number, to: number, kib: number): void {
    if (!(kib >= 1)) throw new Error(`throttle of ${kib} KiB/s`);
    this.#rule(from, to, `limit rate over ${Math.round(kib)} kbytes/second`);
  }

  /** Cuts `a` from `b` both ways. */
  cut(a: number, b: number): void {
    this.block(a, b);
    this.block(b, a);
  }

  /**
   * Drops (on) or lets through again (off) what each of `from` sends to `to`, by the addresses in
   * `to`'s flap set: one nft call, not waited for synchronously, so a link cut on and off several
   * times a second does not stall the runner (and the clients it drives).
   */
  async flap(to: number, from: number[], on: boolean): Promise<void> {
    const cmd = on
      ? `add element inet chaos flap { ${from.map((f) => this.ip(f)).join(", ")} }`
      : "flush set inet chaos flap";
    const p = Bun.spawn(["ip", "netns", "exec", this.ns(to), "nft", cmd], {
      stdout: "ignore",
      stderr: "ignore",
    });
    await p.exited;
  }

  /** Removes every cut; returns how many packets the rules dropped (the fault's proof of effect). */
  heal(): number {
    const dropped = this.dropped();
    for (const id of this.ids) {
      sh([
        "ip",
        "netns",
        "exec",
        this.ns(id),
        "nft",
        // The flap rule is made again: its counter starts from 0 for the next fault.
        "flush chain inet chaos in; flush set inet chaos flap; flush chain inet chaos flapin; " +
        "add rule inet chaos flapin ip saddr @flap counter drop",
      ], true);
    }
    return dropped;
  }

  /** Packets dropped so far by the rules in force, over every namespace. */
  dropped(): number {
    let n = 0;
    for (const id of this.ids) {
      const text = sh(["ip", "netns", "exec", this.ns(id), "nft", "list table inet chaos"], true);
      for (const m of text.matchAll(/counter packets (\d+)/g)) n += Number(m[1]);
    }
    return n;
  }

  /** The rules in force, per namespace (for the log). */
  rules(): string {
    return this.ids.map((id) =>
      `${this.ns(id)}: ${
        sh(["ip", "netns", "exec", this.ns(id), "nft", "list chain inet chaos in"], true)
          .split("\n").filter((l) => l.includes("drop")).map((l) => l.trim()).join("; ")
      }`
    ).join("\n");
  }

  /** Kills what runs in the namespaces, removes them, the bridge and the slot. Idempotent. */
  down(): void {
    this.#watchdog?.kill("SIGKILL");
    sh(["sh", "-c", teardownScript(this.slot, this.brokers)], true);
    this.#up = false;
  }

  get up(): boolean {
    return this.#up;
  }
}
