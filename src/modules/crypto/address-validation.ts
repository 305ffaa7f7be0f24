import { ed25519 } from '@noble/curves/ed25519.js';
import { hex } from '@scure/base';
import type { ErrorCode } from '../../platform/http/error-codes.js';
import { AppError } from '../../platform/http/errors.js';
import {
  bitcoinSegwitPrefixes,
  decodeBase58,
  decodeBase58Check,
  decodeBech32String,
  decodeSegwitAddress,
  eip55Checksummed,
  isBase58,
  segwitScriptPubKey,
  tronVersionByte,
} from './address-encoding.js';
import { cryptoNetworkNames, memoSupported, tokenContracts, type BitcoinNetwork, type CryptoNetworkName } from './networks.js';
import { isBlank, refusedCharactersProblem } from '../../platform/text.js';

/**
 * Validation of withdrawal destinations (contract §12.7). Rules run in this order and the first
 * failing one answers:
 *
 *   1. the address is a string of the right shape for the network (INVALID_ADDRESS; when it is
 *      valid on another of our networks, the reason names that network);
 *   2. a Bitcoin address of the other Bitcoin network (ADDRESS_WRONG_NETWORK);
 *   3. an address funds must never go to: zero address, system program, token contract
 *      (ADDRESS_NOT_ALLOWED);
 *   4. a memo where the network has none (MEMO_NOT_SUPPORTED), or a memo that is empty, too
 *      long or holds control characters (VALIDATION_ERROR).
 */

export type DestinationErrorCode = Extract<ErrorCode, 'INVALID_ADDRESS' | 'ADDRESS_WRONG_NETWORK' | 'ADDRESS_NOT_ALLOWED' | 'MEMO_NOT_SUPPORTED' | 'VALIDATION_ERROR'>;

export interface ValidDestination {
  ok: true;
  network: CryptoNetworkName;
  /** The normalised address: Bech32 in lower case, Ethereum in its EIP-55 form, others as sent. */
  address: string;
  memo: string | null;
  /** Solana only: the address is not an ed25519 public key (a program-derived address). */
  offCurve?: true;
}

export type DestinationCheck = ValidDestination | { ok: false; code: DestinationErrorCode; field: 'address' | 'memo'; reason: string };

export interface DestinationInput {
  network: CryptoNetworkName;
  address: string;
  memo?: string | null;
  bitcoinNetwork: BitcoinNetwork;
}

/** No address of any supported network is longer than 90 characters (Bech32); longer input is refused before decoding. */
export const addressLengthMax = 128;
/** A memo is free text for the recipient; TRON and Solana carry a few hundred bytes, we keep to 256 characters. */
export const memoLengthMax = 256;

type AddressCheck =
  | { ok: true; address: string; offCurve?: true }
  | { ok: false; code: 'INVALID_ADDRESS' | 'ADDRESS_WRONG_NETWORK' | 'ADDRESS_NOT_ALLOWED'; reason: string };

function invalid(reason: string): AddressCheck {
  return { ok: false, code: 'INVALID_ADDRESS', reason };
}

// ---------------------------------------------------------------------------------------------
// Bitcoin

export type BitcoinAddressType = 'P2PKH' | 'P2SH' | 'P2WPKH' | 'P2WSH' | 'P2TR' | 'WITNESS_UNKNOWN';

export interface BitcoinAddress {
  bitcoinNetwork: BitcoinNetwork;
  type: BitcoinAddressType;
  /** Lower case for Bech32 addresses, as sent for Base58 ones. */
  address: string;
  /** The output script the address pays to. */
  scriptPubKey: Uint8Array;
}

const base58VersionBytes: Readonly<Record<number, { bitcoinNetwork: BitcoinNetwork; type: 'P2PKH' | 'P2SH' }>> = {
  0x00: { bitcoinNetwork: 'mainnet', type: 'P2PKH' },
  0x05: { bitcoinNetwork: 'mainnet', type: 'P2SH' },
  0x6f: { bitcoinNetwork: 'testnet', type: 'P2PKH' },
  0xc4: { bitcoinNetwork: 'testnet', type: 'P2SH' },
};

const bitcoinForms: Readonly<Record<BitcoinNetwork, string>> = {
  mainnet: 'bc1…, 1… or 3…',
  testnet: 'tb1…, m…, n… or 2…',
};

function segwitType(version: number, programLength: number): BitcoinAddressType {
  if (version === 0) return programLength === 20 ? 'P2WPKH' : 'P2WSH';
  if (version === 1 && programLength === 32) return 'P2TR';
  return 'WITNESS_UNKNOWN';
}

/**
 * Decodes a Bitcoin address of either network: Base58Check P2PKH/P2SH (version bytes 0x00/0x05
 * mainnet, 0x6f/0xc4 testnet) or native SegWit (BIP-173/BIP-350, `bc` mainnet, `tb` testnet).
 * Versions 2 to 16 and unusual program lengths are accepted as BIP-350 asks of senders.
 */
export function decodeBitcoinAddress(input: string): { ok: true; value: BitcoinAddress } | { ok: false; reason: string } {
  const lower = input.toLowerCase();
  // SegWit when it says so (bc1, tb1, bcrt1) or is some other valid Bech32 string (ltc1…, so the
  // reason names its prefix); Base58 when every character can be Base58; otherwise whichever
  // reason fits the string better: a "1" separator in a single-case string suggests Bech32.
  const singleCase = input === lower || input === input.toUpperCase();
  const segwit = /^(bc|tb|bcrt)1/.test(lower) || decodeBech32String(input).ok || (!isBase58(input) && singleCase && lower.lastIndexOf('1') > 0);
  if (segwit) {
    const decoded = decodeSegwitAddress(input);
    if (!decoded.ok) return decoded;
    const { prefix, version, program } = decoded.value;
    const bitcoinNetwork = (Object.keys(bitcoinSegwitPrefixes) as BitcoinNetwork[]).find((name) => bitcoinSegwitPrefixes[name] === prefix);
    if (bitcoinNetwork === undefined) {
      const regtest = prefix === 'bcrt' ? ' (bcrt is regtest, which OpenBaaS does not use)' : '';
      return { ok: false, reason: `has the human-readable part "${prefix}"${regtest}; Bitcoin addresses start with bc1 (mainnet) or tb1 (testnet)` };
    }
    return { ok: true, value: { bitcoinNetwork, type: segwitType(version, program.length), address: lower, scriptPubKey: segwitScriptPubKey(version, program) } };
  }
  const decoded = decodeBase58Check(input, 25);
  if (!decoded.ok) return decoded;
  const [versionByte = -1, ...hash] = decoded.value;
  const kind = base58VersionBytes[versionByte];
  if (kind === undefined) {
    const tron = versionByte === tronVersionByte ? ' (0x41 is the TRON version byte)' : '';
    return { ok: false, reason: `has version byte 0x${versionByte.toString(16).padStart(2, '0')}${tron}; Bitcoin Base58 addresses use 0x00 or 0x05 (mainnet), 0x6f or 0xc4 (testnet)` };
  }
  const scriptPubKey = kind.type === 'P2PKH'
    ? Uint8Array.from([0x76, 0xa9, 0x14, ...hash, 0x88, 0xac])
    : Uint8Array.from([0xa9, 0x14, ...hash, 0x87]);
  return { ok: true, value: { bitcoinNetwork: kind.bitcoinNetwork, type: kind.type, address: input, scriptPubKey } };
}

/**
 * `bitcoinNetwork` is the server's network for a recipient; for a sender it is the network of the
 * address paid (which a server moved to the other network since it made the address no longer
 * uses), so a sender of the wrong one is told that rather than the server's network.
 */
function checkBitcoin(input: string, bitcoinNetwork: BitcoinNetwork, party: AddressParty): AddressCheck {
  const decoded = decodeBitcoinAddress(input);
  if (!decoded.ok) return invalid(`${decoded.reason}; a Bitcoin ${bitcoinNetwork} address looks like ${bitcoinForms[bitcoinNetwork]}`);
  const found = decoded.value.bitcoinNetwork;
  if (found !== bitcoinNetwork) {
    const reason = party === 'sender'
      ? `is a Bitcoin ${found} address, but the address it pays is on Bitcoin ${bitcoinNetwork}; a deposit to it comes from a ${bitcoinNetwork} address (${bitcoinForms[bitcoinNetwork]})`
      : `is a Bitcoin ${found} address, but this server uses Bitcoin ${bitcoinNetwork}; send a ${bitcoinNetwork} address (${bitcoinForms[bitcoinNetwork]})`;
    return { ok: false, code: 'ADDRESS_WRONG_NETWORK', reason };
  }
  return { ok: true, address: decoded.value.address };
}

// ---------------------------------------------------------------------------------------------
// Ethereum

const ethereumZeroAddress = `0x${'0'.repeat(40)}`;

function checkEthereum(input: string): AddressCheck {
  const form = 'an Ethereum address is 0x followed by 40 hex digits';
  if (/^[0-9a-fA-F]{40}$/.test(input)) return invalid(`has no 0x prefix; ${form}`);
  if (input.startsWith('0X')) return invalid(`starts with "0X"; ${form}, with a lower-case x`);
  if (!input.startsWith('0x')) return invalid(`does not start with 0x; ${form}`);
  const digits = input.slice(2);
  const stranger = /[^0-9a-fA-F]/.exec(digits);
  if (stranger) return invalid(`character "${stranger[0]}" at position ${stranger.index + 3} is not a hex digit; ${form}`);
  if (digits.length !== 40) return invalid(`has ${digits.length} hex digits after 0x; ${form}`);
  const checksummed = eip55Checksummed(hex.decode(digits.toLowerCase()));
  const mixedCase = digits !== digits.toLowerCase() && digits !== digits.toUpperCase();
  if (mixedCase && checksummed !== input) {
    return invalid(
      'fails its EIP-55 checksum (the pattern of upper- and lower-case letters): at least one character is wrong; copy the address again from its source',
    );
  }
  return { ok: true, address: checksummed };
}

// ---------------------------------------------------------------------------------------------
// TRON

function checkTron(input: string): AddressCheck {
  const form = 'a TRON address is Base58Check, 34 characters starting with T';
  if (/^41[0-9a-fA-F]{40}$/.test(input)) return invalid(`is the hex form of a TRON address; send its Base58Check form (34 characters starting with T)`);
  const decoded = decodeBase58Check(input, 25);
  if (!decoded.ok) return invalid(`${decoded.reason}; ${form}`);
  const versionByte = decoded.value[0] ?? -1;
  if (versionByte !== tronVersionByte) {
    return invalid(`has version byte 0x${versionByte.toString(16).padStart(2, '0')} where TRON uses 0x41; ${form}`);
  }
  return { ok: true, address: input };
}

// ---------------------------------------------------------------------------------------------
// Solana

const solanaPublicKeyLength = 32;

/** Whether 32 bytes are the encoding of a point on the ed25519 curve (Solana's `isOnCurve`). */
export function isOnEd25519Curve(bytes: Uint8Array): boolean {
  try {
    ed25519.Point.fromBytes(bytes, true);
    return true;
  } catch {
    return false;
  }
}

function checkSolana(input: string): AddressCheck {
  const form = 'a Solana address is Base58 of 32 bytes, 32 to 44 characters';
  const decoded = decodeBase58(input);
  if (!decoded.ok) return invalid(`${decoded.reason}; ${form}`);
  if (decoded.value.length !== solanaPublicKeyLength) return invalid(`decodes to ${decoded.value.length} bytes; ${form}`);
  return isOnEd25519Curve(decoded.value) ? { ok: true, address: input } : { ok: true, address: input, offCurve: true };
}

// ---------------------------------------------------------------------------------------------
// Addresses no withdrawal may go to

interface ForbiddenAddress {
  network: CryptoNetworkName;
  /** Compared with the normalised address (Ethereum: lower case). */
  address: string;
  reason: string;
}

const forbiddenAddresses: readonly ForbiddenAddress[] = [
  { network: 'ETHEREUM', address: ethereumZeroAddress, reason: 'is the Ethereum zero address; funds sent there are burned' },
  { network: 'TRON', address: 'T9yD14Nj9j7xAB4dbGeiX9h8unkKHxuWwb', reason: 'is the TRON zero address; funds sent there are burned' },
  {
    network: 'SOLANA',
    address: '11111111111111111111111111111111',
    reason: 'is the Solana System Program, not an account anyone owns; funds sent there are lost',
  },
  // Addresses funds are commonly lost to by mistake, beyond the contract's list (since 2026-12-06;
  // suggested by an audit): Ethereum's customary burn address, and Solana's token programs and the
  // wrapped-SOL mint, which no one can spend from.
  { network: 'ETHEREUM', address: '0x000000000000000000000000000000000000dead', reason: 'is the customary Ethereum burn address (0x…dEaD); funds sent there are burned' },
  ...(
    [
      { address: 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA', name: 'the Solana SPL Token Program' },
      { address: 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb', name: 'the Solana Token-2022 Program' },
      { address: 'ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL', name: 'the Solana Associated Token Account Program' },
      { address: 'So11111111111111111111111111111111111111112', name: 'the wrapped SOL mint' },
    ] as const
  ).map(({ address, name }) => ({
    network: 'SOLANA' as const,
    address,
    reason: `is ${name}, not an account anyone owns; funds sent there are lost. Use the recipient's own address`,
  })),
  ...tokenContracts.map((contract) => ({
    network: contract.network,
    address: contract.network === 'ETHEREUM' ? contract.address.toLowerCase() : contract.address,
    reason: `is the ${contract.asset} token contract on ${contract.network}; tokens sent to a token contract are lost. Use the recipient's own address`,
  })),
];

function forbiddenReason(network: CryptoNetworkName, address: string): string | undefined {
  const compared = network === 'ETHEREUM' ? address.toLowerCase() : address;
  return forbiddenAddresses.find((entry) => entry.network === network && entry.address === compared)?.reason;
}

// ---------------------------------------------------------------------------------------------
// Putting it together

const addressForms: Readonly<Record<Exclude<CryptoNetworkName, 'BITCOIN'>, string>> = {
  ETHEREUM: '0x followed by 40 hex digits',
  TRON: 'Base58Check, 34 characters starting with T',
  SOLANA: 'Base58, 32 to 44 characters',
};

function checkShape(network: CryptoNetworkName, address: string, bitcoinNetwork: BitcoinNetwork, party: AddressParty = 'recipient'): AddressCheck {
  switch (network) {
    case 'BITCOIN':
      return checkBitcoin(address, bitcoinNetwork, party);
    case 'ETHEREUM':
      return checkEthereum(address);
    case 'TRON':
      return checkTron(address);
    case 'SOLANA':
      return checkSolana(address);
  }
}

/** The networks other than `network` on which the string is a well-formed address. */
function otherNetworksOf(network: CryptoNetworkName, address: string, bitcoinNetwork: BitcoinNetwork): string[] {
  const names: string[] = [];
  for (const other of cryptoNetworkNames) {
    if (other === network) continue;
    const check = checkShape(other, address, bitcoinNetwork);
    if (check.ok) names.push(other);
    else if (check.code === 'ADDRESS_WRONG_NETWORK') names.push(`BITCOIN (${bitcoinNetwork === 'testnet' ? 'mainnet' : 'testnet'})`);
  }
  return names;
}

function expectedForm(network: CryptoNetworkName, bitcoinNetwork: BitcoinNetwork): string {
  return network === 'BITCOIN' ? `${bitcoinForms[bitcoinNetwork]} on Bitcoin ${bitcoinNetwork}` : addressForms[network];
}

/** Whose address is checked: a withdrawal's recipient, or a deposit's sender (the advice differs). */
type AddressParty = 'recipient' | 'sender';

function checkAddress(network: CryptoNetworkName, address: string, bitcoinNetwork: BitcoinNetwork, party: AddressParty = 'recipient'): AddressCheck {
  if (address.length === 0) return invalid(`is empty; send the ${party}'s ${network} address (${expectedForm(network, bitcoinNetwork)})`);
  if (address.length > addressLengthMax) {
    return invalid(`is ${address.length} characters long; no ${network} address is longer than ${addressLengthMax}`);
  }
  if (address.trim() !== address) return invalid('has spaces or line breaks around it; send the address alone');
  const check = checkShape(network, address, bitcoinNetwork, party);
  if (!check.ok) {
    if (check.code !== 'INVALID_ADDRESS') return check;
    const others = otherNetworksOf(network, address, bitcoinNetwork);
    if (others.length > 0) {
      const belongs = `belongs to ${others.join(' or ')}, not to ${network}`;
      if (party === 'sender') return invalid(`${belongs}; a deposit on ${network} comes from a ${network} address`);
      return invalid(
        `${belongs}; withdraw on ${others.length === 1 ? 'that network' : 'one of those networks'} if the asset moves there, or ask the recipient for their ${network} address (${expectedForm(network, bitcoinNetwork)})`,
      );
    }
    return check;
  }
  const forbidden = forbiddenReason(network, check.address);
  if (forbidden !== undefined) return { ok: false, code: 'ADDRESS_NOT_ALLOWED', reason: forbidden };
  return check;
}

function checkMemo(network: CryptoNetworkName, memo: string | null | undefined): { ok: true; memo: string | null } | { ok: false; code: DestinationErrorCode; reason: string } {
  if (memo === undefined || memo === null) return { ok: true, memo: null };
  if (!memoSupported(network)) {
    const supporting = cryptoNetworkNames.filter(memoSupported).join(' and ');
    return { ok: false, code: 'MEMO_NOT_SUPPORTED', reason: `${network} transfers carry no memo; remove the memo (memos are accepted on ${supporting})` };
  }
  if (memo.length === 0) return { ok: false, code: 'VALIDATION_ERROR', reason: 'is empty; leave the memo out instead' };
  // One that shows nothing (white space, blank-looking characters) is as empty to the receiver,
  // who reads the memo to credit the right account (until 2026-12-03 it was accepted; found by an audit).
  if (isBlank(memo)) return { ok: false, code: 'VALIDATION_ERROR', reason: 'shows nothing (white space or blank characters); leave the memo out instead' };
  // Characters, not UTF-16 units: an emoji is one.
  const characters = [...memo].length;
  if (characters > memoLengthMax) return { ok: false, code: 'VALIDATION_ERROR', reason: `is ${characters} characters long; at most ${memoLengthMax}` };
  const problem = refusedCharactersProblem(memo);
  if (problem !== undefined) return { ok: false, code: 'VALIDATION_ERROR', reason: problem };
  return { ok: true, memo };
}

/** The Bitcoin network (mainnet or testnet) of an address of ours on `network`; undefined on the other chains. */
export function bitcoinNetworkOfAddress(network: CryptoNetworkName, address: string): BitcoinNetwork | undefined {
  if (network !== 'BITCOIN') return undefined;
  const decoded = decodeBitcoinAddress(address);
  return decoded.ok ? decoded.value.bitcoinNetwork : undefined;
}

/**
 * Checks a deposit's sender address for the network, as a destination's address is, with a
 * sender's advice. `bitcoinNetwork` is the network of the address paid (see checkBitcoin).
 */
export function checkSenderAddress(network: CryptoNetworkName, address: string, bitcoinNetwork: BitcoinNetwork): AddressCheck {
  return checkAddress(network, address, bitcoinNetwork, 'sender');
}

/** Checks a withdrawal destination (address, then memo) for the network; see the rule order above. */
export function validateWithdrawalDestination(input: DestinationInput): DestinationCheck {
  const address = checkAddress(input.network, input.address, input.bitcoinNetwork);
  if (!address.ok) return { ok: false, code: address.code, field: 'address', reason: address.reason };
  const memo = checkMemo(input.network, input.memo);
  if (!memo.ok) return { ok: false, code: memo.code, field: 'memo', reason: memo.reason };
  return {
    ok: true,
    network: input.network,
    address: address.address,
    memo: memo.memo,
    ...(address.offCurve ? { offCurve: true as const } : {}),
  };
}

/**
 * validateWithdrawalDestination for a request: a refusal becomes an AppError (400) whose
 * `details` names the field, `address` and `memo` unless the request calls them otherwise.
 */
export function requireValidWithdrawalDestination(
  input: DestinationInput,
  fieldNames: { address?: string; memo?: string } = {},
): ValidDestination {
  const check = validateWithdrawalDestination(input);
  if (check.ok) return check;
  const field = fieldNames[check.field] ?? check.field;
  throw new AppError(check.code, `${field}: ${check.reason}`, { details: [{ field, message: check.reason }] });
}
