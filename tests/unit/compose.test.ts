import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { loadAppConfig } from '@/lib/root';

const root = path.resolve(__dirname, '..', '..');

it('every file docker-compose.yml mounts is in the repository, and its Leasehold config is valid', () => {
  const compose = readFileSync(path.join(root, 'docker-compose.yml'), 'utf8');
  const mounted = [...compose.matchAll(/^\s*-\s*\.\/([^:\s]+):/gm)].map((m) => m[1]!);
  expect(mounted).toContain('docs/compose/leasehold.config.json');
  const tracked = execFileSync('git', ['ls-files', '--', ...mounted], { cwd: root, encoding: 'utf8' }).split('\n').filter(Boolean);
  expect(tracked.sort()).toEqual([...mounted].sort());
  const config = loadAppConfig({ env: { LEASEHOLD_CONFIG: path.join(root, 'docs/compose/leasehold.config.json'), PG_PASSWORD: 'x' }, cwd: root });
  expect(config.sources.map((s) => s.name)).toEqual(['pg-main', 'redis-main', 'etcd-main']);
});
