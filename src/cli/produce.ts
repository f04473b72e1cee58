// broker produce TOPIC: lines from stdin, like kcat -P. Lines go to the broker in bodies of about
// a MiB, one request at a time (so records keep their order within each partition) while the
// next body is read; they go as text/plain (the broker splits lines and keys: no per-record work
// here), or as a JSON array built as text when every record carries headers.
import { statSync } from "node:fs";
import { CliError, enc, UsageError } from "./client.ts";
import { type Command, intFlag, need, pairs, type RunContext } from "./command.ts";
import { json, out } from "./format.ts";
import { LineBodies } from "./line-bodies.ts";
import { Progress } from "./progress.ts";

/** Bytes of input per request: large enough to amortise a round trip, small enough to stream. */
const BODY_BYTES = 1 << 20;
/** The broker takes at most 100 000 records per request. */
const MAX_RECORDS = 50_000;

/** The records of one request, and how its body is built. */
interface Body {
  type: string;
  body: string | Uint8Array;
  records: number;
  bytes: number;
}

/** Lines of `buf` (no trailing newline needed) as a JSON array of records. */
export function jsonBody(
  text: string,
  sep: string | undefined,
  headers: Record<string, string>,
): { body: string; records: number } {
  const h = Object.keys(headers).length > 0 ? `,"headers":${JSON.stringify(headers)}` : "";
  const parts: string[] = [];
  let start = 0;
  while (start < text.length) {
    let nl = text.indexOf("\n", start);
    if (nl < 0) nl = text.length;
    let line = text.slice(start, nl);
    start = nl + 1;
    if (line.endsWith("\r")) line = line.slice(0, -1);
    const i = sep === undefined ? -1 : line.indexOf(sep);
    parts.push(
      i < 0
        ? `{"value":${JSON.stringify(line)}${h}}`
        : `{"key":${JSON.stringify(line.slice(0, i))},"value":${
          JSON.stringify(line.slice(i + sep!.length))
        }${h}}`,
    );
  }
  return { body: `[${parts.join(",")}]`, records: parts.length };
}

function stdinSize(): number | undefined {
  try {
    const st = statSync("/dev/stdin");
    return st.isFile() ? st.size : undefined;
  } catch {
    return undefined;
  }
}

export const produceCommand: Command = {
  name: "produce",
  usage: "produce TOPIC [--key-separator SEP] [--partition N] [--header K=V]... [--acks 0|1|all]",
  summary: "Produce each line of stdin as a record.",
  flags: [
    "-K, --key-separator SEP   split each line into KEY SEP VALUE (like kcat -K)",
    "-p, --partition N         write every record to this partition",
    "-H, --header KEY=VALUE    a header on every record, repeatable",
    "--acks 0|1|all            durability to wait for (default all)",
  ],
  examples: [
    "echo hello | broker produce orders",
    "printf 'alice:1\\nbob:2\\n' | broker produce orders -K :",
    "broker produce events --header source=import --acks 1 < events.txt",
  ],
  options: {
    "key-separator": { type: "string", short: "K" },
    partition: { type: "string", short: "p" },
    header: { type: "string", short: "H", multiple: true },
    acks: { type: "string" },
  },
  async run(ctx) {
    const topic = need(ctx, 0, "topic", "produce");
    const sep = ctx.values["key-separator"] as string | undefined;
    if (sep === "") throw new UsageError("--key-separator must not be empty");
    const partition = intFlag(ctx.values.partition, "partition");
    if (partition !== undefined && partition < 0) {
      throw new UsageError("--partition must be ≥ 0");
    }
    const headers = pairs(ctx.values.header, "header");
    const acks = (ctx.values.acks as string | undefined) ?? "all";
    if (!["0", "1", "all"].includes(acks)) throw new UsageError("--acks must be 0, 1 or all");
    // Lines go as they are (text/plain, split at the broker) unless they carry headers.
    const plain = Object.keys(headers).length === 0;
    // summary=true: a count per partition back, not an offset per record (the per-record answer
    // cost the broker and the CLI more than the write itself).
    const path = `/topics/${enc(topic)}/records?summary=true&acks=${acks}${
      partition === undefined ? "" : `&partition=${partition}`
    }${plain && sep !== undefined ? `&key_separator=${enc(sep)}` : ""}`;
    const progress = new Progress({ verb: "produced" });
    progress.totalBytes = stdinSize();
    // Fail early (a missing topic, a wrong token) rather than after reading all of stdin.
    await ctx.client.call("GET", `/topics/${enc(topic)}`);
    await ctx.client.discover();
    const sent = await produceLines(ctx, path, plain, sep, headers, progress);
    progress.done();
    if (ctx.json) json({ topic, records: sent });
    else process.stderr.write(`produced ${sent} record(s) to ${topic}\n`);
    out("");
    return 0;
  },
};

async function produceLines(
  ctx: RunContext,
  path: string,
  plain: boolean,
  sep: string | undefined,
  headers: Record<string, string>,
  progress: Progress,
): Promise<number> {
  const decoder = new TextDecoder();
  let sent = 0;
  let inFlight: Promise<void> | undefined;
  const send = async (b: Body) => {
    const res = await ctx.client.raw(
      "POST",
      path,
      { body: b.body, headers: { "content-type": b.type } },
      { retry: true },
    );
    const r = await ctx.client.answer<{ records?: unknown; offsets?: unknown[] }>(res);
    // A broker from before summary=true answers an offset per record.
    const acked = typeof r?.records === "number"
      ? r.records
      : Array.isArray(r?.offsets)
      ? r.offsets.length
      : 0;
    if (acked !== b.records) {
      throw new CliError(`the broker acknowledged ${acked} of ${b.records} record(s)`);
    }
    sent += b.records;
    progress.add(b.records, b.bytes);
  };
  const input = new LineBodies(0, BODY_BYTES, MAX_RECORDS);
  // Bounded by the input: each round sends a body of it.
  for (let lb; (lb = await input.next()) !== undefined;) {
    const raw = lb.bytes;
    let b: Body;
    if (plain) {
      // The broker splits text/plain bodies into lines itself (and drops a trailing \r).
      b = { type: "text/plain", body: raw, records: lb.lines, bytes: raw.length };
    } else {
      const text = decoder.decode(raw);
      const j = jsonBody(text.endsWith("\n") ? text.slice(0, -1) : text, sep, headers);
      b = { type: "application/json", body: j.body, records: j.records, bytes: raw.length };
    }
    if (b.records === 0) continue;
    // One request at a time keeps each partition's records in order; the next body is read
    // and built while this one is on its way (into the other of LineBodies' two buffers).
    await inFlight;
    inFlight = send(b);
    // Surface a failure now rather than after the next body is built.
    inFlight.catch(() => {});
  }
  await inFlight;
  return sent;
}
