// node:util parseArgs errors say what went wrong, not what to type instead; these add the fix for
// the mistakes new users make most: a negative number as a flag value, and a client flag given to
// the broker (before the subcommand).
const CLIENT_FLAGS = new Set(["--server", "--token", "--json"]);

export function explainParseError(e: unknown): string {
  const first = (e as Error).message.split("\n")[0];
  const ambiguous = /^Option '(--[\w-]+)' argument is ambiguous/.exec(first);
  if (ambiguous) {
    return `${ambiguous[1]} needs a value; one that starts with '-' goes after '=' ` +
      `(${ambiguous[1]}=-1)`;
  }
  const unknown = /^Unknown option '(--[\w-]+)'/.exec(first);
  if (unknown && CLIENT_FLAGS.has(unknown[1])) {
    return `${unknown[1]} is an option of the client commands: put it after the command ` +
      `(broker topic list ${unknown[1]} …)`;
  }
  if (unknown) return `unknown option '${unknown[1]}'`;
  return first;
}
