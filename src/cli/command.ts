// A small command framework over node:util parseArgs: shared flags, --help with examples.
import { explainParseError } from "./parse-error.ts";
import { parseArgs } from "node:util";
import { ApiClient, CliError } from "./client.ts";

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

const COMMON: OptionDefs = {
  server: { type: "string" },
  token: { type: "string" },
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
};

const COMMON_HELP = [
  "--server URL    the broker's HTTP address (default http://localhost:8080)  [BROKER_SERVER]",
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
      options: { ...COMMON, ...(c.options ?? {}) },
      allowPositionals: true,
      strict: true,
    });
  } catch (e) {
    throw new CliError(`${explainParseError(e)} (see broker ${c.name} --help)`);
  }
  const values = parsed.values as RunContext["values"];
  if (values.help) {
    process.stdout.write(helpText(c));
    return 0;
  }
  const server = (values.server as string | undefined) ?? env.BROKER_SERVER ??
    "http://localhost:8080";
  if (!/^https?:\/\//.test(server)) {
    throw new CliError(`--server must be an http(s) URL, not ${server}`);
  }
  const token = (values.token as string | undefined) ?? env.BROKER_HTTP_TOKEN;
  return await c.run({
    client: new ApiClient({ server, token: token || undefined }),
    positionals: parsed.positionals,
    values,
    json: values.json === true,
    env,
  });
}

export function need(ctx: RunContext, i: number, what: string, cmd: string): string {
  const v = ctx.positionals[i];
  if (v === undefined || v === "") throw new CliError(`missing ${what} (see broker ${cmd} --help)`);
  return v;
}

export function intFlag(v: unknown, name: string): number | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== "string" || !/^-?\d+$/.test(v)) {
    throw new CliError(`--${name} must be an integer`);
  }
  return Number(v);
}

/** KEY=VALUE flags into an object. */
export function pairs(v: unknown, name: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const s of (v as string[] | undefined) ?? []) {
    const i = s.indexOf("=");
    if (i <= 0) throw new CliError(`--${name} expects KEY=VALUE, got ${JSON.stringify(s)}`);
    out[s.slice(0, i)] = s.slice(i + 1);
  }
  return out;
}
