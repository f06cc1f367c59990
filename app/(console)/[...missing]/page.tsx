import { notFound } from 'next/navigation';

// Any address no page answers: the console's own 404 (./not-found.tsx of this group), inside
// its frame, instead of Next's bare one.
export default function Missing(): never {
  notFound();
}
