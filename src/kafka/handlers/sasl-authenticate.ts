// SaslAuthenticate once a connection needs none (see sasl-handshake.ts): ILLEGAL_SASL_STATE, as
// Kafka answers a second authentication on a connection whose session does not expire
// (re-authentication, KIP-368, runs in sasl/gate.ts with --connections-max-reauth-ms).
import { ApiKey, ErrorCode } from "../../protocol/kafka/index.ts";
import { defineHandler } from "../api.ts";

export function saslAuthenticate() {
  return {
    errorCode: ErrorCode.ILLEGAL_SASL_STATE,
    errorMessage: "SaslAuthenticate request received after successful authentication " +
      "or on a listener without SASL",
    authBytes: new Uint8Array(0),
    sessionLifetimeMs: 0,
  };
}

export default defineHandler({
  apiKey: ApiKey.SaslAuthenticate,
  versions: [0, 2],
  handle: saslAuthenticate,
});
