// The binary's entry: parse the command line, then start a broker (client subcommands come later).
import { ConfigError, parseCommandLine, usage } from "./config.ts";
import { VERSION } from "./version.ts";
import { startBroker } from "./broker.ts";
import { createLogger } from "./log.ts";
import { DataDirLockedError } from "./datadir-lock.ts";
import { normalizeTopicDefaults } from "./meta/index.ts";
import { clientUsage, runClient } from "./cli/index.ts";

async function main(argv: string[]): Promise<number> {
  // Client subcommands (topic, produce, consume, group, cluster) talk to a running broker.
  const client = await runClient(argv, process.env);
  if (client !== undefined) return client;
  let cmd;
  try {
    cmd = parseCommandLine(argv, process.env);
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`broker: ${e.message} (see broker --help)\n`);
      return 2;
    }
    throw e;
  }
  if (cmd.kind === "help") {
    process.stdout.write(usage(VERSION) + "\n" + clientUsage());
    return 0;
  }
  if (cmd.kind === "version") {
    process.stdout.write(`broker ${VERSION}\n`);
    return 0;
  }
  try {
    cmd.config.topicDefaults = normalizeTopicDefaults(cmd.config.topicDefaults);
  } catch (e) {
    process.stderr.write(`broker: --topic-default: ${(e as Error).message}\n`);
    return 2;
  }
  const log = createLogger(cmd.config.logLevel);
  let broker;
  try {
    broker = await startBroker(cmd.config, log);
  } catch (e) {
    if (
      e instanceof DataDirLockedError || e instanceof ConfigError ||
      (e as { userFacing?: boolean }).userFacing
    ) {
      process.stderr.write(`broker: ${(e as Error).message}\n`);
      return 1;
    }
    log.error("failed to start", { error: e, stack: (e as Error).stack });
    return 1;
  }
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) {
      log.warn("second signal: exiting now", { signal });
      process.exit(130);
    }
    stopping = true;
    log.info("shutting down", { signal });
    // The budget: the controlled shutdown (leadership moving away), then 5 s; whatever is still
    // pending then is abandoned (acknowledged data is already synced).
    const budgetMs = cmd.config.controlledShutdownMs + 5000;
    const hard = setTimeout(() => {
      log.error(`shutdown took longer than ${budgetMs / 1000} s; exiting`);
      process.exit(1);
    }, budgetMs);
    broker.stop().then(
      () => {
        clearTimeout(hard);
        log.info("stopped");
        process.exit(0);
      },
      (e) => {
        log.error("shutdown failed", { error: e });
        process.exit(1);
      },
    );
  };
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
  return -1; // keep running
}

const code = await main(process.argv.slice(2));
if (code >= 0) process.exit(code);
