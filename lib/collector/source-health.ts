// What one observer knows of its source's own state, and the source row it writes: up or
// down, since when and why, its last good read, what part of it could not be read, and the
// leases the store refused to take. A source that stays down is not written again, but for
// a new reason (at most every 5 s: the first failure's words, a connection closed mid-read,
// give way soon to what is true now, a refused connection); a poll refreshes the last good
// read once a second.
import type { LeaseSource, UnreadScope } from '../sources/types';
import type { Clock } from '../time/clock';
import type { SourceWrite, WriteBatch } from '../db/observer-writes';

/** A down source's row is written when its status changes, and its error text at most this often. */
const DOWN_REWRITE_MS = 5_000;
/** How often leases the store refused are offered to it again. */
const REFUSED_RETRY_MS = 10_000;
/** How often a poll that changed nothing writes the source's last good read. */
const GOOD_READ_REFRESH_MS = 1_000;

type SourceEvent = WriteBatch['sourceEvents'][number];

/** A read the source answered. */
export type AnsweredRead = { kind: 'full' | 'poll' | 'keys'; startedWall: number; detail?: Record<string, unknown> | null; unread?: UnreadScope[] };

export class SourceHealth {
  /** null until the first read, unless the store says it was down. */
  up: boolean | null;
  private seq: number;
  private lastGoodReadAt: number | null = null;
  private writtenGoodReadAt = -Infinity;
  /** When the read that found the source down began (null while up, or down since before this process). */
  private downSince: number | null = null;
  /** What the last full read could not read of the source (a table). */
  private lastPartly: string | null = null;
  private downReason: string | null = null;
  private downWrittenAt = -Infinity;
  /** Leases the store refused to take as they were, and why. */
  private readonly refused = new Map<string, string>();
  private lastRefusedRetry = -Infinity;

  constructor(
    private readonly source: Pick<LeaseSource, 'name' | 'backend' | 'pollMs'>,
    loaded: { status: string | null; lastSourceSeq: number },
    private readonly clock: Clock,
  ) {
    this.up = loaded.status === 'down' ? false : null;
    this.seq = loaded.lastSourceSeq;
  }

  /**
   * The source answered: its row, source_up when it was down, and whether the row is due
   * (always after a full read, once a second after polls; a keys read only writes with what it changed).
   */
  answered(r: AnsweredRead, lastPollMs: number | null): { row: SourceWrite; sourceEvents: SourceEvent[]; rowDue: boolean } {
    const good = r.kind !== 'keys';
    if (good) this.lastGoodReadAt = r.startedWall;
    const partly = r.unread?.length ? r.unread.map((part) => part.reason).join('; ') : null;
    const row = { ...this.row('up', this.upError(r.kind === 'full' ? partly : this.lastPartly), lastPollMs), lastGoodReadAt: good ? r.startedWall : null, detail: r.detail ?? null };
    if (r.kind === 'full') this.lastPartly = partly;
    // Stamped when the read that proved it came back, not when that read began.
    const sourceEvents: SourceEvent[] = this.up === false ? [{ seq: ++this.seq, type: 'source_up', atWall: this.clock.wall(), detail: null }] : [];
    if (this.up === false) this.downReason = null;
    this.downSince = null;
    this.up = true;
    const rowDue = r.kind === 'full' || (r.kind === 'poll' && r.startedWall - this.writtenGoodReadAt >= GOOD_READ_REFRESH_MS);
    if (rowDue) this.writtenGoodReadAt = r.startedWall;
    return { row, sourceEvents, rowDue };
  }

  /** A full read failed: the row and source_down to write, or null when nothing new is to be said. */
  failed(reason: string, startedWall: number, lastPollMs: number): { row: SourceWrite; sourceEvents: SourceEvent[]; newlyDown: boolean } | null {
    const newlyDown = this.up !== false;
    if (!newlyDown && (reason === this.downReason || this.clock.mono() - this.downWrittenAt < DOWN_REWRITE_MS)) return null;
    const sourceEvents: SourceEvent[] = newlyDown ? [{ seq: ++this.seq, type: 'source_down', atWall: startedWall, detail: { error: reason } }] : [];
    if (newlyDown) this.downSince = startedWall;
    this.up = false;
    this.downReason = reason;
    this.downWrittenAt = this.clock.mono();
    return { row: this.row('down', reason, lastPollMs), sourceEvents, newlyDown };
  }

  /** The source as the live stream tells it, after its row was written. */
  view(row: SourceWrite) {
    return {
      name: this.source.name,
      backend: this.source.backend,
      status: row.status,
      lastGoodReadAt: this.lastGoodReadAt === null ? null : new Date(this.lastGoodReadAt).toISOString(),
      lastError: row.lastError,
      lastPollMs: row.lastPollMs,
      ...(row.status === 'up' ? { downSince: null } : this.downSince !== null ? { downSince: new Date(this.downSince).toISOString() } : {}),
    };
  }

  /**
   * Leases the store refused are remembered until a later write of them succeeds, and named in
   * the source's lastError meanwhile: the source is readable, but not all of it is shown as it
   * is. Returns the source's row to write again when that changed.
   */
  refusals(written: readonly { id: string }[], refused: readonly { leaseId: string; reason: string }[]): SourceWrite | null {
    const before = this.storeProblem();
    for (const lease of written) this.refused.delete(lease.id);
    for (const { leaseId, reason } of refused) this.refused.set(leaseId, reason);
    return this.storeProblem() !== before && this.up === true ? this.row('up', this.upError(this.lastPartly), null) : null;
  }

  /** The ids of refused leases, when it is time to offer them to the store again. */
  refusedDue(): string[] | null {
    if (this.refused.size === 0 || this.clock.mono() - this.lastRefusedRetry < REFUSED_RETRY_MS) return null;
    this.lastRefusedRetry = this.clock.mono();
    return [...this.refused.keys()];
  }

  forgetRefused(ids: readonly string[]): void {
    for (const id of ids) this.refused.delete(id);
  }

  private row(status: 'up' | 'down', lastError: string | null, lastPollMs: number | null): SourceWrite {
    return { name: this.source.name, backend: this.source.backend, status, lastGoodReadAt: this.lastGoodReadAt, lastError, lastPollMs, pollMs: this.source.pollMs, detail: null };
  }

  private storeProblem(): string | null {
    const [first] = this.refused;
    if (!first) return null;
    return `the store refused ${this.refused.size} lease${this.refused.size === 1 ? '' : 's'} of this source (${first[0]}: ${first[1]})`;
  }

  /** The lastError of a source that answers: the parts it could not read, the leases the store refused. */
  private upError(partly: string | null): string | null {
    return [partly, this.storeProblem()].filter(Boolean).join('; ') || null;
  }
}
