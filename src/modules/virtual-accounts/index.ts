/**
 * Public surface of the virtual-accounts module: other modules import only from here.
 */
export { registerVirtualAccountRoutes } from './virtual-accounts.routes.js';
export { assignVirtualAccount, createVirtualAccount, type VirtualAccountView } from './virtual-accounts.service.js';
export { formatVirtualAccountNumber, isValidVirtualAccountNumber, virtualAccountNumberPattern, virtualAccountSerialFor } from './virtual-account-number.js';
