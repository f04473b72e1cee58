// ACL administration (KIP-140, pattern types from KIP-290 in v1): DescribeAcls (29),
// CreateAcls (30), DeleteAcls (31), v0-3, flexible from v2. Before v1 every pattern is LITERAL
// (the default 3).
import { defineApi } from "../schema.ts";

export const DESCRIBE_ACLS = defineApi({
  apiKey: 29,
  name: "DescribeAcls",
  valid: "0-3",
  flexible: "2+",
  request: `
    ResourceTypeFilter int8 0+
    ResourceNameFilter string 0+ null=0+
    PatternTypeFilter int8 1+ def=3
    PrincipalFilter string 0+ null=0+
    HostFilter string 0+ null=0+
    Operation int8 0+
    PermissionType int8 0+
  `,
  response: `
    ThrottleTimeMs int32 0+
    ErrorCode int16 0+
    ErrorMessage string 0+ null=0+
    Resources [] 0+ {
      ResourceType int8 0+
      ResourceName string 0+
      PatternType int8 1+ def=3
      Acls [] 0+ {
        Principal string 0+
        Host string 0+
        Operation int8 0+
        PermissionType int8 0+
      }
    }
  `,
});

export const CREATE_ACLS = defineApi({
  apiKey: 30,
  name: "CreateAcls",
  valid: "0-3",
  flexible: "2+",
  request: `
    Creations [] 0+ {
      ResourceType int8 0+
      ResourceName string 0+
      ResourcePatternType int8 1+ def=3
      Principal string 0+
      Host string 0+
      Operation int8 0+
      PermissionType int8 0+
    }
  `,
  response: `
    ThrottleTimeMs int32 0+
    Results [] 0+ {
      ErrorCode int16 0+
      ErrorMessage string 0+ null=0+
    }
  `,
});

export const DELETE_ACLS = defineApi({
  apiKey: 31,
  name: "DeleteAcls",
  valid: "0-3",
  flexible: "2+",
  request: `
    Filters [] 0+ {
      ResourceTypeFilter int8 0+
      ResourceNameFilter string 0+ null=0+
      PatternTypeFilter int8 1+ def=3
      PrincipalFilter string 0+ null=0+
      HostFilter string 0+ null=0+
      Operation int8 0+
      PermissionType int8 0+
    }
  `,
  response: `
    ThrottleTimeMs int32 0+
    FilterResults [] 0+ {
      ErrorCode int16 0+
      ErrorMessage string 0+ null=0+
      MatchingAcls [] 0+ {
        ErrorCode int16 0+
        ErrorMessage string 0+ null=0+
        ResourceType int8 0+
        ResourceName string 0+
        PatternType int8 1+ def=3
        Principal string 0+
        Host string 0+
        Operation int8 0+
        PermissionType int8 0+
      }
    }
  `,
});
