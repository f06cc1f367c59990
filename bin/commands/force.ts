// `leasehold force-expire ID --expect-holder H --expect-token N --reason "…" [--quarantine 15s] [--dry-run] [--json]`
// and `force-release` alike (with --acknowledge-unfenced for an unfenced lease), over the API
// of a running Leasehold with LEASEHOLD_TOKEN (an operator's or admin's token).
import type { ForceAction } from '../../lib/domain/admin-actions';
import { parseDurationMs } from '../../lib/domain/duration';
import { terminalText } from '../../lib/domain/display';
import { apiErrorSchema, forceAnswerSchema } from '../../lib/domain/schemas';
import { ApiCallError, apiBaseUrl } from './api';

export type ForceFlags = {
  json: boolean;
  'expect-holder'?: string;
  'expect-token'?: string;
  reason?: string;
  quarantine?: string;
  'dry-run'?: boolean;
  'acknowledge-unfenced'?: boolean;
};

export class ForceUsageError extends Error {}

function body(flags: ForceFlags) {
  if (flags['expect-holder'] === undefined) throw new ForceUsageError('--expect-holder is required: the holder you saw (leasehold lease ID shows it)');
  const token = flags['expect-token'];
  if (token === undefined) throw new ForceUsageError('--expect-token is required: the token you saw, or "none" for an unfenced lease');
  if (token !== 'none' && !/^\d{1,78}$/.test(token)) throw new ForceUsageError(`--expect-token must be a whole number or "none", not "${terminalText(token)}"`);
  if (!flags.reason || flags.reason.trim().length < 10) throw new ForceUsageError('--reason is required, at least 10 characters: it is kept in the audit log');
  let quarantineMs: number | undefined;
  if (flags.quarantine !== undefined) {
    const ms = parseDurationMs(flags.quarantine);
    if (ms === null || ms < 1) throw new ForceUsageError(`--quarantine must be a duration such as 15s or 2m, not "${terminalText(flags.quarantine)}"`);
    quarantineMs = ms;
  }
  return {
    expectedHolder: flags['expect-holder'],
    expectedToken: token === 'none' ? null : token,
    reason: flags.reason,
    ...(quarantineMs !== undefined ? { quarantineMs } : {}),
    ...(flags['acknowledge-unfenced'] ? { acknowledgeUnfenced: true } : {}),
    ...(flags['dry-run'] ? { dryRun: true } : {}),
  };
}

/** `action`: the name of an admin action (lib/domain/admin-actions.ts), which is its command and its path. */
export async function forceCommand(action: ForceAction, id: string | undefined, flags: ForceFlags): Promise<number> {
  if (!id) throw new ForceUsageError(`${action} needs a lease id`);
  const request = body(flags);
  const url = `${apiBaseUrl()}/api/v1/leases/${encodeURIComponent(id)}/${action}`;
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json', ...(process.env.LEASEHOLD_TOKEN ? { Authorization: `Bearer ${process.env.LEASEHOLD_TOKEN}` } : {}) },
      body: JSON.stringify(request),
      signal: AbortSignal.timeout(30_000),
    });
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause;
    throw new ApiCallError(`cannot reach Leasehold at ${apiBaseUrl()} (${cause?.code ?? (error as Error).message}); is it running? Point LEASEHOLD_URL at it.`);
  }
  const data: unknown = await response.json().catch(() => null);
  if (flags.json) process.stdout.write(`${JSON.stringify(data, null, 2)}\n`);
  if (!response.ok) {
    const refusal = apiErrorSchema.pick({ message: true }).safeParse(data);
    if (!flags.json) console.error(`leasehold: ${terminalText(refusal.success ? refusal.data.message : `the server answered ${response.status}`)}`);
    return response.status === 409 ? 3 : 1;
  }
  if (flags.json) return 0;
  const parsed = forceAnswerSchema.safeParse(data);
  if (!parsed.success) throw new ApiCallError(`the answer to ${action} is not what this CLI expects (${terminalText(parsed.error.issues[0]?.message ?? 'unreadable')}); is the server of another version?`);
  const answer = parsed.data;
  if ('dryRun' in answer) {
    const { plan } = answer;
    console.log(`dry run, nothing done: ${action} of ${id} (${plan.layout}) would send:`);
    for (const step of plan.steps) console.log(`\n-- ${step.what}\n${step.statement}\n-- arguments: ${JSON.stringify(step.args)}`);
    return 0;
  }
  console.log(`${action} of ${id}: token ${answer.previousToken ?? 'none'} -> ${answer.newToken ?? 'none (unfenced)'}; audit entry ${answer.auditId}`);
  return 0;
}
