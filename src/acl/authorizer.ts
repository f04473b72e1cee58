// ACLs with Kafka's model, as a pure decision: given the bindings that exist, may this principal,
// from this host, perform this operation on this resource? No IO; the store (metadata log) and the
// front doors (Kafka handlers, HTTP routes) are adapters around it.
//
// Kafka's rules (AclAuthorizer / StandardAuthorizer), which tools and operators expect:
// - a binding matches a resource when its pattern is LITERAL and equal to the name, LITERAL "*"
//   (every resource of the type), or PREFIXED and a prefix of the name;
// - it matches a principal equal to it or "User:*", a host equal to it or "*";
// - any matching DENY for the operation (or for ALL) refuses, whatever ALLOWs exist;
// - otherwise a matching ALLOW for the operation, for ALL, or for an operation that implies it
//   permits: READ, WRITE, DELETE and ALTER imply DESCRIBE; ALTER_CONFIGS implies DESCRIBE_CONFIGS;
// - nothing matching refuses (allow.everyone.if.no.acl.found=false), except for super users, who
//   bypass every check.
// The numbers are Kafka's own (CreateAcls/DescribeAcls/DeleteAcls carry them on the wire).

export const ResourceType = {
  UNKNOWN: 0,
  ANY: 1,
  TOPIC: 2,
  GROUP: 3,
  CLUSTER: 4,
  TRANSACTIONAL_ID: 5,
  DELEGATION_TOKEN: 6,
  USER: 7,
} as const;
export type ResourceType = (typeof ResourceType)[keyof typeof ResourceType];

export const PatternType = { UNKNOWN: 0, ANY: 1, MATCH: 2, LITERAL: 3, PREFIXED: 4 } as const;
export type PatternType = (typeof PatternType)[keyof typeof PatternType];

export const AclOperation = {
  UNKNOWN: 0,
  ANY: 1,
  ALL: 2,
  READ: 3,
  WRITE: 4,
  CREATE: 5,
  DELETE: 6,
  ALTER: 7,
  DESCRIBE: 8,
  CLUSTER_ACTION: 9,
  DESCRIBE_CONFIGS: 10,
  ALTER_CONFIGS: 11,
  IDEMPOTENT_WRITE: 12,
  CREATE_TOKENS: 13,
  DESCRIBE_TOKENS: 14,
} as const;
export type AclOperation = (typeof AclOperation)[keyof typeof AclOperation];

export const AclPermission = { UNKNOWN: 0, ANY: 1, DENY: 2, ALLOW: 3 } as const;
export type AclPermission = (typeof AclPermission)[keyof typeof AclPermission];

/** The one cluster resource's name, as Kafka names it. */
export const CLUSTER_RESOURCE = "kafka-cluster";
export const WILDCARD = "*";
export const WILDCARD_PRINCIPAL = "User:*";

/** One ACL binding (what CreateAcls creates and DescribeAcls lists). */
export interface AclBinding {
  resourceType: ResourceType;
  resourceName: string;
  patternType: typeof PatternType.LITERAL | typeof PatternType.PREFIXED;
  /** "User:alice" (the principal type is part of it, as in Kafka). */
  principal: string;
  /** An IP address, or "*". */
  host: string;
  operation: AclOperation;
  permission: typeof AclPermission.ALLOW | typeof AclPermission.DENY;
}

/** A filter (DescribeAcls, DeleteAcls): null strings and ANY values match everything. */
export interface AclFilter {
  resourceType: ResourceType;
  resourceName: string | null;
  patternType: PatternType;
  principal: string | null;
  host: string | null;
  operation: AclOperation;
  permission: AclPermission;
}

/** Who asks: the authenticated principal ("User:ANONYMOUS" without authentication) and host. */
export interface Requester {
  principal: string;
  host: string;
}

/** Operations that allow another one: an ALLOW for any of them permits the key. */
const IMPLIED_BY: Partial<Record<AclOperation, readonly AclOperation[]>> = {
  [AclOperation.DESCRIBE]: [
    AclOperation.READ,
    AclOperation.WRITE,
    AclOperation.DELETE,
    AclOperation.ALTER,
  ],
  [AclOperation.DESCRIBE_CONFIGS]: [AclOperation.ALTER_CONFIGS],
};

/** One of the enum's values that names a single thing: neither UNKNOWN nor the filters' ANY. */
const concrete = (values: { UNKNOWN: number; ANY: number }, v: number): boolean =>
  v !== values.UNKNOWN && v !== values.ANY && Object.values(values).includes(v);

/** Why a binding is refused before it is stored (INVALID_REQUEST / the Kafka error's message). */
export function validateBinding(b: AclBinding): string | null {
  if (!concrete(ResourceType, b.resourceType)) return "the resource type must be a concrete one";
  if (b.patternType !== PatternType.LITERAL && b.patternType !== PatternType.PREFIXED) {
    return "the pattern type must be LITERAL or PREFIXED";
  }
  if (!concrete(AclOperation, b.operation)) return "the operation must be a concrete one";
  if (b.permission !== AclPermission.ALLOW && b.permission !== AclPermission.DENY) {
    return "the permission must be ALLOW or DENY";
  }
  if (b.resourceName.length === 0) return "the resource name must not be empty";
  if (b.patternType === PatternType.PREFIXED && b.resourceName === WILDCARD) {
    return 'a PREFIXED pattern cannot be "*"';
  }
  if (b.resourceType === ResourceType.CLUSTER && b.resourceName !== CLUSTER_RESOURCE) {
    return `the cluster resource is named "${CLUSTER_RESOURCE}"`;
  }
  const colon = b.principal.indexOf(":");
  if (colon <= 0 || colon === b.principal.length - 1) {
    return 'the principal must be "Type:name", e.g. "User:alice"';
  }
  if (b.host.length === 0) return 'the host must be an address or "*"';
  return null;
}

function resourceMatches(b: AclBinding, type: ResourceType, name: string): boolean {
  if (b.resourceType !== type) return false;
  if (b.patternType === PatternType.LITERAL) {
    return b.resourceName === WILDCARD || b.resourceName === name;
  }
  return name.startsWith(b.resourceName);
}

function whoMatches(b: AclBinding, who: Requester): boolean {
  return (b.principal === who.principal || b.principal === WILDCARD_PRINCIPAL) &&
    (b.host === WILDCARD || b.host === who.host);
}

export interface Decision {
  allowed: boolean;
  /** "super user", "denied by <binding>", "allowed by <binding>", "no ACL allows it". */
  reason: string;
}

export class Authorizer {
  /** Bindings by resource type: a check looks at the bindings of one type only. */
  #byType = new Map<ResourceType, AclBinding[]>();
  #count = 0;

  constructor(
    bindings: Iterable<AclBinding> = [],
    private readonly superUsers: ReadonlySet<string> = new Set(),
  ) {
    for (const b of bindings) this.add(b);
  }

  get size(): number {
    return this.#count;
  }

  /** Adds a binding (a no-op when the same one exists, as CreateAcls is in Kafka). */
  add(b: AclBinding): boolean {
    const list = this.#byType.get(b.resourceType) ?? [];
    if (list.some((x) => sameBinding(x, b))) return false;
    list.push({ ...b });
    this.#byType.set(b.resourceType, list);
    this.#count++;
    return true;
  }

  /** Removes the bindings matching `f`; returns them. */
  remove(f: AclFilter): AclBinding[] {
    const gone: AclBinding[] = [];
    for (const [type, list] of this.#byType) {
      const keep = list.filter((b) => {
        if (!filterMatches(f, b)) return true;
        gone.push(b);
        return false;
      });
      this.#byType.set(type, keep);
    }
    this.#count -= gone.length;
    return gone;
  }

  /** The bindings matching `f`, in a stable order. */
  list(f: AclFilter): AclBinding[] {
    const out: AclBinding[] = [];
    for (const list of this.#byType.values()) {
      for (const b of list) if (filterMatches(f, b)) out.push(b);
    }
    return out.sort(compareBindings);
  }

  isSuperUser(principal: string): boolean {
    return this.superUsers.has(principal);
  }

  /** May `who` perform `op` on the resource `type`/`name`? */
  authorize(who: Requester, op: AclOperation, type: ResourceType, name: string): Decision {
    if (this.superUsers.has(who.principal)) return { allowed: true, reason: "super user" };
    const matching = (this.#byType.get(type) ?? []).filter((b) =>
      resourceMatches(b, type, name) && whoMatches(b, who)
    );
    const deny = matching.find((b) =>
      b.permission === AclPermission.DENY &&
      (b.operation === op || b.operation === AclOperation.ALL)
    );
    if (deny !== undefined) return { allowed: false, reason: `denied by ${describeBinding(deny)}` };
    const implied = IMPLIED_BY[op] ?? [];
    const allow = matching.find((b) =>
      b.permission === AclPermission.ALLOW &&
      (b.operation === op || b.operation === AclOperation.ALL || implied.includes(b.operation))
    );
    if (allow !== undefined) {
      return { allowed: true, reason: `allowed by ${describeBinding(allow)}` };
    }
    return { allowed: false, reason: "no ACL allows it" };
  }

  /**
   * May `who` perform `op` on at least one resource of `type`? (Kafka lets an idempotent producer
   * in with WRITE on any topic instead of IDEMPOTENT_WRITE on the cluster, KIP-679.) True when an
   * ALLOW could apply to some name that no DENY of the same requester covers whole.
   */
  authorizeAny(who: Requester, op: AclOperation, type: ResourceType): boolean {
    if (this.superUsers.has(who.principal)) return true;
    const mine = (this.#byType.get(type) ?? []).filter((b) => whoMatches(b, who));
    const denies = mine.filter((b) =>
      b.permission === AclPermission.DENY &&
      (b.operation === op || b.operation === AclOperation.ALL)
    );
    // A DENY on every name (LITERAL "*" or the empty prefix) refuses everything.
    if (denies.some((d) => coversAll(d))) return false;
    const implied = IMPLIED_BY[op] ?? [];
    return mine.some((b) => {
      if (b.permission !== AclPermission.ALLOW) return false;
      if (
        b.operation !== op && b.operation !== AclOperation.ALL && !implied.includes(b.operation)
      ) {
        return false;
      }
      // Some name this ALLOW covers must escape every DENY: a literal name, or a prefix that no
      // DENY prefix contains whole.
      if (b.patternType === PatternType.LITERAL && b.resourceName !== WILDCARD) {
        return !denies.some((d) => resourceMatches(d, type, b.resourceName));
      }
      const prefix = b.patternType === PatternType.PREFIXED ? b.resourceName : "";
      return !denies.some((d) =>
        d.patternType === PatternType.PREFIXED && prefix.startsWith(d.resourceName)
      );
    });
  }
}

function coversAll(d: AclBinding): boolean {
  return (d.patternType === PatternType.LITERAL && d.resourceName === WILDCARD) ||
    (d.patternType === PatternType.PREFIXED && d.resourceName === "");
}

function sameBinding(a: AclBinding, b: AclBinding): boolean {
  return a.resourceType === b.resourceType && a.resourceName === b.resourceName &&
    a.patternType === b.patternType && a.principal === b.principal && a.host === b.host &&
    a.operation === b.operation && a.permission === b.permission;
}

function compareBindings(a: AclBinding, b: AclBinding): number {
  return a.resourceType - b.resourceType || a.resourceName.localeCompare(b.resourceName) ||
    a.patternType - b.patternType || a.principal.localeCompare(b.principal) ||
    a.host.localeCompare(b.host) || a.operation - b.operation || a.permission - b.permission;
}

/**
 * Whether filter `f` selects binding `b` (Kafka's AclBindingFilter): ANY and null match all; a
 * MATCH pattern selects the bindings that would apply to the named resource (its literal name,
 * the literal wildcard, and every prefix of it).
 */
export function filterMatches(f: AclFilter, b: AclBinding): boolean {
  if (f.resourceType !== ResourceType.ANY && f.resourceType !== b.resourceType) return false;
  if (f.principal !== null && f.principal !== b.principal) return false;
  if (f.host !== null && f.host !== b.host) return false;
  if (f.operation !== AclOperation.ANY && f.operation !== b.operation) return false;
  if (f.permission !== AclPermission.ANY && f.permission !== b.permission) return false;
  switch (f.patternType) {
    case PatternType.ANY:
      return f.resourceName === null || f.resourceName === b.resourceName;
    case PatternType.MATCH:
      if (f.resourceName === null) return true;
      return b.patternType === PatternType.LITERAL
        ? b.resourceName === f.resourceName || b.resourceName === WILDCARD
        : f.resourceName.startsWith(b.resourceName);
    case PatternType.LITERAL:
    case PatternType.PREFIXED:
      return f.patternType === b.patternType &&
        (f.resourceName === null || f.resourceName === b.resourceName);
    default:
      return false;
  }
}

/** Why a filter is refused (DescribeAcls/DeleteAcls answer INVALID_REQUEST with it). */
export function validateFilter(f: AclFilter): string | null {
  if (f.resourceType === ResourceType.UNKNOWN) return "unknown resource type";
  if (f.patternType === PatternType.UNKNOWN) return "unknown pattern type";
  if (f.operation === AclOperation.UNKNOWN) return "unknown operation";
  if (f.permission === AclPermission.UNKNOWN) return "unknown permission";
  return null;
}

const NAMES = <T extends Record<string, number>>(o: T) =>
  new Map(Object.entries(o).map(([k, v]) => [v, k]));
const RESOURCE_NAMES = NAMES(ResourceType);
const PATTERN_NAMES = NAMES(PatternType);
const OPERATION_NAMES = NAMES(AclOperation);
const PERMISSION_NAMES = NAMES(AclPermission);

export const nameOf = {
  resourceType: (v: number) => RESOURCE_NAMES.get(v) ?? "UNKNOWN",
  patternType: (v: number) => PATTERN_NAMES.get(v) ?? "UNKNOWN",
  operation: (v: number) => OPERATION_NAMES.get(v) ?? "UNKNOWN",
  permission: (v: number) => PERMISSION_NAMES.get(v) ?? "UNKNOWN",
};

/** Parses a name as the CLI and HTTP accept it ("topic", "TOPIC", "describe-configs"). */
export function parseName<T extends Record<string, number>>(
  table: T,
  s: string,
): T[keyof T] | undefined {
  const key = s.trim().toUpperCase().replaceAll("-", "_");
  return Object.hasOwn(table, key) ? table[key as keyof T] : undefined;
}

export function describeBinding(b: AclBinding): string {
  return `${nameOf.permission(b.permission)} ${b.principal} ${nameOf.operation(b.operation)} on ` +
    `${nameOf.resourceType(b.resourceType)}:${
      nameOf.patternType(b.patternType)
    }:${b.resourceName}` +
    `${b.host === WILDCARD ? "" : ` from ${b.host}`}`;
}
