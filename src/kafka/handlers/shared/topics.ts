// What the topic administration APIs share.
import { num } from "../../context.ts";

/** Kafka's words for a topic given twice in one request. */
export const DUPLICATE_NAME = "Duplicate topic name.";

export function brokerIds(v: unknown): number[] {
  return Array.isArray(v) ? v.map((b) => num(b)) : [];
}
