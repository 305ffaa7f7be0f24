/**
 * Public surface of the bank-accounts module: the bank numbers of wallets besides the virtual
 * account number (dedicated account numbers and VRNs), deposit routing by number, and deposit
 * instructions (banking details). Other modules import only from here.
 */
export { registerBankAccountRoutes, checkOperatingBank } from './bank-accounts.routes.js';
export {
  assignDedicatedAccountNumber,
  assignVrn,
  bankingDetails,
  formatAddress,
  holderName,
  isWalletAccountNumberForm,
  routeDeposit,
  type DepositRoute,
} from './bank-accounts.service.js';
export {
  accountSerialFor,
  formatAccountNumber,
  isValidAccountNumber,
  accountNumberKinds,
  type AccountNumberKind,
  type AccountNumberSerialKeys,
} from './account-numbers.js';
