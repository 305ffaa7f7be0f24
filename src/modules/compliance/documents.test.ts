import { describe, expect, it } from 'vitest';
import { cleanFileName, sha256, sniffDocumentType } from './documents.js';
import { sampleGif, sampleJpeg, samplePdf, samplePng, sampleText } from '../../../test/compliance/files.js';

describe('document content sniffing', () => {
  it('recognises PDF, PNG and JPEG by their bytes', async () => {
    expect(await sniffDocumentType(await samplePdf())).toBe('application/pdf');
    expect(await sniffDocumentType(await samplePng())).toBe('image/png');
    expect(await sniffDocumentType(sampleJpeg())).toBe('image/jpeg');
  });

  it('refuses text, other images and empty files whatever they are called', async () => {
    expect(await sniffDocumentType(sampleText())).toBeUndefined();
    expect(await sniffDocumentType(sampleGif())).toBeUndefined();
    expect(await sniffDocumentType(Buffer.alloc(0))).toBeUndefined();
  });

  it('hashes with SHA-256', () => {
    expect(sha256(Buffer.from('abc')).toString('hex')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('keeps only the last segment of a file name, without control characters', () => {
    expect(cleanFileName('C:\\Users\\ada\\w9.pdf')).toBe('w9.pdf');
    expect(cleanFileName('../../etc/passwd')).toBe('passwd');
    expect(cleanFileName('bad\u0000name\n.pdf')).toBe('badname.pdf');
    expect(cleanFileName('')).toBeNull();
    expect(cleanFileName(undefined)).toBeNull();
    expect(cleanFileName('x'.repeat(400))).toHaveLength(255);
  });
});
