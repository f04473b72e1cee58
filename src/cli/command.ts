// A small command framework over node:util parseArgs: shared flags, --help with examples.
import { explainParseError } from "./parse-error.ts";
import { parseArgs } from "node:util";
import { ApiClient, serverList, UsageError } from "./client.ts";

export type OptionDefs = Record<
  string,
  { type: "string" | "boolean"; short?: string; multiple?: boolean }
>;

export interface Command {
  /** e.g. "topic create" */
  name: string;
  usage: string;
  summary: string;
  /** Flag lines for --help. */
  flags?: string[];
  examples: string[];
  options?: OptionDefs;
  run(ctx: RunContext): Promise<number>;
}

export interface RunContext {
  client: ApiClient;
  positionals: string[];
  values: Record<string, string | boolean | string[] | undefined>;
  json: boolean;
  env: Record<string, string | undefined>;
}

export const COMMON_OPTIONS: OptionDefs = {
  server: { type: "string" },
  token: { type: "string" },
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
};

const COMMON_HELP = [
  "--server ADDR   a broker's HTTP address: HOST:PORT or a URL, or several, comma-separated",
  "                (default localhost:8080; any broker of a cluster will do)  [BROKER_SERVER]",
  "--token TOKEN   bearer token when the broker runs with --http-token  [BROKER_HTTP_TOKEN]",
  "--json          machine-readable output",
  "-h, --help      this help",
];

export function helpText(c: Command): string {
  return [
    `${c.summary}`,
    "",
    `Usage: broker ${c.usage}`,
    "",
    "Flags:",
    ...[...(c.flags ?? []), ...COMMON_HELP].map((f) => `  ${f}`),
    "",
    "Examples:",
    ...c.examples.map((e) => `  ${e}`),
    "",
  ].join("\n");
}

export async function runCommand(
  c: Command,
  argv: string[],
  env: Record<string, string | undefined>,
): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: { ...COMMON_OPTIONS, ...(c.options ?? {}) },
      allowPositionals: true,
      strict: true,
    });
  } catch (e) {
    const known = Object.keys({ ...COMMON_OPTIONS, ...(c.options ?? {}) });
    throw new UsageError(`${explainParseError(e, known)} (see broker ${c.name} --help)`);
  }
  const values = parsed.values as RunContext["values"];
  if (values.help) {
    process.stdout.write(helpText(c));
    return 0;
  }
  const max = positionalCount(c);
  if (parsed.positionals.length > max) {
    throw new UsageError(
      `unexpected argument ${JSON.stringify(parsed.positionals[max])} ` +
        `(usage: broker ${c.usage}; see broker ${c.name} --help)`,
    );
  }
  const servers = serverList(
    (values.server as string | undefined) ?? (env.BROKER_SERVER || "localhost:8080"),
  );
  const token = (values.token as string | undefined) ?? env.BROKER_HTTP_TOKEN;
  return await c.run({
    client: new ApiClient({ servers, token: token || undefined, timeoutMs: 60_000 }),
    positionals: parsed.positionals,
    values,
    json: values.json === true,
    env,
  });
}

/** The positional arguments a command takes: the upper-case words after its name in `usage`. */
function positionalCount(c: Command): number {
  let n = 0;
  for (const w of c.usage.slice(c.name.length).trim().split(/\s+/)) {
    if (!/^[A-Z][A-Z_]*$/.test(w)) break;
    n++;
  }
  return n;
}

export function need(ctx: RunContext, i: number, what: string, cmd: string): string {
  const v = ctx.positionals[i];
  if (v === undefined || v === "") {
    throw new UsageError(`missing ${what} (see broker ${cmd} --help)`);
  }
  return v;
}

export function intFlag(v: unknown, name: string): number | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== "string" || !/^-?\d+$/.test(v)) {
    throw new UsageError(`--${name} must be an integer`);
  }
  return Number(v);
}

/** KEY=VALUE flags into an object. */
export function pairs(v: unknown, name: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const s of (v as string[] | undefined) ?? []) {
    const i = s.indexOf("=");
    if (i <= 0) throw new UsageError(`--${name} expects KEY=VALUE, got ${JSON.stringify(s)}`);
    out[s.slice(0, i)] = s.slice(i + 1);
  }
  return out;
}
