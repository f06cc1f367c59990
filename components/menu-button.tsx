'use client';
// On a phone the sidebar is a bar across the top, and its navigation folds away behind this
// button. It opens and closes the menu and closes it again once a page has been chosen.
import { usePathname } from 'next/navigation';
import { useEffect, useState } from 'react';

export function MenuButton() {
  const [open, setOpen] = useState(false);
  const pathname = usePathname();
  const [shownFor, setShownFor] = useState(pathname);
  if (shownFor !== pathname) {
    // A page was chosen: the menu folds away (set during render, not in an effect).
    setShownFor(pathname);
    setOpen(false);
  }
  useEffect(() => {
    document.documentElement.dataset.menu = open ? 'open' : 'closed';
  }, [open]);
  return (
    <button type="button" className="button menu-button" aria-expanded={open} aria-controls="sidebar-menu" onClick={() => setOpen((o) => !o)}>
      {open ? 'Close' : 'Menu'}
    </button>
  );
}
