// `npm start`: check the config, build when there is no build or the source changed since, then serve.
// The store is opened and migrated inside the server (instrumentation.ts), so the same
// steps run however the server is started.
import { spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { staleBuild } from './tooling/build-fingerprint';
import { ConfigError } from '../lib/config';
import { loadAppConfig } from '../lib/root';
import { describeEnd, runChild } from './tooling/run-child';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const nextBin = path.join(root, 'node_modules', 'next', 'dist', 'bin', 'next');

let config;
try {
  config = loadAppConfig();
} catch (error) {
  if (error instanceof ConfigError) {
    console.error(`leasehold: cannot start: ${error.message}`);
    process.exit(1);
  }
  throw error;
}

// The address must be free before anything is built or served: otherwise Next fails after
// "serving on …" with a raw EADDRINUSE object.
{
  const where = `${config.host.includes(':') ? `[${config.host}]` : config.host}:${config.port}`;
  const problem = await new Promise<string | null>((resolve) => {
    const probe = net.createServer();
    probe.once('error', (error: NodeJS.ErrnoException) =>
      resolve(
        error.code === 'EADDRINUSE'
          ? `${where} is already in use by another program (another Leasehold?); stop it, or choose another port: PORT=${config.port === 65535 ? 3001 : config.port + 1} npm start`
          : error.code === 'EACCES'
            ? `this user may not listen on ${where} (ports below 1024 need privileges); choose another port with PORT`
            : error.code === 'EADDRNOTAVAIL'
              ? `${config.host} is not an address of this machine; set HOST to one that is (127.0.0.1 by default)`
              : `cannot listen on ${where}: ${error.code ?? error.message}`,
      ),
    );
    probe.listen({ host: config.host, port: config.port, exclusive: true }, () => probe.close(() => resolve(null)));
  });
  if (problem) {
    console.error(`leasehold: cannot start: ${problem}`);
    process.exit(1);
  }
}

// A build of older code is not served: after a `git pull` it is made again (scripts/tooling/build-fingerprint.ts).
const stale = staleBuild(root);
if (stale) {
  console.log(`leasehold: ${stale}; building first (about 30 s)`);
  const started = Date.now();
  // --if-stale: another start that was building at the same time may have made it meanwhile.
  // A Ctrl-C or SIGTERM meanwhile is passed on to the build, and nothing is served after it.
  let interrupted = false;
  const interrupt = () => (interrupted = true);
  process.on('SIGINT', interrupt);
  process.on('SIGTERM', interrupt);
  const build = await runChild(process.execPath, ['--import', 'tsx', path.join(root, 'scripts', 'build.ts'), '--if-stale'], root);
  process.off('SIGINT', interrupt);
  process.off('SIGTERM', interrupt);
  if (interrupted) process.exit(build.code || 130);
  if (build.code !== 0) {
    console.error(`leasehold: the build failed (${describeEnd(build)}); see the output above`);
    process.exit(1);
  }
  console.log(`leasehold: the build is ready (${((Date.now() - started) / 1000).toFixed(1)} s)`);
}

console.log(
  `leasehold: serving on http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${config.port} ` +
    `(store: ${config.store.kind === 'postgres' ? 'PostgreSQL' : `embedded, ${path.relative(root, config.store.dataDir) || config.store.dataDir}`})`,
);
// NEXT_MANUAL_SIG_HANDLE: lib/boot.ts closes the store on SIGTERM/SIGINT, then exits.
// Next's own handler would exit first and leave the embedded store needing recovery.
const server = spawn(process.execPath, [nextBin, 'start', '--hostname', config.host, '--port', String(config.port)], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, NEXT_MANUAL_SIG_HANDLE: 'true', NEXT_TELEMETRY_DISABLED: '1' },
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => server.kill(signal));
}
server.on('exit', (code, signal) => process.exit(code ?? (signal ? 128 : 1)));
