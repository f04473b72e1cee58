// The process's open-file limit (RLIMIT_NOFILE), and how many client connections fit under it
// while descriptors stay free for the broker's own files (segments, indexes, SQLite, the HTTP and
// cluster listeners). Bun has no getrlimit; Linux shows the limit in /proc/self/limits.
import { readFileSync } from "node:fs";

/** The soft limit on open descriptors, or undefined where it cannot be read (not Linux). */
export function openFileLimit(
  read: () => string = () => readFileSync("/proc/self/limits", "utf8"),
): number | undefined {
  let text: string;
  try {
    text = read();
  } catch {
    return undefined;
  }
  const m = /^Max open files\s+(\S+)/m.exec(text);
  if (!m || m[1] === "unlimited") return undefined;
  const n = Number(m[1]);
  return Number.isSafeInteger(n) && n > 0 ? n : undefined;
}

/**
 * Descriptors kept back from client connections: 10% of the limit, at least 1024, but never more
 * than half of it (a 1024 limit leaves 512 for connections).
 */
export function descriptorReserve(limit: number): number {
  return Math.max(Math.ceil(limit * 0.1), Math.min(1024, Math.floor(limit / 2)));
}

/** `wanted` connections, lowered so the reserve stays free under the descriptor limit. */
export function cappedConnections(
  wanted: number,
  limit: number | undefined,
): { max: number; capped: boolean } {
  if (limit === undefined) return { max: wanted, capped: false };
  const room = Math.max(1, limit - descriptorReserve(limit));
  return room < wanted ? { max: room, capped: true } : { max: wanted, capped: false };
}

/**
 * Descriptors kept for the broker's own files beside partition segments and connections: SQLite,
 * the listeners, cluster links, temp files of checkpoints, directory syncs, files opened to be
 * memory-mapped, and the syncs in flight the partition-file bound lets through.
 */
export const OWN_FILES_RESERVE = 640;

/**
 * Descriptors partition files (segments) may hold at once: what the limit leaves after the
 * client connections allowed and the broker's own files (at least 64). Undefined: no bound (the
 * limit is unknown or unlimited).
 */
export function partitionFileBudget(
  limit: number | undefined,
  maxConnections: number,
): number | undefined {
  if (limit === undefined) return undefined;
  return Math.max(64, limit - maxConnections - OWN_FILES_RESERVE);
}
