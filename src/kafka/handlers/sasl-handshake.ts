// SaslHandshake once a connection needs none: after it authenticated, or on a listener without
// SASL. Kafka answers ILLEGAL_SASL_STATE then; the exchange itself runs in sasl/gate.ts before
// authentication, where this handler is never reached.
import { ApiKey, ErrorCode } from "../../protocol/kafka/index.ts";
import { defineHandler } from "../api.ts";

export function saslHandshake() {
  return { errorCode: ErrorCode.ILLEGAL_SASL_STATE, mechanisms: [] };
}

export default defineHandler({
  apiKey: ApiKey.SaslHandshake,
  versions: [0, 1],
  handle: saslHandshake,
});
