// Client subcommands of the binary: they talk to a running broker over its HTTP API.
import { aclCommands } from "./acl.ts";
import { CliError, UsageError } from "./client.ts";
import { type Command, runCommand } from "./command.ts";
import { topicCommands } from "./topic.ts";
import { produceCommand } from "./produce.ts";
import { consumeCommand } from "./consume.ts";
import { groupCommands } from "./group.ts";
import { clusterCommands } from "./cluster.ts";
import { reassignCommands } from "./reassign.ts";
import { rebalanceCommands } from "./rebalance.ts";
import { userCommands } from "./user.ts";
import { completionCommand } from "./completion.ts";
import { closest, didYouMean } from "./suggest.ts";

export const COMMANDS: Command[] = [
  ...topicCommands,
  produceCommand,
  consumeCommand,
  ...groupCommands,
  ...clusterCommands,
  ...rebalanceCommands,
  ...reassignCommands,
  ...userCommands,
  ...aclCommands,
  completionCommand,
];

/** First words of commands that have subcommands ("topic create"). */
export const GROUPS = new Set(
  COMMANDS.filter((c) => c.name.includes(" ")).map((c) => c.name.split(" ")[0]),
);
export const CLIENT_WORDS = new Set(COMMANDS.map((c) => c.name.split(" ")[0]));

function groupHelp(word: string): string {
  const cmds = COMMANDS.filter((c) => c.name.startsWith(word + " "));
  const w = Math.max(...cmds.map((c) => c.name.length)) + 2;
  return [
    `Usage: broker ${word} <command> [flags]`,
    "",
    ...cmds.map((c) => `  broker ${c.name.padEnd(w)}${c.summary}`),
    "",
    `Run broker ${word} <command> --help for flags and examples.`,
    "",
  ].join("\n");
}

export function clientUsage(): string {
  return [
    "Client commands (talk to any broker of a cluster over HTTP; --server HOST:PORT, default localhost:8080):",
    ...COMMANDS.map((c) => `  broker ${c.name.padEnd(22)}${c.summary}`),
    "",
  ].join("\n");
}

function usageError(msg: string): number {
  process.stderr.write(`broker: ${msg}\n`);
  return 2;
}

/**
 * Run a client subcommand; undefined when argv is not one (the broker itself starts). Exit
 * codes: 0 done, 1 the server or the network failed, 2 the command line is wrong.
 */
export async function runClient(
  argv: string[],
  env: Record<string, string | undefined>,
): Promise<number | undefined> {
  const word = argv[0];
  if (word === undefined || word.startsWith("-")) return undefined;
  if (!CLIENT_WORDS.has(word)) {
    // The broker itself takes no positional arguments: a bare word is a command, mistyped.
    return usageError(
      `unknown command "${word}"${didYouMean(word, CLIENT_WORDS)} (see broker --help)`,
    );
  }
  let cmd: Command | undefined;
  let rest: string[];
  if (GROUPS.has(word)) {
    const sub = argv[1];
    if (sub === undefined || sub === "--help" || sub === "-h" || sub === "help") {
      process.stdout.write(groupHelp(word));
      return sub === undefined ? 2 : 0;
    }
    cmd = COMMANDS.find((c) => c.name === `${word} ${sub}`);
    if (!cmd) {
      const subs = COMMANDS.filter((c) => c.name.startsWith(word + " ")).map((c) =>
        c.name.slice(word.length + 1)
      );
      const near = closest(sub, subs);
      return usageError(
        `unknown command "${word} ${sub}"${
          near === undefined ? "" : ` (did you mean ${word} ${near}?)`
        } (see broker ${word} --help)`,
      );
    }
    rest = argv.slice(2);
  } else {
    cmd = COMMANDS.find((c) => c.name === word)!;
    rest = argv.slice(1);
  }
  try {
    return await runCommand(cmd, rest, env);
  } catch (e) {
    if (e instanceof UsageError) return usageError(e.message);
    if (e instanceof CliError) {
      process.stderr.write(`broker: ${e.message}\n`);
      return 1;
    }
    process.stderr.write(`broker: ${(e as Error).message}\n`);
    return 1;
  }
}
