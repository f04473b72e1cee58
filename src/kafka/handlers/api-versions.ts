// ApiVersions: the served APIs and their version ranges, listed from the declarations the
// registry (index.ts) hands in, this one included. Requests above its range never reach it:
// the dispatcher answers them with the KIP-511 fallback so the client can downgrade.
import { ApiKey } from "../../protocol/kafka/index.ts";
import { defineHandler, type KafkaApi } from "../api.ts";

export const API_VERSIONS_RANGE = [0, 4] as const;

/** The ApiVersions declaration for a registry serving `others` besides ApiVersions itself. */
export function apiVersionsApi(others: readonly KafkaApi[]): KafkaApi {
  const listed = [
    ...others.map((a) => ({
      apiKey: a.apiKey,
      minVersion: a.versions[0],
      maxVersion: a.versions[1],
    })),
    {
      apiKey: ApiKey.ApiVersions,
      minVersion: API_VERSIONS_RANGE[0],
      maxVersion: API_VERSIONS_RANGE[1],
    },
  ].sort((a, b) => a.apiKey - b.apiKey);
  return defineHandler({
    apiKey: ApiKey.ApiVersions,
    versions: API_VERSIONS_RANGE,
    handle: () => ({ errorCode: 0, apiKeys: listed, throttleTimeMs: 0 }),
  });
}
