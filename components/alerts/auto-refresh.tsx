'use client';
// The alerts page is read on the server: read again every `everyMs` while the tab is visible,
// unless someone is typing in one of its forms (what they typed, and a secret shown once, stay:
// a refresh keeps the page's client state).
import { useRouter } from 'next/navigation';
import { useEffect } from 'react';

const TYPING = new Set(['INPUT', 'TEXTAREA', 'SELECT']);

export function AutoRefresh({ everyMs }: { everyMs: number }) {
  const router = useRouter();
  useEffect(() => {
    const timer = setInterval(() => {
      if (document.visibilityState !== 'visible') return;
      if (TYPING.has(document.activeElement?.tagName ?? '')) return;
      router.refresh();
    }, everyMs);
    return () => clearInterval(timer);
  }, [router, everyMs]);
  return null;
}
