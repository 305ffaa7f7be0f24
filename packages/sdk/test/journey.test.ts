import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instantCustomer, startSdkServer, type SdkServer } from './server.js';
import type { OpenBaaS } from '../src/index.js';

/** The README's journey, through the SDK against a listening server: every call typed from the document. */
let server: SdkServer;
let api: OpenBaaS;

beforeAll(async () => {
  server = await startSdkServer();
  api = server.sdk();
});
afterAll(async () => {
  await server.close();
});

async function approvedWallet(firstName: string): Promise<string> {
  const { data: customer } = await api.post('/v1/customers/individual', { body: instantCustomer(firstName) });
  const { data: kyc } = await api.post('/v1/compliance/kyc', { body: { customerId: customer.id } });
  expect(kyc.status).toBe('APPROVED');
  const { data: approved } = await api.get('/v1/customers/{id}', { params: { path: { id: customer.id } } });
  const wallet = approved.portfolios[0]?.wallets[0];
  if (!wallet) throw new Error('no wallet after KYC');
  return wallet;
}

describe('the quick start journey through the SDK', () => {
  it('creates, approves, funds, settles and transfers', async () => {
    const wallet = await approvedWallet('Ada');
    const { data: details } = await api.get('/v1/wallets/{id}', { params: { path: { id: wallet } } });
    const accountNumber = details.virtualAccount?.virtualAccountNumber;
    expect(accountNumber).toMatch(/^\d+$/);

    const { data: deposit } = await api.post('/v1/sandbox/bank-deposits', {
      body: {
        accountNumber: accountNumber ?? '',
        amount: '100.00',
        asset: 'USD',
        network: 'ACH',
        counterparty: { name: 'Charles Babbage', accountNumber: '987654321', routingNumber: '021000021' },
      },
    });
    expect(deposit.status).toBe('PENDING');
    const { data: advanced } = await api.post('/v1/sandbox/clock/advance', { body: { seconds: 60 } });
    expect(advanced.ran.length).toBeGreaterThan(0);
    const { data: balance } = await api.get('/v1/wallets/{id}/balance', { params: { path: { id: wallet } } });
    expect(balance.AVAILABLE?.[0]?.amount).toBe('100.00');

    const graceWallet = await approvedWallet('Grace');
    const { data: transfer } = await api.post('/v1/internal-transfer', {
      body: { sourceWalletId: wallet, destinationWalletId: graceWallet, amount: '30.00', asset: 'USD' },
    });
    expect(transfer.status).toBe('COMPLETED');
    const after = await api.get('/v1/wallets/{id}/balance', { params: { path: { id: wallet } } });
    expect(after.data.AVAILABLE?.[0]?.amount).toBe('70.00');
    expect(after.traceId).toEqual(expect.any(String));
  });
});
