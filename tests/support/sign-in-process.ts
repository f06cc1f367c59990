// A console process's sign-ins, for tests/integration/auth.test.ts: opens the PostgreSQL store
// at argv[2] as a server does (its own connections, its own memory), makes argv[4] sign-ins as
// argv[3] from address argv[5] with password argv[6], one after another through the function the
// login route calls, and prints the status of each as JSON.
import { AuthError } from '../../lib/auth/errors';
import { signIn } from '../../lib/auth/sign-in';
import { openStore } from '../../lib/db/store';
import { logToStderr } from '../../lib/log';
import { loadAppConfig } from '../../lib/root';

// Its log lines (a failed sign-in is logged) go to stderr: stdout is the answer.
logToStderr();
const [url, name, count, address, password] = process.argv.slice(2);
const store = await openStore({ kind: 'postgres', url: url! });
const config = loadAppConfig({ env: { LEASEHOLD_DEMO: 'off' } });
const statuses: number[] = [];
try {
  for (let i = 0; i < Number(count); i++) {
    statuses.push(await signIn(store, config, name!, password!, address!).then(() => 200, (error: unknown) => (error instanceof AuthError ? error.status : 500)));
  }
} finally {
  await store.close();
}
process.stdout.write(JSON.stringify(statuses));
