export type BadgeTone = 'ok' | 'warn' | 'bad' | 'muted';

export function Badge({ tone, children }: { tone: BadgeTone; children: string }) {
  return <span className={`badge ${tone}`}>{children}</span>;
}
