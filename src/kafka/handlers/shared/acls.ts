// Reading ACL bindings and filters off CreateAcls/DescribeAcls/DeleteAcls bodies, shared by the
// three handlers. Values are the wire's numbers, validated by src/acl/authorizer.ts.
import type { AclBinding, AclFilter } from "../../../acl/authorizer.ts";
import type {
  CreateAclsRequestCreations,
  DeleteAclsRequestFilters,
  DescribeAclsRequest,
} from "../../../protocol/kafka/index.ts";

/** A CreateAcls creation as a binding (not yet validated). */
export function bindingOf(c: CreateAclsRequestCreations): AclBinding {
  return {
    resourceType: c.resourceType,
    resourceName: c.resourceName,
    patternType: c.resourcePatternType,
    principal: c.principal,
    host: c.host,
    operation: c.operation,
    permission: c.permissionType,
  } as AclBinding;
}

/** A DescribeAcls body or a DeleteAcls filter as a filter (not yet validated). */
export function filterOf(f: DescribeAclsRequest | DeleteAclsRequestFilters): AclFilter {
  return {
    resourceType: f.resourceTypeFilter,
    resourceName: f.resourceNameFilter,
    patternType: f.patternTypeFilter,
    principal: f.principalFilter,
    host: f.hostFilter,
    operation: f.operation,
    permission: f.permissionType,
  } as AclFilter;
}
