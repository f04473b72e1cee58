// InitProducerId for idempotent producers. Transactions are not implemented: a transactional
// id gets ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, which clients treat as fatal and report,
// rather than a retriable error they would loop on.
import {
  ApiKey,
  ErrorCode,
  type InitProducerIdRequest,
  type InitProducerIdResponse,
} from "../../protocol/kafka/index.ts";
import { defineHandler } from "../api.ts";
import type { KafkaContext, RequestContext } from "../context.ts";

export function initProducerId(
  ctx: KafkaContext,
  req: RequestContext<InitProducerIdRequest>,
): InitProducerIdResponse | Promise<InitProducerIdResponse> {
  const b = req.body;
  if (b.transactionalId !== null) {
    ctx.log.info("refused a transactional producer: transactions are not supported yet", {
      transactional_id: b.transactionalId,
      client_id: req.header.clientId,
    });
    return {
      throttleTimeMs: 0,
      errorCode: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
      producerId: -1,
      producerEpoch: -1,
    };
  }
  // Without a transactional id Kafka always hands out a fresh id (any given id/epoch is
  // ignored), so a restarted or bumped producer never collides with old sequence state.
  return ctx.producerIds.allocate().then(
    (producerId) => ({ throttleTimeMs: 0, errorCode: 0, producerId, producerEpoch: 0 }),
    (e) => {
      // Kafka answers so while its producer id manager waits for a block: clients retry.
      ctx.log.warn("no producer id block from the metadata log yet", { error: String(e) });
      return {
        throttleTimeMs: 0,
        errorCode: ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
        producerId: -1,
        producerEpoch: -1,
      };
    },
  );
}

export default defineHandler({
  apiKey: ApiKey.InitProducerId,
  versions: [0, 5],
  handle: initProducerId,
});
