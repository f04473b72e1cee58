// Read-benchmark sink (a child of scripts/bench/storage.ts): accepts loopback TCP connections,
// reads and discards everything, and prints one JSON line per closed connection with the bytes
// received and this process's CPU during it. Our reader and dd deliver to the same sink, so
// the receiving cost is the same on both sides. Exits when its stdin closes.
export {};

interface Conn {
  bytes: number;
  cpu: NodeJS.CpuUsage;
}

const server = Bun.listen<Conn>({
  hostname: "127.0.0.1",
  port: 0,
  socket: {
    open(s) {
      s.data = { bytes: 0, cpu: process.cpuUsage() };
    },
    data(s, chunk) {
      s.data.bytes += chunk.length;
    },
    close(s) {
      const c = process.cpuUsage(s.data.cpu);
      console.log(JSON.stringify({ bytes: s.data.bytes, cpuMs: (c.user + c.system) / 1000 }));
    },
    error(s, e) {
      console.log(JSON.stringify({ bytes: s.data?.bytes ?? 0, error: String(e) }));
    },
  },
});
console.log(JSON.stringify({ port: server.port }));
for await (const _ of Bun.stdin.stream()) {
  // keep running until the parent closes stdin
}
server.stop(true);
process.exit(0);
