import { DigestView } from '@/components/demo/digest-view';
import { NotAllowed } from '@/components/auth/not-allowed';
import { pageAccess } from '@/lib/auth/page';

export const metadata = { title: 'Weekly digest (demo)' };

export default async function DigestPage() {
  const access = await pageAccess('PAGE /digest');
  if (!access.allowed) return <NotAllowed message={access.message} />;
  return (
    <>
      <h1>Weekly digest</h1>
      <p className="subtitle">
        The demo&rsquo;s story: Pixly&rsquo;s weekly digest, written for one server, runs on eighteen. One scheduler elected with a lease, workers that may see a job twice,
        and a unique constraint and fencing tokens so that every user gets one email a week.
      </p>
      <DigestView />
    </>
  );
}
