/**
 * Golden coverage of every advertised (API, version, direction). Requests are covered by a frame
 * captured from a real client (golden/requests.json); responses by a hand-written frame or by a
 * real client's decoder (kafkajs, @platformatic/kafka) reading our bytes. KNOWN_GAPS is the exact
 * missing set: the test fails if a gap closes (remove it here) or a new one appears.
 */
import { expect, test } from "bun:test";
import { apiName } from "../../../src/protocol/kafka/index.ts";
import { ADVERTISED } from "../../../src/kafka/handlers/index.ts";
import GOLDEN from "./golden/requests.json";
import { HANDWRITTEN_RESPONSES } from "./handwritten-responses.ts";
import { kafkajsResponseCases } from "./kafkajs-cases.ts";
import { platformaticResponseCases } from "./platformatic-cases.ts";

// No client this suite can run sends ElectLeaders (kafkajs, kafka-python 2.0, librdkafka 2.0 and
// @platformatic/kafka have no API for it): its requests are checked against frames written by
// hand from the spec in test/kafka/elect-leaders.test.ts instead.
// SaslAuthenticate v2 (librdkafka 2.0 and kafkajs send v1, kafka-python bare tokens) and the
// user APIs 50/51 (no client here sends them) are checked with frames of our codec against a
// real broker in test/cluster/users.test.ts, not yet against a captured client's bytes.
// The ACL APIs 29-31: kafkajs decodes our responses (kafkajs-cases) and its admin client's requests
// are served end to end in test/kafka/acls.test.ts; no captured request frames yet.
// AlterPartitionReassignments v1 (KIP-860): @platformatic/kafka's encoder writes the requests a
// real broker serves in test/kafka/handlers/alter-partition-reassignments-v1.test.ts.
export const KNOWN_GAPS: string[] = [
  "DescribeAcls v0 request",
  "DescribeAcls v1 request",
  "CreateAcls v0 request",
  "CreateAcls v1 request",
  "DeleteAcls v0 request",
  "DeleteAcls v1 request",
  "SaslAuthenticate v2 request",
  "ElectLeaders v0 request",
  "ElectLeaders v1 request",
  "ElectLeaders v2 request",
  "AlterPartitionReassignments v0 request",
  "AlterPartitionReassignments v1 request",
  "ListPartitionReassignments v0 request",
  "DescribeUserScramCredentials v0 request",
  "AlterUserScramCredentials v0 request",
];

test("every advertised (api, version, direction) has a golden case, or is a known gap", () => {
  const requests = new Set(
    (GOLDEN as { apiKey: number; apiVersion: number }[]).map((f) => `${f.apiKey}/${f.apiVersion}`),
  );
  const responses = new Set([
    ...HANDWRITTEN_RESPONSES.map((r) => `${r.apiKey}/${r.version}`),
    ...kafkajsResponseCases().map(([k, v]) => `${k}/${v}`),
    ...platformaticResponseCases().map(([k, v]) => `${k}/${v}`),
  ]);
  const missing: string[] = [];
  for (const [apiKey, [min, max]] of [...ADVERTISED].sort((a, b) => a[0] - b[0])) {
    for (let v = min; v <= max; v++) {
      if (!requests.has(`${apiKey}/${v}`)) missing.push(`${apiName(apiKey)} v${v} request`);
      if (!responses.has(`${apiKey}/${v}`)) missing.push(`${apiName(apiKey)} v${v} response`);
    }
  }
  expect(missing).toEqual(KNOWN_GAPS);
});
