'use client';
// What the browser knows of each source's status: seeded by every list of sources the API
// returns, then kept current by the live stream, which tells each write of a source's row (a
// change of status, and its last good read about once a second). The live indicator, the
// overview's source line and the lease page's "last read" all read it here, so they agree and
// none of them shows a read time that only moves when the page reloads.
import { useSyncExternalStore } from 'react';
import type { SourceStatusView } from './types';

let statuses: ReadonlyMap<string, SourceStatusView> = new Map();
/** Sources the stream has told about: a list read earlier than that never overrides them. */
const streamed = new Set<string>();
const listeners = new Set<() => void>();

function set(next: Map<string, SourceStatusView>) {
  statuses = next;
  for (const listener of listeners) listener();
}

/** A source's status as the stream told it, merged over what was known (a field the message leaves out keeps its value). */
export function noteStreamedSource(status: SourceStatusView) {
  streamed.add(status.name);
  const next = new Map(statuses);
  next.set(status.name, { ...statuses.get(status.name), ...status });
  set(next);
}

/** Sources as an API list gave them: taken where the stream has said nothing yet, or where the list read them later. */
export function noteListedSources(sources: readonly SourceStatusView[]) {
  let next: Map<string, SourceStatusView> | null = null;
  for (const source of sources) {
    const known = statuses.get(source.name);
    const newer = !known || !streamed.has(source.name) || (source.lastGoodReadAt ?? '') > (known.lastGoodReadAt ?? '');
    // An older list still fills in the fields the stream does not carry (target, detail, and
    // downSince when the stream did not know it); a newer one wins.
    if (newer) (next ??= new Map(statuses)).set(source.name, { ...known, ...source });
    else if (Object.keys(source).some((field) => !(field in known))) (next ??= new Map(statuses)).set(source.name, { ...source, ...known });
  }
  if (next) set(next);
}

function subscribe(listener: () => void) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

const none: ReadonlyMap<string, SourceStatusView> = new Map();

export function useSourceStatuses(): ReadonlyMap<string, SourceStatusView> {
  return useSyncExternalStore(
    subscribe,
    () => statuses,
    () => none,
  );
}
