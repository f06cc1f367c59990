'use client';
// An admin's change from the alerts page: sent to the API (same origin, JSON: lib/api/body.ts
// checks Origin and Content-Type), its outcome said in a sentence, the page's data read again.
import { useRouter } from 'next/navigation';
import { useState } from 'react';
import type { z } from 'zod';
import { sendJson } from '../settings/send';

export type Said = { ok: boolean; text: string } | null;

export function useAction() {
  const router = useRouter();
  const [said, setSaid] = useState<Said>(null);
  const [busy, setBusy] = useState(false);
  /**
   * Sends, the answer checked against `schema` (the route's, lib/domain/schemas; `noContent` for
   * a 204); on success says `done` (or what it makes of the answer) and refreshes the page.
   * Returns `{ data }`, the answer, or null when refused.
   */
  async function act<S extends z.ZodType>(method: string, url: string, body: unknown, schema: S, done: string | ((data: z.output<S>) => string)): Promise<{ data: z.output<S> } | null> {
    setBusy(true);
    const result = await sendJson(method, url, body, schema);
    setBusy(false);
    if (!result.ok) {
      setSaid({ ok: false, text: result.message });
      return null;
    }
    setSaid({ ok: true, text: typeof done === 'string' ? done : done(result.data) });
    router.refresh();
    return { data: result.data };
  }
  return { act, said, setSaid, busy };
}

/** The sentence an action left, for a screen reader too. */
export function SaidLine({ said }: { said: Said }) {
  if (!said) return null;
  return (
    <p role={said.ok ? 'status' : 'alert'} className={said.ok ? 'muted' : 'form-error'} style={{ overflowWrap: 'anywhere' }}>
      {said.text}
    </p>
  );
}
