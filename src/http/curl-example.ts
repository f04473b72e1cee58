// A curl command per operation for /docs, built from the OpenAPI document: example path values,
// required query parameters, and a body built from the request schema (or, where the schema is
// deliberately loose, such as produce's "one record or many", a typical body).

type Obj = Record<string, unknown>;

/** Path parameter values that read naturally. */
const PATH_EXAMPLES: Record<string, string> = {
  topic: "orders",
  partition: "0",
  group: "billing",
  member: "MEMBER_ID",
  node_id: "3",
  user: "alice",
};

/** Query strings for operations that need values no schema can suggest (a member's ids). */
const QUERIES: Record<string, string> = {
  "get /groups/{group}/records": "member_id=MEMBER_ID&generation_id=1&max_wait_ms=1000",
  "post /groups/{group}/members/{member}/heartbeat": "generation_id=1",
  "delete /acls": "principal=User:alice",
};

/** Bodies for operations whose schemas accept many shapes, or need related fields. */
const BODIES: Record<string, { type: string; body: string }> = {
  "post /groups/{group}/offsets/reset": {
    type: "application/json",
    body: '{"to":"earliest","topics":["orders"]}',
  },
  "post /groups/{group}/offsets": {
    type: "application/json",
    body:
      '{"member_id":"MEMBER_ID","generation_id":1,"offsets":[{"topic":"orders","partition":0,"offset":42}]}',
  },
  "post /users": { type: "application/json", body: '{"name":"alice","password":"alice-secret"}' },
  "post /acls": {
    type: "application/json",
    body: '{"resource_type":"topic","resource_name":"orders","principal":"User:alice",' +
      '"operation":"read"}',
  },
  "post /topics/{topic}/records": {
    type: "application/json",
    body: '[{"key":"alice","value":{"amount":42}},{"key":"bob","value":"text"}]',
  },
  "post /topics/{topic}": {
    type: "application/vnd.kafka.json.v2+json",
    body: '{"records":[{"key":"alice","value":{"amount":42}}]}',
  },
  "post /topics/{topic}/partitions/{partition}": {
    type: "application/vnd.kafka.json.v2+json",
    body: '{"records":[{"value":{"amount":42}}]}',
  },
};

function resolve(s: unknown, refs: Obj): Obj | undefined {
  if (!s || typeof s !== "object") return undefined;
  const o = s as Obj;
  if (typeof o.$ref === "string") return resolve(refs[o.$ref.split("/").pop()!], refs);
  return o;
}

/** An example value of a schema: its own example, else one made from its type. */
export function exampleOf(schema: unknown, refs: Obj, depth = 0): unknown {
  const o = resolve(schema, refs);
  if (!o || depth > 5) return undefined;
  if (o.example !== undefined) return o.example;
  if (o.default !== undefined) return o.default;
  for (const k of ["anyOf", "oneOf", "allOf"]) {
    if (Array.isArray(o[k]) && (o[k] as unknown[]).length > 0) {
      return exampleOf((o[k] as unknown[])[0], refs, depth + 1);
    }
  }
  if (Array.isArray(o.enum) && o.enum.length > 0) return o.enum[0];
  switch (o.type) {
    case "object": {
      const props = (o.properties ?? {}) as Obj;
      const required = (o.required as string[] | undefined) ?? [];
      // The required fields, or the first two when none is.
      const keys = required.length > 0 ? required : Object.keys(props).slice(0, 2);
      const out: Obj = {};
      for (const k of keys) {
        const v = exampleOf(props[k], refs, depth + 1);
        if (v !== undefined) out[k] = v;
      }
      return out;
    }
    case "array": {
      const v = exampleOf(o.items, refs, depth + 1);
      return v === undefined ? [] : [v];
    }
    case "integer":
    case "number":
      return typeof o.minimum === "number" ? o.minimum : 1;
    case "boolean":
      return true;
    case "string":
      return o.format === "binary" ? undefined : "example";
  }
  return undefined;
}

/** Single-quoted for a POSIX shell. */
const sh = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;

/** The curl command for one operation against `base` (e.g. http://localhost:8080). */
export function curlExample(
  base: string,
  method: string,
  path: string,
  op: Obj,
  refs: Obj,
): string {
  const params = (op.parameters as Obj[] | undefined) ?? [];
  const url = path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const p = params.find((x) => x.in === "path" && x.name === name);
    const ex = (p?.schema as Obj | undefined)?.example ?? p?.example;
    return encodeURIComponent(String(PATH_EXAMPLES[name] ?? ex ?? name.toUpperCase()));
  });
  const key = `${method.toLowerCase()} ${path}`;
  const query = QUERIES[key] !== undefined
    ? [QUERIES[key]]
    : params.filter((p) => p.in === "query" && p.required).map((p) =>
      `${p.name}=${
        encodeURIComponent(
          String(exampleOf(p.schema, refs) ?? PATH_EXAMPLES[String(p.name)] ?? "1"),
        )
      }`
    );
  const parts = ["curl"];
  const m = method.toUpperCase();
  if (m !== "GET") parts.push("-X", m);
  parts.push(sh(`${base}${url}${query.length ? `?${query.join("&")}` : ""}`));
  const known = BODIES[key];
  const content = ((op.requestBody as Obj | undefined)?.content ?? {}) as Obj;
  if (known) {
    parts.push("-H", sh(`content-type: ${known.type}`), "-d", sh(known.body));
  } else if (content["application/json"]) {
    const ex = exampleOf((content["application/json"] as Obj).schema, refs);
    if (ex !== undefined) {
      parts.push("-H", sh("content-type: application/json"), "-d", sh(JSON.stringify(ex)));
    }
  }
  return parts.join(" ");
}
