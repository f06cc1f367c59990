'use client';
import { useLiveStatus } from './live/live-stream';

const TEXT = { connecting: 'Connecting…', live: 'Live', reconnecting: 'Reconnecting… (data may be behind)' } as const;

/** Whether the page is receiving live updates: an engineer must know when what they see is old. */
export function LiveStatus() {
  const status = useLiveStatus();
  return (
    <span className={`live-status ${status}`} role="status" aria-live="polite">
      <span className="dot" aria-hidden="true" />
      {TEXT[status]}
    </span>
  );
}
