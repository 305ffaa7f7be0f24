import type { ColumnType } from 'kysely';
import type { OnboardingKind, OnboardingStatus, OnboardingStrategy, VerificationStatus } from './onboarding.js';

type NullableJson<T> = ColumnType<T | null, string | null, string | null>;

export interface ComplianceSettingsTable {
  client_id: string;
  onboarding_strategy: OnboardingStrategy;
  updated_at: Date;
}

export interface OnboardingsTable {
  client_id: string;
  id: string;
  customer_id: string;
  kind: OnboardingKind;
  strategy: OnboardingStrategy;
  status: OnboardingStatus;
  verification_status: VerificationStatus;
  previous_onboarding_id: string | null;
  sdk_token_sha256: Buffer | null;
  sdk_expires_at: Date | null;
  sdk_completed_at: Date | null;
  error_type: string | null;
  error_message: string | null;
  decided_at: Date | null;
  archived_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface StoredDeclaration {
  sources: Array<{ type: string; description: string | null }>;
}

export interface ComplianceDocumentsTable {
  client_id: string;
  id: string;
  customer_id: string;
  onboarding_id: string | null;
  document_type: string;
  file_name: string | null;
  content_type: string;
  size_bytes: number;
  sha256: Buffer;
  content: Buffer;
  declaration: NullableJson<StoredDeclaration>;
  created_at: Date;
}

export interface ComplianceCheckOverridesTable {
  client_id: string;
  customer_id: string;
  check_name: string;
  passed: boolean;
  updated_at: Date;
}

declare module '../../platform/db/schema.js' {
  interface Database {
    compliance_settings: ComplianceSettingsTable;
    onboardings: OnboardingsTable;
    compliance_documents: ComplianceDocumentsTable;
    compliance_check_overrides: ComplianceCheckOverridesTable;
  }
}
