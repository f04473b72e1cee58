// Small HTTP helpers for tests against a running broker.
export async function api(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  const res = await fetch(base + path, {
    method,
    headers: body === undefined ? headers : { "content-type": "application/json", ...headers },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let json: unknown = undefined;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch { /* not JSON */ }
  // deno-lint-ignore no-explicit-any
  return { status: res.status, json: json as any, text };
}

/** Every record of a partition, following next_offset to the high watermark. */
export async function readAll(base: string, topic: string, partition: number, format = "text") {
  // deno-lint-ignore no-explicit-any
  const out: any[] = [];
  let offset: number | string = "earliest";
  for (let i = 0; i < 10_000; i++) {
    const r = await api(
      base,
      "GET",
      `/topics/${topic}/partitions/${partition}/records?offset=${offset}&limit=10000&format=${format}`,
    );
    if (r.status !== 200) throw new Error(`read failed: ${r.status} ${r.text}`);
    out.push(...r.json.records);
    if (r.json.next_offset >= r.json.high_watermark) break;
    offset = r.json.next_offset;
  }
  return out;
}
