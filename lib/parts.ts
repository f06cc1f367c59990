// The parts of a composition root (lib/root): what a process holds once, each made the first
// time it is asked for and kept by the root that asked. A module that keeps such state (the
// stream's client slots, the lease list's cache, the demo inbox) declares its part here and is handed
// the root, as `Parts`, by whoever calls it; a test makes its own root and so its own parts.
// This file imports nothing, so any layer can declare a part without importing lib/root.

/** One piece of per-root state: its name (unique: it is the part's identity), how to make it, and how to stop it when its root closes. */
export type Part<T> = { readonly name: string; readonly make: () => T; readonly stop?: (made: T) => unknown };

/** Declares a part: made by `make` on first use, once per root; `stop` runs when the root closes. */
export function part<T>(name: string, make: () => T, stop?: (made: T) => unknown): Part<T> {
  return { name, make, stop };
}

/** What holds parts: a composition root (lib/root), or a test's own. */
export type Parts = { part<T>(which: Part<T>): T };

/** A holder of parts, empty until asked; stopAll() stops what was made, last made first, and forgets it. */
export function createParts(): Parts & { stopAll(): Promise<void> } {
  // Each part made, with how to stop it, under its name: Next loads a module once per route
  // bundle and once for instrumentation, so the demo boot starts and the route that shows it
  // hold two Part objects for one part. A part's name is its identity, unique in Leasehold.
  const held = new Map<string, { value: unknown; stop: () => unknown }>();
  return {
    part<T>(which: Part<T>): T {
      let made = held.get(which.name);
      if (!made) {
        const value = which.make();
        made = { value, stop: () => which.stop?.(value) };
        held.set(which.name, made);
      }
      return made.value as T;
    },
    async stopAll() {
      const made = [...held].reverse();
      held.clear();
      // Every part is stopped, whatever one of them throws; the first failure is then thrown.
      let failure: unknown = null;
      for (const [, { stop }] of made) {
        try {
          await stop();
        } catch (error) {
          failure ??= error;
        }
      }
      if (failure) throw failure;
    },
  };
}
