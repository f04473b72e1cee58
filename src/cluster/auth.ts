// Who may speak on the cluster port: the cluster's join token (a shared secret the first broker
// generates and keeps in its data dir; joiners store the one they joined with), the keys derived
// from it, the challenge-response handshake that opens every TCP connection (mutual proof over a
// random nonce from each side, binding the connection to the client's node id), and the MAC and
// replay window of every SWIM datagram. docs/security.md describes the design and its limits.
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import {
  chmodSync,
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";

/** The token's file in a data dir (mode 0600). */
export const TOKEN_FILE = "cluster.token";
const TOKEN_RE = /^[A-Za-z0-9._~+/=-]{32,512}$/;

/** Why a string cannot be a join token, or undefined when it can. */
export function tokenProblem(t: string): string | undefined {
  if (TOKEN_RE.test(t)) return undefined;
  if (t.length < 32) return `a join token has at least 32 characters (got ${t.length})`;
  if (t.length > 512) return "a join token has at most 512 characters";
  return "a join token has only letters, digits and . _ ~ + / = -";
}

/** A new join token: 32 random bytes, base64url (43 characters), never starting with '-'. */
export function generateToken(): string {
  for (;;) {
    // A leading '-' would read as a flag in `--join-token TOKEN`.
    const t = randomBytes(32).toString("base64url");
    if (!t.startsWith("-")) return t;
  }
}

export class TokenFileError extends Error {
  override readonly name = "TokenFileError";
  readonly userFacing = true;
}

/** The token recorded in `dataDir`, if any; a malformed file is an error, never ignored. */
export function readTokenFile(dataDir: string): string | undefined {
  const p = join(dataDir, TOKEN_FILE);
  if (!existsSync(p)) return undefined;
  let t: string;
  try {
    t = readFileSync(p, "utf8").trim();
  } catch (e) {
    throw new TokenFileError(`cannot read ${p}: ${(e as Error).message}`);
  }
  const why = tokenProblem(t);
  if (why !== undefined) throw new TokenFileError(`${p} does not hold a join token: ${why}`);
  return t;
}

/** Records `token` in `dataDir` (created 0600, synced, renamed into place). */
export function writeTokenFile(dataDir: string, token: string): void {
  mkdirSync(dataDir, { recursive: true });
  const p = join(dataDir, TOKEN_FILE);
  const tmp = `${p}.tmp`;
  const fd = openSync(tmp, "w", 0o600);
  try {
    writeSync(fd, token + "\n");
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  chmodSync(tmp, 0o600); // whatever the umask or an older file left
  renameSync(tmp, p);
  try {
    const dfd = openSync(dataDir, "r");
    try {
      fsyncSync(dfd);
    } finally {
      closeSync(dfd);
    }
  } catch { /* a directory fsync is best effort on some filesystems */ }
}

const hmac = (key: Uint8Array | string, data: Uint8Array | string) =>
  createHmac("sha256", key).update(data).digest();

export const MAC_BYTES = 32;

/**
 * The keys of one cluster, derived from its join token: one for handshake proofs, one for SWIM
 * datagrams (so a proof can never pass for a datagram MAC or the other way round).
 */
export class ClusterKey {
  readonly #hs: Uint8Array;
  readonly #swim: Uint8Array;

  constructor(token: string) {
    this.#hs = hmac(token, "broker cluster handshake v1");
    this.#swim = hmac(token, "broker cluster swim v1");
  }

  /** A handshake proof by `role` over `fields` (both nonces and the identities claimed). */
  proof(role: "client" | "server", fields: readonly unknown[]): string {
    return hmac(this.#hs, JSON.stringify([role, ...fields])).toString("base64url");
  }

  checkProof(role: "client" | "server", fields: readonly unknown[], proof: unknown): boolean {
    if (typeof proof !== "string" || proof.length > 64) return false;
    const want = Buffer.from(this.proof(role, fields));
    const got = Buffer.from(proof);
    return got.length === want.length && timingSafeEqual(got, want);
  }

  swimMac(bytes: Uint8Array): Uint8Array {
    return hmac(this.#swim, bytes);
  }

  checkSwimMac(bytes: Uint8Array, mac: Uint8Array): boolean {
    return mac.length === MAC_BYTES && timingSafeEqual(this.swimMac(bytes), mac);
  }
}

/** A fresh handshake nonce (24 random bytes, base64url). */
export function newNonce(): string {
  return randomBytes(24).toString("base64url");
}

export function isNonce(v: unknown): v is string {
  return typeof v === "string" && /^[A-Za-z0-9_-]{32}$/.test(v);
}

/**
 * Strictly increasing datagram counters for this process: microseconds of wall-clock time, one
 * more than the last when the clock has not moved on (so a restarted broker starts above what its
 * peers saw from it before, as long as its clock did not step back by more than it was down).
 */
export class SwimCounter {
  #last = 0;
  next(): number {
    this.#last = Math.max(this.#last + 1, Date.now() * 1000);
    return this.#last;
  }
}

/** How far below the newest counter seen from a sender a datagram may arrive (reordering). */
const REPLAY_WINDOW = 5_000_000; // 5 s of sender microseconds
const MAX_SEEN_PER_SENDER = 4096;
const MAX_SENDERS = 10_000;

/**
 * The receiver's replay check for authenticated datagrams: per sender, the newest counter seen
 * and the counters seen within REPLAY_WINDOW below it. A counter seen before, or older than the
 * window, is refused. Only senders whose datagram MAC verified get an entry.
 */
export class ReplayWindow {
  readonly #senders = new Map<number, { max: number; floor: number; seen: Set<number> }>();

  /** Whether `counter` from `sender` is fresh; records it when it is. */
  accept(sender: number, counter: number): boolean {
    let s = this.#senders.get(sender);
    if (s === undefined) {
      if (this.#senders.size >= MAX_SENDERS) {
        // Members come and go; forget the oldest-inserted sender rather than grow for ever.
        const first = this.#senders.keys().next().value;
        if (first !== undefined) this.#senders.delete(first);
      }
      s = { max: counter, floor: -Infinity, seen: new Set([counter]) };
      this.#senders.set(sender, s);
      return true;
    }
    if (counter <= s.max - REPLAY_WINDOW || counter <= s.floor || s.seen.has(counter)) {
      return false;
    }
    s.seen.add(counter);
    if (counter > s.max) {
      s.max = counter;
      for (const c of s.seen) if (c <= s.max - REPLAY_WINDOW) s.seen.delete(c);
    }
    if (s.seen.size > MAX_SEEN_PER_SENDER) {
      // A flood within the window: keep the newest half, and refuse anything older than them.
      const keep = [...s.seen].sort((a, b) => b - a).slice(0, MAX_SEEN_PER_SENDER / 2);
      s.seen = new Set(keep);
      s.floor = keep[keep.length - 1] - 1;
    }
    return true;
  }
}
