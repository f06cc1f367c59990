// The native format: the AlertMessage itself (lib/domain/alert-types.ts), as JSON.
// Receivers that verify the Standard Webhooks signature get exactly what Leasehold stores.
import type { FormatBuilder } from './types';
import { toJson } from './text';

export const buildNative: FormatBuilder = (message, ctx) => ({ url: ctx.endpointUrl, body: toJson(message) });
