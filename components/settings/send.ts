// A JSON request from an admin form to the API; the error's own sentence when refused.
export async function sendJson(method: string, url: string, body?: unknown): Promise<{ ok: true; data: unknown } | { ok: false; message: string }> {
  try {
    const response = await fetch(url, {
      method,
      headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const data = response.status === 204 ? null : ((await response.json().catch(() => null)) as { message?: string } | null);
    if (!response.ok) return { ok: false, message: data?.message ?? `The server answered ${response.status}.` };
    return { ok: true, data };
  } catch {
    return { ok: false, message: 'The server cannot be reached.' };
  }
}
