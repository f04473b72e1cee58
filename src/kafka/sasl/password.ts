// Password logins (SASL/PLAIN and HTTP Basic) checked against the stored SCRAM credentials, so
// one user store serves every mechanism: the password is salted and iterated as the credential
// was, and the resulting StoredKey compared. That costs a few milliseconds of PBKDF2 (run off
// the event loop), so successes are remembered for a while under a keyed hash of the user, the
// password and the credential (a changed or deleted credential never matches an old entry).
import { createHmac, randomBytes } from "node:crypto";
import {
  MIN_ITERATIONS,
  passwordMatches,
  type ScramCredential,
  type ScramMechanism,
} from "./scram.ts";

/** Where credentials come from (the replicated metadata, in the broker). */
export interface CredentialSource {
  scramCredential(user: string, mechanism: ScramMechanism): ScramCredential | undefined;
}

/** A PLAIN login is checked against the cheaper hash first when a user has both. */
const ORDER: readonly ScramMechanism[] = ["SCRAM-SHA-256", "SCRAM-SHA-512"];
const CACHE_MAX = 1024;
const CACHE_TTL_MS = 5 * 60_000;

export class PasswordChecker {
  readonly #secret = randomBytes(32);
  /** key → expiry (ms); insertion order is age order. */
  readonly #ok = new Map<string, number>();
  readonly #decoy: ScramCredential;

  constructor(
    readonly source: CredentialSource,
    readonly now: () => number = Date.now,
  ) {
    const b = randomBytes(32);
    this.#decoy = {
      mechanism: "SCRAM-SHA-256",
      salt: b.subarray(0, 16),
      iterations: MIN_ITERATIONS,
      storedKey: b,
      serverKey: b,
    };
  }

  #key(user: string, password: string, cred: ScramCredential): string {
    return createHmac("sha256", this.#secret)
      .update(user).update("\0").update(password).update("\0")
      .update(cred.mechanism).update(cred.storedKey).update(cred.salt)
      .digest("base64");
  }

  /** Whether `password` is `user`'s (any of the user's SCRAM credentials matches it). */
  async check(user: string, password: string): Promise<boolean> {
    const creds = ORDER.map((m) => this.source.scramCredential(user, m)).filter(
      (c): c is ScramCredential => c !== undefined,
    );
    if (creds.length === 0) {
      // The same work as for a real user: response times do not tell which users exist.
      await passwordMatches(this.#decoy, password);
      return false;
    }
    const t = this.now();
    for (const c of creds) {
      const k = this.#key(user, password, c);
      const until = this.#ok.get(k);
      if (until !== undefined && until > t) return true;
      if (until !== undefined) this.#ok.delete(k);
    }
    for (const c of creds) {
      if (await passwordMatches(c, password)) {
        this.#remember(this.#key(user, password, c), t);
        return true;
      }
    }
    return false;
  }

  #remember(k: string, t: number): void {
    this.#ok.delete(k);
    this.#ok.set(k, t + CACHE_TTL_MS);
    while (this.#ok.size > CACHE_MAX) this.#ok.delete(this.#ok.keys().next().value!);
  }
}
