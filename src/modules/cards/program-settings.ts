import { Type, type Static } from 'typebox';
import { validationError } from '../../platform/http/errors.js';

/**
 * The settings of a card program the processor reads (contract §12.1): cooperative
 * authorization, hold expiry, over-capture tolerance and limits. Each is one JSON document; a
 * PATCH replaces a document whole. Amounts are integers in minor units of the program's currency
 * (USD cents), as the contract names them (`…Minor`).
 */

const amountMinorMax = 1_000_000_000_000; // USD 10 billion: far above any card amount, well inside a safe integer.
const AmountMinor = (description: string) => Type.Integer({ minimum: 1, maximum: amountMinorMax, description });

/** An MCC ("5812") or an inclusive range of them ("3501-3999"). */
const MccPattern = '^[0-9]{4}(-[0-9]{4})?$';
const MccList = Type.Array(Type.String({ pattern: MccPattern, maxLength: 9, description: 'an MCC ("5812") or an inclusive range ("3501-3999")' }), {
  maxItems: 100,
});

export const CoopAuthSettingsSchema = Type.Object(
  {
    timeoutMs: Type.Integer({ minimum: 250, maximum: 4000, description: "the decision's window, counted from the message's arrival: the decision request is sent with what is left of it after the system's first transaction, and a stand-in decides at its end" }),
    standIn: Type.Object(
      {
        mode: Type.Union([Type.Literal('DECLINE'), Type.Literal('APPROVE'), Type.Literal('APPROVE_UP_TO')], {
          description: 'what happens when the client does not answer in time or answers badly',
        }),
        responseCode: Type.String({ pattern: '^[0-9A-Z]{2}$', maxLength: 2, description: 'the DE39 code of a stand-in decline' }),
        maxAmountMinor: Type.Union([AmountMinor('APPROVE_UP_TO: the largest amount approved'), Type.Null()]),
      },
      { additionalProperties: false },
    ),
    partialApprovalEnabled: Type.Boolean(),
  },
  { additionalProperties: false, title: 'CardProgramCoopAuth' },
);
export type CoopAuthSettings = Static<typeof CoopAuthSettingsSchema>;

export const HoldExpirySettingsSchema = Type.Object(
  {
    defaultDays: Type.Integer({ minimum: 1, maximum: 31, description: 'days an authorization hold lives before it is released' }),
    extendedDays: Type.Integer({ minimum: 1, maximum: 31, description: 'the same for the MCCs of extendedMccs (lodging, car rental, cruise)' }),
    extendedMccs: MccList,
  },
  { additionalProperties: false, title: 'CardProgramHoldExpiry' },
);
export type HoldExpirySettings = Static<typeof HoldExpirySettingsSchema>;

export const OverCaptureSettingsSchema = Type.Object(
  {
    defaultPct: Type.Integer({ minimum: 0, maximum: 100, description: 'how far (percent of the hold) a completion may exceed it without being flagged' }),
    byMcc: Type.Array(
      Type.Object(
        {
          // At least one: an entry of no MCC would match nothing (until 2026-12-04 it was taken; found by an audit).
          mccs: Type.Array(MccList.items, { minItems: 1, maxItems: 100 }),
          pct: Type.Integer({ minimum: 0, maximum: 100 }),
          maxAmountMinor: Type.Optional(AmountMinor('a cap on the tolerated excess')),
        },
        { additionalProperties: false },
      ),
      { maxItems: 20 },
    ),
  },
  { additionalProperties: false, title: 'CardProgramOverCapture' },
);
export type OverCaptureSettings = Static<typeof OverCaptureSettingsSchema>;

export const LimitSettingsSchema = Type.Object(
  {
    perTransactionMinor: AmountMinor('the largest single authorization'),
    dailyMinor: AmountMinor('the most approved per card per day (the client\'s clock, UTC days)'),
    dailyCount: Type.Integer({ minimum: 1, maximum: 100_000, description: 'the most approvals per card per day' }),
  },
  { additionalProperties: false, title: 'CardProgramLimits' },
);
export type LimitSettings = Static<typeof LimitSettingsSchema>;

/** Lodging (7011, 3501–3999), car rental (7512, 7513, 3351–3500) and cruise lines (4411): research §3.4. */
const lodgingMccs = ['7011', '3501-3999'];
const vehicleRentalMccs = ['7512', '7513', '3351-3500'];
const cruiseMccs = ['4411'];

export const defaultHoldExpiry: HoldExpirySettings = {
  defaultDays: 7,
  extendedDays: 31,
  extendedMccs: [...lodgingMccs, ...vehicleRentalMccs, ...cruiseMccs],
};

/** Tips and fuel-like businesses 20 %, lodging and cruise 15 %, vehicle rental 15 % up to USD 75 (research §3.5). */
export const defaultOverCapture: OverCaptureSettings = {
  defaultPct: 0,
  byMcc: [
    { mccs: ['4121', '5812', '5813', '5814', '7230', '7298'], pct: 20 },
    { mccs: [...lodgingMccs, ...cruiseMccs], pct: 15 },
    { mccs: vehicleRentalMccs, pct: 15, maxAmountMinor: 7500 },
  ],
};

/** Not in the contract: USD 5,000 per authorization, USD 10,000 and 100 approvals per card per day. */
export const defaultLimits: LimitSettings = { perTransactionMinor: 500_000, dailyMinor: 1_000_000, dailyCount: 100 };

export const defaultCoopAuth: CoopAuthSettings = {
  timeoutMs: 2000,
  standIn: { mode: 'DECLINE', responseCode: '91', maxAmountMinor: null },
  partialApprovalEnabled: true,
};

function mccRangeOf(entry: string): [number, number] {
  const [from, to] = entry.split('-');
  return [Number(from), Number(to ?? from)];
}

/** Whether `mcc` ("5812") is one of `list` (single MCCs and ranges). */
export function mccIn(list: readonly string[], mcc: string): boolean {
  const value = Number(mcc);
  return list.some((entry) => {
    const [from, to] = mccRangeOf(entry);
    return value >= from && value <= to;
  });
}

/** 400 naming the later of two entries that share an MCC (`"3500"` in `"3000-3999"`, or one MCC twice). */
function refuseOverlaps(entries: readonly { entry: string; field: string }[]): void {
  const ranges = entries.map((item, order) => ({ ...item, order, range: mccRangeOf(item.entry) })).sort((a, b) => a.range[0] - b.range[0] || a.order - b.order);
  // Sorted by start, an entry overlaps an earlier one exactly when it starts at or before the
  // furthest end so far.
  let furthest = ranges[0];
  for (const current of ranges.slice(1)) {
    if (furthest && current.range[0] <= furthest.range[1]) {
      const [first, second] = furthest.order < current.order ? [furthest, current] : [current, furthest];
      const where = first.field === second.field ? '' : ` of ${first.field}`;
      throw validationError(second.field, `"${second.entry}" shares MCCs with "${first.entry}"${where}: name each MCC once`);
    }
    if (!furthest || current.range[1] > furthest.range[1]) furthest = current;
  }
}

/** Rules across fields, which the schemas cannot state; each failure names its field. */
export function checkSettings(settings: {
  coopAuth?: CoopAuthSettings | null | undefined;
  holdExpiry?: HoldExpirySettings | undefined;
  overCapture?: OverCaptureSettings | undefined;
  limits?: LimitSettings | undefined;
}): void {
  const { coopAuth, holdExpiry, overCapture, limits } = settings;
  if (coopAuth) {
    if (coopAuth.standIn.mode === 'APPROVE_UP_TO' && coopAuth.standIn.maxAmountMinor === null) {
      throw validationError('coopAuth.standIn.maxAmountMinor', 'is required when the stand-in mode is APPROVE_UP_TO');
    }
    if (coopAuth.standIn.mode !== 'APPROVE_UP_TO' && coopAuth.standIn.maxAmountMinor !== null) {
      throw validationError('coopAuth.standIn.maxAmountMinor', 'is only used by the stand-in mode APPROVE_UP_TO; send null');
    }
    if (coopAuth.standIn.responseCode === '00' || coopAuth.standIn.responseCode === '10') {
      throw validationError('coopAuth.standIn.responseCode', 'is the code of a stand-in decline; 00 and 10 approve');
    }
  }
  const mccLists: Array<[string, readonly string[]]> = [
    ...(holdExpiry ? [['holdExpiry.extendedMccs', holdExpiry.extendedMccs] as [string, readonly string[]]] : []),
    ...(overCapture?.byMcc.map((rule, index) => [`overCapture.byMcc[${index}].mccs`, rule.mccs] as [string, readonly string[]]) ?? []),
  ];
  for (const [field, list] of mccLists) {
    for (const entry of list) {
      const [from, to] = mccRangeOf(entry);
      if (from > to) throw validationError(field, `"${entry}" is a range whose start is after its end`);
    }
  }
  // An MCC named twice, in one list or in two over-capture rules, is refused: stored as sent, it
  // left which rule applies unsaid (the first that matches did; until 2026-12-08; found by an audit).
  if (holdExpiry) refuseOverlaps(holdExpiry.extendedMccs.map((entry) => ({ entry, field: 'holdExpiry.extendedMccs' })));
  if (overCapture) refuseOverlaps(overCapture.byMcc.flatMap((rule, index) => rule.mccs.map((entry) => ({ entry, field: `overCapture.byMcc[${index}].mccs` }))));
  if (holdExpiry && holdExpiry.extendedDays < holdExpiry.defaultDays) {
    throw validationError('holdExpiry.extendedDays', `must be at least defaultDays (${holdExpiry.defaultDays})`);
  }
  if (limits && limits.dailyMinor < limits.perTransactionMinor) {
    throw validationError('limits.dailyMinor', `must be at least perTransactionMinor (${limits.perTransactionMinor})`);
  }
}
