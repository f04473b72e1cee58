// Asking the group coordinator (the one GroupService that HTTP members join too): a group
// this broker does not coordinate is NOT_COORDINATOR, a refusal while shutting down
// COORDINATOR_NOT_AVAILABLE.
import { ErrorCode } from "../../../protocol/kafka/index.ts";
import { errorCodeOf, type KafkaContext, type RequestContext } from "../../context.ts";
import type { CoordinatorResponse, GenerationMember } from "../../../groups/index.ts";

type Input = Parameters<KafkaContext["groups"]["request"]>[0];
/** The coordinator's answer to a request of type `K` (its own kind), or the error to report. */
export type Answer<K extends Input["type"]> =
  | Extract<CoordinatorResponse, { kind: K }>
  | { kind: "error"; errorCode: number };

/** Asks the coordinator, and hands back its answer of the request's own kind. */
export async function ask<I extends Input>(
  ctx: KafkaContext,
  req: RequestContext,
  input: I,
): Promise<Answer<I["type"]>> {
  const r = await answerOf(ctx, req, input);
  if (r.kind === input.type || r.kind === "error") return r as Answer<I["type"]>;
  throw new Error(`coordinator answered ${r.kind} to ${input.type}`);
}

async function answerOf(
  ctx: KafkaContext,
  req: RequestContext,
  input: Input,
): Promise<CoordinatorResponse | { kind: "error"; errorCode: number }> {
  if ("groupId" in input && !ctx.groups.coordinates(input.groupId)) {
    return { kind: "error", errorCode: ErrorCode.NOT_COORDINATOR };
  }
  try {
    return await ctx.groups.request(input, req.connection);
  } catch (e) {
    // The service refuses only when shutting down: tell the client to look elsewhere.
    const code = errorCodeOf(e);
    return { kind: "error", errorCode: code === -1 ? ErrorCode.COORDINATOR_NOT_AVAILABLE : code };
  }
}

/** The member a Heartbeat or SyncGroup request comes from (its body's own four fields). */
export const memberOf = (b: GenerationMember): GenerationMember => ({
  groupId: b.groupId,
  generationId: b.generationId,
  memberId: b.memberId,
  groupInstanceId: b.groupInstanceId,
});
