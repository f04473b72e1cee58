// DescribeUserScramCredentials (KIP-554): each user's SCRAM mechanisms and iterations (never
// salts or keys). No users named (null or empty): every user with a credential.
import {
  ApiKey,
  type DescribeUserScramCredentialsRequest,
  type DescribeUserScramCredentialsResponse,
  ErrorCode,
} from "../../protocol/kafka/index.ts";
import type { KafkaContext, RequestContext } from "../context.ts";
import { defineHandler } from "../api.ts";
import { mechanismCode } from "../sasl/scram.ts";

export function describeUserScramCredentials(
  ctx: KafkaContext,
  req: RequestContext<DescribeUserScramCredentialsRequest>,
): DescribeUserScramCredentialsResponse {
  const by = new Map<string, { mechanism: number; iterations: number }[]>();
  for (const c of ctx.meta.listScramCredentials()) {
    const list = by.get(c.user) ?? [];
    list.push({ mechanism: mechanismCode(c.mechanism), iterations: c.iterations });
    by.set(c.user, list);
  }
  const named = (req.body.users ?? []).map((u) => u.name);
  let results: DescribeUserScramCredentialsResponse["results"];
  if (named.length === 0) {
    results = [...by].map(([user, credentialInfos]) => ({
      user,
      errorCode: 0,
      errorMessage: null,
      credentialInfos,
    }));
  } else {
    const seen = new Set<string>();
    const twice = new Set(named.filter((n) => seen.has(n) || !seen.add(n)));
    results = [...new Set(named)].map((user) => {
      if (twice.has(user)) {
        return {
          user,
          errorCode: ErrorCode.DUPLICATE_RESOURCE,
          errorMessage:
            "Cannot describe SCRAM credentials for the same user twice in a single request",
          credentialInfos: [],
        };
      }
      const infos = by.get(user);
      return infos === undefined
        ? {
          user,
          errorCode: ErrorCode.RESOURCE_NOT_FOUND,
          errorMessage: "Attempt to describe a user credential that does not exist",
          credentialInfos: [],
        }
        : { user, errorCode: 0, errorMessage: null, credentialInfos: infos };
    });
  }
  return { throttleTimeMs: 0, errorCode: 0, errorMessage: null, results };
}

export default defineHandler({
  apiKey: ApiKey.DescribeUserScramCredentials,
  versions: [0, 0],
  handle: describeUserScramCredentials,
});
