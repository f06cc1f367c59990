import { InvalidParameterError, parseLeaseFilter } from '@/lib/api/params';
import { getConfig } from '@/lib/config';
import { getStore } from '@/lib/db';
import { errorResponse } from '@/lib/errors';
import { listSources } from '@/lib/queries/console';
import { leaseListJson } from '@/lib/queries/lease-cache';

export const dynamic = 'force-dynamic';

/**
 * GET /api/v1/leases?source=&state=&q=&limit= : current leases, and the sources' status.
 * `position` is the live stream's position the list is current to: GET /api/v1/stream?after=
 * with it sends exactly the changes since.
 */
export async function GET(request: Request) {
  const started = performance.now();
  try {
    const filter = parseLeaseFilter(new URL(request.url).searchParams);
    const store = await getStore();
    const list = await leaseListJson(store, filter);
    const listMs = performance.now() - started;
    // Lease counts per source from the same list, not a COUNT over the table; the source rows
    // at most a second old (their last good read moves on with every poll).
    const sources = await listSources(store, getConfig(), list.counts, 1_000);
    // A source nobody configured or observed is a mistake to say, not an empty list to show.
    if (filter.source !== undefined && !sources.some((source) => source.name === filter.source)) {
      const names = sources.map((source) => source.name);
      throw new InvalidParameterError('source', names.length ? `the name of a source (${names.slice(0, 20).join(', ')}${names.length > 20 ? ', …' : ''})` : 'the name of a source, and none is configured', filter.source);
    }
    const sourcesMs = performance.now() - started - listMs;
    // The list arrives as UTF-8 JSON (lib/queries/lease-cache.ts): assembled, not re-serialized.
    const body = Buffer.concat([Buffer.from('{"leases":'), list.json, Buffer.from(`,"total":${list.total},"truncated":${list.truncated},"position":"${list.position}","sources":${JSON.stringify(sources)}}`)]);
    return new Response(body, {
      headers: {
        'Content-Type': 'application/json',
        // no-transform: sent as it is. Gzip of 10,000 leases (5 MB) costs this server about
        // 60 ms of CPU per request, more than everything else; on a slow link, a compressing
        // proxy in front of Leasehold does it instead (README, "Deploying").
        'Cache-Control': 'no-store, no-transform',
        // How long assembling the answer took here, apart from sending it (visible in devtools).
        'Server-Timing': `app;dur=${(performance.now() - started).toFixed(1)}, list;dur=${listMs.toFixed(1)}, sources;dur=${sourcesMs.toFixed(1)}`,
      },
    });
  } catch (error) {
    return errorResponse(error);
  }
}
