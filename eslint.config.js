import js from '@eslint/js';
import nextPlugin from '@next/eslint-plugin-next';
import reactHooks from 'eslint-plugin-react-hooks';
import globals from 'globals';
import tseslint from 'typescript-eslint';

// lib/domain is pure: the diff, the renewal statistics, the failover pairing and the
// alert rules take time and data as arguments and do no I/O, so they can be tested
// table by table and reused by every backend. This rule keeps it that way.
const DOMAIN_FORBIDDEN = {
  paths: [
    ...['pg', 'ioredis', 'etcd3', 'redlock', 'prisma', 'pglite-prisma-adapter', 'server-only', 'react', 'react-dom'].map((name) => ({
      name,
      message: 'lib/domain is pure: no database, network or framework imports (docs/architecture.md, "Rules that hold the layout").',
    })),
    ...['fs', 'net', 'http', 'https', 'child_process', 'dgram', 'dns', 'tls', 'worker_threads'].flatMap((name) => [
      { name, message: 'lib/domain does no I/O: pass data and time in as arguments.' },
      { name: `node:${name}`, message: 'lib/domain does no I/O: pass data and time in as arguments.' },
    ]),
  ],
  patterns: [
    { group: ['next', 'next/*', '@next/*'], message: 'lib/domain must not import next.' },
    { group: ['@prisma/*', '**/generated/prisma*', '**/generated/prisma/**'], message: 'lib/domain must not import prisma.' },
    { group: ['pg-*', '@electric-sql/*'], message: 'lib/domain must not import database drivers.' },
    {
      group: ['**/db', '**/db/**', '**/sources/**', '**/collector/**', '**/alerts/**', '**/admin/**', '**/queries/**', '**/lease/**', '@/lib/*', '!@/lib/domain'],
      message: 'lib/domain must not import the I/O layers of lib; they import the domain, not the other way round.',
    },
  ],
};

// lib/lease is the lease library applications use: it must stand alone, so that it can be
// copied or published without the rest of Leasehold. It imports packages and its own files only.
const LEASE_FORBIDDEN = {
  patterns: [
    {
      group: ['../*', '@/*'],
      message: 'lib/lease stands alone (it is copied or published on its own): import only packages and files of lib/lease.',
    },
  ],
};

// lib reads the time only through lib/time (a Clock handed in, or systemClock), so that its
// tests can run on a clock they move by hand. lib/lease stands alone and keeps its own reads.
const TIME_MESSAGE = 'lib reads the time through lib/time/clock.ts: a Clock handed in (clock.wall(), clock.mono()), or systemClock.';

export default tseslint.config(
  {
    ignores: ['.next/**', 'node_modules/**', 'lib/generated/**', 'next-env.d.ts', '.leasehold/**', 'test-results/**', 'playwright-report/**', '.scratch/**', 'bench/out/**'],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      '@typescript-eslint/no-non-null-assertion': 'off',
      'no-console': 'off',
    },
  },
  {
    files: ['app/**/*.{ts,tsx}', 'components/**/*.{ts,tsx}'],
    languageOptions: { globals: { ...globals.browser } },
    plugins: { '@next/next': nextPlugin, 'react-hooks': reactHooks },
    rules: {
      ...nextPlugin.configs.recommended.rules,
      ...nextPlugin.configs['core-web-vitals'].rules,
      ...reactHooks.configs.recommended.rules,
    },
  },
  {
    files: ['lib/domain/**/*.ts'],
    ignores: ['lib/domain/**/*.test.ts'],
    rules: { 'no-restricted-imports': ['error', DOMAIN_FORBIDDEN] },
  },
  {
    files: ['lib/lease/**/*.ts'],
    ignores: ['lib/lease/**/*.test.ts'],
    rules: { 'no-restricted-imports': ['error', LEASE_FORBIDDEN] },
  },
  {
    files: ['lib/**/*.{ts,tsx}'],
    ignores: ['lib/time/**', 'lib/lease/**', '**/*.test.ts', '**/*.test.tsx'],
    rules: {
      'no-restricted-properties': [
        'error',
        { object: 'Date', property: 'now', message: TIME_MESSAGE },
        { object: 'performance', property: 'now', message: TIME_MESSAGE },
      ],
      'no-restricted-syntax': ['error', { selector: "NewExpression[callee.name='Date'][arguments.length=0]", message: TIME_MESSAGE }],
    },
  },
);
