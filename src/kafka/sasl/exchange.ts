// One SASL authentication of a Kafka connection, mechanism by mechanism: tokens in, tokens out,
// a principal at the end. PLAIN (RFC 4616) checks the password against the stored SCRAM
// credential; SCRAM-SHA-256/512 run the exchange of scram.ts.
import { randomBytes } from "node:crypto";
import type { Principal } from "../principal.ts";
import type { CredentialSource, PasswordChecker } from "./password.ts";
import { isScramMechanism, type ScramMechanism, ScramServer } from "./scram.ts";

export const SASL_MECHANISMS = ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"] as const;
export type SaslMechanism = (typeof SASL_MECHANISMS)[number];

export function isSaslMechanism(m: string): m is SaslMechanism {
  return (SASL_MECHANISMS as readonly string[]).includes(m);
}

export type ExchangeStep =
  | { kind: "continue"; token: Uint8Array }
  | { kind: "done"; token: Uint8Array; principal: Principal }
  | { kind: "failed"; message: string; user?: string };

export interface ExchangeDeps {
  source: CredentialSource;
  passwords: PasswordChecker;
  /** See ScramServerOptions.fakeSecret. */
  fakeSecret: Uint8Array;
  /** The server nonce (random unless a test fixes it). */
  nonce?: () => string;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });
const EMPTY = new Uint8Array(0);

/** Kafka's message for a failed login, naming the mechanism and nothing about which part. */
function invalid(mechanism: SaslMechanism): string {
  return `Authentication failed during authentication due to invalid credentials with SASL mechanism ${mechanism}`;
}

export interface SaslExchange {
  readonly mechanism: SaslMechanism;
  step(token: Uint8Array): Promise<ExchangeStep>;
}

export function startExchange(mechanism: SaslMechanism, deps: ExchangeDeps): SaslExchange {
  return isScramMechanism(mechanism)
    ? new ScramExchange(mechanism, deps)
    : new PlainExchange(deps.passwords);
}

/** PLAIN: one message "authzid NUL authcid NUL password"; authzid empty or the user. */
export function parsePlain(token: Uint8Array): { user: string; password: string } | string {
  let text: string;
  try {
    text = utf8.decode(token);
  } catch {
    return "Invalid SASL/PLAIN response: not UTF-8";
  }
  const parts = text.split("\0");
  if (parts.length !== 3) return "Invalid SASL/PLAIN response: expected 3 tokens";
  const [authzid, user, password] = parts;
  if (user === "") return "Authentication failed: username not specified";
  if (password === "") return "Authentication failed: password not specified";
  if (authzid !== "" && authzid !== user) {
    return "Authentication failed: Client requested an authorization id that is different from username";
  }
  return { user, password };
}

class PlainExchange implements SaslExchange {
  readonly mechanism = "PLAIN" as const;
  #done = false;

  constructor(readonly passwords: PasswordChecker) {}

  async step(token: Uint8Array): Promise<ExchangeStep> {
    if (this.#done) return { kind: "failed", message: "SASL/PLAIN takes one message" };
    this.#done = true;
    const p = parsePlain(token);
    if (typeof p === "string") return { kind: "failed", message: p };
    if (!(await this.passwords.check(p.user, p.password))) {
      return { kind: "failed", message: invalid("PLAIN"), user: p.user };
    }
    return {
      kind: "done",
      token: EMPTY,
      principal: { type: "User", name: p.user, via: "SASL/PLAIN" },
    };
  }
}

class ScramExchange implements SaslExchange {
  readonly #server: ScramServer;
  #user: string | undefined;

  constructor(readonly mechanism: ScramMechanism, deps: ExchangeDeps) {
    this.#server = new ScramServer({
      mechanism,
      lookup: (user) => {
        this.#user = user;
        return deps.source.scramCredential(user, mechanism);
      },
      serverNonce: deps.nonce?.() ?? randomBytes(24).toString("base64"),
      fakeSecret: deps.fakeSecret,
    });
  }

  step(token: Uint8Array): Promise<ExchangeStep> {
    let text: string;
    try {
      text = utf8.decode(token);
    } catch {
      return Promise.resolve({ kind: "failed", message: "Invalid SCRAM message: not UTF-8" });
    }
    const r = this.#server.step(text);
    const enc = (s: string) => new TextEncoder().encode(s);
    if (r.kind === "continue") return Promise.resolve({ kind: "continue", token: enc(r.message) });
    if (r.kind === "done") {
      return Promise.resolve({
        kind: "done",
        token: enc(r.message),
        principal: { type: "User", name: r.user, via: `SASL/${this.mechanism}` },
      });
    }
    // A bad proof is "invalid credentials"; a protocol violation says what it was.
    const message = r.reason === "invalid credentials"
      ? invalid(this.mechanism)
      : `Authentication failed: ${r.reason}`;
    return Promise.resolve({ kind: "failed", message, user: this.#user });
  }
}
