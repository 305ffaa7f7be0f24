/**
 * Sandbox reset and snapshots: POST /v1/sandbox/reset empties the calling client's data (its
 * configuration and API keys kept); /v1/sandbox/snapshots saves the client's data and clock and
 * puts them back later (docs/sandbox.md "Reset and snapshots"). Registered only in sandbox mode.
 */
export { registerSandboxStateRoutes } from './state.routes.js';
export { resetKeptTables, stateExcludedTables, triggerCheckedReferences, clientTables, referenceOrder } from './client-tables.js';
export { resetClientState, createSnapshot, restoreSnapshot, snapshotsPerClientMax, resetConfirmation } from './state.service.js';
