// The demo fleet's reports, handed to the store in this process: what POST /api/v1/telemetry
// does with a reporter's body (the same schema and the same storeTelemetry), without HTTP or
// a token, as lib/lease's reporter's `send` option allows. Answers as the endpoint would.
import type { Store } from '../db';
import { storeTelemetry } from '../db/telemetry';
import { TelemetryRefusedError } from '../domain/holder-telemetry';
import { telemetryBodySchema } from '../domain/schemas/telemetry';
import { systemClock } from '../time/clock';

export type TelemetrySend = (body: string) => Promise<{ status: number; text: string }>;

export function inProcessTelemetry(store: Store): TelemetrySend {
  return async (body) => {
    const parsed = telemetryBodySchema.safeParse(JSON.parse(body));
    if (!parsed.success) return { status: 400, text: JSON.stringify({ error: 'invalid_body', message: parsed.error.issues[0]?.message ?? 'invalid' }) };
    try {
      const accepted = await storeTelemetry(store, parsed.data, new Date(systemClock.wall()));
      return { status: 202, text: JSON.stringify({ accepted }) };
    } catch (error) {
      if (error instanceof TelemetryRefusedError) return { status: 422, text: JSON.stringify({ error: error.code, message: error.message }) };
      return { status: 503, text: JSON.stringify({ error: 'store_unavailable', message: (error as Error)?.message ?? String(error) }) };
    }
  };
}
