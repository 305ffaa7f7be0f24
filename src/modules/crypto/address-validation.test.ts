import { hex } from '@scure/base';
import { describe, expect, it } from 'vitest';
import { AppError } from '../../platform/http/errors.js';
import { decodeBech32String, eip55Checksummed, encodeBase58Check, encodeSegwitAddress } from './address-encoding.js';
import {
  decodeBitcoinAddress,
  memoLengthMax,
  requireValidWithdrawalDestination,
  validateWithdrawalDestination,
  type DestinationCheck,
  type DestinationInput,
} from './address-validation.js';
import { tokenContracts, type BitcoinNetwork, type CryptoNetworkName } from './networks.js';

function check(network: CryptoNetworkName, address: string, options: { bitcoinNetwork?: BitcoinNetwork; memo?: string | null } = {}): DestinationCheck {
  return validateWithdrawalDestination({ network, address, memo: options.memo, bitcoinNetwork: options.bitcoinNetwork ?? 'testnet' });
}

function refusal(result: DestinationCheck): { code: string; field: string; reason: string } {
  if (result.ok) throw new Error(`accepted: ${JSON.stringify(result)}`);
  return { code: result.code, field: result.field, reason: result.reason };
}

/** The network a Bech32 vector belongs to, from its human-readable part. */
function bitcoinNetworkOf(address: string): BitcoinNetwork {
  return address.toLowerCase().startsWith('tb1') ? 'testnet' : 'mainnet';
}

/** The 20-byte key hash of the BIP-173 P2WPKH vector (HASH160 of the secp256k1 generator point). */
const vectorKeyHash = '751e76e8199196d454941c45d1b3a323f1433bd6';

// BIP-173 (https://github.com/bitcoin/bips/blob/master/bip-0173.mediawiki), "Test vectors".
const bip173ValidStrings = [
  'A12UEL5L',
  'a12uel5l',
  'an83characterlonghumanreadablepartthatcontainsthenumber1andtheexcludedcharactersbio1tt5tgs',
  'abcdef1qpzry9x8gf2tvdw0s3jn54khce6mua7lmqqqxw',
  '11qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqc8247j',
  'split1checkupstagehandshakeupstreamerranterredcaperred2y9e3w',
  '?1ezyfcl',
];

const bip173InvalidStrings: [string, RegExp][] = [
  [`${String.fromCharCode(0x20)}1nwldj5`, /outside printable US-ASCII/], // HRP character out of range
  [`${String.fromCharCode(0x7f)}1axkwrx`, /outside printable US-ASCII/], // HRP character out of range
  [`${String.fromCharCode(0x80)}1eym55h`, /outside printable US-ASCII/], // HRP character out of range
  ['an84characterslonghumanreadablepartthatcontainsthenumber1andtheexcludedcharactersbio1569pvx', /at most 90/], // overall max length exceeded
  ['pzry9x0s0muk', /no separator/], // No separator character
  ['1pzry9x0s0muk', /empty human-readable part/], // Empty HRP
  ['x1b4n0q5v', /"b" at position 3 is not in the Bech32 alphabet/], // Invalid data character
  ['li1dgmt3', /checksum alone takes 6/], // Too short checksum
  [`de1lg7wt${String.fromCharCode(0xff)}`, /outside printable US-ASCII/], // Invalid character in checksum
  ['A1G7SGD8', /checksum/], // checksum calculated with uppercase form of HRP
  ['10a06t8', /empty human-readable part/], // empty HRP
  ['1qzzfhee', /empty human-readable part/], // empty HRP
];

// BIP-350 (https://github.com/bitcoin/bips/blob/master/bip-0350.mediawiki), "Test vectors for Bech32m".
const bip350ValidStrings = [
  'A1LQFN3A',
  'a1lqfn3a',
  'an83characterlonghumanreadablepartthatcontainsthetheexcludedcharactersbioandnumber11sg7hg6',
  'abcdef1l7aum6echk45nj3s0wdvt2fg8x9yrzpqzd3ryx',
  '11llllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllludsr8',
  'split1checkupstagehandshakeupstreamerranterredcaperredlc445v',
  '?1v759aa',
];

const bip350InvalidStrings: [string, RegExp][] = [
  [`${String.fromCharCode(0x20)}1xj0phk`, /outside printable US-ASCII/], // HRP character out of range
  [`${String.fromCharCode(0x7f)}1g6xzxy`, /outside printable US-ASCII/], // HRP character out of range
  [`${String.fromCharCode(0x80)}1vctc34`, /outside printable US-ASCII/], // HRP character out of range
  ['an84characterslonghumanreadablepartthatcontainsthetheexcludedcharactersbioandnumber11d6pts4', /at most 90/], // overall max length exceeded
  ['qyrz8wqd2c9m', /no separator/], // No separator character
  ['1qyrz8wqd2c9m', /empty human-readable part/], // Empty HRP
  ['y1b0jsk6g', /"b" .* not in the Bech32 alphabet/], // Invalid data character
  ['lt1igcx5c0', /"i" .* not in the Bech32 alphabet/], // Invalid data character
  ['in1muywd', /checksum alone takes 6/], // Too short checksum
  ['mm1crxm3i', /"i" .* not in the Bech32 alphabet/], // Invalid character in checksum
  ['au1s5cgom', /"o" .* not in the Bech32 alphabet/], // Invalid character in checksum
  ['M1VUXWEZ', /checksum/], // checksum calculated with uppercase form of HRP
  ['16plkw9', /empty human-readable part/], // empty HRP
  ['1p2gdwpf', /empty human-readable part/], // empty HRP
];

/** BIP-350 valid native SegWit addresses and the output scripts they pay to. */
const bip350ValidAddresses: [string, string][] = [
  ['BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4', '0014751e76e8199196d454941c45d1b3a323f1433bd6'],
  ['tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sl5k7', '00201863143c14c5166804bd19203356da136c985678cd4d27a1b8c6329604903262'],
  ['bc1pw508d6qejxtdg4y5r3zarvary0c5xw7kw508d6qejxtdg4y5r3zarvary0c5xw7kt5nd6y', '5128751e76e8199196d454941c45d1b3a323f1433bd6751e76e8199196d454941c45d1b3a323f1433bd6'],
  ['BC1SW50QGDZ25J', '6002751e'],
  ['bc1zw508d6qejxtdg4y5r3zarvaryvaxxpcs', '5210751e76e8199196d454941c45d1b3a323'],
  ['tb1qqqqqp399et2xygdj5xreqhjjvcmzhxw4aywxecjdzew6hylgvsesrxh6hy', '0020000000c4a5cad46221b2a187905e5266362b99d5e91c6ce24d165dab93e86433'],
  ['tb1pqqqqp399et2xygdj5xreqhjjvcmzhxw4aywxecjdzew6hylgvsesf3hn0c', '5120000000c4a5cad46221b2a187905e5266362b99d5e91c6ce24d165dab93e86433'],
  ['bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0', '512079be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798'],
];

/** BIP-350 invalid native SegWit addresses, with the reason the BIP gives. */
const bip350InvalidAddresses: [string, RegExp][] = [
  ['tc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vq5zuyut', /human-readable part "tc"/], // Invalid human-readable part
  ['bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqh2y7hd', /version 1 address with a Bech32 checksum/], // Bech32 instead of Bech32m
  ['tb1z0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqglt7rf', /version 2 address with a Bech32 checksum/], // Bech32 instead of Bech32m
  ['BC1S0XLXVLHEMJA6C4DQV22UAPCTQUPFHLXM9H8Z3K2E72Q4K9HCZ7VQ54WELL', /version 16 address with a Bech32 checksum/], // Bech32 instead of Bech32m
  ['bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kemeawh', /version 0 address with a Bech32m checksum/], // Bech32m instead of Bech32
  ['tb1q0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vq24jc47', /version 0 address with a Bech32m checksum/], // Bech32m instead of Bech32
  ['bc1p38j9r5y49hruaue7wxjce0updqjuyyx0kh56v8s25huc6995vvpql3jow4', /"o" .* not in the Bech32 alphabet/], // Invalid character in checksum
  ['BC130XLXVLHEMJA6C4DQV22UAPCTQUPFHLXM9H8Z3K2E72Q4K9HCZ7VQ7ZWS8R', /witness version 17/], // Invalid witness version
  ['bc1pw5dgrnzv', /1-byte witness program/], // Invalid program length (1 byte)
  ['bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7v8n0nx0muaewav253zgeav', /41-byte witness program/], // Invalid program length (41 bytes)
  ['BC1QR508D6QEJXTDG4Y5R3ZARVARYV98GJ9P', /16-byte version 0 witness program/], // Invalid program length for witness version 0
  ['tb1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vq47Zagq', /mixes upper- and lower-case/], // Mixed case
  ['bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7v07qwwzcrf', /bits of padding; at most 4/], // zero padding of more than 4 bits
  ['tb1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vpggkg4j', /padding bits that are not zero/], // Non-zero padding in 8-to-5 conversion
  ['bc1gmk9yu', /empty data part/], // Empty data section
];

/** BIP-173 address vectors: its version 0 addresses stay valid; its version 1+ ones carry Bech32 checksums, which BIP-350 made invalid. */
const bip173ValidV0Addresses: [string, string][] = [
  ['BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4', '0014751e76e8199196d454941c45d1b3a323f1433bd6'],
  ['tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sl5k7', '00201863143c14c5166804bd19203356da136c985678cd4d27a1b8c6329604903262'],
  ['tb1qqqqqp399et2xygdj5xreqhjjvcmzhxw4aywxecjdzew6hylgvsesrxh6hy', '0020000000c4a5cad46221b2a187905e5266362b99d5e91c6ce24d165dab93e86433'],
];

const bip173SupersededAddresses: [string, RegExp][] = [
  ['bc1pw508d6qejxtdg4y5r3zarvary0c5xw7kw508d6qejxtdg4y5r3zarvary0c5xw7k7grplx', /version 1 address with a Bech32 checksum/],
  ['BC1SW50QA3JX3S', /version 16 address with a Bech32 checksum/],
  ['bc1zw508d6qejxtdg4y5r3zarvaryvg6kdaj', /version 2 address with a Bech32 checksum/],
];

const bip173InvalidAddresses: [string, RegExp][] = [
  ['tc1qw508d6qejxtdg4y5r3zarvary0c5xw7kg3g4ty', /human-readable part "tc"/], // Invalid human-readable part
  ['bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t5', /fails its Bech32 checksum/], // Invalid checksum
  ['BC13W508D6QEJXTDG4Y5R3ZARVARY0C5XW7KN40WF2', /witness version 17/], // Invalid witness version
  ['bc1rw5uspcuh', /1-byte witness program/], // Invalid program length
  ['bc10w508d6qejxtdg4y5r3zarvary0c5xw7kw508d6qejxtdg4y5r3zarvary0c5xw7kw5rljs90', /41-byte witness program/], // Invalid program length
  ['BC1QR508D6QEJXTDG4Y5R3ZARVARYV98GJ9P', /16-byte version 0 witness program/], // Invalid program length for witness version 0
  ['tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sL5k7', /mixes upper- and lower-case/], // Mixed case
  ['bc1zw508d6qejxtdg4y5r3zarvaryvqyzf3du', /bits of padding; at most 4/], // zero padding of more than 4 bits
  ['tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3pjxtptv', /padding bits that are not zero/], // Non-zero padding in 8-to-5 conversion
  ['bc1gmk9yu', /empty data part/], // Empty data section
];

/** Base58Check fixtures of research §5.1: hash160 751e…3bd6 as P2PKH and P2SH on both networks. */
const base58Addresses: [string, BitcoinNetwork, string][] = [
  ['1BgGZ9tcN4rm9KBzDn7KprQz87SZ26SAMH', 'mainnet', '76a914751e76e8199196d454941c45d1b3a323f1433bd688ac'],
  ['mrCDrCybB6J1vRfbwM5hemdJz73FwDBC8r', 'testnet', '76a914751e76e8199196d454941c45d1b3a323f1433bd688ac'],
  ['3CNHUhP3uyB9EUtRLsmvFUmvGdjGdkTxJw', 'mainnet', 'a914751e76e8199196d454941c45d1b3a323f1433bd687'],
  ['2N3vVYSK5XRgVSGWy21PnsRmBUywSQNdCsf', 'testnet', 'a914751e76e8199196d454941c45d1b3a323f1433bd687'],
];

/** EIP-55 "Test Cases" (https://github.com/ethereum/EIPs/blob/master/EIPS/eip-55.md): all caps, all lower, normal. */
const eip55Vectors = [
  '0x52908400098527886E0F7030069857D2E4169EE7',
  '0x8617E340B3D01FA5F11F306F4090FD50E238070D',
  '0xde709f2102306220921060314715629080e2fb77',
  '0x27b1fdb04752bbc536007a920d24acb045561c26',
  '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
  '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359',
  '0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB',
  '0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb',
];

describe('Bech32 and Bech32m strings (BIP-173, BIP-350 generic vectors)', () => {
  it('decodes every valid Bech32 string and reports the Bech32 checksum (never Bech32m)', () => {
    for (const vector of bip173ValidStrings) {
      const decoded = decodeBech32String(vector);
      expect(decoded.ok && decoded.value.variant, vector).toBe('bech32');
    }
  });

  it('decodes every valid Bech32m string and reports the Bech32m checksum (never Bech32)', () => {
    for (const vector of bip350ValidStrings) {
      const decoded = decodeBech32String(vector);
      expect(decoded.ok && decoded.value.variant, vector).toBe('bech32m');
    }
  });

  it('refuses every invalid Bech32 string with the reason the BIP names', () => {
    for (const [vector, reason] of bip173InvalidStrings) {
      const decoded = decodeBech32String(vector);
      expect(decoded.ok, JSON.stringify(vector)).toBe(false);
      if (!decoded.ok) expect(decoded.reason, JSON.stringify(vector)).toMatch(reason);
    }
  });

  it('refuses every invalid Bech32m string with the reason the BIP names', () => {
    for (const [vector, reason] of bip350InvalidStrings) {
      const decoded = decodeBech32String(vector);
      expect(decoded.ok, JSON.stringify(vector)).toBe(false);
      if (!decoded.ok) expect(decoded.reason, JSON.stringify(vector)).toMatch(reason);
    }
  });

  it('lower-cases the human-readable part of an upper-case string', () => {
    const decoded = decodeBech32String('A12UEL5L');
    expect(decoded.ok && decoded.value.prefix).toBe('a');
  });
});

describe('accepted', () => {
  it('BITCOIN: every BIP-350 valid address, on its own network, normalised to lower case, with the BIP\'s output script', () => {
    for (const [address, scriptPubKey] of bip350ValidAddresses) {
      const decoded = decodeBitcoinAddress(address);
      expect(decoded.ok && hex.encode(decoded.value.scriptPubKey), address).toBe(scriptPubKey);
      const result = check('BITCOIN', address, { bitcoinNetwork: bitcoinNetworkOf(address) });
      expect(result, address).toEqual({ ok: true, network: 'BITCOIN', address: address.toLowerCase(), memo: null });
    }
  });

  it('BITCOIN: the version 0 addresses of BIP-173', () => {
    for (const [address, scriptPubKey] of bip173ValidV0Addresses) {
      const decoded = decodeBitcoinAddress(address);
      expect(decoded.ok && hex.encode(decoded.value.scriptPubKey), address).toBe(scriptPubKey);
      expect(check('BITCOIN', address, { bitcoinNetwork: bitcoinNetworkOf(address) }).ok, address).toBe(true);
    }
  });

  it('BITCOIN: Base58Check P2PKH and P2SH addresses with the network\'s version bytes (testnet m/n/2, mainnet 1/3)', () => {
    for (const [address, bitcoinNetwork, scriptPubKey] of base58Addresses) {
      const decoded = decodeBitcoinAddress(address);
      expect(decoded.ok && [decoded.value.bitcoinNetwork, hex.encode(decoded.value.scriptPubKey)], address).toEqual([bitcoinNetwork, scriptPubKey]);
      expect(check('BITCOIN', address, { bitcoinNetwork }), address).toEqual({ ok: true, network: 'BITCOIN', address, memo: null });
    }
  });

  it('BITCOIN: names the address type (P2WPKH, P2WSH, P2TR, unknown future versions)', () => {
    const types = bip350ValidAddresses.map(([address]) => {
      const decoded = decodeBitcoinAddress(address);
      return decoded.ok ? decoded.value.type : 'refused';
    });
    expect(types).toEqual(['P2WPKH', 'P2WSH', 'WITNESS_UNKNOWN', 'WITNESS_UNKNOWN', 'WITNESS_UNKNOWN', 'P2WSH', 'P2TR', 'P2TR']);
  });

  it('ETHEREUM: every EIP-55 vector, unchanged', () => {
    for (const address of eip55Vectors) {
      expect(check('ETHEREUM', address), address).toEqual({ ok: true, network: 'ETHEREUM', address, memo: null });
      expect(eip55Checksummed(hex.decode(address.slice(2).toLowerCase())), address).toBe(address);
    }
  });

  it('ETHEREUM: all-lower-case and all-upper-case forms (no checksum to check), normalised to EIP-55', () => {
    for (const address of eip55Vectors) {
      const digits = address.slice(2);
      for (const variant of [`0x${digits.toLowerCase()}`, `0x${digits.toUpperCase()}`]) {
        expect(check('ETHEREUM', variant), variant).toEqual({ ok: true, network: 'ETHEREUM', address, memo: null });
      }
    }
  });

  it('TRON: a Base58Check address with the 0x41 version byte', () => {
    // hash160 751e…3bd6 behind 0x41 (research §5.3, computed there independently).
    expect(check('TRON', 'TLeUZDGLWnyiJVFcp3m3M1782uBsGWa8uf')).toEqual({ ok: true, network: 'TRON', address: 'TLeUZDGLWnyiJVFcp3m3M1782uBsGWa8uf', memo: null });
  });

  it('SOLANA: an on-curve key without a flag, an off-curve address (a PDA) flagged offCurve', () => {
    expect(check('SOLANA', '5oNDL3swdJJF1g9DzJiZ4ynHXgszjAEpUkxVYejchzrY')).toEqual({
      ok: true,
      network: 'SOLANA',
      address: '5oNDL3swdJJF1g9DzJiZ4ynHXgszjAEpUkxVYejchzrY',
      memo: null,
    });
    expect(check('SOLANA', '4BJXYkfvg37zEmBbsacZjeQDpTNx91KppxFJxRqrz48e')).toEqual({
      ok: true,
      network: 'SOLANA',
      address: '4BJXYkfvg37zEmBbsacZjeQDpTNx91KppxFJxRqrz48e',
      memo: null,
      offCurve: true,
    });
  });

  it('a memo on TRON and SOLANA, echoed as sent; a null memo is no memo', () => {
    expect(check('TRON', 'TLeUZDGLWnyiJVFcp3m3M1782uBsGWa8uf', { memo: 'invoice 2024-117' })).toMatchObject({ ok: true, memo: 'invoice 2024-117' });
    expect(check('SOLANA', '5oNDL3swdJJF1g9DzJiZ4ynHXgszjAEpUkxVYejchzrY', { memo: 'x'.repeat(memoLengthMax) })).toMatchObject({ ok: true, memo: 'x'.repeat(memoLengthMax) });
    expect(check('BITCOIN', 'tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx', { memo: null })).toMatchObject({ ok: true, memo: null });
  });
});

describe('refused: INVALID_ADDRESS', () => {
  it('BITCOIN: every BIP-350 invalid address, with the BIP\'s reason', () => {
    for (const [address, reason] of bip350InvalidAddresses) {
      for (const bitcoinNetwork of ['testnet', 'mainnet'] as const) {
        const { code, field, reason: message } = refusal(check('BITCOIN', address, { bitcoinNetwork }));
        expect([code, field], address).toEqual(['INVALID_ADDRESS', 'address']);
        expect(message, address).toMatch(reason);
      }
    }
  });

  it('BITCOIN: every BIP-173 invalid address, with the BIP\'s reason', () => {
    for (const [address, reason] of bip173InvalidAddresses) {
      const { code, reason: message } = refusal(check('BITCOIN', address, { bitcoinNetwork: bitcoinNetworkOf(address) }));
      expect(code, address).toBe('INVALID_ADDRESS');
      expect(message, address).toMatch(reason);
    }
  });

  it('BITCOIN: BIP-173\'s version 1+ addresses, whose Bech32 checksums BIP-350 replaced by Bech32m', () => {
    for (const [address, reason] of bip173SupersededAddresses) {
      const { code, reason: message } = refusal(check('BITCOIN', address, { bitcoinNetwork: 'mainnet' }));
      expect(code, address).toBe('INVALID_ADDRESS');
      expect(message, address).toMatch(reason);
    }
  });

  it('BITCOIN: a Base58 address with a mistyped character, another version byte or another length', () => {
    expect(refusal(check('BITCOIN', 'mrCDrCybB6J1vRfbwM5hemdJz73FwDBC8s')).reason).toMatch(/Base58Check checksum/);
    expect(refusal(check('BITCOIN', 'mrCDrCybB6J1vRfbwM5hemdJz73FwDBC8r0')).reason).toMatch(/"0" at position 35 is not in the Base58 alphabet/);
    const litecoin = encodeBase58Check(Uint8Array.from([0x30, ...hex.decode(vectorKeyHash)]));
    expect(refusal(check('BITCOIN', litecoin)).reason).toMatch(/version byte 0x30; Bitcoin Base58 addresses use/);
    expect(refusal(check('BITCOIN', 'mrCDrCybB6J1vRfbwM5hemd')).reason).toMatch(/decodes to 17 bytes; expected 25/);
  });

  it('BITCOIN: regtest and other coins\' Bech32 prefixes, naming the prefix', () => {
    const regtest = encodeSegwitAddress('bcrt', 0, hex.decode(vectorKeyHash));
    const litecoin = encodeSegwitAddress('ltc', 0, hex.decode(vectorKeyHash));
    expect(refusal(check('BITCOIN', regtest)).reason).toMatch(/"bcrt" \(bcrt is regtest/);
    expect(refusal(check('BITCOIN', litecoin)).reason).toMatch(/human-readable part "ltc"/);
  });

  it('ETHEREUM: one letter\'s case changed in each EIP-55 vector that mixes cases', () => {
    for (const address of eip55Vectors.slice(4)) {
      const index = [...address].findIndex((character, position) => position > 1 && /[a-f]/.test(character));
      const changed = `${address.slice(0, index)}${address.charAt(index).toUpperCase()}${address.slice(index + 1)}`;
      const { code, reason } = refusal(check('ETHEREUM', changed));
      expect(code).toBe('INVALID_ADDRESS');
      expect(reason).toMatch(/fails its EIP-55 checksum/);
    }
  });

  it('ETHEREUM: a missing or upper-case prefix, a wrong length, a non-hex character', () => {
    expect(refusal(check('ETHEREUM', '5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed')).reason).toMatch(/has no 0x prefix/);
    expect(refusal(check('ETHEREUM', '0X5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed')).reason).toMatch(/starts with "0X"/);
    expect(refusal(check('ETHEREUM', '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAe')).reason).toMatch(/has 39 hex digits after 0x/);
    expect(refusal(check('ETHEREUM', '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAedd')).reason).toMatch(/has 41 hex digits after 0x/);
    expect(refusal(check('ETHEREUM', '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeg')).reason).toMatch(/"g" at position 42 is not a hex digit/);
  });

  it('TRON: a mistyped character, the hex form, a Bitcoin Base58 address, a short string', () => {
    expect(refusal(check('TRON', 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6u')).reason).toMatch(/Base58Check checksum/);
    expect(refusal(check('TRON', '41a614f803b6fd780986a42c78ec9c7f77e6ded13c')).reason).toMatch(/hex form of a TRON address/);
    expect(refusal(check('TRON', '2N3vVYSK5XRgVSGWy21PnsRmBUywSQNdCsf')).reason).toMatch(/belongs to BITCOIN, not to TRON/);
    expect(refusal(check('TRON', '1BgGZ9tcN4rm9KBzDn7KprQz87SZ26SAMH')).reason).toMatch(/belongs to BITCOIN \(mainnet\), not to TRON/);
    expect(refusal(check('TRON', 'TR7NHqjeKQxGTCi8q8ZY4pL8')).reason).toMatch(/decodes to 18 bytes; expected 25/);
  });

  it('SOLANA: a wrong length and characters outside Base58', () => {
    expect(refusal(check('SOLANA', '5oNDL3swdJJF1g9DzJiZ4ynHXgszjAEpUkxVYejchz')).reason).toMatch(/decodes to 31 bytes/);
    expect(refusal(check('SOLANA', '5oNDL3swdJJF1g9DzJiZ4ynHXgszjAEpUkxVYejchzrYl')).reason).toMatch(/"l" at position 45 is not in the Base58 alphabet/);
    expect(refusal(check('SOLANA', 'O1NDL3swdJJF1g9DzJiZ4ynHXgszjAEpUkxVYejchzrY')).reason).toMatch(/"O" at position 1/);
  });

  it('an address valid on another of our networks names that network', () => {
    const cases: [CryptoNetworkName, string, RegExp][] = [
      ['TRON', '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', /^belongs to ETHEREUM, not to TRON; .*their TRON address \(Base58Check, 34 characters starting with T\)$/],
      ['SOLANA', '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', /^belongs to ETHEREUM, not to SOLANA/],
      ['BITCOIN', '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', /^belongs to ETHEREUM, not to BITCOIN; .*\(tb1…, m…, n… or 2… on Bitcoin testnet\)$/],
      ['ETHEREUM', 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t', /^belongs to TRON, not to ETHEREUM/],
      ['SOLANA', 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t', /^belongs to TRON, not to SOLANA/],
      ['BITCOIN', 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t', /^belongs to TRON, not to BITCOIN/],
      ['ETHEREUM', '5oNDL3swdJJF1g9DzJiZ4ynHXgszjAEpUkxVYejchzrY', /^belongs to SOLANA, not to ETHEREUM/],
      ['TRON', '5oNDL3swdJJF1g9DzJiZ4ynHXgszjAEpUkxVYejchzrY', /^belongs to SOLANA, not to TRON/],
      ['ETHEREUM', 'tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx', /^belongs to BITCOIN, not to ETHEREUM/],
      ['SOLANA', 'mrCDrCybB6J1vRfbwM5hemdJz73FwDBC8r', /^belongs to BITCOIN, not to SOLANA/],
    ];
    for (const [network, address, reason] of cases) {
      const { code, reason: message } = refusal(check(network, address));
      expect(code, `${network} ${address}`).toBe('INVALID_ADDRESS');
      expect(message, `${network} ${address}`).toMatch(reason);
    }
  });

  it('an empty address, one with spaces around it, one longer than any address', () => {
    expect(refusal(check('ETHEREUM', '')).reason).toMatch(/^is empty; send the recipient's ETHEREUM address/);
    expect(refusal(check('ETHEREUM', ' 0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed')).reason).toMatch(/spaces or line breaks/);
    expect(refusal(check('TRON', 'TLeUZDGLWnyiJVFcp3m3M1782uBsGWa8uf\n')).reason).toMatch(/spaces or line breaks/);
    expect(refusal(check('SOLANA', '1'.repeat(129))).reason).toMatch(/is 129 characters long/);
  });
});

describe('refused: ADDRESS_WRONG_NETWORK', () => {
  it('a valid mainnet address on a testnet server, and the reverse, naming the expected network', () => {
    const cases: [string, BitcoinNetwork][] = [
      ['bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4', 'testnet'],
      ['bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0', 'testnet'],
      ['1BgGZ9tcN4rm9KBzDn7KprQz87SZ26SAMH', 'testnet'],
      ['3CNHUhP3uyB9EUtRLsmvFUmvGdjGdkTxJw', 'testnet'],
      ['tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx', 'mainnet'],
      ['mrCDrCybB6J1vRfbwM5hemdJz73FwDBC8r', 'mainnet'],
      ['2N3vVYSK5XRgVSGWy21PnsRmBUywSQNdCsf', 'mainnet'],
    ];
    for (const [address, bitcoinNetwork] of cases) {
      const other = bitcoinNetwork === 'testnet' ? 'mainnet' : 'testnet';
      const { code, field, reason } = refusal(check('BITCOIN', address, { bitcoinNetwork }));
      expect([code, field], address).toEqual(['ADDRESS_WRONG_NETWORK', 'address']);
      expect(reason, address).toBe(
        `is a Bitcoin ${other} address, but this server uses Bitcoin ${bitcoinNetwork}; send a ${bitcoinNetwork} address (${bitcoinNetwork === 'testnet' ? 'tb1…, m…, n… or 2…' : 'bc1…, 1… or 3…'})`,
      );
    }
  });
});

describe('refused: ADDRESS_NOT_ALLOWED', () => {
  it('the Ethereum and TRON zero addresses, in any letter case', () => {
    for (const address of [`0x${'0'.repeat(40)}`]) {
      expect(refusal(check('ETHEREUM', address))).toEqual({ code: 'ADDRESS_NOT_ALLOWED', field: 'address', reason: 'is the Ethereum zero address; funds sent there are burned' });
    }
    expect(refusal(check('TRON', 'T9yD14Nj9j7xAB4dbGeiX9h8unkKHxuWwb'))).toEqual({ code: 'ADDRESS_NOT_ALLOWED', field: 'address', reason: 'is the TRON zero address; funds sent there are burned' });
  });

  it('the Solana System Program', () => {
    const { code, reason } = refusal(check('SOLANA', '11111111111111111111111111111111'));
    expect(code).toBe('ADDRESS_NOT_ALLOWED');
    expect(reason).toMatch(/System Program/);
  });

  it('the Ethereum burn address 0x…dEaD in any letter case, and the Solana token programs and wrapped-SOL mint', () => {
    for (const address of ['0x000000000000000000000000000000000000dEaD', '0x000000000000000000000000000000000000dead', '0x000000000000000000000000000000000000DEAD']) {
      expect(refusal(check('ETHEREUM', address)), address).toEqual({ code: 'ADDRESS_NOT_ALLOWED', field: 'address', reason: 'is the customary Ethereum burn address (0x…dEaD); funds sent there are burned' });
    }
    const solana: [string, RegExp][] = [
      ['TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA', /SPL Token Program/],
      ['TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb', /Token-2022 Program/],
      ['ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL', /Associated Token Account Program/],
      ['So11111111111111111111111111111111111111112', /wrapped SOL mint/],
    ];
    for (const [address, name] of solana) {
      const { code, reason } = refusal(check('SOLANA', address));
      expect(code, address).toBe('ADDRESS_NOT_ALLOWED');
      expect(reason, address).toMatch(name);
    }
  });

  it('every stablecoin token contract on its network (Ethereum in any letter case), naming the token', () => {
    expect(tokenContracts).toHaveLength(6);
    for (const contract of tokenContracts) {
      const forms = contract.network === 'ETHEREUM' ? [contract.address, contract.address.toLowerCase(), `0x${contract.address.slice(2).toUpperCase()}`] : [contract.address];
      for (const address of forms) {
        const { code, reason } = refusal(check(contract.network, address));
        expect(code, address).toBe('ADDRESS_NOT_ALLOWED');
        expect(reason, address).toBe(`is the ${contract.asset} token contract on ${contract.network}; tokens sent to a token contract are lost. Use the recipient's own address`);
      }
    }
  });
});

describe('refused: MEMO_NOT_SUPPORTED', () => {
  it('any memo on BITCOIN or ETHEREUM, the address being valid', () => {
    for (const [network, address] of [['BITCOIN', 'tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx'], ['ETHEREUM', '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed']] as const) {
      for (const memo of ['123456', '']) {
        expect(refusal(check(network, address, { memo }))).toEqual({
          code: 'MEMO_NOT_SUPPORTED',
          field: 'memo',
          reason: `${network} transfers carry no memo; remove the memo (memos are accepted on TRON and SOLANA)`,
        });
      }
    }
  });

  it('the address is checked first: a bad address with a memo answers for the address', () => {
    expect(refusal(check('BITCOIN', 'tb1qnotanaddress', { memo: '1' }))).toMatchObject({ code: 'INVALID_ADDRESS', field: 'address' });
  });
});

describe('refused: VALIDATION_ERROR (memo)', () => {
  it('an empty memo, one that shows nothing, a memo over the limit, control characters', () => {
    const address = 'TLeUZDGLWnyiJVFcp3m3M1782uBsGWa8uf';
    expect(refusal(check('TRON', address, { memo: '' }))).toMatchObject({ code: 'VALIDATION_ERROR', field: 'memo', reason: 'is empty; leave the memo out instead' });
    for (const blank of ['  ', '\u3000', ' \u3000 ']) {
      expect(refusal(check('TRON', address, { memo: blank })), JSON.stringify(blank)).toMatchObject({ code: 'VALIDATION_ERROR', field: 'memo', reason: expect.stringContaining('shows nothing') });
    }
    expect(check('SOLANA', '5oNDL3swdJJF1g9DzJiZ4ynHXgszjAEpUkxVYejchzrY', { memo: ' 12345 ' })).toMatchObject({ ok: true });
    expect(refusal(check('TRON', address, { memo: 'x'.repeat(memoLengthMax + 1) }))).toMatchObject({ code: 'VALIDATION_ERROR', field: 'memo', reason: `is ${memoLengthMax + 1} characters long; at most ${memoLengthMax}` });
    expect(refusal(check('SOLANA', '5oNDL3swdJJF1g9DzJiZ4ynHXgszjAEpUkxVYejchzrY', { memo: 'line\nbreak' }))).toMatchObject({ code: 'VALIDATION_ERROR', field: 'memo' });
  });

  it('counts characters, not UTF-16 units: 256 emoji fit, 257 do not', () => {
    const address = 'TLeUZDGLWnyiJVFcp3m3M1782uBsGWa8uf';
    expect(check('TRON', address, { memo: '😀'.repeat(memoLengthMax) }).ok).toBe(true);
    expect(refusal(check('TRON', address, { memo: '😀'.repeat(memoLengthMax + 1) }))).toMatchObject({ field: 'memo', reason: `is ${memoLengthMax + 1} characters long; at most ${memoLengthMax}` });
  });
});

describe('requireValidWithdrawalDestination', () => {
  function thrown(input: DestinationInput, fieldNames?: { address?: string; memo?: string }): AppError {
    try {
      requireValidWithdrawalDestination(input, fieldNames);
    } catch (error) {
      expect(error).toBeInstanceOf(AppError);
      return error as AppError;
    }
    throw new Error('accepted');
  }

  it('returns the normalised destination', () => {
    expect(requireValidWithdrawalDestination({ network: 'ETHEREUM', address: '0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed', bitcoinNetwork: 'testnet' })).toEqual({
      ok: true,
      network: 'ETHEREUM',
      address: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
      memo: null,
    });
  });

  it('throws a 400 with the code, the field in the message and in details', () => {
    const error = thrown({ network: 'BITCOIN', address: 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4', bitcoinNetwork: 'testnet' });
    expect([error.code, error.statusCode]).toEqual(['ADDRESS_WRONG_NETWORK', 400]);
    expect(error.message).toMatch(/^address: is a Bitcoin mainnet address/);
    expect(error.details).toEqual([{ field: 'address', message: expect.stringMatching(/^is a Bitcoin mainnet address/) as unknown }]);
  });

  it('names the request\'s own field names when given, for the address and the memo', () => {
    const addressError = thrown({ network: 'ETHEREUM', address: '0x0', bitcoinNetwork: 'testnet' }, { address: 'destination.address' });
    expect([addressError.code, addressError.details?.[0]?.field]).toEqual(['INVALID_ADDRESS', 'destination.address']);
    const memoError = thrown({ network: 'ETHEREUM', address: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', memo: 'hello', bitcoinNetwork: 'testnet' });
    expect([memoError.code, memoError.statusCode, memoError.details?.[0]?.field]).toEqual(['MEMO_NOT_SUPPORTED', 400, 'memo']);
    expect(memoError.message).toMatch(/^memo: ETHEREUM transfers carry no memo/);
  });
});
