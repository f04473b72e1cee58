// Buffered stdout for commands that print many lines: one write per 64 KiB instead of one per
// record, waiting for the pipe to drain, and a closed pipe (`| head`) ends the command quietly.
const FLUSH_AT = 64 * 1024;

let pipeClosed = false;
process.stdout.on?.("error", (e: NodeJS.ErrnoException) => {
  if (e.code === "EPIPE") {
    pipeClosed = true;
    process.exit(0);
  }
});

export class Output {
  #parts: string[] = [];
  #size = 0;

  push(s: string): void {
    this.#parts.push(s);
    this.#size += s.length;
  }

  /** Write when a buffer's worth has gathered. */
  async maybeFlush(): Promise<void> {
    if (this.#size >= FLUSH_AT) await this.flush();
  }

  async flush(): Promise<void> {
    if (this.#size === 0 || pipeClosed) return;
    const s = this.#parts.join("");
    this.#parts = [];
    this.#size = 0;
    if (!process.stdout.write(s)) {
      await new Promise<void>((resolve) => {
        const done = () => {
          process.stdout.off("drain", done);
          process.stdout.off("close", done);
          resolve();
        };
        process.stdout.on("drain", done);
        process.stdout.on("close", done);
      });
    }
  }
}
