// Packaging: release checksums that `sha256sum -c` accepts, the systemd unit in docs/ as
// systemd-analyze reads it, and the container image's premise: the compiled binary (BROKER_BIN,
// which CI builds) runs as the image's unprivileged user (65532) in a root holding nothing but
// the shared libraries a distroless "cc" image has. Docker itself is not needed (nor run).
import { describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  chownSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { writeChecksums } from "../scripts/release.ts";
import { tempDir } from "./helpers/broker-process.ts";

const ROOT = join(import.meta.dir, "..");
const CHROOT = "/usr/sbin/chroot";

describe("release checksums", () => {
  test("SHA256SUMS is what sha256sum -c checks, and it catches a changed byte", () => {
    const dir = tempDir();
    writeFileSync(join(dir, "broker-1.0.0-linux-x64"), "x64 bytes");
    writeFileSync(join(dir, "broker-1.0.0-linux-arm64"), "arm64 bytes");
    writeChecksums(dir, ["broker-1.0.0-linux-x64", "broker-1.0.0-linux-arm64"]);
    const check = () =>
      spawnSync("sha256sum", ["-c", "SHA256SUMS"], { cwd: dir, encoding: "utf8" });
    const ok = check();
    expect(ok.status).toBe(0);
    expect(ok.stdout).toContain("broker-1.0.0-linux-arm64: OK");
    writeFileSync(join(dir, "broker-1.0.0-linux-x64"), "x64 bytez");
    expect(check().status).not.toBe(0);
    rmSync(dir, { recursive: true });
  });
});

describe("systemd unit", () => {
  test.skipIf(!existsSync("/usr/bin/systemd-analyze"))(
    "docs/broker.service has no key or value systemd-analyze refuses",
    () => {
      const dir = tempDir();
      // verify wants ExecStart's binary to exist.
      const unit = readFileSync(join(ROOT, "docs", "broker.service"), "utf8")
        .replace("ExecStart=/usr/local/bin/broker", `ExecStart=${process.execPath}`);
      writeFileSync(join(dir, "broker.service"), unit);
      const r = spawnSync("systemd-analyze", ["verify", "./broker.service"], {
        cwd: dir,
        encoding: "utf8",
      });
      expect(r.stdout + r.stderr).toBe("");
      rmSync(dir, { recursive: true });
    },
  );
});

describe("container image", () => {
  const dockerfile = readFileSync(join(ROOT, "Dockerfile"), "utf8");

  test("the Dockerfile runs what npm run build makes, as the image's unprivileged user", () => {
    expect(readFileSync(join(ROOT, "package.json"), "utf8")).toContain(
      '"build": "bun scripts/build.ts"',
    );
    expect(dockerfile).toMatch(/^RUN npm run build/m);
    expect(dockerfile).toContain("COPY --from=build /src/dist/broker /usr/local/bin/broker");
    expect(dockerfile).toContain('ENTRYPOINT ["/usr/local/bin/broker"]');
    expect(dockerfile).toMatch(/^FROM gcr\.io\/distroless\/cc-debian12:nonroot$/m);
    expect(dockerfile).toContain("--chown=65532:65532 /out/data /var/lib/broker");
    expect(dockerfile).toContain("ENV BROKER_DATA_DIR=/var/lib/broker");
  });

  const bin = process.env.BROKER_BIN;
  const root = process.getuid?.() === 0;
  test.skipIf(!bin || !root || !existsSync("/usr/bin/ldd") || !existsSync(CHROOT))(
    "the binary starts as uid 65532 in a root with only libc, libgcc_s and libstdc++",
    async () => {
      const dir = tempDir("broker-image-");
      chmodSync(dir, 0o755);
      // The libraries the binary links, plus what its CRC-32C addon (unpacked at run time)
      // needs: all in Debian's libc6, libgcc-s1 and libstdc++6, which the cc image has.
      const ldd = spawnSync("ldd", [bin!], { encoding: "utf8" }).stdout;
      const libs = [...ldd.matchAll(/(\/\S+\.so[.\d]*)/g)].map((m) => m[1]);
      const libdir = dirname(libs.find((l) => l.includes("libc.so"))!);
      for (const l of ["librt.so.1", "libgcc_s.so.1", "libstdc++.so.6"]) {
        if (existsSync(join(libdir, l))) libs.push(join(libdir, l));
      }
      for (const l of libs) {
        mkdirSync(join(dir, dirname(l)), { recursive: true });
        copyFileSync(l, join(dir, l));
      }
      for (const d of ["usr/local/bin", "var/lib/broker", "tmp", "proc", "etc"]) {
        mkdirSync(join(dir, d), { recursive: true });
      }
      chmodSync(join(dir, "tmp"), 0o1777);
      chownSync(join(dir, "var/lib/broker"), 65532, 65532);
      writeFileSync(
        join(dir, "etc/passwd"),
        "nonroot:x:65532:65532::/home/nonroot:/sbin/nologin\n",
      );
      copyFileSync(bin!, join(dir, "usr/local/bin/broker"));
      chmodSync(join(dir, "usr/local/bin/broker"), 0o755);
      expect(spawnSync("mount", ["-t", "proc", "proc", join(dir, "proc")]).status).toBe(0);
      try {
        const proc = Bun.spawn([
          CHROOT,
          "--userspec=65532:65532",
          dir,
          "/usr/local/bin/broker",
          ...["--data-dir", "/var/lib/broker", "--http-addr", "127.0.0.1:0"],
          ...["--kafka-addr", "127.0.0.1:0", "--cluster-addr", "127.0.0.1:0"],
        ], { stdout: "pipe", stderr: "pipe", env: {} });
        let err = "";
        const t0 = Date.now();
        const reader = (async () => {
          for await (const c of proc.stderr) err += new TextDecoder().decode(c);
        })();
        while (!err.includes('"broker started"') && Date.now() - t0 < 20_000) {
          if (proc.exitCode !== null) break;
          await Bun.sleep(50);
        }
        const started = JSON.parse(err.split("\n").find((l) => l.includes('"broker started"'))!);
        // The native CRC-32C loads (its addon is unpacked into the writable /tmp).
        expect(started.crc32c).toBe("native");
        const health = await fetch(`http://${started.http}/healthz`);
        expect(health.status).toBe(200);
        proc.kill("SIGTERM");
        expect(await proc.exited).toBe(0);
        await reader;
        expect(existsSync(join(dir, "var/lib/broker/meta.db"))).toBe(true);
      } finally {
        spawnSync("umount", [join(dir, "proc")]);
        rmSync(dir, { recursive: true, force: true });
      }
    },
    30_000,
  );
});
