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
  lines.push(
    `[ -f ${RUN_DIR}/${slot}.procs ] && for p in $(cat ${RUN_DIR}/${slot}.procs); do kill -9 $p 2>/dev/null; done`,
  );
  lines.push(`ip link del ${bridgeName(slot)} 2>/dev/null`);
  lines.push(`rm -f ${RUN_DIR}/${slot}.procs ${RUN_DIR}/${slot}.pid`);
  return lines.join("\n");
}

const nsName = (slot: number, i: number) => `chaos${slot}-b${i}`;
const bridgeName = (slot: number) => `chaosbr${slot}`;
const vethName = (slot: number, i: number) => `chaos${slot}v${i}`;
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
        "add table inet chaos; add chain inet chaos in { type filter hook input priority 0; }",
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

  /** Drops everything `from` sends to `to` (on arrival, as a lost link: the sender sees nothing). */
  block(from: number, to: number): void {
    sh([
      "ip",
      "netns",
      "exec",
      this.ns(to),
      "nft",
      `add rule inet chaos in ip saddr ${this.ip(from)} drop`,
    ]);
  }

  /** Cuts `a` from `b` both ways. */
  cut(a: number, b: number): void {
    this.block(a, b);
    this.block(b, a);
  }

  /** Removes every cut. */
  heal(): void {
    for (const id of this.ids) {
      sh(["ip", "netns", "exec", this.ns(id), "nft", "flush chain inet chaos in"], true);
    }
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
