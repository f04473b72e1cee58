// CreateAcls (30): each creation is validated alone and answered in request order; the valid
// ones go through the metadata log together (a binding that exists already is left as it is).
// Served whether or not --authorizer acl enforces them, so ACLs can be set up before enforcing.
import { validateBinding } from "../../acl/authorizer.ts";
import {
  ApiKey,
  type CreateAclsRequest,
  type CreateAclsResponse,
  ErrorCode,
} from "../../protocol/kafka/index.ts";
import { errorOf, type KafkaContext, type RequestContext } from "../context.ts";
import { defineHandler } from "../api.ts";
import { bindingOf } from "./shared/acls.ts";

export async function createAcls(
  ctx: KafkaContext,
  req: RequestContext<CreateAclsRequest>,
): Promise<CreateAclsResponse> {
  const wanted = req.body.creations.map((c) => bindingOf(c));
  const problems = wanted.map((b) => validateBinding(b));
  const valid = wanted.filter((_, i) => problems[i] === null);
  let failure: { errorCode: number; errorMessage: string } | null = null;
  if (valid.length > 0) {
    try {
      await ctx.meta.createAcls(valid);
    } catch (e) {
      failure = errorOf(e);
    }
  }
  return {
    throttleTimeMs: 0,
    results: problems.map((why) =>
      why !== null
        ? { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: why }
        : failure ?? { errorCode: ErrorCode.NONE, errorMessage: null }
    ),
  };
}

export default defineHandler({
  apiKey: ApiKey.CreateAcls,
  versions: [0, 1],
  handle: createAcls,
});
