// An SVG chart of the run (no browser, no dependencies): throughput bars with min–max whiskers,
// broker CPU per million records, and W5 latency percentiles on a log scale.
import { type Stat, stat } from "./report.ts";
import type { Results } from "./workloads.ts";

const SERIES = [
  { key: "ours", name: "ours", color: "#2563eb" },
  { key: "ceiling", name: "client ceiling (kcat → mock)", color: "#9ca3af" },
  { key: "nats", name: "NATS JetStream", color: "#16a34a" },
  { key: "redis", name: "Redis Streams", color: "#dc2626" },
] as const;

type SeriesKey = (typeof SERIES)[number]["key"];

interface Group {
  label: string;
  values: Partial<Record<SeriesKey, Stat | undefined>>;
}

const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
const fmt = (
  x: number,
) => (x >= 100 ? Math.round(x).toString() : x >= 10 ? x.toFixed(0) : x.toFixed(1));

function bars(
  x0: number,
  y0: number,
  w: number,
  h: number,
  title: string,
  unit: string,
  groups: Group[],
  scale: number,
): string {
  const out: string[] = [];
  let max = 0;
  for (const g of groups) {
    for (const s of Object.values(g.values)) if (s) max = Math.max(max, s.max / scale);
  }
  if (max <= 0) max = 1;
  const plotY = y0 + 28;
  const plotH = h - 70;
  out.push(`<text x="${x0}" y="${y0 + 14}" font-weight="bold">${esc(title)}</text>`);
  for (let i = 0; i <= 4; i++) {
    const v = (max * i) / 4;
    const y = plotY + plotH - (plotH * i) / 4;
    out.push(`<line x1="${x0 + 50}" x2="${x0 + w}" y1="${y}" y2="${y}" stroke="#e5e7eb"/>`);
    out.push(`<text x="${x0 + 45}" y="${y + 4}" text-anchor="end" font-size="10">${fmt(v)}</text>`);
  }
  out.push(`<text x="${x0}" y="${plotY - 12}" font-size="10">${esc(unit)}</text>`);
  const gw = (w - 60) / groups.length;
  groups.forEach((g, gi) => {
    const present = SERIES.filter((s) => g.values[s.key] !== undefined);
    const bw = Math.min(22, (gw - 10) / Math.max(1, SERIES.length));
    const gx = x0 + 55 + gi * gw + (gw - bw * present.length) / 2;
    present.forEach((s, si) => {
      const st = g.values[s.key]!;
      const bh = (plotH * (st.med / scale)) / max;
      const x = gx + si * bw;
      const y = plotY + plotH - bh;
      out.push(
        `<rect x="${x.toFixed(1)}" y="${y.toFixed(1)}" width="${(bw - 2).toFixed(1)}" height="${
          bh.toFixed(1)
        }" fill="${s.color}"/>`,
      );
      if (st.n > 1) {
        const cx = x + (bw - 2) / 2;
        const yMin = plotY + plotH - (plotH * (st.min / scale)) / max;
        const yMax = plotY + plotH - (plotH * (st.max / scale)) / max;
        out.push(
          `<line x1="${cx.toFixed(1)}" x2="${cx.toFixed(1)}" y1="${yMin.toFixed(1)}" y2="${
            yMax.toFixed(1)
          }" stroke="#111" stroke-width="1"/>`,
        );
      }
      out.push(
        `<text x="${(x + (bw - 2) / 2).toFixed(1)}" y="${
          (y - 3).toFixed(1)
        }" text-anchor="middle" font-size="9">${fmt(st.med / scale)}</text>`,
      );
    });
    const lines = g.label.split("\n");
    lines.forEach((l, li) => {
      out.push(
        `<text x="${(x0 + 55 + gi * gw + gw / 2).toFixed(1)}" y="${
          plotY + plotH + 14 + li * 12
        }" text-anchor="middle" font-size="10">${esc(l)}</text>`,
      );
    });
  });
  return out.join("\n");
}

function latencyPanel(x0: number, y0: number, w: number, h: number, res: Results): string {
  const out: string[] = [];
  const pct = [["p50_us", "p50"], ["p99_us", "p99"], ["p999_us", "p99.9"]] as const;
  const sys = [["ours", SERIES[0].color], ["nats", SERIES[2].color]] as const;
  const vals: number[] = [];
  for (const [s] of sys) {
    for (const [k] of pct) for (const v of res.get(`W5.${s}.${k}`)) vals.push(v / 1000);
  }
  out.push(
    `<text x="${x0}" y="${
      y0 + 14
    }" font-weight="bold">W5 end-to-end latency at a fixed rate (ms, log scale; lower is better)</text>`,
  );
  if (vals.length === 0) return out.join("\n");
  const lo = Math.pow(10, Math.floor(Math.log10(Math.max(0.01, Math.min(...vals)))));
  const hi = Math.pow(10, Math.ceil(Math.log10(Math.max(...vals) * 1.01)));
  const plotY = y0 + 28;
  const plotH = h - 70;
  const yOf = (v: number) =>
    plotY + plotH -
    (plotH * (Math.log10(Math.max(v, lo)) - Math.log10(lo))) / (Math.log10(hi) - Math.log10(lo));
  for (let d = lo; d <= hi * 1.001; d *= 10) {
    const y = yOf(d);
    out.push(
      `<line x1="${x0 + 50}" x2="${x0 + w}" y1="${y.toFixed(1)}" y2="${
        y.toFixed(1)
      }" stroke="#e5e7eb"/>`,
    );
    out.push(
      `<text x="${x0 + 45}" y="${(y + 4).toFixed(1)}" text-anchor="end" font-size="10">${
        d >= 1 ? d : d.toFixed(2)
      }</text>`,
    );
  }
  const gw = (w - 60) / pct.length;
  pct.forEach(([k, label], gi) => {
    sys.forEach(([s, color], si) => {
      const st = stat(res.get(`W5.${s}.${k}`).map((v) => v / 1000));
      if (!st) return;
      const bw = 26;
      const x = x0 + 55 + gi * gw + gw / 2 - bw + si * bw;
      const y = yOf(st.med);
      out.push(
        `<rect x="${x.toFixed(1)}" y="${y.toFixed(1)}" width="${bw - 2}" height="${
          (plotY + plotH - y).toFixed(1)
        }" fill="${color}"/>`,
      );
      if (st.n > 1) {
        const cx = x + (bw - 2) / 2;
        out.push(
          `<line x1="${cx.toFixed(1)}" x2="${cx.toFixed(1)}" y1="${yOf(st.min).toFixed(1)}" y2="${
            yOf(st.max).toFixed(1)
          }" stroke="#111"/>`,
        );
      }
      out.push(
        `<text x="${(x + (bw - 2) / 2).toFixed(1)}" y="${
          (y - 3).toFixed(1)
        }" text-anchor="middle" font-size="9">${fmt(st.med)}</text>`,
      );
    });
    out.push(
      `<text x="${(x0 + 55 + gi * gw + gw / 2).toFixed(1)}" y="${
        plotY + plotH + 14
      }" text-anchor="middle" font-size="10">${label}</text>`,
    );
  });
  return out.join("\n");
}

export function chartSvg(res: Results, subtitle: string): string {
  const g = (k: string) => stat(res.get(k));
  const W = 980;
  const produce: Group[] = [
    ["W1 (a)\n100 B, 1 part.", "W1", "a"],
    ["W1 (b) fsync\n100 B, 1 part.", "W1", "b"],
    ["W2 (a)\n8 partitions", "W2", "a"],
    ["W2 (b) fsync\n8 partitions", "W2", "b"],
    ["W3 (a)\n1 KiB", "W3", "a"],
    ["W3 (b) fsync\n1 KiB", "W3", "b"],
  ].map(([label, id, m]) => ({
    label,
    values: {
      ours: g(`${id}${m}.ours.rps`),
      ceiling: m === "a" ? g(`${id}.ceiling.rps`) : undefined,
      nats: m === "a" ? g(`${id}a.nats.rps`) : undefined,
      redis: g(`${id}${m}.redis.rps`),
    },
  }));
  produce.push({
    label: "W4 consume\nfrom the start",
    values: { ours: g("W4.ours.rps"), nats: g("W4.nats.rps"), redis: g("W4.redis.rps") },
  });
  const cpu: Group[] = [
    ["W1 (a)", "W1a"],
    ["W1 (b)", "W1b"],
    ["W2 (a)", "W2a"],
    ["W3 (a)", "W3a"],
    ["W4", "W4"],
  ].map(([label, k]) => ({
    label,
    values: {
      ours: g(`${k}.ours.cpuPerM`),
      nats: k.endsWith("b") ? undefined : g(`${k}.nats.cpuPerM`),
      redis: g(`${k}.redis.cpuPerM`),
    },
  }));
  const legend = SERIES.map((s, i) =>
    `<rect x="${20 + i * 220}" y="46" width="12" height="12" fill="${s.color}"/>` +
    `<text x="${36 + i * 220}" y="56" font-size="12">${esc(s.name)}</text>`
  ).join("\n");
  const H = 1040;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="20" y="22" font-size="16" font-weight="bold">Kafka-compatible broker (ours) vs NATS JetStream and Redis Streams</text>`,
    `<text x="20" y="38" font-size="11" fill="#4b5563">${esc(subtitle)}</text>`,
    legend,
    bars(
      20,
      70,
      W - 40,
      380,
      "Throughput (thousand records/s; median, whiskers min–max; higher is better)",
      "k rec/s",
      produce,
      1000,
    ),
    bars(
      20,
      460,
      W - 40,
      280,
      "Server CPU seconds per million records (lower is better)",
      "CPU s",
      cpu,
      1,
    ),
    latencyPanel(20, 750, W - 40, 280, res),
    `</svg>`,
  ].join("\n");
}
