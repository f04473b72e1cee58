// SCRAM (RFC 5802, with the SHA-256 and SHA-512 hashes of RFC 7677 and Kafka's KIP-84): the key
// derivation, the stored credential, and the server and client sides of the exchange as pure
// state machines (no IO, no clock; nonces and credential lookup are given), so the RFC's test
// vectors run against them as they are. The server never holds a password: only the salt, the
// iteration count, StoredKey and ServerKey.
import { createHash, createHmac, pbkdf2, pbkdf2Sync, timingSafeEqual } from "node:crypto";

export const SCRAM_MECHANISMS = ["SCRAM-SHA-256", "SCRAM-SHA-512"] as const;
export type ScramMechanism = (typeof SCRAM_MECHANISMS)[number];
/** The hashes SCRAM is run with here ("sha1" only for RFC 5802's own test vector). */
export type ScramHash = "sha1" | "sha256" | "sha512";

/** Kafka's bounds on iterations (ScramMechanism.minIterations / maxIterations). */
export const MIN_ITERATIONS = 4096;
export const MAX_ITERATIONS = 16384;

export function isScramMechanism(m: string): m is ScramMechanism {
  return (SCRAM_MECHANISMS as readonly string[]).includes(m);
}

export function hashOf(m: ScramMechanism): ScramHash {
  return m === "SCRAM-SHA-256" ? "sha256" : "sha512";
}

/** Kafka's mechanism type numbers in Alter/DescribeUserScramCredentials. */
export function mechanismCode(m: ScramMechanism): number {
  return m === "SCRAM-SHA-256" ? 1 : 2;
}
export function mechanismOfCode(code: number): ScramMechanism | undefined {
  return code === 1 ? "SCRAM-SHA-256" : code === 2 ? "SCRAM-SHA-512" : undefined;
}

/** What the broker stores for one user and mechanism. */
export interface ScramCredential {
  mechanism: ScramMechanism;
  salt: Uint8Array;
  iterations: number;
  storedKey: Uint8Array;
  serverKey: Uint8Array;
}

const hmac = (h: ScramHash, key: Uint8Array, data: string | Uint8Array): Uint8Array =>
  new Uint8Array(createHmac(h, key).update(data).digest());
const digest = (h: ScramHash, data: Uint8Array): Uint8Array =>
  new Uint8Array(createHash(h).update(data).digest());
const hashLength = (h: ScramHash) => (h === "sha1" ? 20 : h === "sha256" ? 32 : 64);

/** SaltedPassword := Hi(Normalize(password), salt, i), Hi being PBKDF2 with HMAC-H. */
export function saltedPassword(
  h: ScramHash,
  password: string,
  salt: Uint8Array,
  iterations: number,
): Uint8Array {
  // SASLprep is the identity for the ASCII passwords clients send in practice; NFKC covers the
  // usual non-ASCII case (what Kafka's Java client does as well: it applies no SASLprep).
  return new Uint8Array(
    pbkdf2Sync(password.normalize("NFKC"), salt, iterations, hashLength(h), h),
  );
}

/** The same, off the event loop (a PLAIN login or an HTTP Basic check costs milliseconds). */
export function saltedPasswordAsync(
  h: ScramHash,
  password: string,
  salt: Uint8Array,
  iterations: number,
): Promise<Uint8Array> {
  return new Promise((resolve, reject) =>
    pbkdf2(
      password.normalize("NFKC"),
      salt,
      iterations,
      hashLength(h),
      h,
      (err, key) => (err ? reject(err) : resolve(new Uint8Array(key))),
    )
  );
}

/** StoredKey and ServerKey from a SaltedPassword (what AlterUserScramCredentials carries). */
export function keysFromSalted(
  h: ScramHash,
  salted: Uint8Array,
): { storedKey: Uint8Array; serverKey: Uint8Array } {
  return {
    storedKey: digest(h, hmac(h, salted, "Client Key")),
    serverKey: hmac(h, salted, "Server Key"),
  };
}

export function credentialFromSalted(
  mechanism: ScramMechanism,
  salt: Uint8Array,
  iterations: number,
  salted: Uint8Array,
): ScramCredential {
  return { mechanism, salt, iterations, ...keysFromSalted(hashOf(mechanism), salted) };
}

export function deriveCredential(
  mechanism: ScramMechanism,
  password: string,
  salt: Uint8Array,
  iterations: number,
): ScramCredential {
  const salted = saltedPassword(hashOf(mechanism), password, salt, iterations);
  return credentialFromSalted(mechanism, salt, iterations, salted);
}

export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Whether `password` is the one `cred` was made from (PLAIN and HTTP Basic logins). */
export async function passwordMatches(cred: ScramCredential, password: string): Promise<boolean> {
  const h = hashOf(cred.mechanism);
  const salted = await saltedPasswordAsync(h, password, cred.salt, cred.iterations);
  return equalBytes(keysFromSalted(h, salted).storedKey, cred.storedKey);
}

// ---- message syntax (RFC 5802 section 7) ---------------------------------------------------

export class ScramError extends Error {
  override readonly name = "ScramError";
}

const b64 = (b: Uint8Array) => Buffer.from(b).toString("base64");
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
function unb64(s: string, what: string): Uint8Array {
  if (!BASE64.test(s)) throw new ScramError(`${what} is not base64`);
  return new Uint8Array(Buffer.from(s, "base64"));
}

/** saslname: "," and "=" are sent as "=2C" and "=3D"; any other "=" is malformed. */
export function decodeSaslName(s: string): string {
  if (/=(?!2C|3D)/.test(s)) throw new ScramError("malformed user name");
  return s.replaceAll("=2C", ",").replaceAll("=3D", "=");
}
export function encodeSaslName(s: string): string {
  return s.replaceAll("=", "=3D").replaceAll(",", "=2C");
}

/** printable except ",": what a nonce may hold. */
const NONCE = /^[\x21-\x2b\x2d-\x7e]+$/;

/** "k=v" attributes in order; values may contain "=". */
function attributes(msg: string): [string, string][] {
  return msg.split(",").map((part) => {
    if (part.length < 2 || part[1] !== "=" || !/^[A-Za-z]$/.test(part[0])) {
      throw new ScramError(`malformed attribute ${JSON.stringify(part.slice(0, 20))}`);
    }
    return [part[0], part.slice(2)];
  });
}

export interface ClientFirst {
  /** "n,," or "y,,", or with an authzid "n,a=NAME,". */
  gs2Header: string;
  authzid: string | null;
  user: string;
  nonce: string;
  bare: string;
  /** Extensions after the nonce (Kafka's tokenauth=true, for one). */
  extensions: Map<string, string>;
}

export function parseClientFirst(msg: string): ClientFirst {
  const m = /^([ny]|p=[^,]*),(a=[^,]*)?,(.*)$/s.exec(msg);
  if (!m) throw new ScramError("malformed client-first-message");
  if (m[1].startsWith("p=")) throw new ScramError("channel binding is not supported");
  const authzid = m[2] ? decodeSaslName(m[2].slice(2)) : null;
  const bare = m[3];
  const attrs = bare.split(",");
  if (attrs[0]?.startsWith("m=")) throw new ScramError("mandatory extensions are not supported");
  if (!attrs[0]?.startsWith("n=") || !attrs[1]?.startsWith("r=")) {
    throw new ScramError("client-first-message must start with n= and r=");
  }
  const user = decodeSaslName(attrs[0].slice(2));
  const nonce = attrs[1].slice(2);
  if (user === "") throw new ScramError("empty user name");
  if (!NONCE.test(nonce)) throw new ScramError("malformed nonce");
  const extensions = new Map<string, string>();
  for (const a of attrs.slice(2)) {
    const eq = a.indexOf("=");
    if (eq <= 0) throw new ScramError("malformed extension");
    extensions.set(a.slice(0, eq), a.slice(eq + 1));
  }
  return {
    gs2Header: `${m[1]},${m[2] ?? ""},`,
    authzid,
    user,
    nonce,
    bare,
    extensions,
  };
}

// ---- the server ------------------------------------------------------------------------------

export type ServerStep =
  | { kind: "continue"; message: string }
  | { kind: "done"; message: string; user: string }
  | { kind: "failed"; reason: string };

export interface ScramServerOptions {
  mechanism: ScramMechanism;
  /** The stored credential of a user for this mechanism, or undefined. */
  lookup: (user: string) => ScramCredential | undefined;
  /** The server's part of the nonce (random in production, fixed in the RFC vectors). */
  serverNonce: string;
  /**
   * A secret the broker keeps in memory: an unknown user gets a made-up salt derived from it, so
   * the exchange fails only at the proof and does not tell which users exist (RFC 5802 §9).
   */
  fakeSecret: Uint8Array;
  /** For RFC 5802's SHA-1 vector only. */
  hash?: ScramHash;
}

/**
 * One authentication, server side: `step` takes the client-first message, then the
 * client-final message. Any deviation fails it for good.
 */
export class ScramServer {
  #state: "first" | "final" | "over" = "first";
  #first: ClientFirst | null = null;
  #serverFirst = "";
  #nonce = "";
  #cred: ScramCredential | undefined;
  #fake: ScramCredential | null = null;
  readonly #h: ScramHash;

  constructor(readonly opts: ScramServerOptions) {
    this.#h = opts.hash ?? hashOf(opts.mechanism);
    if (!NONCE.test(opts.serverNonce)) throw new Error("server nonce must be printable, no comma");
  }

  get state(): "first" | "final" | "over" {
    return this.#state;
  }

  step(message: string): ServerStep {
    try {
      if (this.#state === "first") return this.#onFirst(message);
      if (this.#state === "final") return this.#onFinal(message);
      return this.#fail("the exchange is over");
    } catch (e) {
      return this.#fail(e instanceof ScramError ? e.message : "malformed message");
    }
  }

  #fail(reason: string): ServerStep {
    this.#state = "over";
    return { kind: "failed", reason };
  }

  #onFirst(message: string): ServerStep {
    const first = parseClientFirst(message);
    if (first.authzid !== null && first.authzid !== first.user) {
      return this.#fail("authorization id must be empty or the user name");
    }
    if (first.extensions.get("tokenauth") === "true") {
      return this.#fail("delegation tokens are not supported");
    }
    this.#first = first;
    this.#cred = this.opts.lookup(first.user);
    if (this.#cred === undefined) this.#fake = this.#fakeCredential(first.user);
    const c = this.#cred ?? this.#fake!;
    this.#nonce = first.nonce + this.opts.serverNonce;
    this.#serverFirst = `r=${this.#nonce},s=${b64(c.salt)},i=${c.iterations}`;
    this.#state = "final";
    return { kind: "continue", message: this.#serverFirst };
  }

  #onFinal(message: string): ServerStep {
    const first = this.#first!;
    const attrs = attributes(message);
    const last = attrs[attrs.length - 1];
    if (attrs.length < 3 || attrs[0][0] !== "c" || attrs[1][0] !== "r" || last[0] !== "p") {
      throw new ScramError("client-final-message must be c=...,r=...,p=...");
    }
    const binding = unb64(attrs[0][1], "channel binding");
    if (Buffer.from(binding).toString("latin1") !== first.gs2Header) {
      return this.#fail("channel binding does not match the client-first-message");
    }
    // The nonce must end with the one the server sent (it holds the server's fresh part, and the
    // proof covers the whole message). Not equality, as Kafka's broker checks it: librdkafka
    // sends its client nonce in front of the server's combined nonce once more.
    if (!attrs[1][1].endsWith(this.#nonce)) return this.#fail("nonce mismatch");
    const proof = unb64(last[1], "proof");
    const withoutProof = message.slice(0, message.lastIndexOf(",p="));
    const authMessage = `${first.bare},${this.#serverFirst},${withoutProof}`;
    const cred = this.#cred;
    const c = cred ?? this.#fake!;
    const h = this.#h;
    const clientSignature = hmac(h, c.storedKey, authMessage);
    if (proof.length !== clientSignature.length) return this.#fail("invalid credentials");
    const clientKey = proof.map((b, i) => b ^ clientSignature[i]);
    if (cred === undefined || !equalBytes(digest(h, clientKey), c.storedKey)) {
      return this.#fail("invalid credentials");
    }
    this.#state = "over";
    const serverSignature = hmac(h, c.serverKey, authMessage);
    return { kind: "done", message: `v=${b64(serverSignature)}`, user: first.user };
  }

  #fakeCredential(user: string): ScramCredential {
    const h = this.#h;
    const k = hmac(h, this.opts.fakeSecret, `${this.opts.mechanism}\0${user}`);
    return {
      mechanism: this.opts.mechanism,
      salt: k.subarray(0, 16),
      iterations: MIN_ITERATIONS,
      storedKey: hmac(h, k, "stored"),
      serverKey: hmac(h, k, "server"),
    };
  }
}

// ---- the client (tests, and nothing in the broker needs it yet) -----------------------------

export interface ScramClientOptions {
  mechanism: ScramMechanism;
  user: string;
  password: string;
  clientNonce: string;
  hash?: ScramHash;
  /** Build r= as librdkafka does: the client nonce, then the server's whole nonce. */
  repeatClientNonce?: boolean;
}

/** The client side: first(), then final(serverFirst), then verify(serverFinal). */
export class ScramClient {
  readonly #h: ScramHash;
  #bare = "";
  #serverSignature: Uint8Array | null = null;

  constructor(readonly opts: ScramClientOptions) {
    this.#h = opts.hash ?? hashOf(opts.mechanism);
  }

  first(): string {
    this.#bare = `n=${encodeSaslName(this.opts.user)},r=${this.opts.clientNonce}`;
    return `n,,${this.#bare}`;
  }

  final(serverFirst: string): string {
    const attrs = attributes(serverFirst);
    const get = (k: string) => attrs.find((a) => a[0] === k)?.[1];
    const nonce = get("r"), salt = get("s"), iter = Number(get("i"));
    if (!nonce?.startsWith(this.opts.clientNonce) || salt === undefined) {
      throw new ScramError("bad server-first-message");
    }
    if (!Number.isInteger(iter) || iter < 1) throw new ScramError("bad iteration count");
    const h = this.#h;
    const salted = saltedPassword(h, this.opts.password, unb64(salt, "salt"), iter);
    const clientKey = hmac(h, salted, "Client Key");
    const storedKey = digest(h, clientKey);
    const r = this.opts.repeatClientNonce ? this.opts.clientNonce + nonce : nonce;
    const withoutProof = `c=${b64(new TextEncoder().encode("n,,"))},r=${r}`;
    const authMessage = `${this.#bare},${serverFirst},${withoutProof}`;
    const sig = hmac(h, storedKey, authMessage);
    this.#serverSignature = hmac(h, hmac(h, salted, "Server Key"), authMessage);
    return `${withoutProof},p=${b64(clientKey.map((b, i) => b ^ sig[i]))}`;
  }

  /** Whether the server proved it holds the credential too. */
  verify(serverFinal: string): boolean {
    if (!serverFinal.startsWith("v=") || this.#serverSignature === null) return false;
    return equalBytes(unb64(serverFinal.slice(2), "signature"), this.#serverSignature);
  }
}
