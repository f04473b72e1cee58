import { describe, expect, test } from "bun:test";
import {
  type AclBinding,
  type AclFilter,
  AclOperation as Op,
  AclPermission as Perm,
  Authorizer,
  describeBinding,
  filterMatches,
  parseName,
  PatternType as Pat,
  ResourceType as Res,
  validateBinding,
  validateFilter,
} from "../../src/acl/authorizer.ts";

const alice = { principal: "User:alice", host: "10.0.0.1" };
const bob = { principal: "User:bob", host: "10.0.0.2" };

function allow(
  name: string,
  op: AclBinding["operation"],
  o: Partial<AclBinding> = {},
): AclBinding {
  return {
    resourceType: Res.TOPIC,
    resourceName: name,
    patternType: Pat.LITERAL,
    principal: "User:alice",
    host: "*",
    operation: op,
    permission: Perm.ALLOW,
    ...o,
  };
}

const ANY_FILTER: AclFilter = {
  resourceType: Res.ANY,
  resourceName: null,
  patternType: Pat.ANY,
  principal: null,
  host: null,
  operation: Op.ANY,
  permission: Perm.ANY,
};

describe("Authorizer.authorize", () => {
  test("nothing matching refuses; a literal ALLOW permits its operation on its name only", () => {
    const a = new Authorizer([allow("orders", Op.READ)]);
    expect(a.authorize(alice, Op.READ, Res.TOPIC, "orders").allowed).toBe(true);
    expect(a.authorize(alice, Op.READ, Res.TOPIC, "orders2").allowed).toBe(false);
    expect(a.authorize(alice, Op.WRITE, Res.TOPIC, "orders").allowed).toBe(false);
    expect(a.authorize(bob, Op.READ, Res.TOPIC, "orders").allowed).toBe(false);
    // Another resource type with the same name is another resource.
    expect(a.authorize(alice, Op.READ, Res.GROUP, "orders").allowed).toBe(false);
    expect(new Authorizer().authorize(alice, Op.DESCRIBE, Res.TOPIC, "x").reason).toBe(
      "no ACL allows it",
    );
  });

  test("the literal wildcard covers every name; a prefix covers the names it starts", () => {
    const a = new Authorizer([
      allow("*", Op.DESCRIBE),
      allow("logs-", Op.WRITE, { patternType: Pat.PREFIXED }),
    ]);
    expect(a.authorize(alice, Op.DESCRIBE, Res.TOPIC, "anything").allowed).toBe(true);
    expect(a.authorize(alice, Op.WRITE, Res.TOPIC, "logs-app").allowed).toBe(true);
    expect(a.authorize(alice, Op.WRITE, Res.TOPIC, "logs-").allowed).toBe(true);
    expect(a.authorize(alice, Op.WRITE, Res.TOPIC, "log").allowed).toBe(false);
    expect(a.authorize(alice, Op.WRITE, Res.TOPIC, "app-logs-x").allowed).toBe(false);
  });

  test("User:* and host '*' match anyone; a host binding matches that host only", () => {
    const a = new Authorizer([
      allow("t", Op.READ, { principal: "User:*" }),
      allow("u", Op.READ, { host: "10.0.0.1" }),
    ]);
    expect(a.authorize(bob, Op.READ, Res.TOPIC, "t").allowed).toBe(true);
    expect(a.authorize(alice, Op.READ, Res.TOPIC, "u").allowed).toBe(true);
    expect(a.authorize({ ...alice, host: "10.0.0.9" }, Op.READ, Res.TOPIC, "u").allowed).toBe(
      false,
    );
  });

  test("DENY wins over any ALLOW, for its operation or ALL", () => {
    const a = new Authorizer([
      allow("*", Op.ALL),
      allow("secret", Op.READ, { permission: Perm.DENY }),
      allow("vault-", Op.ALL, { patternType: Pat.PREFIXED, permission: Perm.DENY }),
    ]);
    const r = a.authorize(alice, Op.READ, Res.TOPIC, "secret");
    expect(r.allowed).toBe(false);
    expect(r.reason).toContain("denied by DENY User:alice READ on TOPIC:LITERAL:secret");
    expect(a.authorize(alice, Op.WRITE, Res.TOPIC, "secret").allowed).toBe(true);
    expect(a.authorize(alice, Op.DESCRIBE, Res.TOPIC, "vault-1").allowed).toBe(false);
    expect(a.authorize(alice, Op.READ, Res.TOPIC, "public").allowed).toBe(true);
  });

  test("READ, WRITE, DELETE and ALTER imply DESCRIBE; ALTER_CONFIGS implies DESCRIBE_CONFIGS", () => {
    for (const op of [Op.READ, Op.WRITE, Op.DELETE, Op.ALTER]) {
      const a = new Authorizer([allow("t", op)]);
      expect(a.authorize(alice, Op.DESCRIBE, Res.TOPIC, "t").allowed).toBe(true);
    }
    for (const op of [Op.CREATE, Op.DESCRIBE_CONFIGS, Op.IDEMPOTENT_WRITE]) {
      const a = new Authorizer([allow("t", op)]);
      expect(a.authorize(alice, Op.DESCRIBE, Res.TOPIC, "t").allowed).toBe(false);
    }
    const c = new Authorizer([allow("t", Op.ALTER_CONFIGS)]);
    expect(c.authorize(alice, Op.DESCRIBE_CONFIGS, Res.TOPIC, "t").allowed).toBe(true);
    // Implication does not run backwards, and a DENY of DESCRIBE does not deny READ.
    const d = new Authorizer([allow("t", Op.DESCRIBE)]);
    expect(d.authorize(alice, Op.READ, Res.TOPIC, "t").allowed).toBe(false);
    const e = new Authorizer([
      allow("t", Op.READ),
      allow("t", Op.DESCRIBE, { permission: Perm.DENY }),
    ]);
    expect(e.authorize(alice, Op.READ, Res.TOPIC, "t").allowed).toBe(true);
    expect(e.authorize(alice, Op.DESCRIBE, Res.TOPIC, "t").allowed).toBe(false);
  });

  test("super users bypass every check, DENYs included", () => {
    const a = new Authorizer(
      [allow("*", Op.ALL, { principal: "User:admin", permission: Perm.DENY })],
      new Set(["User:admin"]),
    );
    const r = a.authorize(
      { principal: "User:admin", host: "1.2.3.4" },
      Op.ALTER,
      Res.CLUSTER,
      "kafka-cluster",
    );
    expect(r).toEqual({ allowed: true, reason: "super user" });
  });
});

describe("Authorizer.authorizeAny (WRITE on any topic stands for IDEMPOTENT_WRITE)", () => {
  test("an ALLOW on some name, not wholly denied, is enough", () => {
    expect(new Authorizer([allow("t", Op.WRITE)]).authorizeAny(alice, Op.WRITE, Res.TOPIC)).toBe(
      true,
    );
    expect(new Authorizer([allow("t", Op.READ)]).authorizeAny(alice, Op.WRITE, Res.TOPIC)).toBe(
      false,
    );
    expect(new Authorizer().authorizeAny(alice, Op.WRITE, Res.TOPIC)).toBe(false);
    const deniedThere = new Authorizer([
      allow("t", Op.WRITE),
      allow("t", Op.WRITE, { permission: Perm.DENY }),
    ]);
    expect(deniedThere.authorizeAny(alice, Op.WRITE, Res.TOPIC)).toBe(false);
    const deniedEverywhere = new Authorizer([
      allow("a-", Op.WRITE, { patternType: Pat.PREFIXED }),
      allow("*", Op.ALL, { permission: Perm.DENY }),
    ]);
    expect(deniedEverywhere.authorizeAny(alice, Op.WRITE, Res.TOPIC)).toBe(false);
    const deniedElsewhere = new Authorizer([
      allow("a-", Op.WRITE, { patternType: Pat.PREFIXED }),
      allow("b-", Op.WRITE, { patternType: Pat.PREFIXED, permission: Perm.DENY }),
    ]);
    expect(deniedElsewhere.authorizeAny(alice, Op.WRITE, Res.TOPIC)).toBe(true);
    const prefixInsideDeny = new Authorizer([
      allow("a-b", Op.WRITE, { patternType: Pat.PREFIXED }),
      allow("a-", Op.WRITE, { patternType: Pat.PREFIXED, permission: Perm.DENY }),
    ]);
    expect(prefixInsideDeny.authorizeAny(alice, Op.WRITE, Res.TOPIC)).toBe(false);
  });
});

describe("bindings and filters", () => {
  test("add is idempotent; remove and list take Kafka's filters", () => {
    const a = new Authorizer();
    expect(a.add(allow("t", Op.READ))).toBe(true);
    expect(a.add(allow("t", Op.READ))).toBe(false);
    a.add(allow("logs-", Op.WRITE, { patternType: Pat.PREFIXED }));
    a.add(allow("*", Op.DESCRIBE));
    a.add(allow("g", Op.READ, { resourceType: Res.GROUP, principal: "User:bob" }));
    expect(a.size).toBe(4);
    expect(a.list(ANY_FILTER).length).toBe(4);
    // MATCH: what would apply to topic "logs-app": the prefix and the wildcard.
    const match = a.list({
      ...ANY_FILTER,
      resourceType: Res.TOPIC,
      resourceName: "logs-app",
      patternType: Pat.MATCH,
    });
    expect(match.map((b) => b.resourceName).sort()).toEqual(["*", "logs-"]);
    // LITERAL with a name: exactly that literal binding.
    const lit = a.list({ ...ANY_FILTER, resourceName: "t", patternType: Pat.LITERAL });
    expect(lit.map(describeBinding)).toEqual(["ALLOW User:alice READ on TOPIC:LITERAL:t"]);
    expect(a.list({ ...ANY_FILTER, principal: "User:bob" }).length).toBe(1);
    const gone = a.remove({ ...ANY_FILTER, resourceType: Res.TOPIC, operation: Op.WRITE });
    expect(gone.length).toBe(1);
    expect(a.size).toBe(3);
    expect(a.authorize(alice, Op.WRITE, Res.TOPIC, "logs-app").allowed).toBe(false);
  });

  test("filterMatches on pattern types", () => {
    const p = allow("logs-", Op.WRITE, { patternType: Pat.PREFIXED });
    expect(filterMatches({ ...ANY_FILTER, patternType: Pat.PREFIXED, resourceName: "logs-" }, p))
      .toBe(true);
    expect(filterMatches({ ...ANY_FILTER, patternType: Pat.LITERAL, resourceName: "logs-" }, p))
      .toBe(false);
    expect(filterMatches({ ...ANY_FILTER, patternType: Pat.MATCH, resourceName: "log" }, p)).toBe(
      false,
    );
    expect(filterMatches({ ...ANY_FILTER, patternType: Pat.ANY, resourceName: "logs-" }, p)).toBe(
      true,
    );
  });

  test("invalid bindings and filters are refused with a reason", () => {
    const ok = allow("t", Op.READ);
    expect(validateBinding(ok)).toBeNull();
    expect(validateBinding({ ...ok, resourceType: Res.ANY })).toContain("resource type");
    expect(validateBinding({ ...ok, operation: Op.ANY })).toContain("operation");
    expect(validateBinding({ ...ok, permission: Perm.ANY as never })).toContain("permission");
    expect(validateBinding({ ...ok, patternType: Pat.MATCH as never })).toContain("pattern");
    expect(validateBinding({ ...ok, principal: "alice" })).toContain("principal");
    expect(validateBinding({ ...ok, resourceName: "" })).toContain("name");
    expect(validateBinding({ ...ok, resourceName: "*", patternType: Pat.PREFIXED })).toContain(
      "PREFIXED",
    );
    expect(validateBinding({ ...ok, resourceType: Res.CLUSTER, resourceName: "x" })).toContain(
      "kafka-cluster",
    );
    expect(validateFilter(ANY_FILTER)).toBeNull();
    expect(validateFilter({ ...ANY_FILTER, operation: Op.UNKNOWN })).toContain("operation");
  });

  test("names parse as the CLI and HTTP accept them", () => {
    expect(parseName(Op, "describe-configs")).toBe(Op.DESCRIBE_CONFIGS);
    expect(parseName(Res, "topic")).toBe(Res.TOPIC);
    expect(parseName(Op, "frobnicate")).toBeUndefined();
    expect(parseName(Op, "constructor")).toBeUndefined();
  });
});
