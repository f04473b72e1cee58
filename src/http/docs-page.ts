// The rendered API reference at /docs: plain HTML built on the server from the OpenAPI document,
// so it works with no network access (no CDN scripts) and in any browser, even without JS.
// Each operation shows a curl command that works as written against this broker.
import { curlExample } from "./curl-example.ts";

const esc = (s: unknown) =>
  String(s ?? "").replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;");

type Obj = Record<string, unknown>;

function schemaText(s: unknown, refs: Obj, depth = 0): string {
  if (!s || typeof s !== "object" || depth > 4) return "…";
  const o = s as Obj;
  if (typeof o.$ref === "string") {
    const name = o.$ref.split("/").pop()!;
    return depth > 1 ? name : `${name} ${schemaText(refs[name], refs, depth + 1)}`;
  }
  for (const k of ["anyOf", "oneOf"]) {
    if (Array.isArray(o[k])) {
      return (o[k] as unknown[]).map((x) => schemaText(x, refs, depth + 1)).join(" | ");
    }
  }
  if (o.type === "array") return `[${schemaText(o.items, refs, depth + 1)}]`;
  if (o.type === "object" && o.properties) {
    const req = new Set((o.required as string[] | undefined) ?? []);
    const props = Object.entries(o.properties as Obj).map(([k, v]) =>
      `${k}${req.has(k) ? "" : "?"}: ${schemaText(v, refs, depth + 1)}`
    );
    return `{ ${props.join(", ")} }`;
  }
  if (Array.isArray(o.enum)) return o.enum.map((e) => JSON.stringify(e)).join(" | ");
  return String(o.type ?? "any");
}

/** `base`: the broker's URL as the reader reached it (the curl examples use it). */
export function renderDocsPage(doc: unknown, base = "http://localhost:8080"): string {
  const d = doc as Obj;
  const info = (d.info ?? {}) as Obj;
  const refs = (((d.components ?? {}) as Obj).schemas ?? {}) as Obj;
  const sections = new Map<string, string[]>();
  for (const [path, ops] of Object.entries((d.paths ?? {}) as Obj)) {
    for (const [method, opRaw] of Object.entries(ops as Obj)) {
      const op = opRaw as Obj;
      const tag = ((op.tags as string[] | undefined) ?? ["other"])[0];
      const params = ((op.parameters as Obj[] | undefined) ?? []).map((p) =>
        `<li><code>${esc(p.name)}</code> <em>${esc(p.in)}</em>${
          p.required ? " (required)" : ""
        } — ${esc((p.description as string) ?? schemaText(p.schema, refs))}</li>`
      ).join("");
      const body = op.requestBody as Obj | undefined;
      const bodyHtml = body
        ? Object.entries((body.content ?? {}) as Obj).map(([type, c]) =>
          `<li><code>${esc(type)}</code>: <code>${
            esc(schemaText((c as Obj).schema, refs))
          }</code></li>`
        ).join("")
        : "";
      const responses = Object.entries((op.responses ?? {}) as Obj).map(([code, r]) =>
        `<li><b>${esc(code)}</b> ${esc((r as Obj).description)}</li>`
      ).join("");
      const curl = curlExample(base, method, path, op, refs);
      const html = `<section><h3><span class="m ${esc(method)}">${
        esc(method.toUpperCase())
      }</span> <code>${esc(path)}</code></h3><p>${esc(op.summary)}</p><pre>${esc(curl)}</pre>${
        params ? `<h4>Parameters</h4><ul>${params}</ul>` : ""
      }${
        bodyHtml ? `<h4>Body</h4><ul>${bodyHtml}</ul>` : ""
      }<h4>Responses</h4><ul>${responses}</ul></section>`;
      const list = sections.get(tag) ?? [];
      list.push(html);
      sections.set(tag, list);
    }
  }
  const toc = [...sections.keys()].map((t) => `<a href="#${esc(t)}">${esc(t)}</a>`).join(" · ");
  const body = [...sections].map(([t, list]) => `<h2 id="${esc(t)}">${esc(t)}</h2>${list.join("")}`)
    .join("");
  return `<!doctype html><html><head><meta charset="utf-8"><title>${esc(info.title)}</title>
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:60em;margin:2em auto;padding:0 1em;color:#222}
code{background:#f3f3f3;padding:0 .2em}pre{background:#f3f3f3;padding:.4em;overflow-x:auto}section{border-top:1px solid #ddd;padding:.5em 0}
.m{display:inline-block;min-width:4.5em;font-size:.8em;color:#fff;border-radius:3px;text-align:center;background:#555}
.get{background:#2a7}.post{background:#27a}.delete{background:#a33}.patch{background:#a72}h4{margin:.5em 0 0}</style>
</head><body><h1>${esc(info.title)} <small>${esc(info.version)}</small></h1><p>${
    esc(info.description)
  }</p>
<p>Machine-readable: <a href="/openapi.json">/openapi.json</a>. With <code>--http-token</code>, add
<code>-H "Authorization: Bearer $TOKEN"</code> to each example.</p><nav>${toc}</nav>${body}</body></html>`;
}
