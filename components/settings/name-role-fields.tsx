import { ROLES } from '@/lib/domain/roles';

/** The name and role fields of the forms that make a user or a token. */
export function NameRoleFields() {
  return (
    <>
      <label>
        Name
        <input name="name" required maxLength={100} autoComplete="off" />
      </label>
      <label>
        Role
        <select name="role" defaultValue="viewer">
          {ROLES.map((role) => (
            <option key={role}>{role}</option>
          ))}
        </select>
      </label>
    </>
  );
}
