// What every format is given and gives back.
import type { AlertMessage } from '../../../domain/alert-types';

export type FormatContext = {
  /** The endpoint's URL as configured. */
  endpointUrl: string;
  /** The endpoint's name (Alertmanager's "receiver"). */
  endpointName: string;
  /** PagerDuty's integration key; null for the other formats. */
  routingKey: string | null;
  /** How often a firing alert is sent again; the alertmanager format's endsAt leaves room for 4 of them. */
  resendIntervalMs: number;
  now: Date;
};

/** Where to POST, and the JSON body. */
export type BuiltRequest = { url: string; body: string };

export type FormatBuilder = (message: AlertMessage, ctx: FormatContext) => BuiltRequest;
