/** An absolute time, shown in UTC so that everyone on a call reads the same clock. */
export function Time({ iso }: { iso: string | null }) {
  if (!iso) return <span className="muted">—</span>;
  const text = iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z');
  return (
    <time dateTime={iso} title={iso}>
      {text}
    </time>
  );
}
