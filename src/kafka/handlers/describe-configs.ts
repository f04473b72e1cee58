// DescribeConfigs. Topic configs come from the one registry in meta (values, sources,
// synonyms, types, docs). Broker configs are static (flags and --topic-default), so they can be
// described but not altered over the wire.
import {
  ApiKey,
  type DescribeConfigsRequest,
  type DescribeConfigsResponse,
  ErrorCode,
} from "../../protocol/kafka/index.ts";
import { errorOf, type KafkaContext, type RequestContext } from "../context.ts";
import { defineHandler } from "../api.ts";
import { CONFIG_SOURCE_CODE, TOPIC_CONFIGS } from "../../meta/index.ts";
import { BROKER, TOPIC } from "./shared/config-resources.ts";

interface ConfigRow {
  name: string;
  value: string | null;
  readOnly: boolean;
  source: number;
  sensitive: boolean;
  typeCode: number;
  doc: string;
  synonyms: { name: string; value: string | null; source: number }[];
}

function topicRows(ctx: KafkaContext, name: string): ConfigRow[] {
  const t = ctx.meta.getTopic(name);
  if (!t) {
    throw Object.assign(new Error(`unknown topic ${name}`), {
      errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
    });
  }
  return ctx.meta.describeTopicConfigsOf(t).map((d) => ({
    name: d.name,
    value: d.sensitive ? null : d.value,
    readOnly: d.readOnly,
    source: d.sourceCode,
    sensitive: d.sensitive,
    typeCode: d.typeCode,
    doc: d.doc,
    synonyms: d.synonyms.map((s) => ({
      name: s.name,
      value: s.value,
      source: CONFIG_SOURCE_CODE[s.source],
    })),
  }));
}

/** Broker configs: the broker-level topic defaults, then the listener's own static settings. */
function brokerRows(ctx: KafkaContext): ConfigRow[] {
  const rows: ConfigRow[] = TOPIC_CONFIGS.map((d) => {
    const set = Object.hasOwn(ctx.meta.topicDefaults, d.name);
    const value = set ? ctx.meta.topicDefaults[d.name] : d.default;
    return staticRow(
      d.brokerSynonym,
      value,
      d.default,
      set,
      { string: 2, int: 3, long: 5, list: 7 }[d.type],
      d.doc,
    );
  });
  for (const s of ctx.brokerSettings) {
    // Flags: only a value other than the default tells that one was given.
    const set = s.value !== s.defaultValue;
    rows.push(staticRow(s.name, s.value, s.defaultValue, set, s.typeCode, s.doc));
  }
  return rows;
}

/**
 * A read-only broker config: one set at start is a static setting, listed with Kafka's default
 * under it as a synonym (Kafka's order); one not set is the default.
 */
function staticRow(
  name: string,
  value: string,
  defaultValue: string,
  set: boolean,
  typeCode: number,
  doc: string,
): ConfigRow {
  const source = set ? CONFIG_SOURCE_CODE.STATIC_BROKER_CONFIG : CONFIG_SOURCE_CODE.DEFAULT_CONFIG;
  const synonyms = [{ name, value, source }];
  if (set) synonyms.push({ name, value: defaultValue, source: CONFIG_SOURCE_CODE.DEFAULT_CONFIG });
  return { name, value, readOnly: true, source, sensitive: false, typeCode, doc, synonyms };
}

export function describeConfigs(
  ctx: KafkaContext,
  req: RequestContext<DescribeConfigsRequest>,
): DescribeConfigsResponse {
  const v = req.header.apiVersion;
  const synonyms = req.body.includeSynonyms;
  const docs = req.body.includeDocumentation;
  const results = req.body.resources.map((r): DescribeConfigsResponse["results"][number] => {
    const { resourceType, resourceName } = r;
    const keys = r.configurationKeys;
    const base = {
      resourceType,
      resourceName,
      errorCode: 0,
      errorMessage: null as string | null,
      configs: [],
    };
    let rows: ConfigRow[];
    try {
      if (resourceType === TOPIC) rows = topicRows(ctx, resourceName);
      else if (resourceType === BROKER) {
        if (resourceName !== "" && resourceName !== String(ctx.meta.nodeId)) {
          return {
            ...base,
            errorCode: ErrorCode.INVALID_REQUEST,
            errorMessage: `this is broker ${ctx.meta.nodeId}, not ${resourceName}`,
          };
        }
        rows = brokerRows(ctx);
      } else {
        return {
          ...base,
          errorCode: ErrorCode.INVALID_REQUEST,
          errorMessage: `resource type ${resourceType} is not supported`,
        };
      }
    } catch (e) {
      return { ...base, ...errorOf(e) };
    }
    if (keys !== null && keys.length > 0) rows = rows.filter((c) => keys.includes(c.name));
    return {
      ...base,
      configs: rows.map((c) => ({
        name: c.name,
        value: c.value,
        readOnly: c.readOnly,
        // v0 only; later versions carry configSource instead.
        isDefault: v === 0 && c.source === CONFIG_SOURCE_CODE.DEFAULT_CONFIG,
        configSource: c.source,
        isSensitive: c.sensitive,
        synonyms: v >= 1 && synonyms ? c.synonyms : [],
        configType: c.typeCode,
        documentation: docs ? c.doc : null,
      })),
    };
  });
  return { throttleTimeMs: 0, results };
}

export default defineHandler({
  apiKey: ApiKey.DescribeConfigs,
  versions: [0, 4],
  handle: describeConfigs,
});
