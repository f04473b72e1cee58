// Client subcommands of the binary: they talk to a running broker over its HTTP API.
import { CliError } from "./client.ts";
import { type Command, runCommand } from "./command.ts";
import { topicCommands } from "./topic.ts";
import { produceCommand } from "./produce.ts";
import { consumeCommand } from "./consume.ts";
import { groupCommands } from "./group.ts";
import { clusterCommands } from "./cluster.ts";
import { reassignCommands } from "./reassign.ts";
import { userCommands } from "./user.ts";

export const COMMANDS: Command[] = [
  ...topicCommands,
  produceCommand,
  consumeCommand,
  ...groupCommands,
  ...clusterCommands,
  ...reassignCommands,
  ...userCommands,
];

const GROUPS = new Set(["topic", "group", "cluster", "user"]);
export const CLIENT_WORDS = new Set([...GROUPS, "produce", "consume"]);

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
    "Client commands (talk to a running broker over HTTP; --server URL, default http://localhost:8080):",
    ...COMMANDS.map((c) => `  broker ${c.name.padEnd(22)}${c.summary}`),
    "",
  ].join("\n");
}

/** Run a client subcommand; undefined when argv is not one (the broker itself starts). */
export async function runClient(
  argv: string[],
  env: Record<string, string | undefined>,
): Promise<number | undefined> {
  const word = argv[0];
  if (word === undefined || !CLIENT_WORDS.has(word)) return undefined;
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
      process.stderr.write(
        `broker: unknown command "${word} ${sub}" (see broker ${word} --help)\n`,
      );
      return 2;
    }
    rest = argv.slice(2);
  } else {
    cmd = COMMANDS.find((c) => c.name === word)!;
    rest = argv.slice(1);
  }
  try {
    return await runCommand(cmd, rest, env);
  } catch (e) {
    if (e instanceof CliError) {
      process.stderr.write(`broker: ${e.message}\n`);
      return 1;
    }
    process.stderr.write(`broker: ${(e as Error).message}\n`);
    return 1;
  }
}
