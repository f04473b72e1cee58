// A small Prometheus registry: labelled counters and histograms kept in maps, plus collectors
// that compute gauges at scrape time (watermarks, lag), so nothing is sampled in the background.
// Shared by the HTTP API and the Kafka listener (per-API latency via `kafkaRequestSeconds`).

type Labels = Record<string, string>;

/** Label sets are keyed by their rendered text: one map lookup per observation. */
function labelText(labels: Labels): string {
  // A plain loop: this runs on every request (HTTP and Kafka), so no intermediate arrays.
  let out = "";
  for (const k in labels) out += `${out === "" ? "" : ","}${k}="${escapeLabel(labels[k])}"`;
  return out;
}

/** `{labels}`, or nothing for a series without labels (`up 1`, not `up{} 1`). */
function braces(text: string): string {
  return text === "" ? "" : `{${text}}`;
}

const NEEDS_ESCAPE = /[\\\n"]/;

export function escapeLabel(v: string): string {
  if (!NEEDS_ESCAPE.test(v)) return v;
  return v.replaceAll("\\", "\\\\").replaceAll("\n", "\\n").replaceAll('"', '\\"');
}

/** Bounds the number of label sets per metric, so hostile label values cannot grow memory. */
const MAX_SERIES = 10_000;

export class Counter {
  readonly #values = new Map<string, number>();
  constructor(readonly name: string, readonly help: string) {}

  inc(labels: Labels, n = 1): void {
    const k = labelText(labels);
    const cur = this.#values.get(k);
    if (cur === undefined && this.#values.size >= MAX_SERIES) return;
    this.#values.set(k, (cur ?? 0) + n);
  }

  get(labels: Labels): number {
    return this.#values.get(labelText(labels)) ?? 0;
  }

  render(out: string[]): void {
    out.push(`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} counter`);
    for (const [k, v] of this.#values) out.push(`${this.name}${braces(k)} ${v}`);
  }
}

/** Seconds; from 0.5 ms (an in-memory answer) to 60 s (a long-poll). */
export const LATENCY_BUCKETS = [
  0.0005,
  0.001,
  0.0025,
  0.005,
  0.01,
  0.025,
  0.05,
  0.1,
  0.25,
  0.5,
  1,
  2.5,
  5,
  10,
  30,
  60,
];

interface HistogramSeries {
  counts: number[];
  sum: number;
  count: number;
}

export class Histogram {
  readonly #series = new Map<string, HistogramSeries>();
  constructor(
    readonly name: string,
    readonly help: string,
    readonly buckets: readonly number[] = LATENCY_BUCKETS,
  ) {}

  observe(labels: Labels, v: number): void {
    const k = labelText(labels);
    let s = this.#series.get(k);
    if (!s) {
      if (this.#series.size >= MAX_SERIES) return;
      s = { counts: new Array(this.buckets.length).fill(0), sum: 0, count: 0 };
      this.#series.set(k, s);
    }
    for (let i = 0; i < this.buckets.length; i++) if (v <= this.buckets[i]) s.counts[i]++;
    s.sum += v;
    s.count++;
  }

  render(out: string[]): void {
    out.push(`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`);
    for (const [k, s] of this.#series) {
      const sep = k === "" ? "" : ",";
      this.buckets.forEach((b, i) =>
        out.push(`${this.name}_bucket{${k}${sep}le="${b}"} ${s.counts[i]}`)
      );
      out.push(`${this.name}_bucket{${k}${sep}le="+Inf"} ${s.count}`);
      out.push(`${this.name}_sum${braces(k)} ${s.sum}`);
      out.push(`${this.name}_count${braces(k)} ${s.count}`);
    }
  }
}

/**
 * A family computed at scrape time: a gauge, or a counter kept elsewhere (a service's running
 * total, e.g. the controller's elections) rendered with its counter type.
 */
export interface GaugeFamily {
  name: string;
  help: string;
  /** Default "gauge". */
  type?: "gauge" | "counter";
  samples: { labels: Labels; value: number }[];
}

/** A gauge family with no samples yet (filled in as a scrape collects them). */
export const gaugeFamily = (name: string, help: string): GaugeFamily => ({
  name,
  help,
  samples: [],
});

export class Metrics {
  readonly #counters: Counter[] = [];
  readonly #histograms: Histogram[] = [];
  readonly #collectors: (() => GaugeFamily[])[] = [];

  readonly bytesIn = this.counter(
    "broker_topic_bytes_in_total",
    "record bytes produced, per topic",
  );
  readonly recordsIn = this.counter("broker_topic_records_in_total", "records produced, per topic");
  readonly bytesOut = this.counter(
    "broker_topic_bytes_out_total",
    "record bytes served to consumers, per topic",
  );
  readonly recordsOut = this.counter(
    "broker_topic_records_out_total",
    "records served to consumers, per topic",
  );
  readonly httpRequests = this.counter(
    "broker_http_requests_total",
    "HTTP requests by route and status",
  );
  readonly httpSeconds = this.histogram(
    "broker_http_request_duration_seconds",
    "HTTP request latency by route",
  );
  readonly kafkaSeconds = this.histogram(
    "broker_kafka_request_duration_seconds",
    "Kafka request latency by API",
  );
  readonly kafkaErrors = this.counter(
    "broker_kafka_request_errors_total",
    "error codes in Kafka responses, by API and error (one per topic, partition or group " +
      "answered with it)",
  );
  readonly kafkaFailed = this.counter(
    "broker_kafka_requests_failed_total",
    "Kafka requests answered by closing the connection (unparseable, unsupported API or " +
      "version, handler failure), by API",
  );

  counter(name: string, help: string): Counter {
    const c = new Counter(name, help);
    this.#counters.push(c);
    return c;
  }

  histogram(name: string, help: string, buckets?: readonly number[]): Histogram {
    const h = new Histogram(name, help, buckets);
    this.#histograms.push(h);
    return h;
  }

  collect(fn: () => GaugeFamily[]): void {
    this.#collectors.push(fn);
  }

  /** Produced records on one topic (any front end). */
  produced(topic: string, records: number, bytes: number): void {
    this.recordsIn.inc({ topic }, records);
    this.bytesIn.inc({ topic }, bytes);
  }

  /** Records served to a consumer (any front end). */
  consumed(topic: string, records: number, bytes: number): void {
    this.recordsOut.inc({ topic }, records);
    this.bytesOut.inc({ topic }, bytes);
  }

  /** Prometheus text exposition format 0.0.4. */
  render(): string {
    const out: string[] = [];
    for (const c of this.#counters) c.render(out);
    for (const h of this.#histograms) h.render(out);
    for (const fn of this.#collectors) {
      for (const f of fn()) {
        out.push(`# HELP ${f.name} ${f.help}`, `# TYPE ${f.name} ${f.type ?? "gauge"}`);
        for (const s of f.samples) out.push(`${f.name}${braces(labelText(s.labels))} ${s.value}`);
      }
    }
    return out.join("\n") + "\n";
  }
}
