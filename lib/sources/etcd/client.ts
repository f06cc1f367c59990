// The etcd client of one source, with its call deadline and its retry policy (each other
// member once, at once), and a gRPC error put in words a person on call reads at once.
import { ConstantBackoff, handleWhen, noop, retry } from 'cockatiel';
import { Etcd3, isRecoverableError } from 'etcd3';
import type { EtcdSourceConfig } from './config';
import { redactUrlPassword } from '../../redact';
import { systemClock } from '../../time/clock';

const CALL_TIMEOUT_MS = 2_000;
/** etcd takes values up to 1.5 MiB by default; a page of them may be large. */
export const MAX_RECEIVE_BYTES = 64 * 1024 * 1024;

/**
 * Every call has a deadline, and etcd3's own retries are off: the collector backs off a
 * failing source itself. The deadline is on the system clock whatever the source's clock:
 * gRPC compares it with the real time.
 */
export function createEtcdClient(config: EtcdSourceConfig): Etcd3 {
  return new Etcd3({
    hosts: config.endpoints,
    defaultCallOptions: (context) => (context.isStream ? {} : { deadline: systemClock.wall() + CALL_TIMEOUT_MS }),
    // A call that fails on one member for a reason another member may not share (refused, reset,
    // unavailable) is tried at once on each other member, in the order the client shuffled them:
    // one dead member of three is no reason to call the cluster down. Nothing more: no retry on
    // the same member, no wait, and no circuit breaker (whose "the circuit breaker is open" would
    // replace the real reason on the sources page); a read that fails on every member is the
    // collector's to back off from.
    faultHandling: {
      global: retry(handleWhen(isRecoverableError), { maxAttempts: Math.max(0, config.endpoints.length - 1), backoff: new ConstantBackoff(0) }),
      host: () => noop,
    },
    grpcOptions: { 'grpc.max_receive_message_length': MAX_RECEIVE_BYTES },
    ...(config.username ? { auth: { username: config.username, password: config.password ?? '' } } : {}),
  });
}

const hostOf = (endpoint: string) => {
  try {
    return new URL(endpoint).host;
  } catch {
    return redactUrlPassword(endpoint);
  }
};

/** "etcd at host:port, ...": who a message about this source's failures names. */
export function targetOf(config: EtcdSourceConfig): string {
  return `etcd at ${config.endpoints.map(hostOf).join(', ')}`;
}

/**
 * A gRPC error in words a person on call reads at once ("etcd at 10.0.0.5:2379 refused the
 * connection"), rather than "14 UNAVAILABLE: No connection established. Last error: ...", which
 * also carries a timestamp that would make every failure look like a new one.
 */
export function etcdProblem(error: unknown, target: string): string {
  const message = String((error as Error)?.message ?? error);
  if (/ECONNREFUSED/.test(message)) return `${target} refused the connection (is the server running, on that port?)`;
  if (/DEADLINE_EXCEEDED|timed? ?out/i.test(message)) return `${target} did not answer in time`;
  if (/Protocol error|HTTP\/1|http2|PROTOCOL_ERROR/i.test(message)) return `${target} answers, but not as etcd does (is that its client port?)`;
  if (/ECONNRESET|EPIPE|Connection dropped|closed/i.test(message)) return `${target} closed the connection`;
  if (/ENOTFOUND|EAI_AGAIN|Name resolution failed|DNS resolution/i.test(message)) return `${target}: the host name does not resolve`;
  if (/EHOSTUNREACH|ENETUNREACH/.test(message)) return `${target} cannot be reached (no route to host)`;
  if (/authentication|permission denied|invalid auth token|user name is empty/i.test(message)) return `${target} refused the credentials (check username and password)`;
  // An error of the JavaScript engine (ours or the driver's, meeting an answer nobody expected) says nothing to a person.
  if (error instanceof TypeError || error instanceof RangeError || error instanceof SyntaxError || error instanceof ReferenceError) return `${target} gave an answer that could not be read (is that its client port?)`;
  // Anything else as gRPC said it, without its timestamps.
  return redactUrlPassword(message.replace(/\s*\(\d{4}-\d\d-\d\dT[\d:.]+Z\)/g, ''));
}
