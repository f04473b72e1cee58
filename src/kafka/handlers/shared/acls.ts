// Reading ACL bindings and filters off CreateAcls/DescribeAcls/DeleteAcls bodies, shared by the
// three handlers. Values are the wire's numbers, validated by src/acl/authorizer.ts.
import type { AclBinding, AclFilter } from "../../../acl/authorizer.ts";
import { nstr, num, str } from "../../context.ts";

type Body = Record<string, unknown>;

/** A CreateAcls creation as a binding (not yet validated). */
export function bindingOf(c: Body): AclBinding {
  return {
    resourceType: num(c.resourceType),
    resourceName: str(c.resourceName),
    patternType: num(c.resourcePatternType, 3),
    principal: str(c.principal),
    host: str(c.host),
    operation: num(c.operation),
    permission: num(c.permissionType),
  } as AclBinding;
}

/** A DescribeAcls body or a DeleteAcls filter as a filter (not yet validated). */
export function filterOf(f: Body): AclFilter {
  return {
    resourceType: num(f.resourceTypeFilter),
    resourceName: nstr(f.resourceNameFilter),
    patternType: num(f.patternTypeFilter, 3),
    principal: nstr(f.principalFilter),
    host: nstr(f.hostFilter),
    operation: num(f.operation),
    permission: num(f.permissionType),
  } as AclFilter;
}
