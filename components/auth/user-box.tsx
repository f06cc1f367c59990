'use client';
import Link from 'next/link';
import { useRouter } from 'next/navigation';
import { signedOutSchema } from '@/lib/domain/schemas';
import { sendJson } from '../live/api';

type Props = { name: string; role: string; signedIn: boolean };

/** Who is signed in, with sign-out; or, for an anonymous viewer, the way to sign in. */
export function UserBox({ name, role, signedIn }: Props) {
  const router = useRouter();
  async function signOut(everywhere: boolean) {
    // Whatever the answer, the sign-in page is next (a session the server no longer knows is gone too).
    await sendJson('/api/v1/auth/logout', 'POST', everywhere ? { everywhere: true } : undefined, signedOutSchema).catch(() => null);
    router.replace('/login');
    router.refresh();
  }
  if (!signedIn) {
    return (
      <div className="user-box">
        <span>Not signed in ({role})</span>
        <Link prefetch={false} href="/login">
          Sign in
        </Link>
      </div>
    );
  }
  return (
    <div className="user-box">
      <span>
        <strong>{name}</strong> · {role}
      </span>
      <button type="button" onClick={() => signOut(false)}>
        Sign out
      </button>
      <span aria-hidden="true">·</span>
      <button type="button" onClick={() => signOut(true)} title="Ends every session of yours, on every device">
        Sign out everywhere
      </button>
    </div>
  );
}
