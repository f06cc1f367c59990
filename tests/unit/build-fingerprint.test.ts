// npm start builds again when the source changed since the build, and only then.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { FINGERPRINT_FILE, sourceFingerprint, staleBuild } from '../../scripts/tooling/build-fingerprint';

let root: string;
afterEach(() => rmSync(root, { recursive: true, force: true }));

function project() {
  root = mkdtempSync(path.join(os.tmpdir(), 'leasehold-fingerprint-'));
  for (const dir of ['app', 'lib/domain', 'lib/generated/prisma', '.next']) mkdirSync(path.join(root, dir), { recursive: true });
  writeFileSync(path.join(root, 'app', 'page.tsx'), 'export default () => null;');
  writeFileSync(path.join(root, 'lib', 'domain', 'health.ts'), 'export const LATE = 0.25;');
  writeFileSync(path.join(root, 'package.json'), '{}');
  return root;
}
const built = (dir: string) => {
  writeFileSync(path.join(dir, '.next', 'BUILD_ID'), 'x');
  writeFileSync(path.join(dir, FINGERPRINT_FILE), `${sourceFingerprint(dir)}\n`);
};

it('says why a build is needed: none, none recorded, or the source changed', () => {
  const dir = project();
  expect(staleBuild(dir)).toBe('no build found');
  writeFileSync(path.join(dir, '.next', 'BUILD_ID'), 'x');
  expect(staleBuild(dir)).toBe('the build does not record what it was made from');
  built(dir);
  expect(staleBuild(dir)).toBeNull();
  writeFileSync(path.join(dir, 'lib', 'domain', 'health.ts'), 'export const LATE = 0.3;');
  expect(staleBuild(dir)).toBe('the source has changed since the build');
  built(dir);
  writeFileSync(path.join(dir, 'app', 'new-page.tsx'), 'export default () => null;');
  expect(staleBuild(dir)).toBe('the source has changed since the build');
});

it('ignores tests, the generated client and rewritten-but-equal files', () => {
  const dir = project();
  built(dir);
  writeFileSync(path.join(dir, 'lib', 'domain', 'health.test.ts'), 'it("x", () => {});');
  writeFileSync(path.join(dir, 'lib', 'generated', 'prisma', 'client.ts'), '// made by the build');
  writeFileSync(path.join(dir, 'app', 'page.tsx'), 'export default () => null;'); // same bytes, new mtime
  expect(staleBuild(dir)).toBeNull();
});
