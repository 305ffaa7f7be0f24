/**
 * Assertions are for bugs, never for client input: a failed assertion fails the request with a
 * 500 and is logged loudly. Expected outcomes use AppError instead.
 */
export class AssertionError extends Error {
  override name = 'AssertionError';
}

export function assert(condition: unknown, message: string): asserts condition {
  if (!condition) throw new AssertionError(message);
}
