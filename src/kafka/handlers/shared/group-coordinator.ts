// Asking the group coordinator (the one GroupService that HTTP members join too): a group
// this broker does not coordinate is NOT_COORDINATOR, a refusal while shutting down
// COORDINATOR_NOT_AVAILABLE.
import { ErrorCode } from "../../../protocol/kafka/index.ts";
import { errorCodeOf, type KafkaContext, type RequestContext } from "../../context.ts";
import type { CoordinatorResponse } from "../../../groups/index.ts";

export async function ask(
  ctx: KafkaContext,
  req: RequestContext,
  input: Parameters<KafkaContext["groups"]["request"]>[0],
) {
  if ("groupId" in input && !ctx.groups.coordinates(input.groupId)) {
    return { kind: "error" as const, errorCode: ErrorCode.NOT_COORDINATOR };
  }
  try {
    return await ctx.groups.request(input, req.connection);
  } catch (e) {
    // The service refuses only when shutting down: tell the client to look elsewhere.
    const code = errorCodeOf(e);
    return {
      kind: "error" as const,
      errorCode: code === -1 ? ErrorCode.COORDINATOR_NOT_AVAILABLE : code,
    };
  }
}

export type Answer = CoordinatorResponse | { kind: "error"; errorCode: number };

export function expect<K extends CoordinatorResponse["kind"]>(
  r: Answer,
  kind: K,
): Extract<CoordinatorResponse, { kind: K }> | { errorCode: number; kind: "error" } {
  if (r.kind === kind || r.kind === "error") return r as Extract<CoordinatorResponse, { kind: K }>;
  throw new Error(`coordinator answered ${r.kind} to ${kind}`);
}
