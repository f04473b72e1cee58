// How often the host pauses this machine's CPU: a loop that only reads the clock (no syscall, no
// allocation, no I/O) and counts the gaps between two readings. On a quiet host there are none;
// on a busy VM host, gaps of 1-9 ms appear with no steal time reported, and every latency tail
// measured here (the group-commit p99 above all) grows with them.
// Run: bun scripts/bench/host-pauses.ts [SECONDS]   (default 2)

export interface HostPauses {
  seconds: number;
  over03ms: number;
  over1ms: number;
  maxMs: number;
}

export function hostPauses(seconds = 2): HostPauses {
  let last = performance.now();
  const end = last + seconds * 1000;
  let over03ms = 0;
  let over1ms = 0;
  let maxMs = 0;
  while (last < end) {
    const t = performance.now();
    const gap = t - last;
    if (gap > 0.3) over03ms++;
    if (gap > 1) over1ms++;
    if (gap > maxMs) maxMs = gap;
    last = t;
  }
  return { seconds, over03ms, over1ms, maxMs };
}

export function describePauses(p: HostPauses): string {
  return `host pauses in a ${p.seconds} s spin: ${p.over03ms} over 0.3 ms, ${p.over1ms} over 1 ms, ` +
    `longest ${p.maxMs.toFixed(2)} ms`;
}

if (import.meta.main) {
  console.log(describePauses(hostPauses(Number(process.argv[2]) || 2)));
}
