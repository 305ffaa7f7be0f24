import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../../test/support/run-cli.js';

// The `openbaas directory` command on an embedded database folder (PGlite only: PostgreSQL has
// no data folder). The import itself is tested on both databases in directory-import.test.ts.



describe('openbaas directory', () => {
  it('imports a BIC list, reports where each kind came from, and refuses bad input or a file with no records with a plain message', async () => {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'openbaas-directory-command-'));
    const env = { DATA_DIR: path.join(folder, 'data') };
    const bicFile = path.join(folder, 'bics.csv');
    fs.writeFileSync(bicFile, 'SWIFT CODE,NAME,TOWN NAME\nDEUTDEFF,DEUTSCHE BANK AG,FRANKFURT\nCOBADEFF,COMMERZBANK AG,FRANKFURT\n');
    try {
      const missing = await runCli(['directory', 'import'], env);
      expect(missing.code).toBe(1);
      expect(missing.stderr).toMatch(/^openbaas: directory import needs --fedach FILE, --fedwire FILE and\/or --bic FILE\n\nUsage: /);

      // A refused file changes nothing, where there is no database yet too: none is created (until
      // 2026-12-07 the database and its encryption key were created before the file was read).
      const noFile = await runCli(['directory', 'import', '--fedach', path.join(folder, 'nowhere.txt')], env);
      expect(noFile.code).toBe(1);
      expect(noFile.stderr).toMatch(/^openbaas: .*nowhere\.txt/);
      expect(fs.existsSync(env.DATA_DIR)).toBe(false);

      const imported = await runCli(['directory', 'import', '--bic', bicFile, '--json'], env);
      expect(imported.stderr).toBe('');
      expect(imported.code).toBe(0);
      expect(JSON.parse(imported.stdout)).toEqual([{ kind: 'BIC', fileName: 'bics.csv', recordCount: 2 }]);

      const status = await runCli(['directory', 'status', '--json'], env);
      expect(status.code).toBe(0);
      // camelCase, as the import prints it (until 2026-12-05 file_name, record_count, loaded_at).
      expect(JSON.parse(status.stdout)).toEqual([
        { kind: 'BIC', origin: 'IMPORT', version: expect.stringMatching(/^[0-9a-f]{64}$/), fileName: 'bics.csv', recordCount: 2, loadedAt: expect.any(String) },
      ]);
      const statusText = await runCli(['directory', 'status'], env);
      expect(statusText.stdout).toMatch(/^BIC\s+IMPORT\s+2 records {2}bics\.csv {2}\d{4}-\d\d-\d\dT/);

      const wrongFile = await runCli(['directory', 'import', '--fedach', bicFile], env);
      expect(wrongFile.code).toBe(1);
      expect(wrongFile.stderr).toMatch(/^openbaas: bics\.csv: line 1: a FedACH directory line is 155 characters long/);
      expect(wrongFile.stderr).not.toMatch(/\n\s+at /);

      // A file with no records is refused like a bad one: it would empty the kind for good.
      const headerOnly = path.join(folder, 'header-only.csv');
      fs.writeFileSync(headerOnly, 'SWIFT CODE,NAME,TOWN NAME\n');
      const emptyFedwire = path.join(folder, 'fpddir.txt');
      fs.writeFileSync(emptyFedwire, '');
      for (const [args, message] of [
        [['--bic', headerOnly], 'header-only.csv: the file holds no records, only a header row'],
        [['--fedwire', emptyFedwire], 'fpddir.txt: the file holds no records'],
      ] as const) {
        const refused = await runCli(['directory', 'import', ...args], env);
        expect(refused.stdout).toBe('');
        expect(refused.stderr).toBe(`openbaas: ${message}\n`);
        expect(refused.code).toBe(1);
      }
      const unchanged = await runCli(['directory', 'status', '--json'], env);
      expect(JSON.parse(unchanged.stdout)).toEqual(JSON.parse(status.stdout));
    } finally {
      fs.rmSync(folder, { recursive: true, force: true });
    }
  });
});
