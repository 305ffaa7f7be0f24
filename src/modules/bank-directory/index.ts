/** The bank directory's public surface: routes, validation and lookups, the import. */
export { registerBankDirectoryRoutes } from './bank-directory.routes.js';
export {
  directorySources,
  ensureBuiltInDirectory,
  importDirectoryFiles,
  readDirectoryFiles,
  writeDirectoryFiles,
  lookupRoutingNumber,
  validateIban,
  validateRoutingNumber,
  validateSwiftCode,
  type DirectoryImportFiles,
  type DirectoryImportResult,
  type DirectorySource,
  type IbanInfo,
  type RoutingNumberInfo,
  type SwiftCodeInfo,
} from './bank-directory.service.js';
export { DirectoryFileError } from './directory-files.js';
export { abaChecksumIsValid, checkRoutingNumber, type IdentifierCheck } from './routing-number.js';
export { checkBic, countryName, isCountryCode, type ParsedBic } from './bic.js';
export { checkIban, electronicIban, looksLikeIban, usesIban, type ParsedIban } from './iban.js';
