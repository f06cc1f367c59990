// The embedded demo as the API shows it (app/api/v1/demo).
import 'server-only';
import { NotFoundError } from '../api/params';
import { runningDemo } from '../demo';
import type { Parts } from '../parts';
import type { DemoStatus } from '../domain/schemas/demo';

/** The demo's status as the API shows it: lib/domain/schemas/demo.ts. */
export type { DemoStatus };

function demo(root: Parts) {
  const running = runningDemo(root);
  if (!running) {
    throw new NotFoundError(
      'No demo runs on this server: it observes the sources in its config. The demo starts on the embedded store when no sources are configured.',
    );
  }
  return running;
}

/** The status of the demo running in `root` (the server's), or null when it runs none. */
export async function demoStatus(root: Parts): Promise<DemoStatus | null> {
  const running = runningDemo(root);
  if (!running) return null;
  const fleet = await running.fleet;
  return { faults: fleet.faults(), fleetSize: fleet.servers, servers: fleet.serverStates(), recentFaults: fleet.recentFaults(), digest: await running.stats() };
}

export async function setDemoFaults(root: Parts, on: boolean): Promise<DemoStatus> {
  (await demo(root).fleet).setFaults(on);
  return (await demoStatus(root))!;
}
