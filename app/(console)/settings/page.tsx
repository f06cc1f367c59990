import { NotAllowed } from '@/components/auth/not-allowed';
import { TokensPanel } from '@/components/settings/tokens-panel';
import { UsersPanel } from '@/components/settings/users-panel';
import { pageAccess } from '@/lib/auth/page';
import { usersAndTokens } from '@/lib/auth/manage';
import { getStore } from '@/lib/root';

export const dynamic = 'force-dynamic';
export const metadata = { title: 'Settings' };

export default async function SettingsPage() {
  const access = await pageAccess('PAGE /settings');
  if (!access.allowed) return <NotAllowed message={access.message} />;
  const { users, tokens } = await usersAndTokens(await getStore());
  return (
    <>
      <h1>Settings</h1>
      <p className="subtitle">Who may sign in, with which role, and the API tokens of scripts and Prometheus. Admins only.</p>
      <UsersPanel users={users} me={access.principal?.name ?? ''} />
      <TokensPanel tokens={tokens} />
    </>
  );
}
