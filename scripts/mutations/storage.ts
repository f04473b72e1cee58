// Planted bugs in storage durability and recovery (src/storage), run against the storage crash
// campaign (test/sim/storage/scenario.ts: one partition log on the simulated file system, power
// losses and kills, truncations, checkpoints, clean restarts, flipped bytes; invariants S1-S3).
import type { Mutation } from "./types.ts";

const LOG = "src/storage/partition-log.ts";
const SEGMENT = "src/storage/segment.ts";

export const STORAGE: Mutation[] = [
  {
    id: "storage-recovery-skips-crc",
    campaign: "storage-crash",
    file: SEGMENT,
    find: "if (verify && computeBatchCrc(this.bytes(pos, pos + size, limit), 0, size) !== " +
      "h.crc) {",
    replace: "if (false) {",
    why: "Recovery's scan checks batch structure but not the CRC: a torn batch whose header " +
      "landed (its body zeros) is kept as data.",
  },
  {
    id: "storage-read-skips-crc",
    campaign: "storage-crash",
    file: SEGMENT,
    find: "if (computeBatchCrc(view, p, size) !== dv.getUint32(p + 17)) {",
    replace: "if (false) {",
    why: "Reads serve batches without checking their CRC: bytes damaged on disk reach clients.",
  },
  {
    id: "storage-checkpoint-claims-unsynced",
    campaign: "storage-crash",
    file: LOG,
    find: "recoveryPoint: Math.min(this.commit.durableOffset, this.logEndOffset()),",
    replace: "recoveryPoint: this.logEndOffset(),",
    why: "The recovery checkpoint claims everything written as synced: after a power loss the " +
      "lost unsynced tail reads as damaged synced data (quarantine, writes refused).",
  },
  {
    id: "storage-truncation-not-synced",
    campaign: "storage-crash",
    file: LOG,
    find: "      // The cut must be on disk before anything is appended over it.\n" +
      "      await this.syncAll();\n",
    replace: "",
    why: "truncateTo returns before the cut is synced: a power loss brings truncated records " +
      "back.",
  },
  {
    id: "storage-truncation-keeps-checkpoint",
    campaign: "storage-crash",
    file: LOG,
    find: "if (this.diskRecoveryPoint > offset || this.cleanOnDisk) await this.lowerCheckpoint();",
    replace: "",
    why: "A truncation does not first lower the checkpoint's recovery point: offsets rewritten " +
      "after the cut are still claimed synced.",
  },
  {
    id: "storage-durable-mark-survives-truncation",
    campaign: "storage-crash",
    file: "src/storage/group-commit.ts",
    find: "    this.durableOffset = Math.min(this.durableOffset, offset);\n",
    replace: "",
    why: "Group commit keeps its durable offset across a truncation: appends over the cut are " +
      "acknowledged (acks=all) without a sync.",
  },
  {
    id: "storage-damage-cut-as-torn",
    campaign: "storage-crash",
    file: "src/storage/recovery.ts",
    find: "if (bad !== null && damage !== null) {",
    replace: "if (false) {",
    why: "Recovery cuts damaged synced data as if it were a torn tail (deleting the later " +
      "segments) instead of quarantining it.",
  },
  {
    id: "storage-no-unclean-mark",
    campaign: "storage-crash",
    file: LOG,
    find: "    if (this.cleanOnDisk) {\n      this.cleanOnDisk = false;\n",
    replace: "    if (false) {\n      this.cleanOnDisk = false;\n",
    why: "The first change after a clean open does not replace the clean checkpoint: after a " +
      "power loss recovery trusts it and drops everything written since, acknowledged or not.",
  },
];
