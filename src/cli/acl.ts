// broker acl add|list|delete: ACL bindings (Kafka's model), through any broker's HTTP API (/acls),
// as kafka-acls.sh manages them: a principal, an operation, a resource (topic, group, the cluster,
// a transactional id; literal or prefixed), allow or deny, and a host.
import { UsageError } from "./client.ts";
import type { Command, OptionDefs, RunContext } from "./command.ts";
import { json, out, table } from "./format.ts";

interface AclView {
  resource_type: string;
  resource_name: string;
  pattern_type: string;
  principal: string;
  host: string;
  operation: string;
  permission: string;
}

const RESOURCE_OPTIONS: OptionDefs = {
  topic: { type: "string" },
  group: { type: "string" },
  cluster: { type: "boolean" },
  "transactional-id": { type: "string" },
  prefixed: { type: "boolean" },
  principal: { type: "string" },
  host: { type: "string" },
  operation: { type: "string" },
  deny: { type: "boolean" },
};

const RESOURCE_HELP = [
  '--topic NAME         a topic ("*" for every topic)',
  "--group NAME         a consumer group",
  "--cluster            the cluster (kafka-cluster)",
  "--transactional-id ID",
  "--prefixed           NAME is a prefix (PREFIXED pattern) rather than a name (LITERAL)",
  "--principal P        User:NAME, or User:* for everyone",
  '--host H             the client address it applies to (default "*")',
  "--operation OPS      read, write, create, delete, alter, describe, describe-configs,",
  "                     alter-configs, idempotent-write, cluster-action, all (comma-separated)",
];

/** The resource a command's flags name (at most one), or undefined when none is given. */
function resourceOf(v: RunContext["values"]): { type: string; name: string } | undefined {
  const given = [
    v.topic !== undefined && { type: "topic", name: String(v.topic) },
    v.group !== undefined && { type: "group", name: String(v.group) },
    v.cluster === true && { type: "cluster", name: "kafka-cluster" },
    v["transactional-id"] !== undefined &&
    { type: "transactional_id", name: String(v["transactional-id"]) },
  ].filter((x): x is { type: string; name: string } => x !== false);
  if (given.length > 1) {
    throw new UsageError("name one resource: --topic, --group, --cluster or --transactional-id");
  }
  return given[0];
}

function operations(v: unknown): string[] {
  return String(v).split(",").map((s) => s.trim()).filter(Boolean);
}

/** The /acls query a list or delete's flags make. */
function filterQuery(v: RunContext["values"]): string {
  const q = new URLSearchParams();
  const r = resourceOf(v);
  if (r) {
    q.set("resource_type", r.type);
    q.set("resource_name", r.name);
    q.set("pattern_type", v.prefixed ? "prefixed" : "literal");
  }
  if (typeof v.principal === "string") q.set("principal", v.principal);
  if (typeof v.host === "string") q.set("host", v.host);
  if (v.operation !== undefined) {
    const ops = operations(v.operation);
    if (ops.length !== 1) throw new UsageError("--operation: name one to filter on");
    q.set("operation", ops[0]);
  }
  if (v.deny) q.set("permission", "deny");
  return q.toString();
}

function show(ctx: RunContext, acls: AclView[]): void {
  if (ctx.json) {
    json(acls);
    return;
  }
  out(table(
    ["PERMISSION", "PRINCIPAL", "OPERATION", "RESOURCE", "PATTERN", "HOST"],
    acls.map((a) => [
      a.permission,
      a.principal,
      a.operation,
      `${a.resource_type}:${a.resource_name}`,
      a.pattern_type,
      a.host,
    ]),
  ));
}

export const aclCommands: Command[] = [
  {
    name: "acl add",
    usage: "acl add --principal P --operation OPS (--topic T | --group G | --cluster | " +
      "--transactional-id ID) [--prefixed] [--deny] [--host H]",
    summary: "Allow (or deny) a principal operations on a resource.",
    flags: [...RESOURCE_HELP, "--deny               a DENY binding (wins over any ALLOW)"],
    examples: [
      "broker acl add --principal User:alice --operation read,write --topic orders",
      "broker acl add --principal User:app --operation read --group app- --prefixed",
      "broker acl add --principal User:ops --operation alter --cluster",
    ],
    options: RESOURCE_OPTIONS,
    async run(ctx) {
      const v = ctx.values;
      const r = resourceOf(v);
      if (r === undefined) {
        throw new UsageError("name a resource: --topic, --group, --cluster or --transactional-id");
      }
      if (typeof v.principal !== "string") throw new UsageError("--principal is required");
      if (v.operation === undefined) throw new UsageError("--operation is required");
      const body = operations(v.operation).map((operation) => ({
        resource_type: r.type,
        resource_name: r.name,
        pattern_type: v.prefixed ? "prefixed" : "literal",
        principal: v.principal as string,
        host: typeof v.host === "string" ? v.host : "*",
        operation,
        permission: v.deny ? "deny" : "allow",
      }));
      if (body.length === 0) throw new UsageError("--operation: name at least one");
      show(ctx, await ctx.client.call<AclView[]>("POST", "/acls", body));
      return 0;
    },
  },
  {
    name: "acl list",
    usage: "acl list [--principal P] [--topic T | --group G | --cluster | --transactional-id ID] " +
      "[--prefixed] [--operation OP] [--deny] [--host H]",
    summary: "List ACL bindings (all, or those the flags select).",
    flags: RESOURCE_HELP,
    examples: [
      "broker acl list",
      "broker acl list --principal User:alice",
      "broker acl list --topic orders --json",
    ],
    options: RESOURCE_OPTIONS,
    async run(ctx) {
      const q = filterQuery(ctx.values);
      show(ctx, await ctx.client.call<AclView[]>("GET", `/acls${q ? `?${q}` : ""}`));
      return 0;
    },
  },
  {
    name: "acl delete",
    usage: "acl delete [--principal P] [--topic T | --group G | --cluster | " +
      "--transactional-id ID] [--prefixed] [--operation OP] [--deny] [--host H] | --all",
    summary: "Delete the ACL bindings the flags select (--all: every one).",
    flags: [...RESOURCE_HELP, "--all                every binding (without a selecting flag)"],
    examples: [
      "broker acl delete --principal User:alice --topic orders --operation write",
      "broker acl delete --principal User:alice",
    ],
    options: { ...RESOURCE_OPTIONS, all: { type: "boolean" } },
    async run(ctx) {
      const q = filterQuery(ctx.values);
      if (q === "" && ctx.values.all !== true) {
        throw new UsageError("select what to delete (--principal, --topic, ...) or give --all");
      }
      const r = await ctx.client.call<{ deleted: AclView[] }>(
        "DELETE",
        `/acls?${q === "" ? "all=true" : q}`,
      );
      if (ctx.json) json(r);
      else out(`deleted ${r.deleted.length} ACL binding(s)\n`);
      return 0;
    },
  },
];
