// Clients retry KAFKA_STORAGE_ERROR (and HTTP readers reconnect) quietly, so the broker itself
// reports damaged log bytes: as an error, at most once a minute per damaged segment file, whichever
// path (Kafka fetch, HTTP read, live tail) met them.
import type { Logger } from "../log.ts";
import type { CorruptLogError } from "../storage/index.ts";

const lastReported = new Map<string, number>();

export function reportDamage(log: Logger, e: CorruptLogError, fields: Record<string, unknown>) {
  const now = Date.now();
  if ((lastReported.get(e.file) ?? -Infinity) > now - 60_000) return;
  lastReported.set(e.file, now);
  log.error("a read hit damaged log bytes; they are not served", { ...fields, error: e.message });
}
