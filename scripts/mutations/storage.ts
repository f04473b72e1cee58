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
    find: "as records.\n      if (computeBatchCrc(view, p, size) !== dv.getUint32(p + 17)) {",
    replace: "as records.\n      if (false) {",
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
    find:
      "if (this.diskRecoveryPoint > offset || this.cleanOnDisk || this.checkpointWrites > 0) {\n" +
      "        await this.lowerCheckpoint();\n      }",
    replace: "",
    why: "A truncation does not first lower the checkpoint's recovery point: offsets rewritten " +
      "after the cut are still claimed synced.",
  },
  {
    id: "storage-cut-ignores-checkpoint-in-flight",
    campaign: "storage-crash",
    tests: ["test/storage/quarantine.test.ts"],
    file: LOG,
    find: " || this.checkpointWrites > 0) {",
    replace: ") {",
    why: "A truncation lowers the checkpoint only when the one on disk is above the cut: a " +
      "write in flight, computed before the cut, lands above it.",
  },
  {
    id: "storage-cut-inside-batch-checkpoint",
    campaign: "storage-crash",
    tests: ["test/storage/quarantine.test.ts"],
    file: LOG,
    find: "    offset = this.batchStartOf(offset);\n",
    replace: "",
    why: "A truncation inside a batch lowers the checkpoint to the offset asked for, while the " +
      "cut removes the whole batch: the checkpoint claims cut offsets as synced.",
  },
  {
    id: "storage-sync-round-past-cut",
    campaign: "storage-crash",
    file: "src/storage/group-commit.ts",
    find: "    this.ceiling = Math.min(this.ceiling, offset);\n",
    replace: "",
    why: "A sync round that starts or settles while a truncation cuts raises the durable offset " +
      "over bytes about to go, and a checkpoint written then claims them.",
  },
  {
    id: "storage-bound-before-crc",
    campaign: "storage-crash",
    tests: ["test/storage/damaged-read.test.ts"],
    file: SEGMENT,
    find: "      if (last >= upper) {\n        if (first >= 0) break;\n",
    replace: "      if (last >= upper) {\n        break;\n",
    why: "A read compares a batch's last offset with its bound before checking the batch: a " +
      "flipped lastOffsetDelta reads as 'no data yet' below the log end, for ever.",
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
