'use client';
import Link from 'next/link';
import { useRouter } from 'next/navigation';

type Props = { name: string; role: string; signedIn: boolean };

/** Who is signed in, with sign-out; or, for an anonymous viewer, the way to sign in. */
export function UserBox({ name, role, signedIn }: Props) {
  const router = useRouter();
  async function signOut() {
    await fetch('/api/v1/auth/logout', { method: 'POST' }).catch(() => null);
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
      <button type="button" onClick={signOut}>
        Sign out
      </button>
    </div>
  );
}
