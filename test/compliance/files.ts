import QRCode from 'qrcode';
import { PDFDocument } from 'pdf-lib';

/** Small real files for upload tests: a PDF, a PNG and a JPEG (baseline JFIF header), and things that are not. */

export async function samplePdf(text = 'Sample document'): Promise<Buffer> {
  const document = await PDFDocument.create();
  const page = document.addPage([200, 100]);
  page.drawText(text, { x: 10, y: 50, size: 10 });
  document.setCreationDate(new Date('2026-01-01T00:00:00Z'));
  document.setModificationDate(new Date('2026-01-01T00:00:00Z'));
  return Buffer.from(await document.save());
}

export async function samplePng(): Promise<Buffer> {
  return QRCode.toBuffer('sample', { type: 'png', width: 64 });
}

/** The first bytes of a JPEG/JFIF file, enough for any content sniffer, followed by filler and the end marker. */
export function sampleJpeg(): Buffer {
  const header = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00]);
  return Buffer.concat([header, Buffer.alloc(64, 0x20), Buffer.from([0xff, 0xd9])]);
}

export function sampleText(): Buffer {
  return Buffer.from('This is plain text pretending to be a PDF.\n');
}

/** A GIF: a real image, but not an accepted format. */
export function sampleGif(): Buffer {
  return Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');
}

export interface MultipartPart {
  name: string;
  value?: string;
  file?: { content: Buffer; fileName: string; contentType: string };
}

/** Encodes form parts as multipart/form-data; returns the body and its Content-Type header. */
export function multipart(parts: MultipartPart[]): { body: Buffer; contentType: string } {
  const boundary = `----openbaas-test-${Math.random().toString(16).slice(2)}`;
  const chunks: Buffer[] = [];
  for (const part of parts) {
    chunks.push(Buffer.from(`--${boundary}\r\n`));
    if (part.file) {
      chunks.push(Buffer.from(`Content-Disposition: form-data; name="${part.name}"; filename="${part.file.fileName}"\r\nContent-Type: ${part.file.contentType}\r\n\r\n`));
      chunks.push(part.file.content);
      chunks.push(Buffer.from('\r\n'));
    } else {
      chunks.push(Buffer.from(`Content-Disposition: form-data; name="${part.name}"\r\n\r\n${part.value ?? ''}\r\n`));
    }
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}
