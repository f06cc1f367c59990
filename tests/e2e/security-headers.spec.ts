// The security headers (lib/api/security-headers.ts, proxy.ts, next.config.js) as a browser
// meets them: a page's Content-Security-Policy runs the console's own scripts (each page load
// with a nonce of its own) and not a script an attacker got into the page's markup; every
// answer, the API's and the refusals included, forbids framing and MIME sniffing.
import { expect, test } from '@playwright/test';
import { watchConsole } from './support';

const scriptSrc = (policy: string) => policy.split(';').map((part) => part.trim()).find((part) => part.startsWith('script-src')) ?? '';

test('a page: a policy with a fresh nonce per load, no unsafe-inline script, no framing', async ({ request }) => {
  const [first, second] = [await request.get('/'), await request.get('/')];
  const policies = [first, second].map((response) => response.headers()['content-security-policy'] ?? '');
  for (const [index, policy] of policies.entries()) {
    expect(policy).toMatch(/script-src 'self' 'nonce-[A-Za-z0-9+/]{22}==' 'strict-dynamic'/);
    expect(scriptSrc(policy)).not.toContain('unsafe-inline');
    expect(policy).toContain("frame-ancestors 'none'");
    expect(policy).toContain("object-src 'none'");
    const headers = [first, second][index]!.headers();
    expect(headers['x-frame-options']).toBe('DENY');
    expect(headers['x-content-type-options']).toBe('nosniff');
    expect(headers['referrer-policy']).toBe('same-origin');
  }
  expect(policies[0]).not.toBe(policies[1]);
  // The page's scripts carry this load's nonce.
  const nonce = /'nonce-([^']+)'/.exec(policies[1]!)![1]!;
  const html = await second.text();
  const scripts = [...html.matchAll(/<script\b[^>]*>/g)].map((match) => match[0]);
  expect(scripts.length).toBeGreaterThan(1);
  for (const tag of scripts) expect(tag).toContain(`nonce="${nonce}"`);
});

test('the API, the refusals and the routes that read a body: nothing may run or frame them', async ({ request }) => {
  const answers = [
    await request.get('/api/v1/leases'),
    await request.get('/metrics'),
    // Refused by proxy.ts (405 with Allow).
    await request.delete('/api/v1/leases'),
    // A route that reads a body, which proxy.ts does not see: next.config.js's headers.
    await request.post('/api/v1/auth/login', { data: { name: 'nobody', password: 'wrong' }, headers: { Origin: new URL(test.info().project.use.baseURL!).origin } }),
  ];
  expect(answers.map((answer) => answer.status())).toEqual([200, 200, 405, 401]);
  for (const answer of answers) {
    const headers = answer.headers();
    expect(headers['content-security-policy'], answer.url()).toBe("default-src 'none'; frame-ancestors 'none'");
    expect(headers['x-content-type-options']).toBe('nosniff');
    expect(headers['x-frame-options']).toBe('DENY');
  }
});

test('the console works under its policy, and a script injected into its markup does not run', async ({ page }) => {
  const errors = watchConsole(page);
  const refused: string[] = [];
  page.on('console', (message) => {
    if (/Content Security Policy/.test(message.text())) refused.push(message.text());
  });
  // What an attacker who got markup into the page would add: an inline script without the nonce.
  await page.route('/', async (route) => {
    const response = await route.fetch();
    const html = (await response.text()).replace('<body>', '<body><script>window.__injected = true;</script>');
    await route.fulfill({ response, body: html });
  });
  await page.goto('/');
  // Hydrated (the theme toggle is rendered by the client only) and working.
  const toggle = page.locator('button.theme-toggle');
  await expect(toggle).toBeVisible();
  const before = await page.evaluate(() => document.documentElement.dataset.theme);
  await toggle.click();
  await expect.poll(() => page.evaluate(() => document.documentElement.dataset.theme)).not.toBe(before);
  await expect(page.getByRole('main').getByRole('status')).toContainText('No leases yet');
  // The injected script did not run, and the browser said why.
  expect(await page.evaluate(() => (window as unknown as { __injected?: boolean }).__injected)).toBeUndefined();
  const inline = /inline script|inline execution/i;
  expect(refused.join('\n')).toMatch(inline);
  // Nothing else was refused: the console's own scripts all carry the nonce.
  expect(errors.filter((error) => !inline.test(error))).toEqual([]);
  expect(refused).toHaveLength(1);
});
