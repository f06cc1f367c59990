import { EmptyState } from '@/components/ui/empty-state';

/** What a signed-in person without the role sees instead of a page: why, and who to ask. */
export function NotAllowed({ message }: { message: string }) {
  return (
    <>
      <EmptyState title="Not allowed">
        <p>{message}</p>
        <p>An admin can change your role on the settings page, or with <code>leasehold users set-role</code>.</p>
      </EmptyState>
    </>
  );
}
