// DeleteAcls (31): each filter answers with the bindings it matched (and deleted). Invalid
// filters answer INVALID_REQUEST alone; the valid ones go through the metadata log together.
import { type AclBinding, validateFilter } from "../../acl/authorizer.ts";
import {
  ApiKey,
  type DeleteAclsRequest,
  type DeleteAclsResponse,
  ErrorCode,
} from "../../protocol/kafka/index.ts";
import { errorOf, type KafkaContext, type RequestContext } from "../context.ts";
import { defineHandler } from "../api.ts";
import { filterOf } from "./shared/acls.ts";

export async function deleteAcls(
  ctx: KafkaContext,
  req: RequestContext<DeleteAclsRequest>,
): Promise<DeleteAclsResponse> {
  const filters = req.body.filters.map((f) => filterOf(f));
  const problems = filters.map((f) => validateFilter(f));
  const valid = filters.filter((_, i) => problems[i] === null);
  let matched: AclBinding[][] = [];
  let failure: { errorCode: number; errorMessage: string } | null = null;
  try {
    matched = valid.length > 0 ? await ctx.meta.deleteAcls(valid) : [];
  } catch (e) {
    failure = errorOf(e);
  }
  let next = 0;
  return {
    throttleTimeMs: 0,
    filterResults: problems.map((why) => {
      if (why !== null) {
        return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: why, matchingAcls: [] };
      }
      const mine = matched[next++] ?? [];
      if (failure !== null) return { ...failure, matchingAcls: [] };
      return {
        errorCode: ErrorCode.NONE,
        errorMessage: null,
        matchingAcls: mine.map((b) => ({
          errorCode: ErrorCode.NONE,
          errorMessage: null,
          resourceType: b.resourceType,
          resourceName: b.resourceName,
          patternType: b.patternType,
          principal: b.principal,
          host: b.host,
          operation: b.operation,
          permissionType: b.permission,
        })),
      };
    }),
  };
}

export default defineHandler({
  apiKey: ApiKey.DeleteAcls,
  versions: [0, 1],
  handle: deleteAcls,
});
