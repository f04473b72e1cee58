// node:util parseArgs errors say what went wrong, not what to type instead; these add the fix for
// the mistakes new users make most: a negative number as a flag value, a client flag given to
// the broker (before the subcommand), and a typo of a flag (did you mean).
import { didYouMean } from "./suggest.ts";

const CLIENT_FLAGS = new Set(["--server", "--token", "--json"]);

/** `known`: the long flag names (without dashes) the command takes, for "did you mean". */
export function explainParseError(e: unknown, known: Iterable<string> = []): string {
  const first = (e as Error).message.split("\n")[0];
  const ambiguous = /^Option '(--[\w-]+)' argument is ambiguous/.exec(first);
  if (ambiguous) {
    return `${ambiguous[1]} needs a value; one that starts with '-' goes after '=' ` +
      `(${ambiguous[1]}=-1)`;
  }
  const unknown = /^Unknown option '(--?[\w-]+)'/.exec(first);
  if (unknown && CLIENT_FLAGS.has(unknown[1])) {
    return `${unknown[1]} is an option of the client commands: put it after the command ` +
      `(broker topic list ${unknown[1]} …)`;
  }
  if (unknown) {
    const flags = [...known].map((k) => `--${k}`);
    return `unknown option '${unknown[1]}'${
      unknown[1].startsWith("--") ? didYouMean(unknown[1], flags) : ""
    }`;
  }
  return first;
}
