import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { test, type Page } from '@playwright/test';

// Should React ever fail to hydrate a page again (#418, a console error that fails the test):
// every element the server sent is remembered when the document has been parsed, and the page
// then logs (as a warning) the topmost elements that are new, i.e. the part React threw away and
// rendered again, and what the server had sent there. (The last such defect: the theme script
// in <head> came from a 'use client' module; see components/theme-script.ts.)
const HYDRATION_PROBE = `(() => {
  const old = new WeakSet();
  let serverHtml = '';
  document.addEventListener('DOMContentLoaded', () => {
    for (const el of document.querySelectorAll('*')) old.add(el);
    serverHtml = document.body ? document.body.innerHTML : '';
  });
  let reported = false;
  const probe = (text) => {
    if (reported || !/#418/.test(String(text))) return;
    reported = true;
    setTimeout(() => {
      const fresh = [];
      for (const el of document.querySelectorAll('body *')) {
        if (!old.has(el) && el.parentElement && old.has(el.parentElement)) fresh.push(el.parentElement.tagName.toLowerCase() + '.' + el.parentElement.className + ' > ' + el.outerHTML.slice(0, 400));
      }
      console.warn('hydration-probe ' + JSON.stringify({ readyState: document.readyState, sinceStartMs: Math.round(performance.now()), rerendered: fresh.slice(0, 8), serverBody: serverHtml.slice(0, 3000) }));
    }, 0);
  };
  const error = console.error;
  console.error = function (...args) { probe(args[0] && args[0].message ? args[0].message : args[0]); return error.apply(this, args); };
  window.addEventListener('error', (event) => probe(event.message));
})();`;

/** Collects console errors and failed page loads; a page that logs an error fails its test. */
export function watchConsole(page: Page): string[] {
  const errors: string[] = [];
  void page.addInitScript({ content: HYDRATION_PROBE });
  // Each with the page it came from: a failure then says where to look.
  const add = (text: string) => errors.push(`${text} (on ${new URL(page.url()).pathname})`);
  page.on('console', (message) => {
    if (message.type() === 'error') add(message.text());
    if (message.type() === 'warning' && message.text().startsWith('hydration-probe ')) {
      test.info().annotations.push({ type: 'hydration probe', description: message.text() });
      process.stderr.write(`e2e: ${message.text()}\n`);
    }
  });
  page.on('pageerror', (error) => add(error.message));
  return errors;
}

const SCREENSHOTS = path.resolve('test-results', 'screenshots');

/** Saves a full-page screenshot as a test artifact (test-results/screenshots/<name>.png). */
export async function screenshot(page: Page, name: string) {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

/** Signs the page's browser context in as the e2e server's user of `role` (tests/e2e/credentials.ts), by the API: its cookie is the context's. */
export async function signIn(page: Page, role: 'viewer' | 'operator' | 'admin', baseUrl: string): Promise<void> {
  const { credentials } = await import('./credentials');
  const response = await page.request.post(`${baseUrl}/api/v1/auth/login`, { data: credentials(baseUrl).users[role], headers: { Origin: baseUrl } });
  if (!response.ok()) throw new Error(`signing in as ${role} failed: ${response.status()} ${await response.text()}`);
}
