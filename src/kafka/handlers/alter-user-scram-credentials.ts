// AlterUserScramCredentials (KIP-554): deletions and upsertions of SCRAM credentials. The client
// sends salt and SaltedPassword, never the password; the broker keeps StoredKey and ServerKey
// derived from them. Answered per user: a user with any refused change (unknown mechanism,
// iterations out of range, the same mechanism twice, a missing credential to delete) has none of
// its changes applied, as in Kafka.
import {
  type AlterUserScramCredentialsRequest,
  type AlterUserScramCredentialsRequestDeletions,
  type AlterUserScramCredentialsRequestUpsertions,
  type AlterUserScramCredentialsResponse,
  ApiKey,
  ErrorCode,
} from "../../protocol/kafka/index.ts";
import { errorOf, type KafkaContext, type RequestContext } from "../context.ts";
import { defineHandler } from "../api.ts";
import {
  credentialFromSalted,
  MAX_ITERATIONS,
  mechanismOfCode,
  MIN_ITERATIONS,
  type ScramCredential,
  type ScramMechanism,
} from "../sasl/scram.ts";

type Change =
  | { kind: "delete"; mechanism: ScramMechanism }
  | { kind: "upsert"; credential: ScramCredential };

interface Refusal {
  errorCode: number;
  errorMessage: string;
}

type Deletion = AlterUserScramCredentialsRequestDeletions;
type Upsertion = AlterUserScramCredentialsRequestUpsertions;

/** Whether one change can be made (`up`: the upsertion, null for a deletion); what it is if so. */
function change(o: Deletion, up: Upsertion | null): Change | Refusal {
  const mechanism = mechanismOfCode(o.mechanism);
  if (mechanism === undefined) {
    return {
      errorCode: ErrorCode.UNSUPPORTED_SASL_MECHANISM,
      errorMessage: "Unknown SCRAM mechanism",
    };
  }
  if (o.name === "") {
    return {
      errorCode: ErrorCode.UNACCEPTABLE_CREDENTIAL,
      errorMessage: "Username must not be empty",
    };
  }
  if (up === null) return { kind: "delete", mechanism };
  const { iterations, salt, saltedPassword: salted } = up;
  if (iterations < MIN_ITERATIONS) {
    return { errorCode: ErrorCode.UNACCEPTABLE_CREDENTIAL, errorMessage: "Too few iterations" };
  }
  if (iterations > MAX_ITERATIONS) {
    return { errorCode: ErrorCode.UNACCEPTABLE_CREDENTIAL, errorMessage: "Too many iterations" };
  }
  if (salt.length === 0 || salt.length > 1024 || salted.length === 0 || salted.length > 1024) {
    return {
      errorCode: ErrorCode.UNACCEPTABLE_CREDENTIAL,
      errorMessage: "Salt and salted password must be 1..1024 bytes",
    };
  }
  return {
    kind: "upsert",
    credential: credentialFromSalted(mechanism, salt.slice(), iterations, salted),
  };
}

export async function alterUserScramCredentials(
  ctx: KafkaContext,
  req: RequestContext<AlterUserScramCredentialsRequest>,
): Promise<AlterUserScramCredentialsResponse> {
  const byUser = new Map<string, (Change | Refusal)[]>();
  const mechanismsOf = new Map<string, Set<number>>();
  const duplicate = new Set<string>();
  const ops: [Deletion, Upsertion | null][] = [
    ...req.body.deletions.map((o): [Deletion, null] => [o, null]),
    ...req.body.upsertions.map((o): [Upsertion, Upsertion] => [o, o]),
  ];
  for (const [o, up] of ops) {
    const user = o.name;
    const seen = mechanismsOf.get(user) ?? new Set<number>();
    if (seen.has(o.mechanism)) duplicate.add(user);
    seen.add(o.mechanism);
    mechanismsOf.set(user, seen);
    byUser.set(user, [...(byUser.get(user) ?? []), change(o, up)]);
  }
  const results: AlterUserScramCredentialsResponse["results"][number][] = [];
  for (const [user, changes] of byUser) {
    if (duplicate.has(user)) {
      results.push({
        user,
        errorCode: ErrorCode.DUPLICATE_RESOURCE,
        errorMessage: "A user credential cannot be altered twice in the same request",
      });
      continue;
    }
    const refused = changes.find((c): c is Refusal => "errorCode" in c);
    const missing = changes.find((c) =>
      "kind" in c && c.kind === "delete" &&
      ctx.meta.scramCredential(user, c.mechanism) === undefined
    );
    if (refused) {
      results.push({ user, ...refused });
      continue;
    }
    if (missing) {
      results.push({
        user,
        errorCode: ErrorCode.RESOURCE_NOT_FOUND,
        errorMessage: "Attempt to delete a user credential that does not exist",
      });
      continue;
    }
    try {
      for (const c of changes as Change[]) {
        if (c.kind === "delete") await ctx.meta.deleteScramCredential(user, c.mechanism);
        else await ctx.meta.setScramCredential(user, c.credential);
      }
      results.push({ user, errorCode: 0, errorMessage: null });
    } catch (e) {
      results.push({ user, ...errorOf(e) });
    }
  }
  return { throttleTimeMs: 0, results };
}

export default defineHandler({
  apiKey: ApiKey.AlterUserScramCredentials,
  versions: [0, 0],
  handle: alterUserScramCredentials,
});
