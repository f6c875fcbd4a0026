/**
 * A random id from the whole positive int64 range (1 to 2^63 - 1): the contract has the client choose ids, so a
 * create can be retried as is. Most ids drawn are past 2^53, where a JavaScript number would round them.
 */
export function newPlantId(): bigint {
  const [high = 0, low = 0] = crypto.getRandomValues(new Uint32Array(2));
  const id = (BigInt(high & 0x7fffffff) << 32n) | BigInt(low);
  return id === 0n ? newPlantId() : id;
}

/**
 * A new Idempotency-Key: 128 random bits as four numbers and dashes (visible ASCII, as the header takes). From
 * getRandomValues, not crypto.randomUUID, which browsers give secure contexts (https, localhost) only.
 */
export const newIdempotencyKey = (): string => crypto.getRandomValues(new Uint32Array(4)).join('-');
