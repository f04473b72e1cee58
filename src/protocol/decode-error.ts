// The base of the wire codecs' decode errors (Kafka's, SWIM's): bytes from the network that are
// not a valid message, said with where they went wrong.

/** Input bytes that do not decode: what is wrong and at which byte (-1: no one byte). */
export class DecodeError extends Error {
  constructor(message: string, readonly offset = -1) {
    super(offset >= 0 ? `${message} (at byte ${offset})` : message);
  }
}
