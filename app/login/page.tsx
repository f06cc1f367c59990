import { SignInForm } from '@/components/auth/sign-in-form';
import { pageAccess } from '@/lib/auth/page';
import { safeReturnPath } from '@/lib/auth/return-to';
import { signInErrorText } from '@/lib/auth/sign-in-errors';
import { getConfig } from '@/lib/root';

export const dynamic = 'force-dynamic';
export const metadata = { title: 'Sign in' };

type Props = { searchParams: Promise<{ next?: string | string[]; error?: string | string[] }> };

const first = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);

export default async function LoginPage({ searchParams }: Props) {
  const { principal } = await pageAccess('PAGE /login');
  const params = await searchParams;
  let oidcLabel: string | null = null;
  try {
    oidcLabel = getConfig().auth.oidc?.label ?? null;
  } catch {
    // an invalid config: the form still shows, and signing in says what is wrong
  }
  return (
    <main className="sign-in" id="main">
      <div className="brand">
        Leasehold<span>leases · locks · leaders</span>
      </div>
      <SignInForm
        next={safeReturnPath(first(params.next))}
        oidcLabel={oidcLabel}
        error={signInErrorText(first(params.error))}
        current={principal && principal.method !== 'anonymous' ? `${principal.name} (${principal.role})` : null}
      />
    </main>
  );
}
