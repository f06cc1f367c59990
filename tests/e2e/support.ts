import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Page } from '@playwright/test';

/** Collects console errors and failed page loads; a page that logs an error fails its test. */
export function watchConsole(page: Page): string[] {
  const errors: string[] = [];
  // Each with the page it came from: a failure then says where to look.
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(`${message.text()} (on ${new URL(page.url()).pathname})`);
  });
  page.on('pageerror', (error) => errors.push(`${error.message} (on ${new URL(page.url()).pathname})`));
  return errors;
}

const SCREENSHOTS = path.resolve('test-results', 'screenshots');

/** Saves a full-page screenshot as a test artifact (test-results/screenshots/<name>.png). */
export async function screenshot(page: Page, name: string) {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
}
