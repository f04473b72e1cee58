/** Which kafkajs 2.2.4 response decoders exist, by (apiKey, version). */
import { existsSync } from "node:fs";
import { join } from "node:path";

export const KJS = join(import.meta.dir, "../../../node_modules/kafkajs/src/protocol/requests");

export const KAFKAJS_DIRS: Record<number, string> = {
  0: "produce",
  1: "fetch",
  2: "listOffsets",
  3: "metadata",
  8: "offsetCommit",
  9: "offsetFetch",
  10: "findCoordinator",
  11: "joinGroup",
  12: "heartbeat",
  13: "leaveGroup",
  14: "syncGroup",
  15: "describeGroups",
  16: "listGroups",
  17: "saslHandshake",
  18: "apiVersions",
  19: "createTopics",
  20: "deleteTopics",
  21: "deleteRecords",
  22: "initProducerId",
  32: "describeConfigs",
  33: "alterConfigs",
  36: "saslAuthenticate",
  37: "createPartitions",
  42: "deleteGroups",
  45: "alterPartitionReassignments",
  46: "listPartitionReassignments",
};

/** (apiKey, version) pairs whose responses kafkajs decodes in this test. */
export function kafkajsResponseCases(): [number, number][] {
  const out: [number, number][] = [];
  for (const [k, dir] of Object.entries(KAFKAJS_DIRS)) {
    for (let v = 0; v <= 12; v++) {
      if (existsSync(join(KJS, dir, `v${v}`, "response.js"))) out.push([Number(k), v]);
    }
  }
  return out;
}
