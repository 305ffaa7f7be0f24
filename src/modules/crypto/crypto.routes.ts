import { Type } from 'typebox';
import type { App } from '../../platform/http/app-type.js';
import type { Deps } from '../../platform/deps.js';
import { Envelope } from '../../platform/http/envelope.js';
import { notFound, validationError } from '../../platform/http/errors.js';
import { formatAmount } from '../../platform/money/amount.js';
import { requireAsset } from '../../platform/money/assets.js';
import { cryptoSettingsOf } from './crypto-transfers.routes.js';
import { cryptoNetworkNames, listCryptoNetworks, requireAssetNetwork, withdrawalFeeOf } from './networks.js';

const tags = ['Digital assets'];

const NetworkSchema = Type.Object(
  {
    network: Type.String({ enum: [...cryptoNetworkNames], examples: ['BITCOIN'] }),
    assets: Type.Array(Type.String(), { description: 'the assets that move on this network' }),
    addressFormat: Type.String({ examples: ['BECH32'] }),
    confirmationsRequired: Type.Integer({ description: 'confirmations a deposit or withdrawal needs before it completes' }),
    memoSupported: Type.Boolean({ description: 'whether a withdrawal may carry a memo' }),
    testnet: Type.Boolean(),
  },
  { title: 'CryptoNetwork' },
);

const WithdrawalFeeSchema = Type.Object(
  {
    asset: Type.String({ examples: ['USDC'] }),
    network: Type.String({ examples: ['TRON'] }),
    fee: Type.String({ description: 'flat fee per withdrawal, a decimal string', examples: ['1.00'] }),
    feeAsset: Type.String({ description: 'the fee is charged in the withdrawn asset', examples: ['USDC'] }),
  },
  { title: 'CryptoWithdrawalFee' },
);

export function registerCryptoRoutes(app: App, deps: Deps): void {
  // Read at start-up: a bad setting stops the server rather than answer 500s.
  const { overrides } = cryptoSettingsOf(deps);
  app.get(
    '/v1/digital/networks',
    {
      schema: {
        operationId: 'digital.listNetworks',
        tags,
        summary: 'List the blockchain networks, their assets, address formats and confirmations',
        response: { 200: Envelope(Type.Array(NetworkSchema)) },
      },
    },
    async (request) => ({
      message: 'Networks retrieved',
      data: listCryptoNetworks({ bitcoinNetwork: deps.config.bitcoinNetwork, confirmationsRequired: overrides.confirmationsRequired }).map((network) => ({ ...network, assets: [...network.assets] })),
      traceId: String(request.id),
    }),
  );

  app.get(
    '/v1/digital/withdrawal-fees',
    {
      schema: {
        operationId: 'digital.getWithdrawalFee',
        tags,
        summary: 'The fee of a crypto withdrawal of an asset on a network (its default network without one)',
        querystring: Type.Object(
          { asset: Type.String({ minLength: 1, maxLength: 20, examples: ['USDC'] }), network: Type.Optional(Type.String({ minLength: 1, maxLength: 20, examples: ['TRON'] })) },
          { additionalProperties: false },
        ),
        response: { 200: Envelope(WithdrawalFeeSchema) },
      },
    },
    async (request) => {
      const asset = requireAsset(request.query.asset, deps.config.mode, 'asset');
      if (asset.kind !== 'CRYPTO') throw validationError('asset', `${asset.code} is not a crypto asset`);
      const network = requireAssetNetwork(asset.code, request.query.network, { asset: 'asset', network: 'network' });
      const fee = withdrawalFeeOf(asset.code, network, overrides.withdrawalFees);
      if (!fee) throw notFound('Withdrawal fee');
      // At the asset's scale, as the withdrawal itself shows it (ETH: 18 decimals).
      return { message: 'Withdrawal fee retrieved', data: { asset: fee.asset, network: fee.network, fee: formatAmount(fee.feeMinor, asset), feeAsset: fee.feeAsset }, traceId: String(request.id) };
    },
  );
}
