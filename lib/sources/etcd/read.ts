// Reading keys and values: every key under a prefix a keys-only page at a time, and the values
// not yet known at their key's mod revision, fetched a transaction of several at a time.
import type { Etcd3, IKeyValue } from 'etcd3';
import { exactOf } from '../exact';
import { MAX_RECEIVE_BYTES } from './client';
import type { Progress } from '../types';

// Values are hostile until judged: a full read asks for keys only, and a value is fetched
// (and its exact text made, lib/domain/display.ts) only when its key's mod revision changed,
// so a megabyte of binary costs once per change, not once per read.

/** Keys per page of a keys-only range, and values per transaction (etcd allows 128 operations). */
const RANGE_PAGE = 10_000;
const VALUES_PER_TXN = 64;

// The exact text of each key's value, at the mod revision it was read: a value is fetched
// and judged again only when it changed. '' stands for an empty value (a mutex waiter).
export type ValueMemo = Map<string, { revision: string; text: string } | { revision: string; problem: string }>;

const latin1 = (kv: IKeyValue) => kv.key.toString('latin1');

export const remembered = (values: ValueMemo, kv: IKeyValue) => {
  const known = values.get(latin1(kv));
  return known && known.revision === String(kv.mod_revision) ? known : undefined;
};

export const learnValue = (values: ValueMemo, kv: IKeyValue) => {
  values.set(latin1(kv), { revision: String(kv.mod_revision), text: kv.value.length === 0 ? '' : exactOf(kv.value) });
};

/**
 * Fetches the values not known at their current revision, a transaction of several keys at a
 * time, at the revision the keys were listed at: a key put again since then would otherwise
 * come back with another mod revision, and its listed version would have no value.
 */
export async function fetchValues(client: Etcd3, values: ValueMemo, kvs: IKeyValue[], revision: string, progress?: Progress): Promise<void> {
  const wanted = kvs.filter((kv) => String(kv.lease) !== '0' && !remembered(values, kv));
  const one = async (kv: IKeyValue) => {
    try {
      const found = (await client.kv.range({ key: kv.key, revision })).kvs[0];
      if (found) learnValue(values, found);
    } catch (error) {
      if (!/RESOURCE_EXHAUSTED|larger than max/i.test(String((error as Error)?.message))) throw error;
      values.set(latin1(kv), { revision: String(kv.mod_revision), problem: `its value is larger than ${MAX_RECEIVE_BYTES / 1024 / 1024} MiB: not read` });
    }
  };
  for (let i = 0; i < wanted.length; i += VALUES_PER_TXN) {
    const batch = wanted.slice(i, i + VALUES_PER_TXN);
    try {
      const { responses } = await client.kv.txn({ success: batch.map((kv) => ({ request_range: { key: kv.key, revision } })) });
      for (const response of responses) for (const kv of response.response_range?.kvs ?? []) learnValue(values, kv);
    } catch (error) {
      // Too large together: one at a time, so one huge value costs only itself.
      if (!/RESOURCE_EXHAUSTED|larger than max/i.test(String((error as Error)?.message))) throw error;
      for (const kv of batch) await one(kv);
    }
    progress?.();
  }
}

/** The end of the key range of every key starting with `prefix`. */
export function prefixEnd(prefix: Buffer): Buffer {
  const end = Buffer.from(prefix);
  for (let i = end.length - 1; i >= 0; i--) {
    if (end[i]! < 0xff) {
      end[i]! += 1;
      return end.subarray(0, i + 1);
    }
  }
  return Buffer.from([0]);
}

export async function rangePrefix(client: Etcd3, prefix: string) {
  const start = Buffer.from(prefix, 'latin1');
  return client.kv.range({ key: start, range_end: prefixEnd(start) });
}

/** Every key under a prefix, without values, a page at a time, at one revision. */
export async function keysUnder(client: Etcd3, prefix: string, progress?: Progress): Promise<{ kvs: IKeyValue[]; revision: string }> {
  const start = Buffer.from(prefix, 'latin1');
  const end = prefixEnd(start);
  const kvs: IKeyValue[] = [];
  let from = start;
  let revision: string | undefined;
  for (;;) {
    const page = await client.kv.range({ key: from, range_end: end, keys_only: true, limit: RANGE_PAGE, ...(revision ? { revision } : {}) });
    revision ??= String(page.header.revision);
    kvs.push(...page.kvs);
    progress?.();
    if (!page.more || page.kvs.length === 0) return { kvs, revision };
    from = Buffer.concat([page.kvs[page.kvs.length - 1]!.key, Buffer.from([0])]);
  }
}
