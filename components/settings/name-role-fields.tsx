import { ROLES, TOKEN_ROLES } from '@/lib/domain/roles';

/** The name and role fields of the forms that make a user or a token (a token may also be a reporter). */
export function NameRoleFields({ roles = ROLES }: { roles?: readonly (typeof TOKEN_ROLES)[number][] }) {
  return (
    <>
      <label>
        Name
        <input name="name" required maxLength={100} autoComplete="off" />
      </label>
      <label>
        Role
        <select name="role" defaultValue="viewer">
          {roles.map((role) => (
            <option key={role}>{role}</option>
          ))}
        </select>
      </label>
    </>
  );
}
