import type { Color, PDFDocument, PDFFont, PDFPage } from 'pdf-lib';
import { validationError } from '../../platform/http/errors.js';
import { assertPlainText, isBlank } from '../../platform/text.js';

/**
 * pdf-lib is loaded when the first PDF is made, not when the server starts: loading it was about
 * 0.2 s of every start on a two-CPU machine (docs/benchmarks.md, "Start and restart").
 */
async function newPdf(): Promise<{ document: PDFDocument; font: PDFFont; bold: PDFFont; textColor: Color }> {
  const { PDFDocument: Document, StandardFonts, rgb } = await import('pdf-lib');
  const document = await Document.create();
  const font = await document.embedFont(StandardFonts.Helvetica);
  const bold = await document.embedFont(StandardFonts.HelveticaBold);
  return { document, font, bold, textColor: rgb(0.1, 0.1, 0.1) };
}

/**
 * The source-of-funds declaration: the sources a customer declares, turned into a real PDF
 * (pdf-lib) that is stored as the customer's DOC_SOURCE_OF_FUNDS document.
 */

export const fundSourceTypes = [
  'INCOME',
  'INVESTMENTS',
  'SALE_OF_ASSETS',
  'RETIREMENT_FUNDS',
  'INHERITANCE_OR_GIFT',
  'SAVINGS',
  'LOAN_PROCEEDS',
  'LEGAL_SETTLEMENT',
  'OTHER',
] as const;
export type FundSourceType = (typeof fundSourceTypes)[number];

export const fundSourceLabels: Record<FundSourceType, string> = {
  INCOME: 'Employment or business income',
  INVESTMENTS: 'Investments (dividends, interest, capital gains)',
  SALE_OF_ASSETS: 'Sale of assets (property, vehicles, a business)',
  RETIREMENT_FUNDS: 'Retirement funds or pension',
  INHERITANCE_OR_GIFT: 'Inheritance or gift',
  SAVINGS: 'Savings',
  LOAN_PROCEEDS: 'Loan proceeds',
  LEGAL_SETTLEMENT: 'Legal settlement',
  OTHER: 'Other',
};

export const fundSourceDescriptionLengthMax = 500;

export interface DeclaredSource {
  type: FundSourceType;
  description: string | null;
}

export interface DeclarationInput {
  /** Individual or business. */
  declarantKind: 'INDIVIDUAL' | 'BUSINESS';
  declarantName: string;
  customerId: string;
  onboardingId: string;
  sources: readonly DeclaredSource[];
  /** The moment of the declaration, from the injected clock. */
  declaredAt: Date;
}

const pageSize: [number, number] = [595.28, 841.89]; // A4 in points
const margin = 56;
const bodySize = 11;
const lineGap = 5;

/**
 * The standard PDF fonts only know WinAnsi characters; anything else (a name in Greek or
 * Japanese, an emoji) is shown as "?" rather than failing the whole declaration.
 */
function printable(font: PDFFont, text: string): string {
  const known = new Set(font.getCharacterSet());
  let result = '';
  for (const character of text.normalize('NFC')) {
    const codePoint = character.codePointAt(0) ?? 0x3f;
    result += known.has(codePoint) ? character : '?';
  }
  return result;
}

/** Splits text into lines that fit the width, breaking at spaces (and inside over-long words). */
function wrap(font: PDFFont, text: string, size: number, width: number): string[] {
  const lines: string[] = [];
  for (const paragraph of text.split(/\r?\n/)) {
    let line = '';
    for (const word of paragraph.split(/\s+/).filter(Boolean)) {
      const candidate = line ? `${line} ${word}` : word;
      if (font.widthOfTextAtSize(candidate, size) <= width) {
        line = candidate;
        continue;
      }
      if (line) lines.push(line);
      let rest = word;
      while (font.widthOfTextAtSize(rest, size) > width) {
        let cut = rest.length - 1;
        while (cut > 1 && font.widthOfTextAtSize(rest.slice(0, cut), size) > width) cut--;
        lines.push(rest.slice(0, cut));
        rest = rest.slice(cut);
      }
      line = rest;
    }
    lines.push(line);
  }
  return lines;
}

class Writer {
  private page: PDFPage;
  private y: number;

  constructor(
    private readonly document: PDFDocument,
    private readonly font: PDFFont,
    private readonly bold: PDFFont,
    private readonly textColor: Color,
  ) {
    this.page = document.addPage(pageSize);
    this.y = pageSize[1] - margin;
  }

  text(text: string, options: { size?: number; bold?: boolean; indent?: number; gapAfter?: number } = {}): void {
    const size = options.size ?? bodySize;
    const font = options.bold ? this.bold : this.font;
    const indent = options.indent ?? 0;
    for (const line of wrap(font, printable(font, text), size, pageSize[0] - 2 * margin - indent)) {
      if (this.y - size < margin) {
        this.page = this.document.addPage(pageSize);
        this.y = pageSize[1] - margin;
      }
      this.page.drawText(line, { x: margin + indent, y: this.y - size, size, font, color: this.textColor });
      this.y -= size + lineGap;
    }
    this.y -= options.gapAfter ?? 0;
  }
}

/** Builds the declaration PDF. Its dates come from `declaredAt`, so the same input gives the same file. */
export async function renderDeclarationPdf(input: DeclarationInput): Promise<Uint8Array> {
  const { document, font, bold, textColor } = await newPdf();
  const title = 'Source of Funds Declaration';
  document.setTitle(title);
  document.setSubject(`Onboarding ${input.onboardingId}`);
  document.setAuthor(input.declarantName);
  document.setKeywords(input.sources.map((source) => source.type));
  document.setProducer('OpenBaaS');
  document.setCreator('OpenBaaS compliance');
  document.setCreationDate(input.declaredAt);
  document.setModificationDate(input.declaredAt);

  const writer = new Writer(document, font, bold, textColor);
  writer.text(title, { size: 18, bold: true, gapAfter: 10 });
  const declarant = input.declarantKind === 'BUSINESS' ? 'Business' : 'Declarant';
  writer.text(`${declarant}: ${input.declarantName}`);
  writer.text(`Customer ID: ${input.customerId}`);
  writer.text(`Onboarding ID: ${input.onboardingId}`);
  writer.text(`Date of declaration: ${input.declaredAt.toISOString().replace('T', ' ').slice(0, 19)} UTC`, { gapAfter: 12 });

  writer.text('Declared sources of funds', { size: 13, bold: true, gapAfter: 4 });
  input.sources.forEach((source, index) => {
    writer.text(`${index + 1}. ${fundSourceLabels[source.type]} (${source.type})`, { bold: true });
    if (source.description) writer.text(source.description, { indent: 16 });
  });

  const subject = input.declarantKind === 'BUSINESS' ? 'the business named above' : 'me';
  writer.text('', { gapAfter: 8 });
  writer.text(
    `I declare that the funds to be held and moved through this account by ${subject} come from the sources listed above, ` +
      'that they are not the proceeds of any crime, and that the information given is true and complete. ' +
      'I will report any material change in these sources without delay.',
    { gapAfter: 24 },
  );
  writer.text(`Declared electronically by ${input.declarantName} on ${input.declaredAt.toISOString().slice(0, 10)}.`);

  return document.save({ useObjectStreams: false });
}

/**
 * A one-page PDF the sandbox puts on file for a form the person did not upload (a FATCA form, for
 * example), so the sandbox can complete an onboarding in one call. It says plainly that it is a
 * sandbox placeholder and not the form itself.
 */
export async function renderSandboxFormPdf(input: { title: string; personName: string; customerId: string; onboardingId: string; at: Date }): Promise<Uint8Array> {
  const { document, font, bold, textColor } = await newPdf();
  document.setTitle(`${input.title} (sandbox placeholder)`);
  document.setSubject(`Onboarding ${input.onboardingId}`);
  document.setProducer('OpenBaaS');
  document.setCreator('OpenBaaS sandbox');
  document.setCreationDate(input.at);
  document.setModificationDate(input.at);
  const writer = new Writer(document, font, bold, textColor);
  writer.text(`${input.title} (sandbox placeholder)`, { size: 18, bold: true, gapAfter: 10 });
  writer.text(`Person: ${input.personName}`);
  writer.text(`Customer ID: ${input.customerId}`);
  writer.text(`Onboarding ID: ${input.onboardingId}`);
  writer.text(`Put on file: ${input.at.toISOString().replace('T', ' ').slice(0, 19)} UTC`, { gapAfter: 12 });
  writer.text(
    'The OpenBaaS sandbox generated this page in place of the form, because the onboarding was completed in one call ' +
      '(POST /v1/sandbox/onboardings/:onboardingId/outcome with completeRequirements, or the magic last name "Instant"). ' +
      'It is not a tax form and carries no information about the person.',
  );
  return document.save({ useObjectStreams: false });
}

/**
 * Checks the declared sources: each type at most once; OTHER needs a description; descriptions
 * are trimmed and kept within their limit. Errors name the field by its path.
 */
export function normaliseSources(input: ReadonlyArray<{ type: FundSourceType; description?: string | undefined }>): DeclaredSource[] {
  const seen = new Set<FundSourceType>();
  return input.map((source, index) => {
    if (seen.has(source.type)) throw validationError(`sources[${index}].type`, `${source.type} is declared twice; declare each source once`);
    seen.add(source.type);
    // The text rule of every free text (it goes into the declaration's PDF; until 2026-12-02 a
    // right-to-left override passed here alone; found by an audit). Text that shows nothing is none.
    assertPlainText(source.description, `sources[${index}].description`);
    const description = source.description === undefined || isBlank(source.description) ? '' : source.description.trim();
    if (source.type === 'OTHER' && description === '') throw validationError(`sources[${index}].description`, 'is required for OTHER');
    return { type: source.type, description: description === '' ? null : description };
  });
}
