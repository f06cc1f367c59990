// An etcd source's entry in the config file (docs/configuration.md). Its username and password
// are credentials: lib/redact.ts keeps both out of every message.
import { z } from 'zod';
import { sourceEntry, urlWithScheme } from '../config-parts';

const etcdEndpoint = urlWithScheme(['http', 'https'], 'an http:// or https:// etcd endpoint');

export const etcdSource = sourceEntry('etcd', {
  endpoints: z.array(etcdEndpoint).min(1, { error: 'expected at least one etcd endpoint' }),
  prefixes: z.array(z.string().min(1, { error: 'expected a non-empty key prefix' })).min(1),
  username: z.string().optional(),
  password: z.string().optional(),
});

export type EtcdSourceConfig = z.output<typeof etcdSource>;
