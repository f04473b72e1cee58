// ACLs over HTTP: list with a filter, create bindings, delete what a filter matches. The same
// bindings as CreateAcls/DescribeAcls/DeleteAcls (replicated in the metadata log), named as the
// CLI and Kafka's tools name them: resource_type "topic", operation "read", pattern "prefixed".
import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import {
  type AclBinding,
  type AclFilter,
  AclOperation,
  AclPermission,
  filterMatches,
  nameOf,
  parseName,
  PatternType,
  ResourceType,
  validateBinding,
  validateFilter,
} from "../acl/authorizer.ts";
import { type HttpContext, on } from "./context.ts";
import { HttpError } from "./errors.ts";
import { commonErrors, err, jsonOk, valid, z } from "./schemas.ts";

const AclView = z.object({
  resource_type: z.string().openapi({ example: "TOPIC" }),
  resource_name: z.string().openapi({ example: "orders" }),
  pattern_type: z.string().openapi({ example: "LITERAL" }),
  principal: z.string().openapi({ example: "User:alice" }),
  host: z.string().openapi({ example: "*" }),
  operation: z.string().openapi({ example: "READ" }),
  permission: z.string().openapi({ example: "ALLOW" }),
}).openapi("Acl");

const Name = z.string().min(1).max(64);
const AclBody = z.object({
  resource_type: Name.openapi({ description: "topic, group, cluster, transactional_id" }),
  resource_name: z.string().min(1).max(1024).openapi({
    description: 'the name, "*" for every one, or a prefix with pattern_type prefixed; ' +
      "the cluster is kafka-cluster",
  }),
  pattern_type: Name.optional().openapi({ description: "literal (default) or prefixed" }),
  principal: z.string().min(1).max(1024).openapi({ example: "User:alice" }),
  host: z.string().min(1).max(255).optional().openapi({ description: 'default "*"' }),
  operation: Name.openapi({ description: "read, write, create, delete, alter, describe, ..." }),
  permission: Name.optional().openapi({ description: "allow (default) or deny" }),
}).strict().openapi("AclBinding");

const FilterQuery = z.object({
  resource_type: Name.optional(),
  resource_name: z.string().min(1).max(1024).optional(),
  pattern_type: Name.optional().openapi({
    description: "any (default), match (the bindings that apply to resource_name), literal, " +
      "prefixed",
  }),
  principal: z.string().min(1).max(1024).optional(),
  host: z.string().min(1).max(255).optional(),
  operation: Name.optional(),
  permission: Name.optional(),
});

export function aclView(b: AclBinding) {
  return {
    resource_type: nameOf.resourceType(b.resourceType),
    resource_name: b.resourceName,
    pattern_type: nameOf.patternType(b.patternType),
    principal: b.principal,
    host: b.host,
    operation: nameOf.operation(b.operation),
    permission: nameOf.permission(b.permission),
  };
}

/** A name of `table`, or a 422 naming the field and what it accepts. */
function named<T extends Record<string, number>>(
  table: T,
  field: string,
  v: string | undefined,
  dflt: T[keyof T],
): T[keyof T] {
  if (v === undefined) return dflt;
  const n = parseName(table, v);
  if (n === undefined) {
    const choices = Object.keys(table).filter((k) => k !== "UNKNOWN").map((k) => k.toLowerCase());
    throw new HttpError(422, 42200, `${field}: ${JSON.stringify(v)} is not one of ${choices}`);
  }
  return n;
}

function bindingOf(b: z.output<typeof AclBody>): AclBinding {
  const out = {
    resourceType: named(ResourceType, "resource_type", b.resource_type, ResourceType.UNKNOWN),
    resourceName: b.resource_name,
    patternType: named(PatternType, "pattern_type", b.pattern_type, PatternType.LITERAL),
    principal: b.principal,
    host: b.host ?? "*",
    operation: named(AclOperation, "operation", b.operation, AclOperation.UNKNOWN),
    permission: named(AclPermission, "permission", b.permission, AclPermission.ALLOW),
  } as AclBinding;
  const why = validateBinding(out);
  if (why !== null) throw new HttpError(422, 42200, why);
  return out;
}

/** A filter from the query: what is not given matches everything. */
export function filterOf(q: z.output<typeof FilterQuery>): AclFilter {
  const f: AclFilter = {
    resourceType: named(ResourceType, "resource_type", q.resource_type, ResourceType.ANY),
    resourceName: q.resource_name ?? null,
    patternType: named(PatternType, "pattern_type", q.pattern_type, PatternType.ANY),
    principal: q.principal ?? null,
    host: q.host ?? null,
    operation: named(AclOperation, "operation", q.operation, AclOperation.ANY),
    permission: named(AclPermission, "permission", q.permission, AclPermission.ANY),
  };
  const why = validateFilter(f);
  if (why !== null) throw new HttpError(422, 42200, why);
  return f;
}

export function aclRoutes(app: OpenAPIHono, ctx: HttpContext): void {
  const meta = ctx.broker.meta;

  on(
    app,
    createRoute({
      method: "get",
      path: "/acls",
      tags: ["acls"],
      summary: "List ACL bindings (all, or those matching a filter)",
      request: { query: FilterQuery },
      responses: { 200: jsonOk(z.array(AclView)), ...commonErrors, 422: err("unknown name") },
    }),
    (c) => {
      const f = filterOf(valid(c, "query", FilterQuery));
      return c.json(meta.aclBindings().filter((b) => filterMatches(f, b)).map(aclView));
    },
  );

  on(
    app,
    createRoute({
      method: "post",
      path: "/acls",
      tags: ["acls"],
      summary: "Create ACL bindings (one, or an array); existing ones are left as they are",
      request: {
        body: {
          required: true,
          content: {
            "application/json": { schema: z.union([AclBody, z.array(AclBody).min(1).max(1000)]) },
          },
        },
      },
      responses: {
        201: jsonOk(z.array(AclView), "created"),
        ...commonErrors,
        422: err("an invalid binding (the reason is given)"),
      },
    }),
    async (c) => {
      const body = valid(c, "json", z.union([AclBody, z.array(AclBody)]));
      const bindings = (Array.isArray(body) ? body : [body]).map(bindingOf);
      await meta.createAcls(bindings);
      return c.json(bindings.map(aclView), 201);
    },
  );

  on(
    app,
    createRoute({
      method: "delete",
      path: "/acls",
      tags: ["acls"],
      summary: "Delete the ACL bindings a filter matches (at least one field, or all=true)",
      request: { query: FilterQuery.extend({ all: z.enum(["true", "false"]).optional() }) },
      responses: {
        200: jsonOk(z.object({ deleted: z.array(AclView) })),
        ...commonErrors,
        422: err("unknown name"),
      },
    }),
    async (c) => {
      const q = valid(
        c,
        "query",
        FilterQuery.extend({ all: z.enum(["true", "false"]).optional() }),
      );
      const { all, ...rest } = q;
      // An empty filter deletes every binding: said explicitly, never by a forgotten flag.
      if (Object.values(rest).every((v) => v === undefined) && all !== "true") {
        throw new HttpError(
          400,
          40000,
          "give a filter (resource_type, principal, ...) or all=true",
        );
      }
      const [deleted] = await meta.deleteAcls([filterOf(rest)]);
      return c.json({ deleted: deleted.map(aclView) });
    },
  );
}
