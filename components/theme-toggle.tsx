'use client';
// Dark and light themes: the choice is kept in localStorage and applied before the first
// paint by the inline script in app/layout.tsx (components/theme-script.ts), so the page never flashes.
import { useSyncExternalStore } from 'react';
import { THEME_KEY } from './theme-script';

type Theme = 'light' | 'dark';

const listeners = new Set<() => void>();
const current = (): Theme => (document.documentElement.dataset.theme === 'dark' ? 'dark' : 'light');

export function ThemeToggle() {
  const theme = useSyncExternalStore(
    (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    current,
    () => null,
  );
  if (theme === null) return <span className="theme-toggle-placeholder" />;
  const next: Theme = theme === 'dark' ? 'light' : 'dark';
  return (
    <button
      type="button"
      className="button subtle theme-toggle"
      aria-label={`Switch to the ${next} theme`}
      onClick={() => {
        document.documentElement.dataset.theme = next;
        try {
          localStorage.setItem(THEME_KEY, next);
        } catch {
          // private mode: the choice lasts for this page only
        }
        for (const listener of listeners) listener();
      }}
    >
      {theme === 'dark' ? 'Light theme' : 'Dark theme'}
    </button>
  );
}
