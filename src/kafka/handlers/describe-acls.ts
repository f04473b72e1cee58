// DescribeAcls (29): the bindings one filter selects, grouped by resource pattern as Kafka
// answers them. Before v1 a filter's pattern type is LITERAL (the schema's default).
import { type AclBinding, validateFilter } from "../../acl/authorizer.ts";
import {
  ApiKey,
  type DescribeAclsRequest,
  type DescribeAclsResponse,
  ErrorCode,
} from "../../protocol/kafka/index.ts";
import type { KafkaContext, RequestContext } from "../context.ts";
import { defineHandler } from "../api.ts";
import { filterOf } from "./shared/acls.ts";
import { filterMatches } from "../../acl/authorizer.ts";

export function describeAcls(
  ctx: KafkaContext,
  req: RequestContext<DescribeAclsRequest>,
): DescribeAclsResponse {
  const filter = filterOf(req.body);
  const why = validateFilter(filter);
  if (why !== null) {
    return {
      throttleTimeMs: 0,
      errorCode: ErrorCode.INVALID_REQUEST,
      errorMessage: why,
      resources: [],
    };
  }
  const byResource = new Map<string, { head: AclBinding; acls: AclBinding[] }>();
  for (const b of ctx.meta.aclBindings()) {
    if (!filterMatches(filter, b)) continue;
    const key = JSON.stringify([b.resourceType, b.resourceName, b.patternType]);
    const group = byResource.get(key) ?? { head: b, acls: [] };
    group.acls.push(b);
    byResource.set(key, group);
  }
  return {
    throttleTimeMs: 0,
    errorCode: ErrorCode.NONE,
    errorMessage: null,
    resources: [...byResource.values()].map(({ head, acls }) => ({
      resourceType: head.resourceType,
      resourceName: head.resourceName,
      patternType: head.patternType,
      acls: acls.map((b) => ({
        principal: b.principal,
        host: b.host,
        operation: b.operation,
        permissionType: b.permission,
      })),
    })),
  };
}

export default defineHandler({
  apiKey: ApiKey.DescribeAcls,
  versions: [0, 1],
  handle: describeAcls,
});
