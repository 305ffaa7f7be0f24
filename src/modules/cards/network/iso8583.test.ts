import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  bitmapOf,
  characterLength,
  checkIsoMessage,
  fieldDefinitions,
  fieldNumbersOf,
  Iso8583MalformedError,
  packedLengthMax,
  packIsoMessage,
  parseIsoMessage,
  parseKeyedIsoMessage,
  redactForEvent,
  toKeyedIsoMessage,
  unpackIsoMessage,
  type FieldDefinition,
  type IsoMessage,
} from './iso8583.js';
import { formatNetworkData, networkDataRefOf, retrievalReferenceNumber, StanSequence } from './identifiers.js';
import { expiryYyMm } from './pan.js';
import { formatMerchantNameLocation, parseAdditionalAmounts, parseOriginalDataElements, transmissionDateTime } from './subfields.js';

/** The field number an ISO8583_MALFORMED error names; fails the test when something else happens. */
function offendingField(run: () => unknown): number {
  try {
    run();
  } catch (error) {
    if (!(error instanceof Iso8583MalformedError)) throw error;
    expect(error.code).toBe('ISO8583_MALFORMED');
    expect(error.statusCode).toBe(400);
    expect(error.details).toEqual([{ field: String(error.fieldNumber), message: error.reason }]);
    expect(error.message).toContain(`field ${error.fieldNumber}`);
    return error.fieldNumber;
  }
  throw new Error('the message was accepted');
}

describe('public sample messages (research §1.9)', () => {
  it('moov-io 0400 reversal: secondary bitmap, empty LLVAR DE32, DE90', () => {
    const packed =
      '0400F23A400108418202000000400000000019111111111000000000018000000000003000001090806461003310011200909080996010060002000000000003430003948 03808110012000004096565733200000003000001360030003317000394809080646510000000003132020000331609080645190000000020000000000000';
    const message = unpackIsoMessage(packed);
    // The JSON twin published next to the .dat file (iso_reversal_message.json).
    expect(message).toEqual({
      isoMti: '0400',
      fields: {
        '2': '1111111110000000000',
        '3': '180000',
        '4': '000000030000',
        '7': '0109080646',
        '11': '100331',
        '12': '001120',
        '13': '0909',
        '15': '0809',
        '18': '9601',
        '32': '',
        '37': '600020000000',
        '42': '00003430003948 ',
        '48': '08110012000004096565733200000003000001',
        '49': '360',
        '55': '003317000394809080646510000000',
        '63': '132',
        '90': '020000331609080645190000000020000000000000',
      },
    });
    expect(packIsoMessage(message)).toBe(packed);
    expect(parseOriginalDataElements(message.fields['90'] ?? '')).toEqual({
      mti: '0200',
      stan: '003316',
      transmissionDateTime: '0908064519',
      acquirerId: '00000000200',
      forwardingId: '00000000000',
    });
  });

  it('moov-io 0200 financial request', () => {
    const packed = '0200323A40010841801038000000000000000004200508050113921208050420042251320720000010000001156040800411        01251146333156336000299';
    const message = unpackIsoMessage(packed);
    expect(message.fields).toEqual({
      '3': '380000',
      '4': '000000000000',
      '7': '0420050805',
      '11': '011392',
      '12': '120805',
      '13': '0420',
      '15': '0422',
      '18': '5132',
      '32': '2000001',
      '37': '000000115604',
      '42': '0800411        ',
      '48': '511463331563',
      '49': '360',
      '60': '99',
    });
    expect(packIsoMessage(message)).toBe(packed);
  });

  it('moov-io minimal 0100 (fields 2, 3, 4)', () => {
    const packed = '01007000000000000000164242424242424242123456000000000100';
    expect(unpackIsoMessage(packed)).toEqual({ isoMti: '0100', fields: { '2': '4242424242424242', '3': '123456', '4': '000000000100' } });
    expect(packIsoMessage(unpackIsoMessage(packed))).toBe(packed);
  });

  it('pyiso8583: secondary bitmap carrying only DE102', () => {
    const packed = '02008000000000000000000000000400000006111111';
    expect(unpackIsoMessage(packed)).toEqual({ isoMti: '0200', fields: { '102': '111111' } });
    expect(packIsoMessage({ isoMti: '0200', fields: { '102': '111111' } })).toBe(packed);
  });

  it('pyiso8583: a PAN of letters is refused, naming DE2', () => {
    expect(offendingField(() => unpackIsoMessage('0200600008000000000014cardholder PAN111111021'))).toBe(2);
  });

  it('EFTLab 0110: our bitmap for its fields equals its binary bitmap 72 38 00 81 02 E0 81 00', () => {
    const message: IsoMessage = {
      isoMti: '0110',
      fields: {
        '2': '4651234560308888',
        '3': '000000',
        '4': '000000000100',
        '7': '0310183306',
        '11': '000335',
        '12': '080310',
        '13': '1104',
        '25': '00',
        '32': '414243',
        '39': '00',
        '41': '80000001',
        '42': '811234567890101',
        '43': 'London'.padEnd(40, ' '),
        '49': '826',
        '56': '1510',
      },
    };
    const packed = packIsoMessage(message);
    expect(packed.slice(0, 20)).toBe('01107238008102E08100');
    expect(unpackIsoMessage(packed)).toEqual(message);
  });

  it('npm iso_8583 0100 (JSON, without its Postilion fields 123 and 127) validates and round-trips, DE52 as hex', () => {
    const message: IsoMessage = {
      isoMti: '0100',
      fields: {
        '2': '4761739001010119',
        '3': '000000',
        '4': '000000005000',
        '7': '0911131411',
        '12': '131411',
        '13': '0911',
        '14': '2212',
        '18': '4111',
        '22': '051',
        '23': '001',
        '25': '00',
        '26': '12',
        '32': '423935',
        '33': '111111111',
        '35': '4761739001010119D22122011758928889',
        '41': '12345678',
        '42': 'MOTITILL_000001',
        '43': 'My Termianl Business'.padEnd(40, ' '),
        '49': '404',
        '52': '7434F67813BAE545',
        '56': '1510',
      },
    };
    expect(parseIsoMessage(message)).toEqual(message);
    expect(unpackIsoMessage(packIsoMessage(message))).toEqual(message);
  });

  it('network management 0800: bitmap 2020000000800000 announces fields 3, 11 and 41', () => {
    expect(fieldNumbersOf('2020000000800000')).toEqual([3, 11, 41]);
    expect(unpackIsoMessage('08002020000000800000000000000001' + '29110001')).toEqual({
      isoMti: '0800',
      fields: { '3': '000000', '11': '000001', '41': '29110001' },
    });
  });
});

describe('constructed lifecycle vectors (research §1.9, same purchase)', () => {
  const lifecycle = {
    authorization:
      '01007238448108E080021642424242424242420000000000000025000315120000000123080000031558120710006123456507412000123TERM0001MERCHANT0000001JOES DINER             SAN FRANCISC CAUS840028VIS00000LC7Q2M9XK4TR8P1A0000',
    authorizationResponse:
      '0110723844810EE080021642424242424242420000000000000025000315120000000123080000031558120710006123456507412000123A1B2C300TERM0001MERCHANT0000001JOES DINER             SAN FRANCISC CAUS840028VIS00000LC7Q2M9XK4TR8P1A0000',
    completion:
      '0220F23844810CE0800200000040000000001642424242424242420000000000000030000317021500000789020000031758120710006123456507702000789A1B2C3TERM0001MERCHANT0000001JOES DINER             SAN FRANCISC CAUS840028VIS00000LC7Q2M9XK4TR8P1A0000010000012303151200000000012345600000000000',
    reversal:
      '0420F22040010CC0800200000040000000001642424242424242420000000000000025000315120500000124581206123456507412000123A1B2C3TERM0001MERCHANT0000001840028VIS00000LC7Q2M9XK4TR8P1A0000010000012303151200000000012345600000000000',
  };

  it('each message round-trips and carries the same networkDataRef', () => {
    for (const packed of Object.values(lifecycle)) {
      const message = unpackIsoMessage(packed);
      expect(packIsoMessage(message)).toBe(packed);
      expect(networkDataRefOf(message.fields['63'])).toBe('LC7Q2M9XK4TR8P1A');
    }
  });

  it('the completion and the reversal point at the 0100 through DE90', () => {
    for (const packed of [lifecycle.completion, lifecycle.reversal]) {
      const original = parseOriginalDataElements(unpackIsoMessage(packed).fields['90'] ?? '');
      expect(original).toMatchObject({ mti: '0100', stan: '000123', transmissionDateTime: '0315120000', acquirerId: '00000123456' });
    }
    expect(unpackIsoMessage(lifecycle.completion).fields['4']).toBe('000000003000');
  });

  it('the partial approval answers 10 with the approved amount in DE4 and the original in DE54 type 57', () => {
    const message = unpackIsoMessage(
      '0110722000000E0084021642424242424242420000000000000015000315120001000125507412000125Q9W8E7108400200057840C000000002500024VIS00000PA55PARTIAL00001',
    );
    expect(message.fields['39']).toBe('10');
    expect(message.fields['4']).toBe('000000001500');
    expect(parseAdditionalAmounts(message.fields['54'] ?? '')).toEqual([{ accountType: '00', amountType: '57', currencyNumeric: '840', amountMinor: 2500n }]);
  });
});

describe('bitmap', () => {
  it('is one 16-character bitmap with bit 1 clear when no field is above 64', () => {
    const packed = packIsoMessage({ isoMti: '0100', fields: { '3': '000000', '63': 'ABC' } });
    expect(packed.slice(4, 20)).toBe('2000000000000002');
    expect(packed.slice(20)).toBe('000000003ABC');
  });

  it('adds a secondary bitmap and sets bit 1 when a field above 64 is present', () => {
    const packed = packIsoMessage({ isoMti: '0420', fields: { '3': '000000', '95': '000000001000000000001000D00000000D00000000' } });
    expect(packed.slice(4, 36)).toBe('A0000000000000000000000200000000');
    expect(unpackIsoMessage(packed).fields['95']).toBe('000000001000000000001000D00000000D00000000');
  });

  it('bitmapOf and fieldNumbersOf are inverse for any set of fields 2–128 (65 excluded)', () => {
    const fieldNumber = fc.integer({ min: 2, max: 128 }).filter((number) => number !== 65);
    fc.assert(
      fc.property(fc.uniqueArray(fieldNumber, { maxLength: 40 }), (numbers) => {
        const bitmap = bitmapOf(numbers);
        expect(bitmap).toHaveLength(numbers.some((number) => number > 64) ? 32 : 16);
        expect(fieldNumbersOf(bitmap)).toEqual([...numbers].sort((left, right) => left - right));
      }),
    );
  });

  it('reads a lower-case hex bitmap', () => {
    expect(unpackIsoMessage('0100' + 'a000000000000000' + '0000000004000000' + '000000' + '010').fields).toEqual({ '3': '000000', '102': '0' });
  });
});

const printable = [...Array(95).keys()].map((code) => String.fromCharCode(code + 32));
const alphabets: Record<FieldDefinition['type'], string[]> = {
  n: [...'0123456789'],
  an: [...'0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz '],
  ans: printable,
  b: [...'0123456789ABCDEF'],
  z: [...'0123456789=D'],
  'x+n': [...'0123456789'],
};

function valueOf(definition: FieldDefinition): fc.Arbitrary<string> {
  const unit = fc.constantFrom(...alphabets[definition.type]);
  if (definition.type === 'x+n') {
    return fc.tuple(fc.constantFrom('C', 'D'), fc.string({ unit, minLength: definition.length, maxLength: definition.length })).map(([sign, digits]) => sign + digits);
  }
  const maximum = characterLength(definition);
  const minimum = definition.prefix === 'FIXED' ? maximum : (definition.minLength ?? 0);
  return fc.string({ unit, minLength: minimum, maxLength: maximum });
}

const validMessage: fc.Arbitrary<IsoMessage> = fc
  .tuple(fc.stringMatching(/^0\d{3}$/), fc.subarray([...fieldDefinitions.values()]))
  .chain(([isoMti, definitions]) =>
    fc.tuple(...definitions.map((definition) => valueOf(definition).map((value): [string, string] => [String(definition.number), value]))).map((entries) => ({
      isoMti,
      fields: Object.fromEntries(entries),
    })),
  );

describe('round trips', () => {
  it('any valid message survives pack → unpack, and its packed form survives unpack → pack', () => {
    fc.assert(
      fc.property(validMessage, (message) => {
        const packed = packIsoMessage(message);
        expect(unpackIsoMessage(packed)).toEqual(message);
        expect(packIsoMessage(unpackIsoMessage(packed))).toBe(packed);
      }),
      { numRuns: 300 },
    );
  });

  it('the JSON form survives JSON text and validation unchanged', () => {
    fc.assert(
      fc.property(validMessage, (message) => {
        expect(parseIsoMessage(JSON.parse(JSON.stringify(message)))).toEqual(message);
        expect(checkIsoMessage(message)).toEqual({ ok: true, message });
      }),
      { numRuns: 200 },
    );
  });

  it('the moov-style keyed form ("0" = MTI) converts both ways, accepting a matching "1" bitmap', () => {
    fc.assert(
      fc.property(validMessage, (message) => {
        const keyed = toKeyedIsoMessage(message);
        expect(keyed['0']).toBe(message.isoMti);
        expect(parseKeyedIsoMessage(keyed)).toEqual(message);
        expect(parseKeyedIsoMessage({ ...keyed, '1': bitmapOf(Object.keys(message.fields).map(Number)).toLowerCase() })).toEqual(message);
      }),
      { numRuns: 100 },
    );
  });

  it('every strict prefix of a packed message is refused as malformed', () => {
    fc.assert(
      fc.property(
        validMessage.map((message) => packIsoMessage(message)),
        fc.nat(),
        (packed, cut) => {
          const prefix = packed.slice(0, cut % packed.length);
          expect(offendingField(() => unpackIsoMessage(prefix))).toBeGreaterThanOrEqual(0);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('arbitrary text is either read or refused as ISO8583_MALFORMED, never another error', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 300 }), fc.stringMatching(/^0[0-9]{3}[0-9A-F]{16}[0-9A-Za-z ]{0,120}$/)), (text) => {
        try {
          unpackIsoMessage(text);
        } catch (error) {
          expect(error).toBeInstanceOf(Iso8583MalformedError);
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe('malformed JSON form: the error names the field', () => {
  const base = { isoMti: '0100', fields: { '2': '4111111111111111', '3': '000000', '4': '000000001000' } };
  const withField = (key: string, value: unknown): unknown => ({ ...base, fields: { ...base.fields, [key]: value } });

  it.each([
    ['an MTI with a letter', { ...base, isoMti: '01A0' }, 0],
    ['an MTI of the 1993 version', { ...base, isoMti: '1100' }, 0],
    ['an MTI that is a number', { ...base, isoMti: 100 }, 0],
    ['a message that is not an object', 'hello', 0],
    ['an unknown property next to isoMti and fields', { ...base, extra: true }, 0],
    ['fields that are an array', { ...base, fields: [] }, 1],
    ['a key that is not a field number', withField('pan', '1'), 1],
    ['a key with a leading zero', withField('03', '000000'), 1],
    ['a key above 128', withField('129', 'X'), 1],
    ['a bitmap "1" that disagrees with the fields', withField('1', '7000000000000001'), 1],
    ['a field outside the layout (DE21)', withField('21', '840'), 21],
    ['the tertiary bitmap indicator (DE65)', withField('65', '0'), 65],
    ['a PAN shorter than 8 digits', withField('2', '4111111'), 2],
    ['a PAN longer than 19 digits', withField('2', '41111111111111111111'), 2],
    ['a PAN with a space', withField('2', '4111 1111 1111 1111'), 2],
    ['a processing code one digit short', withField('3', '00000'), 3],
    ['a number instead of a string', withField('3', 0), 3],
    ['an amount with a decimal point', withField('4', '0000000010.0'), 4],
    ['an unpadded amount', withField('4', '1000'), 4],
    ['an RRN with a dash (an)', withField('37', '5074-2000123'), 37],
    ['a merchant name with a line break (ans)', withField('43', 'JOES DINER\n'.padEnd(40, ' ')), 43],
    ['a merchant name of 39 characters', withField('43', 'X'.repeat(39)), 43],
    ['PIN data that is not hex (b)', withField('52', '7434F67813BAE54G'), 52],
    ['PIN data of 8 characters instead of 16 hex', withField('52', '7434F678'), 52],
    ['a fee without its C/D sign (x+n)', withField('28', '000000150'), 28],
    ['track 2 with a letter other than D (z)', withField('35', '4761739001010119X2212'), 35],
    ['DE54 longer than 120 characters', withField('54', '0'.repeat(121)), 54],
    ['DE90 of 41 digits', withField('90', '0'.repeat(41)), 90],
  ])('%s', (_name, input, field) => {
    expect(offendingField(() => parseIsoMessage(input))).toBe(field);
    expect(checkIsoMessage(input)).toMatchObject({ ok: false, fieldNumber: field });
  });

  it('packing validates first', () => {
    expect(offendingField(() => packIsoMessage({ isoMti: '0100', fields: { '4': '12' } }))).toBe(4);
  });

  it('the keyed form names field 0 for a missing MTI', () => {
    expect(offendingField(() => parseKeyedIsoMessage({ '3': '000000' }))).toBe(0);
  });

  it('a corrupted digit in any fixed numeric field is reported at that field', () => {
    const numericFixed = [...fieldDefinitions.values()].filter((definition) => definition.type === 'n' && definition.prefix === 'FIXED');
    fc.assert(
      fc.property(validMessage, fc.constantFrom(...numericFixed), fc.nat(), (message, definition, position) => {
        const value = '0'.repeat(definition.length);
        const at = position % value.length;
        const corrupted = `${value.slice(0, at)}X${value.slice(at + 1)}`;
        const input = { ...message, fields: { ...message.fields, [String(definition.number)]: corrupted } };
        expect(offendingField(() => parseIsoMessage(input))).toBe(definition.number);
      }),
      { numRuns: 200 },
    );
  });
});

describe('malformed wire form: the error names the field and the reason', () => {
  it.each([
    ['a message shorter than an MTI', '010', 0, /ends inside the MTI/],
    ['a non-numeric MTI', '01X07000000000000000', 0, /4 digits/],
    ['a message that ends in the bitmap', '01007000', 1, /ends inside the bitmap/],
    ['a bitmap with a non-hex character', '01007000000000000G00', 1, /16 hex characters/],
    ['bit 1 set but the secondary bitmap missing', '0100F000000000000000', 1, /ends inside the bitmap/],
    ['bit 1 set and an empty secondary bitmap', '0100A0000000000000000000000000000000000000', 1, /secondary bitmap, but it is empty/],
    ['a bit for a field outside the layout (DE5)', '01000800000000000000000000001000', 5, /not a field/],
    ['a bit for DE65 in the secondary bitmap', '010080000000000000008000000000000000', 65, /not a field/],
    ['an LL prefix with a letter', '010040000000000000001A4111111111111111', 2, /prefix must be 2 digits/],
    ['an LL prefix above the maximum', '0100400000000000000020' + '4'.repeat(20), 2, /at most 19 characters; the prefix says 20/],
    ['a message that ends inside a fixed field', '010010000000000000000000001', 4, /ends inside this field/],
    ['a message that ends inside a variable field', '0100400000000000000016411111', 2, /ends inside this field/],
    ['letters in a fixed numeric field', '01001000000000000000000000001O00', 4, /digits only/],
    ['characters after the last announced field', '01001000000000000000000000001000XYZ', 1, /3 characters follow field 4/],
    ['a message over the length limit', '0100' + '0'.repeat(packedLengthMax), 0, /longer than 8192/],
  ])('%s', (_name, packed, field, reason) => {
    expect(offendingField(() => unpackIsoMessage(packed))).toBe(field);
    expect(() => unpackIsoMessage(packed)).toThrow(reason);
  });
});

describe('the raw block of events', () => {
  it('masks DE2 to first 6 and last 4 and removes DE14, 35, 52 and 55, keeping the rest', () => {
    const message: IsoMessage = {
      isoMti: '0100',
      fields: {
        '2': '4761739001010119',
        '3': '000000',
        '4': '000000005000',
        '14': '2212',
        '35': '4761739001010119D22122011758928889',
        '37': '507412000123',
        '52': '7434F67813BAE545',
        '55': '9F2608',
        '63': 'VIS00000LC7Q2M9XK4TR8P1A',
      },
    };
    expect(redactForEvent(message)).toEqual({
      isoMti: '0100',
      fields: { '2': '476173******0119', '3': '000000', '4': '000000005000', '37': '507412000123', '63': 'VIS00000LC7Q2M9XK4TR8P1A' },
    });
    expect(message.fields['14']).toBe('2212');
  });
});

describe('the worked example of docs/cards-network.md', () => {
  it('builds, packs and redacts as the document shows', () => {
    const at = new Date('2026-03-15T12:00:00Z');
    const stan = new StanSequence().next('TERM0001');
    const request: IsoMessage = {
      isoMti: '0100',
      fields: {
        '2': '4111111111111111',
        '3': '000000',
        '4': '000000002500',
        '7': transmissionDateTime(at),
        '11': stan,
        '12': '080000',
        '13': '0315',
        '14': expiryYyMm({ expiryMonth: 3, expiryYear: 2030 }),
        '18': '5812',
        '22': '071',
        '25': '00',
        '32': '123456',
        '37': retrievalReferenceNumber(at, stan),
        '41': 'TERM0001',
        '42': 'MERCHANT0000001',
        '43': formatMerchantNameLocation({ name: 'Joes Diner', city: 'San Francisco', state: 'CA', country: 'US' }),
        '49': '840',
        '63': formatNetworkData('VISA', 'LC7Q2M9XK4TR8P1A'),
      },
    };
    expect(packIsoMessage(request)).toBe(
      '0100723C448108E0800216411111111111111100000000000000250003151200000000010800000315300358120710006123456607412000001TERM0001MERCHANT0000001JOES DINER             SAN FRANCISCOCAUS840024VIS00000LC7Q2M9XK4TR8P1A',
    );
    expect(redactForEvent(request).fields['2']).toBe('411111******1111');
    expect(redactForEvent(request).fields['14']).toBeUndefined();
  });
});
