/**
 * Numbers drawn from a sequence shared by every client through a keyed permutation
 * (serial-permutation.ts): the virtual account numbers and the dedicated account numbers and VRNs.
 * Permuted numbers never repeat each other, but one may equal a number given before serials were
 * permuted (until then the bare sequence value was the serial), so a number
 * some wallet already holds is passed over for the next value of the sequence. A number passed
 * over is never shown, so the look across clients tells the caller nothing about the others.
 */

/**
 * How many numbers in a row drawUnusedNumber passes over before it gives up. Only numbers given
 * before serials were permuted can be held, a tiny share of the 10^9 serials, so even two in a row
 * all but never happen; the bound stops a fault (a lookup that always answers "held") from
 * draining the sequence in an endless loop.
 */
export const unusedNumberAttemptsMax = 100;

export interface UnusedNumberDraw {
  /** Takes the next value of the shared sequence (nextSequenceValue in db/sequence.ts). */
  nextSequenceValue: () => Promise<bigint>;
  /** The serial of a sequence value: the value through the keyed permutation (permuteSerialFromOne). */
  serialFor: (sequenceValue: bigint) => bigint;
  /** The number that carries the serial. */
  format: (serial: bigint) => string;
  /** True when some wallet, of any client, already holds the number. */
  isTaken: (number: string) => Promise<boolean>;
  /** What the numbers are, for the error when every attempt was held ("virtual account number"). */
  description: string;
  /** At most this many draws (unusedNumberAttemptsMax unless told). */
  attemptsMax?: number;
}

/**
 * The first number, drawn value after value from the sequence, that no wallet holds. Throws (an
 * Error, a 500 to a request like any fault) when `attemptsMax` numbers in a row were held, and
 * passes on whatever the callbacks throw.
 */
export async function drawUnusedNumber(draw: UnusedNumberDraw): Promise<string> {
  const attemptsMax = draw.attemptsMax ?? unusedNumberAttemptsMax;
  for (let attempt = 0; attempt < attemptsMax; attempt++) {
    const number = draw.format(draw.serialFor(await draw.nextSequenceValue()));
    if (!(await draw.isTaken(number))) return number;
  }
  throw new Error(`no unused ${draw.description}: the last ${attemptsMax} drawn were all held already`);
}
