/** Which @platformatic/kafka 2.12.1 per-version response parsers exist, by (apiKey, version). */
import * as plt from "@platformatic/kafka";
import { apiName, codecVersions, declaredApiKeys } from "../../../src/protocol/kafka/index.ts";

/** What one of platformatic's per-version API modules (e.g. `joinGroupV9`) exports. */
export interface PltApiModule {
  parseResponse: (
    correlationId: number,
    apiKey: number,
    apiVersion: number,
    reader: InstanceType<typeof plt.Reader>,
  ) => unknown;
  api: ((connection: unknown, ...args: unknown[]) => void) & { key: number; version: number };
}

/** The package exports each module as `<camelCase API name>V<version>`, as its clients look them up. */
export function pltModule(apiKey: number, version: number): PltApiModule | undefined {
  const name = apiName(apiKey);
  const id = `${name[0].toLowerCase()}${name.slice(1)}V${version}`;
  const mod = (plt as unknown as Record<string, Partial<PltApiModule> | undefined>)[id];
  if (typeof mod?.parseResponse !== "function" || typeof mod.api !== "function") return undefined;
  if (mod.api.key !== apiKey || mod.api.version !== version) return undefined;
  return mod as PltApiModule;
}

/** Parsers that exist but do not return the wire fields, so cannot be checked; and why. */
export const PLT_SKIPPED: Record<string, string> = {
  "2/0": "ListOffsets v0 keeps only the first old-style offset (v0 is not advertised)",
};

/** (apiKey, version) pairs, over every version the codec knows, that platformatic can parse. */
export function platformaticResponseCases(): [number, number][] {
  const out: [number, number][] = [];
  for (const apiKey of declaredApiKeys()) {
    const [min, max] = codecVersions(apiKey)!;
    for (let v = min; v <= max; v++) {
      if (pltModule(apiKey, v) && !PLT_SKIPPED[`${apiKey}/${v}`]) out.push([apiKey, v]);
    }
  }
  return out;
}
