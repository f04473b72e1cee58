// What the topic administration APIs share.

/** Kafka's words for a topic given twice in one request. */
export const DUPLICATE_NAME = "Duplicate topic name.";
