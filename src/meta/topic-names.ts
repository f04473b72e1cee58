// Topic name rules, as Kafka's org.apache.kafka.common.internals.Topic applies them.
import { MetaError } from "./errors.ts";

export const MAX_TOPIC_NAME_LENGTH = 249;
const LEGAL = /^[a-zA-Z0-9._-]+$/;

/** Throws INVALID_TOPIC_EXCEPTION unless `name` is a legal topic name. */
export function validateTopicName(name: unknown): asserts name is string {
  if (typeof name !== "string") {
    throw new MetaError("INVALID_TOPIC_EXCEPTION", "Topic name must be a string");
  }
  if (name.length === 0) {
    throw new MetaError("INVALID_TOPIC_EXCEPTION", "Topic name is illegal, it can't be empty");
  }
  if (name === "." || name === "..") {
    throw new MetaError("INVALID_TOPIC_EXCEPTION", `Topic name cannot be "." or ".."`);
  }
  if (name.length > MAX_TOPIC_NAME_LENGTH) {
    throw new MetaError(
      "INVALID_TOPIC_EXCEPTION",
      `Topic name is illegal, it can't be longer than ${MAX_TOPIC_NAME_LENGTH} characters, topic name: ${
        name.slice(0, 64)
      }...`,
    );
  }
  if (!LEGAL.test(name)) {
    throw new MetaError(
      "INVALID_TOPIC_EXCEPTION",
      `Topic name ${
        JSON.stringify(name)
      } is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and '-'`,
    );
  }
}

/** Metric names replace '.' by '_', so Kafka refuses two topics that differ only there. */
export function unifyCollisionChars(name: string): string {
  return name.replaceAll(".", "_");
}

export function topicNamesCollide(a: string, b: string): boolean {
  return a !== b && unifyCollisionChars(a) === unifyCollisionChars(b);
}

/** Topics whose names start with "__" are Kafka-internal by convention. */
export function isInternalTopicName(name: string): boolean {
  return name === "__consumer_offsets" || name === "__transaction_state";
}
