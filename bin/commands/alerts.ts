// `leasehold webhooks add|list|test` and `leasehold alerts list`, over the API of a running
// Leasehold (LEASEHOLD_URL) with LEASEHOLD_TOKEN (an admin's token for webhooks; any reader's
// for alerts). Human tables by default, the API's own JSON with --json.
import type { z } from 'zod';
import { terminalText } from '../../lib/domain/display';
import { alertsPageSchema, newWebhookSchema, webhookListSchema, webhookTestSchema } from '../../lib/domain/schemas';
import { apiAnswer } from './api';
import { printTable } from './table';

export class AlertsUsageError extends Error {}

export type AlertsFlags = { json: boolean; name?: string; url?: string; format?: string; secret?: string; 'routing-key'?: string; rules?: string; state?: string; source?: string; limit?: string };

type Listed = z.output<typeof webhookListSchema>['webhooks'][number];

const print = (flags: AlertsFlags, data: unknown, human: () => void) => (flags.json ? process.stdout.write(`${JSON.stringify(data, null, 2)}\n`) : human());

/** A webhook named by id or name. */
async function findWebhook(which: string | undefined): Promise<Listed> {
  if (!which) throw new AlertsUsageError('name the endpoint by its id or name');
  const { webhooks } = (await apiAnswer(webhookListSchema, 'GET', '/api/v1/webhooks')).data;
  const found = webhooks.find((w) => w.id === which || w.name === which);
  if (!found) throw new AlertsUsageError(`no endpoint "${terminalText(which)}" (leasehold webhooks list shows them)`);
  return found;
}

export async function webhooksCommand(sub: string | undefined, args: string[], flags: AlertsFlags): Promise<number> {
  if (sub === 'add') {
    const name = flags.name ?? args[0];
    if (!name) throw new AlertsUsageError('webhooks add needs --name');
    if (!flags.url) throw new AlertsUsageError('webhooks add needs --url: where to POST (https://…)');
    const body = {
      name,
      url: flags.url,
      ...(flags.format ? { format: flags.format } : {}),
      ...(flags.secret ? { secret: flags.secret } : {}),
      ...(flags['routing-key'] ? { routingKey: flags['routing-key'] } : {}),
      ...(flags.rules ? { rules: flags.rules.split(',').map((r) => r.trim()).filter(Boolean) } : {}),
    };
    const { raw, data: made } = await apiAnswer(newWebhookSchema, 'POST', '/api/v1/webhooks', { body });
    print(flags, raw, () =>
      process.stdout.write(
        `endpoint ${terminalText(made.webhook.name)} (${made.webhook.format}) → ${terminalText(made.webhook.url)}\nsigning secret: ${made.secret}\nIt is shown this once: give it to the receiver now (it verifies webhook-signature with it).\n`,
      ),
    );
    return 0;
  }
  if (sub === 'list') {
    const { raw, data } = await apiAnswer(webhookListSchema, 'GET', '/api/v1/webhooks');
    const { webhooks } = data;
    print(flags, raw, () =>
      webhooks.length === 0
        ? process.stdout.write('no endpoints (leasehold webhooks add --name N --url URL)\n')
        : printTable(
            ['ID', 'NAME', 'FORMAT', 'URL', 'STATE', 'PENDING', 'DEAD', 'DELIVERED'],
            webhooks.map((w) => [w.id, w.name, w.format, w.url, w.enabled ? 'on' : `off (${w.disabledReason ?? 'disabled'})`, String(w.deliveries.pending), String(w.deliveries.dead), String(w.deliveries.delivered)]),
          ),
    );
    return 0;
  }
  if (sub === 'test') {
    const webhook = await findWebhook(flags.name ?? args[0]);
    const { raw, data: result } = await apiAnswer(webhookTestSchema, 'POST', `/api/v1/webhooks/${encodeURIComponent(webhook.id)}/test`, { timeoutMs: 60_000 });
    print(flags, raw, () =>
      process.stdout.write(
        result.outcome === 'delivered'
          ? `test message delivered to ${terminalText(webhook.name)}: ${result.status} in ${result.latencyMs} ms\n`
          : `test message not delivered to ${terminalText(webhook.name)}: ${result.outcome}${result.status ? ` (${result.status})` : ''}: ${terminalText(result.error ?? '')}\n`,
      ),
    );
    return result.outcome === 'delivered' ? 0 : 1;
  }
  throw new AlertsUsageError(`unknown webhooks subcommand "${terminalText(sub ?? '')}" (expected add, list or test)`);
}

export async function alertsCommand(sub: string | undefined, flags: AlertsFlags): Promise<number> {
  if (sub !== 'list' && sub !== undefined) throw new AlertsUsageError(`unknown alerts subcommand "${terminalText(sub)}" (expected list)`);
  const { raw, data } = await apiAnswer(alertsPageSchema, 'GET', '/api/v1/alerts', { query: { state: flags.state, source: flags.source, limit: flags.limit } });
  print(flags, raw, () =>
    data.alerts.length === 0
      ? process.stdout.write(flags.state === 'firing' ? 'nothing is firing\n' : 'no alerts\n')
      : printTable(
          ['ID', 'STATE', 'SEVERITY', 'RULE', 'SINCE', 'ENDED', 'SUMMARY'],
          data.alerts.map((a) => [a.id, a.status, a.severity, a.rule.type, a.startsAt, a.endsAt ?? '—', a.summary]),
        ),
  );
  return 0;
}
