// The docs' shell commands whose output is read by another command (a pipe, a redirect, a
// $(...)) work as written. `npm run X` prints its banner ("> leasehold@0.1.0 leasehold") on
// standard output before the command's own: a JSON reader behind it fails and what the
// command printed (a token's secret, shown once) is lost. Each such command is found in the
// docs and run against an embedded store, with paths under /etc moved to a temporary folder.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tokenPrincipal } from '../../lib/auth/tokens';
import { openStore } from '../../lib/db/store';
import { freshPgliteDirectory } from '../support/databases';
import { run } from '../support/run';
import { ROOT } from '../support/services';

type DocCommand = { file: string; command: string };

/** Every command of the shell blocks of README.md and docs/*.md, its `\` continuations joined. */
function docCommands(): DocCommand[] {
  const files = ['README.md', ...readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
  const commands: DocCommand[] = [];
  for (const file of files) {
    const blocks = readFileSync(path.join(ROOT, file), 'utf8').matchAll(/^```(?:sh|bash|shell|console)\n([\s\S]*?)^```/gm);
    for (const [, body] of blocks) {
      for (const command of body!.replace(/\\\n\s*/g, ' ').split('\n')) if (command.trim() && !command.trim().startsWith('#')) commands.push({ file, command: command.trim() });
    }
  }
  return commands;
}

/** Whether an `npm run` (without -s) has its standard output read: piped, redirected or substituted. */
function npmBannerReachesOutput(command: string): boolean {
  const plainNpmRun = /\bnpm run (?!-s\b|--silent\b)/;
  const code = command.replace(/\s#.*$/, '');
  // $(npm run ...) or `npm run ...`: substituted.
  if (/\$\(\s*npm run (?!-s\b|--silent\b)/.test(code) || /`\s*npm run (?!-s\b|--silent\b)/.test(code)) return true;
  // Cut at the operators between commands (with spaces around: `held|free` in a synopsis is no
  // pipe), keeping the pipes: a piece followed by a pipe is read by the next.
  const pieces = code.split(/\s(\|\||&&|;|\|)\s/);
  for (let i = 0; i < pieces.length; i += 2) {
    if (!plainNpmRun.test(pieces[i]!)) continue;
    if (pieces[i + 1] === '|') return true;
    // A redirect of standard output (> or >>, not 2> nor >&2).
    if (/(^|\s)>>?(?!&)/.test(pieces[i]!.slice(pieces[i]!.search(plainNpmRun)))) return true;
  }
  return false;
}

/** Runs `command` in bash from the project directory (a pipe fails if any command in it fails). */
const bash = (command: string, env: Record<string, string | undefined>) => run('bash', ['-o', 'pipefail', '-c', command], { env, timeoutMs: 90_000 });

describe('commands in the docs whose output another command reads', () => {
  it('the check finds the banner of a plain npm run reaching a pipe, a file or $(...), and lets -s and stdin pipes by', () => {
    // The recipe as docs/security.md gave it before: its token was lost.
    expect(npmBannerReachesOutput(`npm run leasehold -- tokens create --name p --json | node -pe 'JSON.parse(x).token' > f`)).toBe(true);
    expect(npmBannerReachesOutput('npm run leasehold -- leases --json > leases.json')).toBe(true);
    expect(npmBannerReachesOutput('TOKEN=$(npm run leasehold -- tokens create --name p)')).toBe(true);
    expect(npmBannerReachesOutput(`npm run -s leasehold -- tokens create --name p --json | node -pe 'x' > f`)).toBe(false);
    expect(npmBannerReachesOutput(`printf '%s\\n' "$P" | npm run leasehold -- users add alice --role admin`)).toBe(false);
    expect(npmBannerReachesOutput('npm run leasehold -- leases 2>&1')).toBe(false);
    expect(npmBannerReachesOutput('npm run leasehold -- sources      # is it up?')).toBe(false);
  });

  it('none in the docs lets npm print its banner into what another command reads', () => {
    const commands = docCommands();
    expect(commands.length).toBeGreaterThan(50);
    expect(commands.filter((c) => npmBannerReachesOutput(c.command))).toEqual([]);
  });

  describe('run as written, against an embedded store', () => {
    let dir: { dataDir: string; remove(): void };
    let etc: string;
    beforeAll(async () => {
      dir = await freshPgliteDirectory();
      etc = mkdtempSync(path.join(tmpdir(), 'lh-docs-etc-'));
    });
    afterAll(() => {
      dir?.remove();
      rmSync(etc, { recursive: true, force: true });
    });

    it("security.md's Prometheus recipe leaves the token in the file, and the store accepts it", async () => {
      const piped = docCommands().filter((c) => /leasehold\b.*\|/.test(c.command) && /\|\s*node\b/.test(c.command));
      expect(piped.map((c) => c.file)).toContain('docs/security.md');
      for (const { file, command } of piped) {
        const local = command.replaceAll('/etc/', `${etc}/`);
        const written = local.match(/>\s*(\S+)\s*$/)?.[1];
        expect(written, `${file}: ${command} saves nothing`).toBeDefined();
        mkdirSync(path.dirname(written!), { recursive: true });
        const result = await bash(local, { DATABASE_URL: undefined, LEASEHOLD_CONFIG: undefined, LEASEHOLD_DATA_DIR: dir.dataDir });
        expect(result.code, `${file}: ${command}\n${result.stderr}`).toBe(0);
        const token = readFileSync(written!, 'utf8').trim();
        expect(token).toMatch(/^lh_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/);
        const store = await openStore({ kind: 'pglite', dataDir: dir.dataDir });
        try {
          expect(await tokenPrincipal(store, token, '127.0.0.1')).toMatchObject({ name: 'prometheus', role: 'viewer', method: 'token' });
        } finally {
          await store.close();
        }
      }
    });
  });
});
