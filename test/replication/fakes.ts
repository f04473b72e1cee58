// Fakes shared by the replication shell's tests: a logger that says nothing, and a leader's
// ReplicaManager on a fake cluster whose call handlers the test invokes directly.
import { ReplicaManager } from "../../src/replication/replica-manager.ts";

interface SilentLog {
  info(): void;
  warn(): void;
  debug(): void;
  error(): void;
  child(): SilentLog;
}

export const silentLog: SilentLog = {
  info() {},
  warn() {},
  debug() {},
  error() {},
  child() {
    return silentLog;
  },
};

// deno-lint-ignore no-explicit-any
type Handler = (from: number, body: unknown, tail: Uint8Array) => Promise<any>;

/** A started ReplicaManager as broker 1 over `partitions` (a PartitionManager's fake). */
export function leaderManager(partitions: unknown) {
  const handlers = new Map<string, Handler>();
  const cluster = {
    nodeId: 1,
    handleCall: (m: string, fn: Handler) => handlers.set(m, fn),
    link: () => undefined,
  };
  type Args = ConstructorParameters<typeof ReplicaManager>;
  const m = new ReplicaManager(
    partitions as Args[0],
    cluster as unknown as Args[1],
    silentLog as unknown as Args[2],
    () => Promise.resolve(null),
  );
  m.start();
  return { m, handlers };
}
