// `leasehold tokens create --name N --role R [--expires 30d] [--user NAME] [--json]`: prints the
// token once (it is stored hashed). `tokens list`, `tokens revoke ID|NAME`. On the store itself.
import { isTokenRole } from '../../lib/auth/permissions';
import { createToken } from '../../lib/auth/tokens';
import { apiTokenView, listApiTokens, revokeApiToken } from '../../lib/db/api-tokens';
import { findUserByName } from '../../lib/db/users';
import { parseDurationMs } from '../../lib/domain/duration';
import { terminalText } from '../../lib/domain/display';
import { CommandError, withStore } from './users';

type Options = { name?: string; role?: string; expires?: string; user?: string; json: boolean };

export async function tokensCommand(sub: string | undefined, args: string[], options: Options): Promise<number> {
  const out = (data: unknown, human: string) => process.stdout.write(options.json ? `${JSON.stringify(data, null, 2)}\n` : `${human}\n`);
  if (sub === 'create') {
    const name = options.name ?? args[0];
    if (!name || !/^[A-Za-z0-9][A-Za-z0-9._@:-]{0,99}$/.test(name)) throw new CommandError('tokens create needs --name: 1-100 letters, digits, ".", "_", "@", ":" or "-"');
    if (!isTokenRole(options.role)) throw new CommandError('tokens create needs --role viewer, operator, admin or reporter (reporter: posts holder timings, nothing else)');
    const role = options.role;
    let expiresAt: Date | null = null;
    if (options.expires !== undefined && options.expires !== 'never') {
      const ms = parseDurationMs(options.expires);
      if (ms === null || ms < 60_000) throw new CommandError(`--expires must be a duration of at least a minute such as 30d or 12h, or "never", not "${terminalText(options.expires)}"`);
      expiresAt = new Date(Date.now() + ms);
    }
    const { token, record } = await withStore(async (store) => {
      const user = options.user === undefined ? null : await findUserByName(store, options.user);
      if (options.user !== undefined && !user) throw new CommandError(`no user named "${terminalText(options.user)}"`);
      return createToken(store, { name, role, expiresAt, userId: user?.id ?? null, createdBy: 'cli' });
    });
    out(
      { token, ...apiTokenView(record) },
      `token ${record.name} (${record.role}${expiresAt ? `, expires ${expiresAt.toISOString()}` : ', never expires'}):\n${token}\nIt is shown this once: keep it now (LEASEHOLD_TOKEN, or Prometheus' authorization.credentials_file).`,
    );
    return 0;
  }
  if (sub === 'list') {
    const tokens = await withStore(listApiTokens);
    out(
      { tokens: tokens.map(apiTokenView) },
      tokens.length === 0 ? 'no tokens' : tokens.map((t) => `${t.id}\t${t.name}\t${t.role}\t${t.prefix}…\t${t.revokedAt ? 'revoked' : t.expiresAt ? `expires ${t.expiresAt.toISOString()}` : 'no expiry'}`).join('\n'),
    );
    return 0;
  }
  if (sub === 'revoke') {
    const which = args[0];
    if (!which) throw new CommandError('tokens revoke needs the token\'s id or name');
    const count = await withStore((store) => revokeApiToken(store, which, new Date()));
    if (count === 0) throw new CommandError(`no token "${terminalText(which)}" that is not revoked already`);
    out({ revoked: which }, `token ${which} revoked`);
    return 0;
  }
  throw new CommandError(`unknown tokens subcommand "${terminalText(sub ?? '')}" (expected create, list or revoke)`);
}
