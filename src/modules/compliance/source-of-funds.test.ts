import { PDFDocument } from 'pdf-lib';
import { describe, expect, it } from 'vitest';
import { renderDeclarationPdf, type DeclarationInput } from './source-of-funds.js';

const input: DeclarationInput = {
  declarantKind: 'INDIVIDUAL',
  declarantName: 'Ada Lovelace',
  customerId: '0190f0b4-0000-7000-8000-000000000001',
  onboardingId: '0190f0b4-0000-7000-8000-000000000002',
  sources: [
    { type: 'INCOME', description: 'Salary as an analyst' },
    { type: 'OTHER', description: 'Royalties for notes on the Analytical Engine' },
  ],
  declaredAt: new Date('2026-03-01T12:00:00Z'),
};

describe('source-of-funds declaration PDF', () => {
  it('is a real PDF that pdf-lib can open again, with its metadata from the declaration', async () => {
    const bytes = await renderDeclarationPdf(input);
    expect(Buffer.from(bytes.subarray(0, 5)).toString('latin1')).toBe('%PDF-');
    const reopened = await PDFDocument.load(bytes);
    expect(reopened.getPageCount()).toBe(1);
    expect(reopened.getTitle()).toBe('Source of Funds Declaration');
    expect(reopened.getCreationDate()?.toISOString()).toBe('2026-03-01T12:00:00.000Z');
    expect(reopened.getAuthor()).toBe('Ada Lovelace');
    expect(reopened.getKeywords()).toBe('INCOME OTHER');
  });

  it('is the same file for the same input (dates come from the injected clock)', async () => {
    expect(Buffer.from(await renderDeclarationPdf(input)).equals(Buffer.from(await renderDeclarationPdf(input)))).toBe(true);
  });

  it('survives characters the standard fonts cannot draw, and long text over several pages', async () => {
    const bytes = await renderDeclarationPdf({
      ...input,
      declarantName: 'Ἀριστοτέλης 山田 😀',
      sources: Array.from({ length: 9 }, () => ({ type: 'OTHER' as const, description: 'word '.repeat(100) + 'x'.repeat(300) })),
    });
    const reopened = await PDFDocument.load(bytes);
    expect(reopened.getPageCount()).toBeGreaterThan(1);
  });
});
