// broker produce TOPIC: lines from stdin, like kcat -P.
import { CliError, enc } from "./client.ts";
import { type Command, intFlag, need, pairs } from "./command.ts";
import { json, out } from "./format.ts";

/** Records per request: large enough to amortise the round trip, small enough to stream. */
const BATCH = 1000;

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
    "cat events.txt | broker produce events --header source=import --acks 1",
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
    if (sep === "") throw new CliError("--key-separator must not be empty");
    const partition = intFlag(ctx.values.partition, "partition");
    const headers = pairs(ctx.values.header, "header");
    const acks = (ctx.values.acks as string | undefined) ?? "all";
    if (!["0", "1", "all"].includes(acks)) throw new CliError("--acks must be 0, 1 or all");
    let batch: unknown[] = [];
    let sent = 0;
    const flush = async () => {
      if (batch.length === 0) return;
      await ctx.client.call("POST", `/topics/${enc(topic)}/records?acks=${acks}`, batch);
      sent += batch.length;
      batch = [];
    };
    const decoder = new TextDecoder();
    let rest = "";
    const add = (line: string) => {
      if (line.endsWith("\r")) line = line.slice(0, -1);
      let key: string | undefined;
      let value = line;
      if (sep !== undefined) {
        const i = line.indexOf(sep);
        if (i >= 0) {
          key = line.slice(0, i);
          value = line.slice(i + sep.length);
        }
      }
      batch.push({ key, value, headers, partition });
    };
    for await (const chunk of Bun.stdin.stream()) {
      rest += decoder.decode(chunk, { stream: true });
      let nl;
      while ((nl = rest.indexOf("\n")) >= 0) {
        add(rest.slice(0, nl));
        rest = rest.slice(nl + 1);
        if (batch.length >= BATCH) await flush();
      }
    }
    rest += decoder.decode();
    if (rest !== "") add(rest);
    await flush();
    if (ctx.json) json({ topic, records: sent });
    else process.stderr.write(`produced ${sent} record(s) to ${topic}\n`);
    out("");
    return 0;
  },
};
