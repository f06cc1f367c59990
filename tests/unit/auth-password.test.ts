// Passwords (lib/auth/password.ts): scrypt in its stored form, a wrong or unreadable hash is
// false (never an exception), and a user without a hash costs as much as one with: the decoy
// derivation is really done. What a new password must be (passwordProblem).
import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { hashPassword, MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH, passwordProblem, verifyPassword } from '../../lib/auth/password';

const PASSWORD = 'correct horse battery staple';

describe('hashPassword and verifyPassword', () => {
  it('round-trips, and refuses any other password', async () => {
    const stored = await hashPassword(PASSWORD);
    expect(await verifyPassword(PASSWORD, stored)).toBe(true);
    expect(await verifyPassword(`${PASSWORD} `, stored)).toBe(false);
    expect(await verifyPassword('Correct horse battery staple', stored)).toBe(false);
    expect(await verifyPassword('', stored)).toBe(false);
  });

  it('stores scrypt$32768$8$1$<16-byte salt>$<32-byte key>, salted anew each time', async () => {
    const [first, second] = [await hashPassword(PASSWORD), await hashPassword(PASSWORD)];
    for (const stored of [first, second]) {
      expect(stored).toMatch(/^scrypt\$32768\$8\$1\$[A-Za-z0-9+/]{22}==\$[A-Za-z0-9+/]{43}=$/);
      expect(stored).not.toContain(PASSWORD);
      const [, , , , salt, key] = stored.split('$');
      expect(Buffer.from(salt!, 'base64')).toHaveLength(16);
      expect(Buffer.from(key!, 'base64')).toHaveLength(32);
    }
    expect(first).not.toBe(second);
    expect(first.split('$')[4]).not.toBe(second.split('$')[4]);
  });

  it('compares passwords in one Unicode normal form (NFKC)', async () => {
    const stored = await hashPassword('ﬁnance-department-2026'); // U+FB01, the "fi" ligature
    expect(await verifyPassword('finance-department-2026', stored)).toBe(true);
  });

  it('a password longer than the maximum is false, even against its own hash', async () => {
    const long = 'x'.repeat(MAX_PASSWORD_LENGTH + 1);
    expect(await verifyPassword(long, await hashPassword(long))).toBe(false);
  });

  it.each([
    ['no hash (null)', null],
    ['empty', ''],
    ['not scrypt', 'bcrypt$2b$10$abcdefghijklmnopqrstuv'],
    ['too few parts', 'scrypt$32768$8$1$c2FsdA=='],
    ['non-numeric parameters', 'scrypt$N$r$p$c2FsdA==$a2V5'],
    ['zero N', 'scrypt$0$8$1$c2FsdA==$a2V5'],
    ['N past the bound', `scrypt$${2 ** 21}$8$1$c2FsdA==$a2V5`],
    // Parameters parse() accepts but node's scrypt refuses: false, not an exception (a 500 at sign-in).
    ['N not a power of two', 'scrypt$3$8$1$c2FsdA==$a2V5'],
    ['N of 1', 'scrypt$1$8$1$c2FsdA==$a2V5'],
    ['past the memory limit', 'scrypt$2$8$16$c2FsdA==$a2V5'],
  ])('an unreadable stored hash (%s) is false, not an error', async (_label, stored) => {
    await expect(verifyPassword(PASSWORD, stored)).resolves.toBe(false);
  });

  it('checking against no hash or a garbage hash takes about as long as a real check (the decoy is derived)', async () => {
    const stored = await hashPassword(PASSWORD);
    await verifyPassword('warm-up', null); // the decoy's own hash is made once, on first use
    const median = async (stored: string | null) => {
      const times: number[] = [];
      for (let i = 0; i < 5; i++) {
        const started = performance.now();
        await verifyPassword('wrong password guess', stored);
        times.push(performance.now() - started);
      }
      return times.sort((a, b) => a - b)[2]!;
    };
    const real = await median(stored);
    const none = await median(null);
    const garbage = await median('garbage');
    const refused = await median('scrypt$3$8$1$c2FsdA==$a2V5');
    // Loose on purpose (the machine is busy): a skipped derivation is ~0 ms against tens of ms.
    expect(real).toBeGreaterThan(5);
    for (const [label, ms] of [['null', none], ['garbage', garbage], ['refused parameters', refused]] as const) {
      expect(ms, `${label}: ${ms.toFixed(1)} ms against ${real.toFixed(1)} ms for a real check`).toBeGreaterThan(real * 0.3);
    }
  }, 60_000); // 21 scrypt derivations: seconds on a busy 2-core machine
});

describe('passwordProblem', () => {
  it.each([
    ['a'.repeat(MIN_PASSWORD_LENGTH - 1), /at least 12 characters/],
    ['', /at least 12 characters/],
    ['a'.repeat(MAX_PASSWORD_LENGTH + 1), /at most 1024 characters/],
    [' leading-space-password', /may not begin or end with spaces/],
    ['trailing-space-password ', /may not begin or end with spaces/],
    ['\ttab-padded-password', /may not begin or end with spaces/],
    ['newline-padded-password\n', /may not begin or end with spaces/],
  ])('refuses %j', (password, message) => {
    expect(passwordProblem(password)).toMatch(message);
  });

  it.each(['a'.repeat(MIN_PASSWORD_LENGTH), 'a'.repeat(MAX_PASSWORD_LENGTH), 'inner spaces are fine', 'ünïcödé-pässwörd'])('accepts %j', (password) => {
    expect(passwordProblem(password)).toBeNull();
  });
});
