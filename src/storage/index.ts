// Public surface of the storage module.
export * from "./types.ts";
export { type FileHandle, type FileIO, realFileIO } from "./file-io.ts";
export { CrashFileIO, seededRandom } from "./crash-fs.ts";
export { SegmentLogStore, type SegmentStoreOptions } from "./log-store.ts";
export { MemoryLogStore, type MemoryStoreOptions } from "./memory-store.ts";
export type { RecoveryInfo, SegmentPartitionLog } from "./partition-log.ts";
