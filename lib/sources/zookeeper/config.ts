// A ZooKeeper source's entry in the config file (docs/configuration.md): the ensemble to
// connect to, the znode paths whose Curator locks and elections it observes, and an optional
// digest credential. The digest's password is a credential (lib/redact.ts keeps it out of every
// message); its username is shown, as a URL's user is.
import { z } from 'zod';
import { sourceEntry } from '../config-parts';

/** host:port, comma-separated, with an optional chroot: "127.0.0.1:2181,127.0.0.1:2182/app". */
const CONNECT = /^[A-Za-z0-9.\-[\]:]+:\d{1,5}(,[A-Za-z0-9.\-[\]:]+:\d{1,5})*(\/[^\s]*)?$/;

/** An absolute znode path: "/" or "/a/b", no empty segment, no trailing slash, no "." or "..". */
// eslint-disable-next-line no-control-regex -- control characters are what it refuses
export const ZNODE_PATH = /^\/$|^(\/(?!\.\.?(\/|$))[^/\u0000-\u001f\u007f]+)+$/u;

export const zookeeperSource = sourceEntry('zookeeper', {
  connect: z
    .string({ error: 'expected a ZooKeeper connect string, like "127.0.0.1:2181" or "zk1:2181,zk2:2181/chroot"' })
    .regex(CONNECT, { error: 'expected a ZooKeeper connect string of host:port pairs separated by commas, like "127.0.0.1:2181" or "zk1:2181,zk2:2181/chroot"' }),
  paths: z
    .array(
      z
        .string({ error: 'expected a znode path (text)' })
        .max(1_000, { error: 'expected a znode path of at most 1000 characters' })
        .regex(ZNODE_PATH, { error: 'expected an absolute znode path like "/locks" (starting with "/", no empty, "." or ".." segment, no trailing "/")' }),
    )
    .min(1, { error: 'expected at least one znode path to observe' }),
  /** ZooKeeper's digest scheme: the same username and password the applications add with addAuthInfo("digest", ...). */
  digest: z.strictObject({ username: z.string().min(1, { error: 'expected a digest username' }), password: z.string() }).optional(),
  /** The session this source's own client asks for (the server may give another within its min and max). */
  sessionTimeoutMs: z.number().int().min(2_000, { error: 'expected at least 2000 ms' }).max(120_000, { error: 'expected at most 120000 ms' }).default(10_000),
});

export type ZookeeperSourceConfig = z.output<typeof zookeeperSource>;

/** The ensemble's host:port pairs, without the chroot. */
export function serversOf(config: Pick<ZookeeperSourceConfig, 'connect'>): string[] {
  const slash = config.connect.indexOf('/');
  return (slash < 0 ? config.connect : config.connect.slice(0, slash)).split(',');
}
