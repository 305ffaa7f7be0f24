import { Type } from 'typebox';
import type { App } from '../../platform/http/app-type.js';
import type { Deps } from '../../platform/deps.js';
import { Envelope } from '../../platform/http/envelope.js';
import { formatAmount } from '../../platform/money/amount.js';
import { assetIdOf, listAssets, maxAmountMinor } from '../../platform/money/assets.js';

const AssetSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid', description: 'the asset\'s id, derived from its code (the same in every installation); trade quotes accept it as fromAssetId, toAssetId or feeAssetId', examples: ['8b95a155-5e83-58e0-b5ce-2a328db9a43b'] }),
    code: Type.String({ examples: ['USD'] }),
    name: Type.String(),
    scale: Type.Integer({ description: 'decimal places of an amount' }),
    kind: Type.Union([Type.Literal('FIAT'), Type.Literal('CRYPTO')]),
    sandboxOnly: Type.Boolean(),
    maxAmount: Type.String({ description: 'largest amount accepted, as a decimal string' }),
  },
  { title: 'Asset' },
);

export function registerAssetRoutes(app: App, deps: Deps): void {
  app.get(
    '/v1/assets',
    {
      schema: {
        operationId: 'assets.list',
        tags: ['Assets'],
        summary: 'List the asset registry: every asset with its scale',
        response: { 200: Envelope(Type.Array(AssetSchema)) },
      },
    },
    async (request) => ({
      message: 'Assets retrieved',
      data: listAssets(deps.config.mode).map((asset) => ({ id: assetIdOf(asset.code), ...asset, maxAmount: formatAmount(maxAmountMinor(asset), asset) })),
      traceId: String(request.id),
    }),
  );
}
