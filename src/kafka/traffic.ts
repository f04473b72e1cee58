// Per-topic traffic for /metrics: Kafka moves whole record batches, so records are counted from
// the batch headers (never decoding records, which may be compressed) and bytes are the batch
// bytes as they cross the wire.
import {
  BATCH_LOG_OVERHEAD,
  OFF_BATCH_LENGTH,
  OFF_RECORDS_COUNT,
} from "../protocol/record-batch.ts";

export interface Traffic {
  records: number;
  bytes: number;
}

/** Records and bytes of the complete batches in `data`; a trailing partial batch is not counted. */
export function batchTraffic(data: Uint8Array): Traffic {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  let records = 0;
  let at = 0;
  // Each step advances by at least the batch header, so the loop is bounded by the input size.
  while (at + OFF_RECORDS_COUNT + 4 <= data.length) {
    const size = BATCH_LOG_OVERHEAD + view.getInt32(at + OFF_BATCH_LENGTH);
    if (size < OFF_RECORDS_COUNT + 4 || at + size > data.length) break;
    records += Math.max(0, view.getInt32(at + OFF_RECORDS_COUNT));
    at += size;
  }
  return { records, bytes: at };
}
