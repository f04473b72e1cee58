// The binary's entry: parse the command line, then start a broker (client subcommands come later).
import { ConfigError, parseCommandLine, usage } from "./config.ts";
import { VERSION } from "./version.ts";
import type { Broker } from "./broker.ts";
import { createLogger } from "./log.ts";
import { STOP_SIGNALS, type StopSignal, StopSignals } from "./signals.ts";
import { DataDirLockedError } from "./datadir-lock.ts";
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
  // The broker's modules load only to run one: a client command, --help and --version start in a
  // fraction of the time (0.3 s of CPU for --version before).
  const [{ startBroker }, { normalizeTopicDefaults }] = await Promise.all([
    import("./broker.ts"),
    import("./meta/index.ts"),
  ]);
  try {
    cmd.config.topicDefaults = normalizeTopicDefaults(cmd.config.topicDefaults);
  } catch (e) {
    process.stderr.write(`broker: --topic-default: ${(e as Error).message}\n`);
    return 2;
  }
  // A closed terminal (the SSH session that ran the broker ended) makes stderr writes fail with
  // EIO/EPIPE: the shutdown that SIGHUP starts must not die of its own log lines.
  process.stderr.on("error", () => {});
  const format = cmd.config.logFormat ?? (process.stderr.isTTY ? "text" : "json");
  const log = createLogger(cmd.config.logLevel, {}, undefined, format);
  // Handlers go in before the start, which can take seconds: a signal then stops the broker
  // cleanly once it has started, instead of killing it halfway through opening its files.
  const signals = new StopSignals();
  let broker: Broker | undefined;
  let pending: StopSignal | undefined;
  const shutdown = (b: Broker, signal: StopSignal) => {
    log.info("shutting down", { signal });
    // The budget: the controlled shutdown (leadership moving away), then 5 s; whatever is still
    // pending then is abandoned (acknowledged data is already synced).
    const budgetMs = cmd.config.controlledShutdownMs + 5000;
    const hard = setTimeout(() => {
      log.error(`shutdown took longer than ${budgetMs / 1000} s; exiting`);
      process.exit(1);
    }, budgetMs);
    b.stop().then(
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
  const onSignal = (signal: StopSignal) => {
    const action = signals.receive(signal, performance.now());
    if (action.kind === "ignore") {
      log.warn("shutdown already under way", { signal, why: action.why });
      return;
    }
    if (action.kind === "exit") {
      log.warn("exiting now, without finishing the clean shutdown", { signal, why: action.why });
      process.exit(action.code);
    }
    if (broker === undefined) {
      log.info("stop signal while starting: stopping once started", { signal });
      pending = signal;
      return;
    }
    shutdown(broker, signal);
  };
  // SIGHUP (the terminal or SSH session closed) stops the broker cleanly, like SIGTERM: nothing
  // is reloaded on it (docs/operations.md says why).
  for (const sig of Object.keys(STOP_SIGNALS) as StopSignal[]) process.on(sig, () => onSignal(sig));
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
  if (pending !== undefined) shutdown(broker, pending);
  return -1; // keep running
}

const code = await main(process.argv.slice(2));
if (code >= 0) process.exit(code);
