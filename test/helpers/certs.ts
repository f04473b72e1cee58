// Test certificates made at test time with the openssl command line: a CA, a server certificate
// for 127.0.0.1/localhost signed by it, a client certificate signed by it, and a client
// certificate of another CA (one the broker must refuse); for the cluster port, a broker
// certificate (server and client at once) of each CA. Nothing is checked in.
import { join } from "node:path";
import { tempDir } from "./broker-process.ts";

export interface TestCerts {
  dir: string;
  caCert: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
  /** Subject of clientCert as the broker names it. */
  clientSubject: string;
  rogueCert: string;
  rogueKey: string;
  /** A broker's cluster-port certificate (server and client, 127.0.0.1) signed by the CA. */
  peerCert: string;
  peerKey: string;
  /** The same of another CA: a peer the cluster must refuse. */
  roguePeerCert: string;
  roguePeerKey: string;
}

export function hasOpenssl(): boolean {
  return Bun.spawnSync(["openssl", "version"], { stdout: "pipe", stderr: "pipe" }).exitCode === 0;
}

function openssl(dir: string, args: string[]): void {
  const r = Bun.spawnSync(["openssl", ...args], { cwd: dir, stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) {
    throw new Error(`openssl ${args.join(" ")} failed: ${r.stderr.toString()}`);
  }
}

/** EC P-256 keys: generated in milliseconds (RSA 2048 takes ~100 ms each). */
function keyAndCsr(dir: string, name: string, subject: string): void {
  openssl(dir, ["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", `${name}.key`]);
  openssl(dir, ["req", "-new", "-key", `${name}.key`, "-subj", subject, "-out", `${name}.csr`]);
}

function ca(dir: string, name: string, subject: string): void {
  openssl(dir, ["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", `${name}.key`]);
  openssl(dir, [
    "req",
    "-x509",
    "-new",
    "-key",
    `${name}.key`,
    "-subj",
    subject,
    "-days",
    "2",
    "-out",
    `${name}.pem`,
  ]);
}

function sign(dir: string, name: string, caName: string, ext: string): void {
  Bun.write(join(dir, `${name}.ext`), ext);
  openssl(dir, [
    "x509",
    "-req",
    "-in",
    `${name}.csr`,
    "-CA",
    `${caName}.pem`,
    "-CAkey",
    `${caName}.key`,
    "-CAcreateserial",
    "-days",
    "2",
    "-extfile",
    `${name}.ext`,
    "-out",
    `${name}.pem`,
  ]);
}

export async function makeTestCerts(): Promise<TestCerts> {
  const dir = tempDir("broker-certs-");
  ca(dir, "ca", "/CN=broker test CA");
  ca(dir, "rogue-ca", "/CN=someone else's CA");
  keyAndCsr(dir, "server", "/CN=localhost");
  await Bun.write(
    join(dir, "server.ext"),
    "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n",
  );
  sign(
    dir,
    "server",
    "ca",
    "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n",
  );
  keyAndCsr(dir, "client", "/O=tests/CN=alice-client");
  sign(dir, "client", "ca", "extendedKeyUsage=clientAuth\n");
  keyAndCsr(dir, "rogue", "/CN=mallory");
  sign(dir, "rogue", "rogue-ca", "extendedKeyUsage=clientAuth\n");
  const peerExt = "subjectAltName=IP:127.0.0.1,DNS:localhost\n" +
    "extendedKeyUsage=serverAuth,clientAuth\n";
  keyAndCsr(dir, "peer", "/CN=broker");
  sign(dir, "peer", "ca", peerExt);
  keyAndCsr(dir, "rogue-peer", "/CN=broker");
  sign(dir, "rogue-peer", "rogue-ca", peerExt);
  const p = (f: string) => join(dir, f);
  return {
    dir,
    caCert: p("ca.pem"),
    serverCert: p("server.pem"),
    serverKey: p("server.key"),
    clientCert: p("client.pem"),
    clientKey: p("client.key"),
    clientSubject: "CN=alice-client,O=tests",
    rogueCert: p("rogue.pem"),
    rogueKey: p("rogue.key"),
    peerCert: p("peer.pem"),
    peerKey: p("peer.key"),
    roguePeerCert: p("rogue-peer.pem"),
    roguePeerKey: p("rogue-peer.key"),
  };
}

/** The flags of a broker whose cluster port speaks mutual TLS with the test CA. */
export function clusterTlsArgs(c: TestCerts): string[] {
  return [
    "--cluster-tls-cert",
    c.peerCert,
    "--cluster-tls-key",
    c.peerKey,
    "--cluster-tls-ca",
    c.caCert,
  ];
}
