// The config file's `alerts` section: where outgoing webhooks may connect, how the console is
// linked from a message, and the delivery workers' limits. Messages that begin with "expected"
// are used as they are by issues.ts.
import { z } from 'zod';

/** An IPv4 or IPv6 CIDR such as "127.0.0.1/32" or "fd00::/8"; checked in full by lib/alerts/deliver/egress.ts. */
const cidr = z
  .string({ error: 'expected a CIDR such as "127.0.0.1/32"' })
  .regex(/^[0-9A-Fa-f:.]+\/\d{1,3}$/, { error: 'expected a CIDR such as "127.0.0.1/32" or "fd00::/8"' });

export const alertsSchema = z
  .strictObject({
    /** Evaluate rules and deliver alerts in this process (default true). */
    enabled: z.boolean({ error: 'expected true or false' }).default(true),
    /**
     * Addresses outgoing webhooks may reach although they are not public unicast (a receiver on
     * this machine or the private network), and where plain http:// is allowed. Empty: public
     * https:// endpoints only.
     */
    allowCidrs: z.array(cidr, { error: 'expected a list of CIDRs' }).default([]),
    /** The console's address as people reach it, for links in messages ("https://leasehold.example.com"). */
    publicUrl: z.url({ protocol: /^https?$/, error: 'expected the console\'s http(s):// address' }).optional(),
    /** How long one attempt may take. */
    timeoutMs: z.number({ error: 'expected a number of milliseconds' }).int().min(100).max(60_000).default(10_000),
    /** Attempts before a delivery is dead-lettered. */
    maxAttempts: z.number({ error: 'expected a whole number' }).int().min(1).max(30).default(8),
    /** Alertmanager endpoints: a firing alert is sent again this often. */
    resendIntervalMs: z.number({ error: 'expected a number of milliseconds' }).int().min(1_000).max(3_600_000).default(60_000),
  })
  .prefault({});

export type AlertsConfig = z.output<typeof alertsSchema>;
