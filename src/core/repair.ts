// `broker topic repair` (docs/storage.md, "Damaged data and quarantine"): an operator's decision on
// a partition copy whose damaged acknowledged records recovery quarantined. Until one is made the
// copy refuses client writes, so the quarantined offsets are never given to new records. The
// choices: restore the files and restart (recovery verifies them), let a follower copy refetch the
// offsets from its leader (it does by itself), or give the records up: the decision recorded here
// (`"status": "skip"` in the partition's quarantine.json, durably) makes the next open of the log
// continue after the quarantined offsets, which stay a gap no record reuses.
import * as path from "node:path";
import { realFileIO } from "../storage/file-io.ts";
import {
  openEntry,
  type QuarantineEntry,
  readQuarantine,
  writeQuarantine,
} from "../storage/quarantine.ts";

/** Where this partition copy stands, as far as a decision goes. */
export interface CopyRole {
  nodeId: number;
  leader: number;
  replicas: readonly number[];
  isr: readonly number[];
}

/**
 * Why giving up a copy's quarantined records would be wrong, or undefined when it is the
 * operator's call. Other replicas may hold those records: a follower copy refetches them from its
 * leader, and a leading copy with other in-sync replicas should hand leadership to one of them
 * (giving up the records here would make every follower truncate them away). `force` overrides.
 */
export function lossRefusal(r: CopyRole, force: boolean): string | undefined {
  if (force) return undefined;
  if (r.leader !== r.nodeId && r.leader >= 0) {
    return `broker ${r.leader} leads this partition: this copy refetches the quarantined ` +
      "offsets from it and is writable again once it has them (watch the damage clear); " +
      "force gives them up anyway";
  }
  const others = r.isr.filter((id) => id !== r.nodeId);
  if (others.length > 0) {
    return `brokers ${others.join(", ")} are in sync and may hold these records: stop this ` +
      "broker so one of them leads (this copy then refetches from it); force gives them up " +
      "anyway";
  }
  return undefined;
}

export class NothingToRepairError extends Error {
  override readonly name = "NothingToRepairError";
}

/**
 * Records that the quarantined records of `<dataDir>/logs/<topic>-<partition>` are given up:
 * applied when the log next opens (the broker's next start). The entry as it was is returned.
 */
export async function acceptLoss(
  dataDir: string,
  topic: string,
  partition: number,
): Promise<QuarantineEntry> {
  const dir = path.join(dataDir, "logs", `${topic}-${partition}`);
  const io = realFileIO;
  const state = readQuarantine(io, dir);
  const open = openEntry(state);
  if (state === null || open === null) {
    throw new NothingToRepairError(`${topic}-${partition} has no quarantined offsets here`);
  }
  if (open.to === Number.MAX_SAFE_INTEGER) {
    // The marker did not parse (quarantine.ts): its extent is unknown, so no offset to go on at.
    throw new NothingToRepairError(
      `${open.reason} (${path.join("logs", `${topic}-${partition}`)})`,
    );
  }
  if (open.status === "skip") return open; // decided before: the same answer again
  await writeQuarantine(io, dir, {
    v: 1,
    entries: state.entries.map((e) => (e === open ? { ...e, status: "skip" } : e)),
  });
  return open;
}
