import 'server-only';
import { type Config } from '../config';
import { getConfig } from '../root';
import { type Store } from '../db';
import { getStore } from '../root';
import { toPublicError, type PublicError } from '../errors';

export type PageData<T> = { ok: true; data: T } | { ok: false; problem: PublicError };

/** Loads what a page shows; a failure becomes a problem the page can explain, never a crash. */
export async function pageData<T>(load: (store: Store, config: Config) => Promise<T>): Promise<PageData<T>> {
  try {
    const config = getConfig();
    return { ok: true, data: await load(await getStore(), config) };
  } catch (error) {
    return { ok: false, problem: toPublicError(error) };
  }
}
