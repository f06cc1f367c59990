// Fetching the JSON API from the browser. Errors carry the API's own sentence (DESIGN.md
// section 5: `{ error, message }`), or say plainly that the server could not be reached.
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export async function fetchJson<T>(path: string, signal?: AbortSignal): Promise<T> {
  let response: Response;
  try {
    // Plain GET, no extra headers or cache mode: a request the page preloaded (the overview's
    // lease list) is then answered from the preload. The API says no-store itself.
    response = await fetch(path, { signal });
  } catch (error) {
    if (signal?.aborted) throw error;
    throw new ApiError(0, 'unreachable', 'The Leasehold server did not answer. Is it running?');
  }
  if (response.ok) return (await response.json()) as T;
  let body: { error?: string; message?: string } = {};
  try {
    body = (await response.json()) as typeof body;
  } catch {
    // not JSON: say what we know
  }
  throw new ApiError(response.status, body.error ?? `http_${response.status}`, body.message ?? `The server answered ${response.status}.`);
}
