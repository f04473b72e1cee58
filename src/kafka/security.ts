// What the Kafka listener requires of clients, from the flags: TLS (certificate, key, optional
// client CA) and SASL (mechanisms, checked against the users in the metadata), plus the password
// checker the HTTP API's Basic logins share with SASL/PLAIN.
import { readFileSync } from "node:fs";
import type { BrokerConfig } from "../config.ts";
import type { Logger } from "../log.ts";
import type { MetadataStore } from "../meta/index.ts";
import { isScramMechanism } from "./sasl/scram.ts";
import { type CredentialSource, PasswordChecker } from "./sasl/password.ts";
import type { KafkaSaslOptions, KafkaTlsOptions } from "./server.ts";

export interface KafkaSecurity {
  tls: KafkaTlsOptions | undefined;
  sasl: KafkaSaslOptions | undefined;
  /** Password logins against the users (SASL/PLAIN and HTTP Basic). */
  passwords: PasswordChecker;
  /** Kafka's name for the listener: PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL. */
  protocol: string;
}

export class SecurityConfigError extends Error {}

/** A PEM file's text, read at start; a missing or wrong file is a SecurityConfigError. */
export function pem(path: string, what: string, kind: RegExp): string {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    throw new SecurityConfigError(`${what}: cannot read ${path}: ${(e as Error).message}`);
  }
  if (!kind.test(text)) {
    throw new SecurityConfigError(`${what}: ${path} holds no PEM ${kind.source}`);
  }
  return text;
}

/** The users in the metadata, as SCRAM credentials. */
export function metadataCredentials(meta: MetadataStore): CredentialSource {
  return {
    scramCredential: (user, mechanism) =>
      isScramMechanism(mechanism) ? meta.scramCredential(user, mechanism) : undefined,
  };
}

export function kafkaSecurity(
  cfg: Pick<
    BrokerConfig,
    | "kafkaTlsCert"
    | "kafkaTlsKey"
    | "kafkaTlsCa"
    | "kafkaSasl"
    | "kafkaSaslMechanisms"
    | "connectionsMaxReauthMs"
  >,
  meta: MetadataStore,
  log: Logger,
): KafkaSecurity {
  const credentials = metadataCredentials(meta);
  const passwords = new PasswordChecker(credentials);
  const tls: KafkaTlsOptions | undefined = cfg.kafkaTlsCert && cfg.kafkaTlsKey
    ? {
      cert: pem(cfg.kafkaTlsCert, "--kafka-tls-cert", /CERTIFICATE/),
      key: pem(cfg.kafkaTlsKey, "--kafka-tls-key", /PRIVATE KEY/),
      ...(cfg.kafkaTlsCa ? { ca: pem(cfg.kafkaTlsCa, "--kafka-tls-ca", /CERTIFICATE/) } : {}),
    }
    : undefined;
  const sasl: KafkaSaslOptions | undefined = cfg.kafkaSasl === "required"
    ? {
      mechanisms: cfg.kafkaSaslMechanisms,
      credentials,
      passwords,
      maxReauthMs: cfg.connectionsMaxReauthMs,
    }
    : undefined;
  const protocol = `${sasl ? "SASL_" : ""}${tls ? "SSL" : "PLAINTEXT"}`;
  if (sasl?.mechanisms.includes("PLAIN") && !tls) {
    log.warn(
      "SASL/PLAIN is enabled on a Kafka listener without TLS: passwords cross the network in " +
        "clear text; add --kafka-tls-cert/--kafka-tls-key or drop PLAIN from " +
        "--kafka-sasl-mechanisms",
      {},
    );
  }
  if (sasl && meta.listScramCredentials().length === 0) {
    log.warn(
      "SASL is required on the Kafka listener but there are no users yet: add one with " +
        "'broker user add NAME' (or POST /users)",
      {},
    );
  }
  return { tls, sasl, passwords, protocol };
}
