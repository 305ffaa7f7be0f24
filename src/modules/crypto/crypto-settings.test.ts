import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../../../test/harness.js';
import { balanceOf, expectLedgerClean } from '../../../test/bank/fixtures.js';
import { addressOf, cryptoDeposit, destinations, fundCrypto, mine, newWallet } from '../../../test/crypto/fixtures.js';
import { ConfigError, loadConfig } from '../../platform/config.js';
import { cryptoNetworkOverrides } from './networks.js';

/**
 * OPENBAAS_CRYPTO_CONFIRMATIONS and OPENBAAS_CRYPTO_WITHDRAWAL_FEES (contract §12.7: confirmations
 * configurable per network, fees per asset and network): the networks list, the fee route, a
 * deposit's requirement and a withdrawal's reservation follow them; a bad value stops the start.
 */

let t: TestContext;

beforeAll(async () => {
  t = await createTestApp({ env: { OPENBAAS_CRYPTO_CONFIRMATIONS: 'BITCOIN=6, SOLANA=1', OPENBAAS_CRYPTO_WITHDRAWAL_FEES: 'USDC/TRON=1.50,BTC/BITCOIN=0' } });
});
afterAll(async () => {
  await t.close();
});

describe('the settings in use', () => {
  it('GET /v1/digital/networks and /v1/digital/withdrawal-fees show them; the networks left out keep their defaults', async () => {
    const networks = (await t.request({ url: '/v1/digital/networks' })).body.data as Array<{ network: string; confirmationsRequired: number }>;
    expect(Object.fromEntries(networks.map((entry) => [entry.network, entry.confirmationsRequired]))).toEqual({ BITCOIN: 6, ETHEREUM: 12, TRON: 19, SOLANA: 1 });
    expect((await t.request({ url: '/v1/digital/withdrawal-fees?asset=USDC&network=TRON' })).body.data.fee).toBe('1.500000');
    expect((await t.request({ url: '/v1/digital/withdrawal-fees?asset=BTC' })).body.data.fee).toBe('0.00000000');
    expect((await t.request({ url: '/v1/digital/withdrawal-fees?asset=USDC&network=SOLANA' })).body.data.fee).toBe('0.100000');
  });

  it('a deposit needs the configured confirmations; a withdrawal reserves the configured fee', async () => {
    const walletId = await newWallet(t);
    const deposit = (await cryptoDeposit(t, { address: await addressOf(t, walletId, 'BTC'), asset: 'BTC', amount: '0.10000000' })).body.data;
    expect(deposit.confirmationsRequired).toBe(6);
    await mine(t, 'BITCOIN', 5);
    expect((await t.request({ url: `/v1/digital/transactions?cryptoTransactionId=${deposit.id as string}` })).body.data[0].status).toBe('PENDING');
    await mine(t, 'BITCOIN', 1);
    expect((await t.request({ url: `/v1/digital/transactions?cryptoTransactionId=${deposit.id as string}` })).body.data[0].status).toBe('COMPLETED');

    await fundCrypto(t, walletId, 'USDC', '100.00', 'TRON');
    const withdrawal = await t.request({ method: 'POST', url: '/v1/digital/withdrawal', body: { walletId, asset: 'USDC', network: 'TRON', amount: '10.00', address: destinations.TRON } });
    expect(withdrawal.status, JSON.stringify(withdrawal.body)).toBe(201);
    expect(withdrawal.body.data.fee).toBe('1.500000');
    expect(await balanceOf(t, walletId, 'USDC')).toMatchObject({ AVAILABLE: '88.500000', RESERVED: '11.500000' });
    await expectLedgerClean(t);
  });
});

describe('a bad setting stops the start', () => {
  it.each([
    [{ OPENBAAS_CRYPTO_CONFIRMATIONS: 'DOGE=3' }, /not a network/],
    [{ OPENBAAS_CRYPTO_CONFIRMATIONS: 'BITCOIN=0' }, /whole number from 1 to 1000/],
    [{ OPENBAAS_CRYPTO_CONFIRMATIONS: 'BITCOIN=2.5' }, /whole number from 1 to 1000/],
    [{ OPENBAAS_CRYPTO_CONFIRMATIONS: 'BITCOIN' }, /KEY=VALUE pairs/],
    [{ OPENBAAS_CRYPTO_CONFIRMATIONS: 'BITCOIN=3,BITCOIN=4' }, /twice/],
    [{ OPENBAAS_CRYPTO_WITHDRAWAL_FEES: 'USDC/BITCOIN=1' }, /not an asset\/network pair/],
    [{ OPENBAAS_CRYPTO_WITHDRAWAL_FEES: 'USDC/TRON=1.0000001' }, /at most 6 decimals/],
    [{ OPENBAAS_CRYPTO_WITHDRAWAL_FEES: 'USDC/TRON=-1' }, /at most 6 decimals, 0 or more/],
  ])('%j', (env, message) => {
    expect(() => {
      const config = loadConfig({ ...env });
      cryptoNetworkOverrides(config.cryptoConfirmations, config.cryptoWithdrawalFees);
    }).toThrow(ConfigError);
    expect(() => {
      const config = loadConfig({ ...env });
      cryptoNetworkOverrides(config.cryptoConfirmations, config.cryptoWithdrawalFees);
    }).toThrow(message);
  });
});
