#!/usr/bin/env node
// `npx leasehold` entry: the CLI is TypeScript (it shares lib/ with the server), so load it through tsx.
import { register } from 'tsx/esm/api';

register();
await import('./leasehold.ts');
