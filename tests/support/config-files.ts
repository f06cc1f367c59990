// Configs as the server loads them, from a config file written for the test (or none) and the
// environment given, in a scratch folder of their own.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, type Config } from '../../lib/config';
import { loadAppConfig } from '../../lib/root';

export function configFiles(name: string) {
  const dir = mkdtempSync(path.join(os.tmpdir(), `leasehold-${name}-`));
  let files = 0;
  /** A config file holding `content` (a string as it is, anything else as JSON); its path. */
  const withFile = (content: unknown): string => {
    const file = path.join(dir, `config-${files++}.json`);
    writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
    return file;
  };
  /** A config as the server loads it: from `file` (absent: no file) and `env` only. */
  const configOf = (file: unknown, env: Record<string, string> = {}): Config =>
    loadAppConfig({ env: { ...(file === undefined ? {} : { LEASEHOLD_CONFIG: withFile(file) }), ...env }, cwd: dir });
  /** The problems a ConfigError lists for this file and environment (throws when there is none). */
  const problemsOf = (file: unknown, env: Record<string, string> = {}): string[] => {
    try {
      configOf(file, env);
    } catch (error) {
      if (error instanceof ConfigError) return error.problems;
      throw error;
    }
    throw new Error('expected a ConfigError');
  };
  return { dir, withFile, configOf, problemsOf, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
